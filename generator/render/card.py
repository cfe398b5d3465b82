"""The pinned-excerpts extension's card for one excerpt (templates/pinned_excerpt.html): the same
runs as this site's Code tabs (generator/render/code.py) and the same citations as its Sources
page (generator/render/cite.py).

The card is HTML with a mark where the runs go; the runs are Markdown fences (pymdownx.superfences
numbers them from the upstream line) with omission markers between them. The extension keeps the
HTML aside (Python-Markdown's stash, as fenced code is kept) and the runs in the page, so a card
works wherever a fence does: at the top of a page, in a list, an admonition or a tab.
"""

from __future__ import annotations

from dataclasses import dataclass

from generator.blocks import Markup
from generator.render.blocks import ExcerptCard
from generator.render.cite import citation
from generator.render.code import evidence_words, excerpt_blocks, span_label

OMITTED_CLASS = "pinned-excerpt__omitted"
RUNS = "<!-- pinned-excerpt: runs -->"  # where the template puts {{ runs }}


@dataclass(frozen=True)
class CardParts:
    """A rendered card: its HTML, split where the runs go, and the runs' Markdown."""

    html: tuple[str, ...]  # HTML before the runs, [between two uses of them, ...] after them
    runs: str  # the fenced runs with omission markers


def excerpt_card(excerpt) -> ExcerptCard:
    """A card for a verified excerpt (or a selection of its lines: Excerpt.select)."""
    repo = excerpt.repo
    return ExcerptCard(
        repo=repo.name,
        path=excerpt.path,
        lines=span_label(excerpt),
        permalink=excerpt.permalink,
        url=repo.url,
        commit=repo.commit,
        short=repo.short,
        license=repo.license,
        level=evidence_words(excerpt)[0],  # in readers' words, from its own lock entry; the
        evidence=evidence_words(excerpt)[1],  # lock's prose account is for its maintainers
        swhid=excerpt.swhid,
        runs=Markup(RUNS),
        citation=citation(excerpt),
    )


def card_parts(excerpt, html: str, *, prefix: str) -> CardParts:
    """The card's rendered `html` split at the runs' mark, and the runs (`prefix` keeps fence ids
    unique when a page quotes the same excerpt twice)."""
    runs = excerpt_blocks(excerpt, prefix, OMITTED_CLASS).removesuffix("\n")
    return CardParts(html=tuple(html.split(RUNS)), runs=runs)

"""The pinned-excerpts extension's card for one excerpt (templates/pinned_excerpt.md): the same
runs as this site's Code tabs (generator/render/code.py) and the same citations as its Sources
page (generator/render/cite.py)."""

from __future__ import annotations

from generator.blocks import Markup
from generator.render.blocks import ExcerptCard
from generator.render.cite import citation
from generator.render.code import excerpt_blocks, literal, span_label

OMITTED_CLASS = "pinned-excerpt__omitted"


def excerpt_card(excerpt, *, prefix: str) -> ExcerptCard:
    """A card for a verified excerpt (or a selection of its lines: Excerpt.select). `prefix`
    keeps fence ids unique when a page quotes the same excerpt twice."""
    repo = excerpt.repo
    return ExcerptCard(
        repo=Markup(literal(repo.name)),
        path=Markup(literal(excerpt.path)),
        lines=span_label(excerpt),
        permalink=excerpt.permalink,
        commit=repo.commit,
        short=repo.short,
        license=Markup(literal(repo.license)),
        level=Markup(literal(excerpt.evidence_level)),
        evidence=Markup(literal(excerpt.evidence)),
        swhid=Markup(literal(excerpt.swhid)) if excerpt.swhid else None,
        runs=Markup(excerpt_blocks(excerpt, prefix, OMITTED_CLASS).removesuffix("\n")),
        citation=citation(excerpt),
    )

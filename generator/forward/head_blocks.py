"""The forward-pass page's head blocks: the kinds of head its scores point out (and, for GPT-2's
own weights, the heads published work names), the gallery of every head's pattern, and the table
of every head's scores.
"""

from __future__ import annotations

from generator.forward.analysis import KINDS, SHORT, THRESHOLDS, head_anchor, strongest
from generator.forward.blocks import (
    FoundHeads,
    FoundKind,
    Gallery,
    GalleryHead,
    GalleryRow,
    HeadLink,
    Literature,
    LiteratureHead,
    ScoreRow,
    ScoresTable,
)
from generator.forward.head_images import LABELLED_MAX, pool_factor, thumbnail_side, view_ticks
from generator.forward.literature import compare, verdict
from generator.forward.pipeline import ForwardPass, Gpt2Source
from generator.forward.render import Url, fmt_score, head_file
from generator.render.numbers import fmt_int

KIND_TEXT = {  # kind -> (what the page calls such heads, what they do)
    "previous-token": ("previous-token heads", "each position looks at the one just before it"),
    "induction": ("induction heads", "a repeated token looks at what followed its earlier copy"),
    "first-token": (
        "heads that rest on the first token when nothing else is worth attending to",
        "",  # the name says it
    ),
}


def found_block(fp: ForwardPass) -> FoundHeads:
    """The head types the scores point out, strongest heads first, with their scores."""
    kinds = []
    for kind in KINDS:
        chance = fp.chance[kind]
        named = [h for h in strongest(fp.heads, kind, n=len(fp.heads)) if kind in h.kinds]
        name, what = KIND_TEXT[kind]
        kinds.append(
            FoundKind(
                kind=kind,
                name=name,
                what=what,
                badge=SHORT[kind],
                threshold=f"{THRESHOLDS[kind]:.2f}",
                chance=None if chance is None else fmt_score(chance),
                heads=tuple(
                    HeadLink(h.anchor, h.label, fmt_score(h.score(kind))) for h in named[:6]
                ),
                more=max(len(named) - 6, 0),
            )
        )
    return FoundHeads(kinds=tuple(kinds), literature=literature_block(fp))


def literature_block(fp: ForwardPass) -> Literature | None:
    """For GPT-2's own weights: the heads published work names, next to this page's scores, and
    whether the page's classifier agrees (said here when it does not)."""
    if not isinstance(fp.source, Gpt2Source):
        return None
    return Literature(
        heads=tuple(
            LiteratureHead(
                label=c.known.label,
                anchor=head_anchor(c.known.layer, c.known.head),
                agrees=c.classified,
                kind=c.known.kind,
                source=c.known.source,
                verdict=verdict(c),
            )
            for c in compare(fp.heads)
        )
    )


def gallery_block(fp: ForwardPass, url: Url) -> Gallery:
    """layers × heads thumbnails; each links to its large view. The viewer is filled by JS."""
    by_layer: dict[int, list[GalleryHead]] = {}
    for h in fp.heads:
        by_layer.setdefault(h.layer, []).append(
            GalleryHead(
                layer=h.layer,
                head=h.head,
                anchor=h.anchor,
                label=h.label,
                view=url(head_file(h.layer, h.head, "svg")),
                thumbnail=url(head_file(h.layer, h.head, "png")),
                previous_token=fmt_score(h.previous_token),
                induction=fmt_score(h.induction),
                first_token=fmt_score(h.first_token),
                kinds=tuple((k, SHORT[k]) for k in h.kinds),
            )
        )
    T = len(fp.tokens)
    return Gallery(
        n_layer=fp.cfg.n_layer,
        n_head=fp.cfg.n_head,
        size=thumbnail_side(T),
        rows=tuple(GalleryRow(layer, tuple(heads)) for layer, heads in sorted(by_layer.items())),
        badges=tuple((SHORT[k], k) for k in KINDS),
        positions=fmt_int(T),
        pooled=pool_factor(T),
        every=view_ticks(T)[1] if T > LABELLED_MAX else 0,
    )


def scores_table(fp: ForwardPass) -> ScoresTable:
    """Every head's three scores, as a table (the gallery's numbers, readable without images)."""
    rows = tuple(
        ScoreRow(
            anchor=h.anchor,
            label=h.label,
            scores=(fmt_score(h.previous_token), fmt_score(h.induction), fmt_score(h.first_token)),
            kinds=", ".join(h.kinds) or "–",
        )
        for h in fp.heads
    )
    chance = fp.chance
    even = (chance["previous-token"], chance["induction"], chance["first-token"])
    return ScoresTable(
        chance=(fmt_score(even[0]), fmt_score(even[1]), fmt_score(even[2])), rows=rows
    )

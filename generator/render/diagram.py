"""The architecture map: a family's pre-norm block inside the full model, lines in SVG under boxes
that are HTML links. The lines are drawn here, the same for every family, from the boxes of the
family's layout (the [map] of generator/models/<family>/family.toml); the markup is templates/map_diagram.html.

Drawn from the component registry: every box is a link to its page (where one exists) and carries
`data-light=KEY`, the same key as `\\htmlData{light=KEY}` in formulas, so hovering one lights the other.
"""

from __future__ import annotations

from collections.abc import Callable

from generator.models import get_family
from generator.models.map import Box
from generator.render.blocks import MapBox, MapDiagram, Point

STREAM_X = 80  # x of the residual stream's vertical line
ADDS = {"embed": 104, "attn_add": 262, "mlp_add": 392}  # y of each ⊕ on the stream
BLOCK_FRAME = (8, 136, 336, 280)  # x, y, w, h
HEIGHT = 580
WIDTH = 352
ADD_RADIUS = 12  # of each ⊕ on the stream
PLUS_BASELINE = 5  # the "+" glyph's baseline, below its circle's centre
CAPTION_X = 20


def _num(value: float) -> str:
    return f"{value:g}"


def _percent(value: float, whole: int) -> str:
    return f"{100 * value / whole:.3f}%"


def architecture_map(
    link: Callable[[str], str | None],
    *,
    current: str | None = None,
    n_layer: int,
    uid: str = "map",
    family: str = "gpt2",
) -> MapDiagram:
    """The diagram of `family`: lines in SVG, boxes as positioned links (real HTML links: they
    work without JS and under instant navigation). `link(key)` gives a box's href (or None);
    `uid` namespaces the SVG ids so several maps can share a page."""
    spec = get_family(family).map
    layout = spec.boxes
    by_key = {b.key: b for b in layout}
    titled = get_family(family).by_key

    def point(x: float, y: float) -> Point:
        return (_num(x), _num(y))

    def into(box: Box) -> tuple[Point, Point]:
        """From the stream into a sublayer's norm, at its middle."""
        return point(STREAM_X, box.y + box.h / 2), point(box.x, box.y + box.h / 2)

    def down(upper: Box, lower: Box) -> tuple[Point, Point]:
        """From a norm's bottom to the top of the sublayer below it."""
        cx = upper.x + upper.w / 2
        return point(cx, upper.y + upper.h), point(cx, lower.y)

    def back(box: Box, add_y: int) -> tuple[Point, Point, Point]:
        """From a sublayer's bottom back to the stream's + (an elbow)."""
        cx = box.x + box.w / 2
        return point(cx, box.y + box.h), point(cx, add_y), point(STREAM_X + 14, add_y)

    ln1, attn, ln2 = by_key["ln1"], by_key["attention"], by_key["ln2"]
    mlp = by_key["mlp"] if "mlp" in by_key else by_key["experts"]  # a dense MLP or experts
    wte, lnf, unembed = by_key["wte"], by_key["lnf"], by_key["unembed"]
    fx, fy, fw, fh = BLOCK_FRAME
    embed_y = ADDS["embed"]
    label_x, label_y = STREAM_X - 10, (ADDS["attn_add"] + 150) / 2
    if "wpe" in by_key:  # learned positions: wte and wpe meet at the embedding sum
        wpe = by_key["wpe"]
        start: tuple[tuple[Point, ...], ...] = (
            (point(STREAM_X, wte.y + wte.h), point(STREAM_X, embed_y - ADD_RADIUS)),
            (point(wpe.x + wpe.w / 2, wpe.y + wpe.h), point(STREAM_X + 12, embed_y - 4)),
        )
        stream_top = embed_y + ADD_RADIUS
    else:  # the token embedding is the stream; RoPE feeds attention its angles
        rope = by_key["rope"]
        start = ((point(rope.x + rope.w / 2, rope.y + rope.h), point(rope.x + rope.w / 2, attn.y)),)
        stream_top = wte.y + wte.h
    arrows = (
        *start,
        into(ln1),
        down(ln1, attn),
        back(attn, ADDS["attn_add"]),
        into(ln2),
        down(ln2, mlp),
        back(mlp, ADDS["mlp_add"]),
        (point(STREAM_X, lnf.y + lnf.h), point(STREAM_X, unembed.y)),
    )

    def box(key: str, label: str, x: float, y: float, w: float, h: float, kind: str = "") -> MapBox:
        return MapBox(
            key=key,
            label=label,
            title=titled[key].title,
            href=link(key),
            current=current == key,
            kind=kind,
            left=_percent(x, WIDTH),
            top=_percent(y, HEIGHT),
            width=_percent(w, WIDTH),
            height=_percent(h, HEIGHT),
        )

    r = ADD_RADIUS
    boxes = (
        box(
            "block",
            f"{spec.block_label} × {n_layer}",
            fx + fw - 140,
            fy + fh - 28,
            134,
            24,
            kind="frame",
        ),
        *(box(b.key, titled[b.key].short, b.x, b.y, b.w, b.h) for b in layout),
        *(
            (box("embed", "+", STREAM_X - r, embed_y - r, 2 * r, 2 * r, kind="add"),)
            if "embed" in titled
            else ()
        ),
    )
    return MapDiagram(
        uid=uid,
        n_layer=n_layer,
        width=_num(WIDTH),
        height=_num(HEIGHT),
        frame=(_num(fx), _num(fy), _num(fw), _num(fh)),
        stream=(point(STREAM_X, stream_top), point(STREAM_X, lnf.y)),
        stream_label=point(label_x, label_y),
        arrows=arrows,
        adds=tuple(
            (point(STREAM_X, y), point(STREAM_X, y + PLUS_BASELINE))
            for key, y in ADDS.items()
            if key != "embed"  # the embedding sum's + is a box (a link to its page)
        ),
        add_radius=_num(ADD_RADIUS),
        inputs_label=point(CAPTION_X, 24),
        outputs_label=point(CAPTION_X, unembed.y + unembed.h + 22),
        boxes=boxes,
        parts=spec.name,
    )

"""The architecture map: GPT-2's pre-norm block inside the full model, as inline SVG.

Drawn from the component registry: every box is a link to its page (where one exists) and carries
`data-light=KEY`, the same key as `\\htmlData{light=KEY}` in formulas, so hovering one lights the other.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from dataclasses import dataclass

from generator.components import BY_KEY

STREAM_X = 80  # x of the residual stream's vertical line


@dataclass(frozen=True)
class Box:
    key: str
    x: int
    y: int
    w: int
    h: int


# Layout, top (input) to bottom (output). Coordinates in SVG user units.
BOXES = (
    Box("wte", 20, 40, 120, 34),
    Box("wpe", 170, 40, 120, 34),
    Box("ln1", 150, 160, 120, 32),
    Box("attention", 150, 208, 180, 36),
    Box("ln2", 150, 290, 120, 32),
    Box("mlp", 150, 338, 180, 36),
    Box("lnf", 20, 448, 120, 32),
    Box("unembed", 20, 504, 120, 34),
    Box("model", 200, 504, 130, 34),
)
ADDS = {"embed": 104, "attn_add": 262, "mlp_add": 392}  # y of each ⊕ on the stream
BLOCK_FRAME = (8, 136, 336, 280)  # x, y, w, h
HEIGHT = 580
WIDTH = 352


def _pct(value: float, whole: int) -> str:
    return f"{100 * value / whole:.3f}%"


def _place(x: float, y: float, w: float, h: float) -> str:
    """Inline position of an HTML element over the drawing, in percent of the drawing."""
    return (
        f"left:{_pct(x, WIDTH)};top:{_pct(y, HEIGHT)};"
        f"width:{_pct(w, WIDTH)};height:{_pct(h, HEIGHT)}"
    )


def _node(
    key: str, label: str, place: str, href: str | None, current: bool, extra: str = ""
) -> str:
    """One box: a real HTML link (works without JS and under instant navigation)."""
    classes = f"itm-map__box{extra}" + (" is-current" if current else "")
    title = html.escape(BY_KEY[key].title)
    attrs = f'class="{classes}" data-light="{key}" style="{place}" title="{title}"'
    if href is None:
        return f"<span {attrs}><span>{html.escape(label)}</span></span>"
    aria = ' aria-current="page"' if current else ""
    return (
        f'<a {attrs} href="{html.escape(href)}" aria-label="{title}"{aria}>'
        f"<span>{html.escape(label)}</span></a>"
    )


def architecture_svg(
    link: Callable[[str], str | None], *, current: str | None = None, n_layer: int, uid: str = "map"
) -> str:
    """The diagram: lines in SVG, boxes as positioned links. `link(key)` gives a box's href
    (or None); `uid` namespaces the SVG ids so several maps can share a page."""
    arrow = f"{uid}-arrow"
    by_key = {b.key: b for b in BOXES}

    def edge(x1: float, y1: float, x2: float, y2: float) -> str:
        return (
            f'<line class="itm-map__edge" x1="{x1:g}" y1="{y1:g}" x2="{x2:g}" y2="{y2:g}" '
            f'marker-end="url(#{arrow})"/>'
        )

    def elbow(box: Box, add_y: int) -> str:
        cx = box.x + box.w / 2
        return (
            f'<polyline class="itm-map__edge" points="{cx:g},{box.y + box.h} {cx:g},{add_y} '
            f'{STREAM_X + 14},{add_y}" marker-end="url(#{arrow})" fill="none"/>'
        )

    ln1, attn, ln2, mlp = by_key["ln1"], by_key["attention"], by_key["ln2"], by_key["mlp"]
    wpe, lnf, unembed = by_key["wpe"], by_key["lnf"], by_key["unembed"]
    fx, fy, fw, fh = BLOCK_FRAME
    label_y = (ADDS["attn_add"] + 150) / 2
    svg = "".join(
        [
            f'<svg class="itm-map__lines" viewBox="0 0 {WIDTH} {HEIGHT}" aria-hidden="true">',
            f'<defs><marker id="{arrow}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
            'markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z"/></marker></defs>',
            f'<rect class="itm-map__frame" x="{fx}" y="{fy}" width="{fw}" height="{fh}" rx="10"/>',
            f'<line class="itm-map__stream" x1="{STREAM_X}" y1="{ADDS["embed"] + 12}" '
            f'x2="{STREAM_X}" y2="{lnf.y}"/>',
            f'<text class="itm-map__stream-label" x="{STREAM_X - 10}" y="{label_y:g}" '
            f'transform="rotate(-90 {STREAM_X - 10} {label_y:g})">residual stream</text>',
            edge(STREAM_X, 74, STREAM_X, ADDS["embed"] - 12),
            edge(wpe.x + wpe.w / 2, 74, STREAM_X + 12, ADDS["embed"] - 4),
            edge(STREAM_X, ln1.y + ln1.h / 2, ln1.x, ln1.y + ln1.h / 2),
            edge(ln1.x + ln1.w / 2, ln1.y + ln1.h, ln1.x + ln1.w / 2, attn.y),
            elbow(attn, ADDS["attn_add"]),
            edge(STREAM_X, ln2.y + ln2.h / 2, ln2.x, ln2.y + ln2.h / 2),
            edge(ln2.x + ln2.w / 2, ln2.y + ln2.h, ln2.x + ln2.w / 2, mlp.y),
            elbow(mlp, ADDS["mlp_add"]),
            edge(STREAM_X, lnf.y + lnf.h, STREAM_X, unembed.y),
            *(
                f'<circle class="itm-map__plus" cx="{STREAM_X}" cy="{y}" r="12"/>'
                f'<text x="{STREAM_X}" y="{y + 5}">+</text>'
                for key, y in ADDS.items()
                if key != "embed"
            ),
            '<text class="itm-map__caption" x="20" y="24">token ids</text>',
            f'<text class="itm-map__caption" x="20" y="{unembed.y + unembed.h + 22}">'
            "softmax → next-token probabilities</text>",
            "</svg>",
        ]
    )
    nodes = [
        _node(
            "block",
            f"Block × {n_layer}",
            _place(fx + fw - 140, fy + fh - 28, 134, 24),
            link("block"),
            current == "block",
            " itm-map__box--frame",
        )
    ]
    for box in BOXES:
        nodes.append(
            _node(
                box.key,
                BY_KEY[box.key].short,
                _place(box.x, box.y, box.w, box.h),
                link(box.key),
                current == box.key,
            )
        )
    y = ADDS["embed"]
    nodes.append(
        _node(
            "embed",
            "+",
            _place(STREAM_X - 12, y - 12, 24, 24),
            link("embed"),
            current == "embed",
            " itm-map__box--add",
        )
    )
    return (
        f'<div class="itm-map" role="group" aria-label="GPT-2 architecture: embeddings, '
        f'{n_layer} pre-norm blocks, final norm, unembedding" '
        f'style="aspect-ratio:{WIDTH}/{HEIGHT}" data-search-exclude>{svg}{"".join(nodes)}</div>'
    )

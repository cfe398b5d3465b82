"""Build-time HTML for the walkthrough: value grids, the colour legend, the scale picture.

The page reads well without JavaScript because these are rendered here; walkthrough.js redraws
the same tables from the same JSON (data.py) with the same formatting and colours, so keep
fmt_value() and cell_colour() in step with their twins in docs/assets/walkthrough.js.
"""

from __future__ import annotations

import html

from generator.render.numbers import fmt_int
from generator.walkthrough.gpt2_scale import Figure, dims

POSITIVE = (33, 102, 172)  # blue: value > 0
NEGATIVE = (178, 24, 43)  # red: value < 0
STRENGTH = 0.6  # the largest |value| of a grid mixes this much of its colour into white


def fmt_value(v: float | None) -> str:
    """Two decimals with a true minus sign; None (−∞) is "−∞"; −0.00 is 0.00."""
    if v is None:
        return "−∞"
    text = f"{v:.2f}"
    if text == "-0.00":
        text = "0.00"
    return text.replace("-", "−")


def mix(colour: tuple[int, int, int], amount: float) -> str:
    """`amount` of `colour` mixed into white, as #rrggbb."""
    return "#" + "".join(f"{int(255 + (c - 255) * amount + 0.5):02x}" for c in colour)


def cell_colour(v: float, scale: float) -> str:
    """Sign picks the hue, |v| / scale the strength; black text stays readable on every shade."""
    strength = STRENGTH * min(1.0, abs(v) / scale) if scale > 0 else 0.0
    return mix(POSITIVE if v >= 0 else NEGATIVE, strength)


def blend(weights: list[float], colours: list[str]) -> str:
    """The colours mixed in the proportions `weights` (an attention row), as #rrggbb."""
    rgb = [0.0, 0.0, 0.0]
    for weight, colour in zip(weights, colours, strict=True):
        for i in range(3):
            rgb[i] += weight * int(colour[1 + 2 * i : 3 + 2 * i], 16)
    return "#" + "".join(f"{min(255, int(c + 0.5)):02x}" for c in rgb)


def matrix_of(data: dict, key: str, head: int) -> list[list[float | None]]:
    """The rows the grid shows: one head's slice of a per-head array, or the whole array."""
    value = data["trace"][key]
    return value[head] if key in data["per_head"] else value


def column_labels(data: dict, key: str, n_cols: int) -> list[tuple[str, str]]:
    """(text, accessible name) of each column header."""
    kind = data["matrices"][key]["columns"]
    if kind == "tokens":
        return [(token, f"key token {token}") for token in data["tokens"]]
    if kind == "head-dims":
        d_head = data["config"]["d_head"]
        return [
            (
                f"h{c // d_head}·{c % d_head + 1}",  # heads from 0, as on the forward pass
                f"head {c // d_head}, column {c % d_head + 1}",
            )
            for c in range(n_cols)
        ]
    return [(str(c + 1), f"column {c + 1}") for c in range(n_cols)]


def token_chip(token: str, colour: str) -> str:
    return (
        f'<span class="itm-wt-tok"><span class="itm-wt-dot" style="background:{colour}" '
        f'aria-hidden="true"></span>{html.escape(token)}</span>'
    )


def caption(data: dict, key: str, head: int, rows: int, cols: int) -> str:
    meta = data["matrices"][key]
    where = f"head {head}" if key in data["per_head"] else "all heads"
    return (
        f'<span class="itm-wt-grid__sym">{html.escape(meta["symbol"])}</span> '
        f"{html.escape(meta['caption'])} · {where} · {dims(rows, cols)}"
    )


def grid_table(data: dict, key: str, head: int) -> str:
    """One matrix as an HTML table: token rows, labelled cells coloured by sign and size."""
    matrix = matrix_of(data, key, head)
    rows, cols = len(matrix), len(matrix[0])
    masked = data["trace"]["masked"][head]  # None marks a masked cell (j > i)
    finite = [abs(v) for row in matrix for v in row if v is not None]
    scale = max(finite, default=0.0)
    tokens, colours = data["tokens"], data["colours"]
    blended = key == "heads"  # the weighted sum also shows each output row's colour blend
    head_cells = "".join(
        f'<th scope="col" aria-label="{html.escape(name)}">{html.escape(text)}</th>'
        for text, name in column_labels(data, key, cols)
    )
    if blended:
        head_cells += '<th scope="col">colour</th>'
    body = []
    for i, row in enumerate(matrix):
        cells = []
        for j, v in enumerate(row):
            is_masked = data["matrices"][key]["masked"] and masked[i][j] is None
            text = "0" if is_masked and v == 0 else fmt_value(v)
            label = f"row {tokens[i]}, {column_labels(data, key, cols)[j][1]}: {text}"
            if is_masked:
                style, cls = "", ' class="is-masked"'
            else:
                assert v is not None, f"{key}[{i}][{j}] has no value and is not masked"
                style, cls = f' style="background:{cell_colour(v, scale)}"', ""
            data_v = "" if v is None else f' data-v="{v!r}"'
            cells.append(f'<td{cls}{style}{data_v} aria-label="{html.escape(label)}">{text}</td>')
        if blended:
            weights = data["trace"]["weights"][head][i]
            cells.append(
                f'<td class="itm-wt-blend"><span class="itm-wt-swatch" '
                f'style="background:{blend(weights, colours)}" role="img" '
                f'aria-label="colour blend of row {html.escape(tokens[i])}"></span></td>'
            )
        body.append(
            f'<tr data-row="{i}"><th scope="row">{token_chip(tokens[i], colours[i])}</th>'
            + "".join(cells)
            + "</tr>"
        )
    return (
        f'<table class="itm-wt-grid" data-matrix="{key}" data-head="{head}">'
        f"<caption>{caption(data, key, head, rows, cols)}</caption>"
        f'<thead><tr><td class="itm-wt-grid__corner"></td>{head_cells}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table>"
    )


def legend() -> str:
    """What the cell colours mean (the same for every grid)."""
    swatches = [
        (mix(NEGATIVE, STRENGTH), "negative"),
        (mix(NEGATIVE, STRENGTH / 3), "slightly negative"),
        (mix(POSITIVE, STRENGTH / 3), "slightly positive"),
        (mix(POSITIVE, STRENGTH), "positive: the largest |value| of the grid"),
    ]
    items = "".join(
        f'<li><span class="itm-wt-swatch" style="background:{colour}" aria-hidden="true">'
        f"</span>{text}</li>"
        for colour, text in swatches
    )
    return (
        '<div class="itm-wt-legend"><p class="itm-wt-legend__title">Cell colours</p>'
        f'<ul>{items}<li><span class="itm-wt-swatch is-masked" aria-hidden="true"></span>'
        "masked (j &gt; i): −∞ before softmax, 0 after</li></ul>"
        "<p>Red is negative, blue positive; the stronger the shade, the larger the magnitude "
        "relative to the largest in the same grid. Every cell also prints its value.</p></div>"
    )


def scale_picture(figure: Figure, gpt2_label: str) -> str:
    """Inline SVG: the toy's grid enlarged, and where it sits inside GPT-2's grid, to scale."""
    (toy_rows, toy_cols), (rows, cols) = figure.toy_grid, figure.grid
    cell, side, gap = 12, 150, 60
    toy_w, toy_h = toy_cols * cell, toy_rows * cell
    s = side / max(rows, cols)
    gpt2_w, gpt2_h = max(cols * s, 2.0), max(rows * s, 2.0)
    dot_w, dot_h = max(toy_cols * s, 2.0), max(toy_rows * s, 2.0)
    gpt2_x = max(toy_w, 100) + gap
    text_y = max(toy_h, gpt2_h) + 16
    width, height = gpt2_x + max(gpt2_w, 190), text_y + 16
    per = " per head" if figure.per_head else ""
    toy_lines = (f"toy {dims(toy_rows, toy_cols)}", f"{fmt_int(toy_rows * toy_cols)} cells{per}")
    gpt2_lines = (f"{gpt2_label} {dims(rows, cols)}", f"{fmt_int(rows * cols)} cells{per}")
    grid_lines = "".join(
        f'<line x1="0" y1="{r * cell}" x2="{toy_w}" y2="{r * cell}"/>' for r in range(toy_rows + 1)
    ) + "".join(
        f'<line x1="{c * cell}" y1="0" x2="{c * cell}" y2="{toy_h}"/>' for c in range(toy_cols + 1)
    )

    def label(x: float, lines: tuple[str, str]) -> str:
        return (
            f'<text x="{x:.0f}" y="{text_y:.0f}">{html.escape(lines[0])}'
            f'<tspan x="{x:.0f}" dy="13">{html.escape(lines[1])}</tspan></text>'
        )

    name = f"{' '.join(toy_lines)}; {' '.join(gpt2_lines)}; drawn to the same scale"
    return (
        f'<svg class="itm-wt-scale" viewBox="0 0 {width:.0f} {height + 4:.0f}" role="img" '
        f'aria-label="{html.escape(name)}" xmlns="http://www.w3.org/2000/svg">'
        f'<g class="itm-wt-scale__toy">{grid_lines}</g>'
        f'<rect class="itm-wt-scale__big" x="{gpt2_x}" y="0" width="{gpt2_w:.1f}" '
        f'height="{gpt2_h:.1f}"/>'
        f'<rect class="itm-wt-scale__dot" x="{gpt2_x}" y="0" width="{dot_w:.1f}" '
        f'height="{dot_h:.1f}"/>'
        f'<line class="itm-wt-scale__lead" x1="{toy_w}" y1="0.5" x2="{gpt2_x}" y2="0.5"/>'
        f"{label(0, toy_lines)}{label(gpt2_x, gpt2_lines)}"
        "</svg>"
    )

"""The walkthrough's value grids, colour legend and scale picture, as blocks (blocks.py).

The page reads well without JavaScript because these are rendered at build time (templates
walkthrough_grid.html, _legend.html, _scale.html); walkthrough.js redraws
the same tables from the same JSON (data.py) with the same formatting and colours, so keep
fmt_value() and cell_colour() in step with their twins in docs/assets/walkthrough.js.
"""

from __future__ import annotations

from generator.render.numbers import fmt_int
from generator.walkthrough.blocks import (
    Cell,
    Grid,
    GridRow,
    Legend,
    ScaleLabel,
    ScalePicture,
    TokenChip,
)
from generator.walkthrough.gpt2_scale import Figure, dims

SUBSCRIPTS = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")
HALVES = {False: "first half", True: "second half"}  # which of a pair's two dimensions
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
    if kind == "pairs":  # one column per pair of dimensions, from 0 as θ_i counts them
        return [(f"θ{str(c).translate(SUBSCRIPTS)}", f"pair {c}") for c in range(n_cols)]
    if kind == "pair-dims":  # dimension c and c + d_head/2 make pair c mod d_head/2
        half = n_cols // 2
        return [
            (f"{c % half}{'′' if c >= half else ''}", f"pair {c % half}, {HALVES[c >= half]}")
            for c in range(n_cols)
        ]
    return [(str(c + 1), f"column {c + 1}") for c in range(n_cols)]


def grid(data: dict, key: str, head: int) -> Grid:
    """One matrix as a table: token rows, labelled cells coloured by sign and size."""
    matrix = matrix_of(data, key, head)
    rows, cols = len(matrix), len(matrix[0])
    masks = data["matrices"][key]["masked"]
    masked = data["trace"]["masked"][head] if masks else None  # None marks a cell j > i
    finite = [abs(v) for row in matrix for v in row if v is not None]
    scale = max(finite, default=0.0)
    tokens, colours = data["tokens"], data["colours"]
    blended = key == "heads"  # the weighted sum also shows each output row's colour blend
    columns = column_labels(data, key, cols)
    body = []
    for i, row in enumerate(matrix):
        cells = []
        for j, v in enumerate(row):
            is_masked = masked is not None and masked[i][j] is None
            text = "0" if is_masked and v == 0 else fmt_value(v)
            if is_masked:
                colour = None
            else:
                assert v is not None, f"{key}[{i}][{j}] has no value and is not masked"
                colour = cell_colour(v, scale)
            label = f"row {tokens[i]}, {columns[j][1]}: {text}"
            value = None if v is None else repr(v)
            cells.append(Cell(text=text, label=label, colour=colour, value=value))
        body.append(
            GridRow(
                index=i,
                token=TokenChip(text=tokens[i], colour=colours[i]),
                cells=tuple(cells),
                blend=blend(data["trace"]["weights"][head][i], colours) if blended else None,
            )
        )
    meta = data["matrices"][key]
    return Grid(
        key=key,
        head=head,
        symbol=meta["symbol"],
        caption=meta["caption"],
        where=f"head {head}" if key in data["per_head"] else "all heads",
        shape=dims(rows, cols),
        columns=tuple(columns),
        rows=tuple(body),
    )


def legend() -> Legend:
    """What the cell colours mean (the same for every grid)."""
    return Legend(
        swatches=(
            (mix(NEGATIVE, STRENGTH), "negative"),
            (mix(NEGATIVE, STRENGTH / 3), "slightly negative"),
            (mix(POSITIVE, STRENGTH / 3), "slightly positive"),
            (mix(POSITIVE, STRENGTH), "positive: the largest |value| of the grid"),
        )
    )


def scale_picture(figure: Figure, gpt2_label: str) -> ScalePicture:
    """The toy's grid enlarged, and where it sits inside GPT-2's grid, to scale (px)."""
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
    return ScalePicture(
        name=f"{' '.join(toy_lines)}; {' '.join(gpt2_lines)}; drawn to the same scale",
        width=width,
        height=height + 4,
        toy_lines=tuple((0, r * cell, toy_w, r * cell) for r in range(toy_rows + 1))
        + tuple((c * cell, 0, c * cell, toy_h) for c in range(toy_cols + 1)),
        toy_width=toy_w,
        lead_y=0.5,
        big_x=gpt2_x,
        big=(gpt2_w, gpt2_h),
        dot=(dot_w, dot_h),
        text_y=text_y,
        line_gap=13,
        labels=(ScaleLabel(0, toy_lines), ScaleLabel(gpt2_x, gpt2_lines)),
    )

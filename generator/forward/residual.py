"""The forward-pass page's residual-stream block: the norm of the residual stream after each
block at each position, one log colour scale; for a long prompt (render.summarised) position 0
and the smallest, median and largest of the rest, with every value in forward/residual-norms.csv.
"""

from __future__ import annotations

import csv
import io

import numpy as np

from generator.forward.blocks import ResidualCell, ResidualRow, ResidualStream
from generator.forward.head_images import colour, hex_colour, text_colour
from generator.forward.pipeline import ForwardPass
from generator.forward.render import Url, show, summarised
from generator.render.numbers import fmt_int

RESIDUAL_CSV = "forward/residual-norms.csv"  # every norm, for a prompt the page summarises


def residual_block(fp: ForwardPass, url: Url | None = None) -> ResidualStream:
    """A column per position; for a long prompt (summarised), position 0 and the smallest, median
    and largest norm over the other positions, with a link (url) to every value as CSV. Colour is
    on one log scale over every norm either way."""
    norms = fp.residual_norms  # [n_layer + 1, T]
    logs = np.log(norms)
    low, high = float(logs.min()), float(logs.max())
    span = high - low or 1.0

    def cell(value: float, where: str) -> ResidualCell:
        rgb = colour(np.array(0.85 * (np.log(value) - low) / span))
        return ResidualCell(
            hex_colour(rgb), text_colour(rgb), f"{where}: {value:.2f}", _short(value)
        )

    labels = [_stream(r) for r in range(len(norms))]
    growth = norms[-1] / norms[0]
    median = float(np.median(growth[1:])) if len(growth) > 1 else float(growth[0])
    growths = {"median_growth": f"{median:.1f}", "first_growth": f"{float(growth[0]):.1f}"}
    if not summarised(fp):
        return ResidualStream(
            columns=tuple((show(t), f"position {i}") for i, t in enumerate(fp.tokens)),
            rows=tuple(
                ResidualRow(
                    label, tuple(cell(v, f"{label}, position {i}") for i, v in enumerate(row))
                )
                for label, row in zip(labels, norms, strict=True)
            ),
            **growths,
        )
    if url is None:
        raise ValueError("a summarised residual table links its CSV: pass url")
    last = len(fp.tokens) - 1  # positions 1 … last are summarised
    over = f"positions 1–{last}"  # positions are indices: no thousands separator, as on the chips
    rows = []
    for label, row in zip(labels, norms, strict=True):
        rest = row[1:]
        low_at, high_at = int(np.argmin(rest)) + 1, int(np.argmax(rest)) + 1
        rows.append(
            ResidualRow(
                label,
                (
                    cell(row[0], f"{label}, position 0"),
                    cell(row[low_at], f"{label}, smallest of {over} (position {low_at})"),
                    cell(float(np.median(rest)), f"{label}, median of {over}"),
                    cell(row[high_at], f"{label}, largest of {over} (position {high_at})"),
                ),
            )
        )
    return ResidualStream(
        columns=(
            (show(fp.tokens[0]), "position 0"),
            ("smallest", f"the smallest norm of {over}"),
            ("median", f"the median norm of {over}"),
            ("largest", f"the largest norm of {over}"),
        ),
        rows=tuple(rows),
        summary_of=fmt_int(last),
        csv=url(RESIDUAL_CSV),
        **growths,
    )


def residual_csv(fp: ForwardPass) -> bytes:
    """Every norm of the residual table: a row per position (its token as the page shows it),
    a column per stream, four decimals."""
    out = io.StringIO()
    table = csv.writer(out, lineterminator="\n")
    table.writerow(["position", "token", *(_stream(r) for r in range(len(fp.residual_norms)))])
    for i, token in enumerate(fp.tokens):
        table.writerow([i, show(token), *(f"{v:.4f}" for v in fp.residual_norms[:, i])])
    return out.getvalue().encode()


def _stream(row: int) -> str:
    return "embedding" if row == 0 else f"after block {row - 1}"


def _short(value: float) -> str:
    """A norm in at most four characters: 0.93, 12.4, 187, 3.1k."""
    if value >= 1000:
        return f"{value / 1000:.1f}k"
    if value >= 100:
        return f"{value:.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"

"""Accounting rows: a label and a sum of products whose value is the row's number.

Every family's parameter and FLOP tables are lists of these; pages, LaTeX tables and `itm numbers`
print them (formatting lives with the renderers: generator/render/numbers.py, which also writes
out the numbers a label names), so a number on the site is always the value of a formula shown
next to it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from generator.models.config import ModelConfig


@dataclass(frozen=True)
class Row:
    """One line of a table: ((768, 2304), (2304,)) means 768 × 2,304 + 2,304.

    `key` is stable (code finds rows by it; the module's name where there is one), `label` is
    for readers and may be reworded freely. A label that names a number names it in braces,
    "Values for {T} tokens", and gives its value in `numbers`: the renderers format it.
    """

    key: str  # "c_attn"; in a block's rows prefixed by the module: "attn.c_attn"
    label: str  # "Fused Q, K, V projection"
    terms: tuple[tuple[int, ...], ...]
    numbers: tuple[tuple[str, int], ...] = ()  # (("T", 1024),): the numbers the label names

    @property
    def value(self) -> int:
        return sum(math.prod(term) for term in self.terms)


def total(rows: list[Row]) -> int:
    return sum(row.value for row in rows)


def with_bias(cfg: ModelConfig, matrix: tuple[int, int]) -> tuple[tuple[int, ...], ...]:
    """A projection's parameters: in × out, plus out when the model has biases."""
    return (matrix, (matrix[1],)) if cfg.bias else (matrix,)


def prefixed(prefix: str, rows: list[Row], *, label: bool = True) -> list[Row]:
    """rows with `prefix.` on their keys (and `prefix ` on their labels, when `label`)."""
    return [
        replace(
            row,
            key=f"{prefix}.{row.key}",
            label=f"{prefix} {row.label[0].lower()}{row.label[1:]}" if label else row.label,
        )
        for row in rows
    ]

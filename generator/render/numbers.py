"""Number formatting shared by pages, LaTeX tables and the CLI."""

from __future__ import annotations

from generator.models.rows import Row

FLOP_UNITS = ((10**12, "TFLOPs"), (10**9, "GFLOPs"), (10**6, "MFLOPs"), (10**3, "kFLOPs"))


def fmt_int(n: int) -> str:
    """2362368 -> "2,362,368"."""
    return f"{int(n):,}"


def tex_int(n: int) -> str:
    """2362368 -> "2{,}362{,}368" (braces keep LaTeX from spacing the commas as punctuation)."""
    return fmt_int(n).replace(",", "{,}")


def fmt_flops(n: float) -> str:
    """A FLOP count for prose, one decimal in the largest fitting unit: 3538944 -> "3.5 MFLOPs"."""
    for scale, unit in FLOP_UNITS:
        value = round(n / scale, 1)
        if abs(value) >= 1:  # 999,999,999 is "1.0 GFLOPs", not "1000.0 MFLOPs"
            return f"{value:.1f} {unit}"
    return f"{fmt_int(round(n))} FLOPs"


def row_label(row: Row, **words: str) -> str:
    """A row's label with the numbers it names written out: "Values for {T} tokens" with T = 1024
    is "Values for 1,024 tokens"; `words` stand in a number's place (T="the context")."""
    if not row.numbers:
        return row.label
    return row.label.format_map({name: fmt_int(n) for name, n in row.numbers} | words)


def row_text(row: Row) -> str:
    """A row's calculation in plain text: "768 × 2,304 + 2,304"."""
    return " + ".join(" × ".join(fmt_int(f) for f in term) for term in row.terms) or "0"


def row_tex(row: Row) -> str:
    """A row's calculation in LaTeX (math mode): "768 \\times 2{,}304 + 2{,}304"."""
    return " + ".join(" \\times ".join(tex_int(f) for f in term) for term in row.terms) or "0"

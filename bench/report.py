"""One way to print a benchmark's measurements: a two-column table (label, value)."""

from __future__ import annotations


def print_table(rows: list[tuple[str, str]]) -> None:
    width = max(len(label) for label, _ in rows)
    print(f"{'measure'.ljust(width)}  value")
    print(f"{'-' * width}  {'-' * 12}")
    for label, value in rows:
        print(f"{label.ljust(width)}  {value}")

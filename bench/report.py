"""Shared by the benchmark scripts: timing one call, and printing (label, value) rows."""

from __future__ import annotations

import time


def print_table(rows: list[tuple[str, str]]) -> None:
    width = max(len(label) for label, _ in rows)
    print(f"{'measure'.ljust(width)}  value")
    print(f"{'-' * width}  {'-' * 12}")
    for label, value in rows:
        print(f"{label.ljust(width)}  {value}")


def timed(fn):
    """(fn's result, seconds it took)."""
    start = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - start

"""Shared by the benchmark scripts: timing one call, and printing (label, value) rows."""

from __future__ import annotations

import time

# The end of a benchmark's fresh-process script (format it with `again`): time one call of the
# script's run(), the kernel's high-water mark above what the process held before it, then
# `again` more calls; print {"seconds", "peak_mb", "later", "check"} as JSON.
TIME_ONE_RUN = """
import ctypes, json, time
def rss(field):
    for line in open("/proc/self/status"):
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024  # kB -> MB
ctypes.CDLL("libc.so.6").malloc_trim(0)  # hand freed heap back, so "before" is what is live
open("/proc/self/clear_refs", "w").write("5")  # reset the high-water mark (VmHWM)
before = rss("VmRSS")
start = time.perf_counter()
logits = run()
seconds = time.perf_counter() - start
peak_mb = rss("VmHWM") - before
later = []  # the same call again in this process: what a caller running several sees
for _ in range({again}):
    start = time.perf_counter()
    run()
    later.append(time.perf_counter() - start)
print(json.dumps({{"seconds": seconds, "peak_mb": peak_mb, "later": later,
                   "check": [float(v) for v in logits[-1, :4]]}}))
"""


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

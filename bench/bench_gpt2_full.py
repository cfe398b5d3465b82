"""The forward-pass page's GPT-2 branch at full size (a report, not a test).

    .venv/bin/python bench/bench_gpt2_full.py [--keep DIR]

CI downloads GPT-2's 548 MB; this machine cannot reach the hub. So the benchmark makes a
GPT-2-small-shaped checkpoint with random weights (every tensor GPT-2 small has, float32), a
byte-level BPE vocabulary of GPT-2's size that it builds itself (256 byte symbols, 50,000
merges, <|endoftext|>: 50,257 tokens) and its own pin (size and sha256 of the three files), in a
temporary project whose sources/checkpoints.toml names them. Then it runs `mkdocs build` on that
project with ITM_GPT2_WEIGHTS pointing at the files: the whole page path CI takes with the real
weights (verify, tokenize, 124M-parameter forward, 144 heads scored and drawn, removals).
Random weights make no recognisable head, so the removal table stays short; the literature
comparison prints that the heads do not agree (as it would for a broken checkpoint).

Reports build wall time, the build's peak RSS, and the page's weight with 144 heads.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from report import print_table  # noqa: E402  (bench/report.py)

from tests.full_size import build, project, write_checkpoint  # noqa: E402


def kib(n: int) -> str:
    return f"{n / 1024:.1f} KiB"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", help="write the checkpoint and site here and keep them")
    args = parser.parse_args()
    scratch = Path(args.keep or tempfile.mkdtemp(prefix="itm-gpt2-full-"))
    try:
        started = time.perf_counter()
        paths = write_checkpoint(scratch / "weights")
        made = time.perf_counter() - started
        project(scratch, paths)
        site = scratch / "site"
        cache = scratch / "cache"
        shutil.copytree(ROOT / ".cache" / "sha256", cache / "sha256")  # fetched sources only
        started = time.perf_counter()
        out = build(scratch, site, ITM_CACHE_DIR=str(cache), SOURCE_DATE_EPOCH="1700000000")
        wall = time.perf_counter() - started
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # KiB on Linux
        if out.returncode:
            print(out.stdout[-3000:], out.stderr[-3000:])
            return 1
        heads = json.loads((site / "forward" / "heads.json").read_text())
        html = (site / "forward-pass" / "index.html").read_bytes()
        pngs = sorted((site / "forward" / "heads").glob("*.png"))
        svgs = sorted((site / "forward" / "heads").glob("*.svg"))
        rows = [
            (
                "checkpoint",
                f"{paths['model.safetensors'].stat().st_size / 1e6:.0f} MB, made in {made:.1f} s",
            ),
            ("page shows", f"{heads['model']} ({heads['source']}), {len(heads['heads'])} heads"),
            ("mkdocs build, whole site (wall)", f"{wall:.1f} s"),
            ("peak RSS of the build process", f"{peak / 1024:.0f} MiB"),
            (
                "forward-pass HTML (raw / gzip)",
                f"{kib(len(html))} / {kib(len(gzip.compress(html, 9)))}",
            ),
            (
                "thumbnails (PNG, all, lazy)",
                f"{len(pngs)} files, {kib(sum(p.stat().st_size for p in pngs))}",
            ),
            (
                "large views (SVG, on demand): each / all",
                f"{kib(max(p.stat().st_size for p in svgs))} / {kib(sum(p.stat().st_size for p in svgs))}",
            ),
        ]
        print_table(rows)
        check = subprocess.run(
            [str(Path(sys.executable).with_name("itm")), "check-heads", str(site)],
            capture_output=True,
            text=True,
        )
        print(f"\nitm check-heads (random weights: expected to disagree): exit {check.returncode}")
        print(f"\nmachine: {os.cpu_count()} cores; load average {os.getloadavg()[0]:.2f}")
        return 0
    finally:
        if not args.keep:
            shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())

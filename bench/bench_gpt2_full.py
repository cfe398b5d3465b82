"""The forward-pass page's GPT-2 branch at full size (a report, not a test).

    .venv/bin/python bench/bench_gpt2_full.py [--keep DIR] [--prompt-tokens N] [--worst-removals]

CI downloads GPT-2's 548 MB; this machine cannot reach the hub. So the benchmark makes a
GPT-2-small-shaped checkpoint with random weights (every tensor GPT-2 small has, float32), a
byte-level BPE vocabulary of GPT-2's size that it builds itself (256 byte symbols, 50,000
merges, <|endoftext|>: 50,257 tokens) and its own pin (size and sha256 of the three files), in a
temporary project whose sources/checkpoints.toml names them. Then it runs `mkdocs build` on that
project with ITM_GPT2_WEIGHTS pointing at the files: the whole page path CI takes with the real
weights (verify, tokenize, 124M-parameter forward, 144 heads scored and drawn, removals).
Random weights make no recognisable head, so the removal table stays short; the literature
comparison prints that the heads do not agree (as it would for a broken checkpoint).

--prompt-tokens N gives the page a prompt of N tokens with <|endoftext|> (a repeated sentence;
1024 is GPT-2's whole context) instead of its default prompt. --worst-removals makes the build
remove the most heads the page ever removes (ablation.PER_KIND per kind: 9), all from block 0,
so every rerun is a whole forward pass: the removal table's cost for any checkpoint is at most
this (random weights alone point out none). The page's numbers are then not the page's; only the
time and memory are of interest.

Reports build wall time, the build's peak RSS, the load average, and the page's weight with 144
heads: its HTML, the thumbnails it loads, the large views it opens one at a time, the rest of
its files, and the whole site.
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

from tests.full_size import project, prompt_of, write_checkpoint  # noqa: E402
from tests.site_helpers import NO_TORCH_MKDOCS, build_env, patched_mkdocs  # noqa: E402

# In the build process: every removal the page ever makes (PER_KIND for each of the 3 kinds), all
# of block 0's heads, so each rerun runs every block.
WORST_REMOVALS = {
    "generator.forward.ablation": "module.heads_to_remove = lambda scores: "
    "[s for s in scores if s.layer == 0][: 3 * module.PER_KIND]"
}


def kib(n: int) -> str:
    return f"{n / 1024:.1f} KiB"


def size(paths: list[Path]) -> int:
    return sum(p.stat().st_size for p in paths)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", help="write the checkpoint and site here and keep them")
    parser.add_argument("--prompt-tokens", type=int, help="a prompt this many tokens long")
    parser.add_argument(
        "--worst-removals", action="store_true", help="remove 9 heads of block 0 (upper bound)"
    )
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
        env = {
            "ITM_GPT2_WEIGHTS": str(scratch / "weights"),
            "HF_HUB_CACHE": str(scratch / "hub"),
            "ITM_CACHE_DIR": str(cache),
            "SOURCE_DATE_EPOCH": "1700000000",
        }
        if args.prompt_tokens:
            env["ITM_FORWARD_PROMPT"] = prompt_of(scratch / "weights", args.prompt_tokens)
        code = patched_mkdocs(WORST_REMOVALS) if args.worst_removals else NO_TORCH_MKDOCS
        load_before = os.getloadavg()[0]
        started = time.perf_counter()
        out = subprocess.run(
            [sys.executable, "-c", code, "build", "--site-dir", str(site)],
            cwd=scratch / "project",
            env=build_env(**env),
            capture_output=True,
            text=True,
        )
        wall = time.perf_counter() - started
        load_after = os.getloadavg()[0]
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # KiB on Linux
        if out.returncode:
            print(out.stdout[-3000:], out.stderr[-3000:])
            return 1
        heads = json.loads((site / "forward" / "heads.json").read_text())
        html = (site / "forward-pass" / "index.html").read_bytes()
        pngs = sorted((site / "forward" / "heads").glob("*.png"))
        svgs = sorted((site / "forward" / "heads").glob("*.svg"))
        others = sorted(p for p in (site / "forward").iterdir() if p.is_file())
        tokens = html.count(b'<li class="itm-token')
        removal_rows = html.count(b'<tr data-head="') + html.count(
            b'<tr class="itm-removal__intact"'
        )
        rows = [
            (
                "checkpoint",
                f"{paths['model.safetensors'].stat().st_size / 1e6:.0f} MB, made in {made:.1f} s",
            ),
            ("page shows", f"{heads['model']} ({heads['source']}), {len(heads['heads'])} heads"),
            ("prompt", f"{tokens:,} tokens"),
            (
                "heads removed (rows of the removal table after the intact model)",
                str(removal_rows - 1) if removal_rows else "0 (no head reaches a threshold)",
            ),
            ("mkdocs build, whole site (wall)", f"{wall:.1f} s"),
            ("peak RSS of the build process", f"{peak / 1024:.0f} MiB"),
            ("load average (1 min) before / after", f"{load_before:.2f} / {load_after:.2f}"),
            (
                "forward-pass HTML (raw / gzip)",
                f"{kib(len(html))} / {kib(len(gzip.compress(html, 9)))}",
            ),
            ("thumbnails (PNG, all, lazy)", f"{len(pngs)} files, {kib(size(pngs))}"),
            (
                "large views (SVG, on demand): each / all",
                f"{kib(max(p.stat().st_size for p in svgs))} / {kib(size(svgs))}",
            ),
            ("other forward/ files", ", ".join(f"{p.name} {kib(size([p]))}" for p in others)),
            ("whole site", kib(size([p for p in site.rglob("*") if p.is_file()]))),
        ]
        print_table(rows)
        check = subprocess.run(
            [str(Path(sys.executable).with_name("itm")), "check-heads", str(site)],
            capture_output=True,
            text=True,
        )
        print(f"\nitm check-heads (random weights: expected to disagree): exit {check.returncode}")
        print(f"\nmachine: {os.cpu_count()} cores")
        return 0
    finally:
        if not args.keep:
            shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())

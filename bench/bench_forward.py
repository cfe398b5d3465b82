"""Benchmark of the forward-pass page (a report, not a test).

    .venv/bin/python bench/bench_forward.py [--skip-cold]

1. Stand-in training from scratch (what `itm train-standin` does; no build does it), in a fresh
   process: wall time, steps and final loss.
2. A build's work for this page, in a fresh process: import generator.forward, load and verify
   the committed stand-in, run the engine, score heads, render every macro and generated file;
   and whether torch was imported (it must not be).
3. Page weight: the gallery's HTML, its thumbnails (loaded with the page), and the large views
   (loaded one at a time, on demand).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

from report import print_table  # bench/report.py (scripts run from bench/)

ROOT = Path(__file__).resolve().parent.parent

COLD = """
import json, time
start = time.perf_counter()
from generator.forward.standin import train
weights, record = train()
print(json.dumps({{"wall": time.perf_counter() - start, "record": record}}))
"""

CACHED = """
import json, sys, time, pathlib
start = time.perf_counter()
from generator.forward import current
from generator.forward import feature, render
from generator.settings import Settings
from generator.inputs import BuildInputs
settings = Settings.load(pathlib.Path({root!r}))
fp = current(settings)
site = BuildInputs(settings, excerpts={{}})  # files() reads only the settings
files = feature.files(site)
gallery = render.gallery_block(fp, lambda p: "../" + p)
print(json.dumps({{
    "wall": time.perf_counter() - start,
    "torch": "torch" in sys.modules,
    "files": {{k: len(v) for k, v in files.items()}},
    "gallery_html": len(gallery.encode()),
    "model": fp.cfg.label,
    "heads": len(fp.heads),
    "tokens": len(fp.tokens),
    "induction": max((h.induction or 0.0, h.label) for h in fp.heads),
    "induction_chance": fp.chance["induction"],
}}))
"""


def run(code: str, env: dict[str, str]) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True
    )
    if out.returncode:
        raise SystemExit(out.stderr)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-cold", action="store_true", help="do not time a training run")
    args = parser.parse_args()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    rows: list[tuple[str, str]] = []

    if not args.skip_cold:
        cold = run(COLD.format(), env)
        rows.append(
            ("stand-in training (itm train-standin; process wall time)", f"{cold['wall']:.1f} s")
        )
        rows.append(
            ("  steps, final loss", f"{cold['record']['steps']}, {cold['record']['final_loss']}")
        )

    run(CACHED.format(root=str(ROOT)), env)  # warm the figure cache and the OS's file cache
    cached = run(CACHED.format(root=str(ROOT)), env)
    rows.append(
        (
            f"cached page work ({cached['model']}, {cached['tokens']} tokens)",
            f"{cached['wall']:.2f} s",
        )
    )
    rows.append(("  torch imported", str(cached["torch"])))
    score, label = cached["induction"]
    rows.append(
        (
            "strongest induction head on the prompt (chance)",
            f"{label}: {score:.2f} ({cached['induction_chance']:.2f})",
        )
    )
    pngs = sum(n for k, n in cached["files"].items() if k.endswith(".png"))
    svgs = [
        n
        for k, n in cached["files"].items()
        if k.startswith("forward/heads/") and k.endswith(".svg")
    ]
    training = cached["files"].get("forward/standin-training.svg")
    rows.append(
        (f"gallery HTML ({cached['heads']} heads)", f"{cached['gallery_html'] / 1024:.1f} KiB")
    )
    rows.append(("gallery thumbnails (PNG, all)", f"{pngs / 1024:.1f} KiB"))
    rows.append(
        ("large views (SVG): each / all", f"{max(svgs) / 1024:.1f} / {sum(svgs) / 1024:.1f} KiB")
    )
    if training is not None:
        rows.append(("stand-in training figure (SVG, lazy)", f"{training / 1024:.1f} KiB"))

    print_table(rows)
    print(f"\nmachine: {os.cpu_count()} cores; load average {os.getloadavg()[0]:.2f} at the end")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

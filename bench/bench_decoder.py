"""Benchmark of the Llama family's numpy forward against an earlier checkout's (a report, not a test).

    .venv/bin/python bench/bench_decoder.py --baseline DIR [--repeat 5] [--tokens 512]

The Llama family's forward moved from its own engine (generator/models/llama/engine.py) onto the
one decoder every family reads (generator/models/decoder.py). This times both on one shape: a
Mistral-like model at a reduced width (d_model 2,048, 16 query and 4 key/value heads, SwiGLU
5,632 wide, 2 layers, Llama's 32,000-token vocabulary, a window of 256 over 512 tokens, float32),
each forward in a fresh process that builds the same seeded weights, alternating base / now so
both see the same machine load. Time: the first forward's wall clock, then `--again` more in the
same process; memory: the kernel's high-water mark above what the process held before it.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from report import TIME_ONE_RUN  # bench/report.py (run from bench/)

ROOT = Path(__file__).resolve().parent.parent

RUN = (
    """
import dataclasses
import numpy as np
from generator.models import get_family

shape = dict(n_layer=2, d_model=2048, n_head=16, n_kv_head=4, d_mlp=5632, sliding_window=256)
cfg = dataclasses.replace(get_family("llama").sizes["mistral-7b-v0.1"], **shape)
ids = np.random.default_rng(0).integers(0, cfg.vocab_size, size={tokens})
try:  # today: one decoder for every family
    from generator.models.decoder import forward as decoder_forward
    from generator.models.weights import random_weights
    run = lambda: decoder_forward(weights, cfg, ids, np.float32).logits
except ImportError:  # before: the Llama family's own engine
    from generator.models.llama import forward as llama_forward
    from generator.models.llama.weights import random_weights
    run = lambda: llama_forward(weights, cfg, ids, np.float32)
weights = random_weights(cfg, seed=0, dtype=np.float32)
"""
    + TIME_ONE_RUN
)


def one_run(root: Path, tokens: int, again: int) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", RUN.format(tokens=tokens, again=again)],
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
        capture_output=True,
        text=True,
        timeout=1800,
    )
    if out.returncode:
        raise SystemExit(out.stderr)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, required=True, metavar="DIR")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--tokens", type=int, default=512)
    parser.add_argument("--again", type=int, default=2)
    args = parser.parse_args()
    if args.repeat < 1 or args.again < 1:
        parser.error("--repeat and --again must be at least 1")
    if not (args.baseline / "generator" / "models" / "llama").is_dir():
        parser.error(f"--baseline {args.baseline}: not a checkout with the Llama family")
    kinds = {"before (--baseline)": args.baseline, "now": ROOT}
    runs: dict[str, list[dict]] = {kind: [] for kind in kinds}
    for _ in range(args.repeat):
        for kind, root in kinds.items():
            runs[kind].append(one_run(root, args.tokens, args.again))
    checks = {kind: tuple(round(v, 4) for v in r[0]["check"]) for kind, r in runs.items()}
    if len(set(checks.values())) != 1:
        raise SystemExit(f"the two forwards disagree: {checks}")
    first = {k: statistics.median(r["seconds"] for r in v) for k, v in runs.items()}
    later = {k: statistics.median(t for r in v for t in r["later"]) for k, v in runs.items()}
    peak = {k: statistics.median(r["peak_mb"] for r in v) for k, v in runs.items()}
    base = "before (--baseline)"
    rows = [
        (
            kind,
            f"{first[kind]:.3f} s",
            f"{first[kind] / first[base]:.2f}×",
            f"{later[kind]:.3f} s",
            f"{later[kind] / later[base]:.2f}×",
            f"{peak[kind]:.0f} MB",
        )
        for kind in kinds
    ]
    head = ("forward", "first (median)", "/ before", "later (median)", "/ before", "peak memory")
    print(f"{args.tokens} tokens, {args.repeat} alternating runs of each, float32\n")
    for row in (head, tuple("---" for _ in head), *rows):
        print("| " + " | ".join(row) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

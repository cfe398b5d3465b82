"""Benchmark of cached decoding (a report, not a test).

    .venv/bin/python bench/bench_decode.py [--layers 4] [--prompt 64] [--new 64]

Generates --new tokens greedily after a --prompt-token prompt on a model with GPT-2 small's width,
heads and vocabulary (fewer blocks, random weights, float32), twice: with the KV cache
(decode_step, one token per step) and by recomputing the whole prefix each step (forward). One run
each; the ratio is wall time, next to the FLOP ratio the accounting predicts for the same steps.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

from report import print_table, timed  # bench/report.py (scripts run from bench/)

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--prompt", type=int, default=64)
    parser.add_argument("--new", type=int, default=64)
    args = parser.parse_args()

    import numpy as np

    from generator import decode_costs
    from generator.config import CONFIGS
    from generator.engine import forward, random_weights
    from generator.engine.decode import decode_step

    cfg = dataclasses.replace(CONFIGS["gpt2"], name="gpt2-bench", n_layer=args.layers)
    weights = random_weights(cfg, seed=0, dtype=np.float32)
    prompt = np.random.default_rng(1).integers(0, cfg.vocab_size, size=args.prompt)

    def cached() -> list[int]:
        step = decode_step(weights, cfg, prompt, None, np.float32)
        out = []
        for _ in range(args.new):
            out.append(int(np.argmax(step.logits[-1])))
            step = decode_step(weights, cfg, np.array(out[-1:]), step.cache, np.float32)
        return out

    def recompute() -> list[int]:
        ids = list(prompt)
        out = []
        for _ in range(args.new):
            out.append(int(np.argmax(forward(weights, cfg, np.array(ids), np.float32).logits[-1])))
            ids.append(out[-1])
        return out

    tokens_c, t_c = timed(cached)
    tokens_r, t_r = timed(recompute)
    same = sum(a == b for a, b in zip(tokens_c, tokens_r, strict=True))
    first, last = args.prompt + 1, args.prompt + args.new
    flops_c = sum(decode_costs.decode_flops(cfg, t, cached=True) for t in range(first, last + 1))
    flops_r = sum(decode_costs.decode_flops(cfg, t, cached=False) for t in range(first, last + 1))
    rows = [
        ("model", f"{cfg.n_layer} blocks of GPT-2 small's width, float32, random weights"),
        ("tokens", f"{args.prompt} prompt + {args.new} generated (greedy)"),
        ("with the KV cache", f"{t_c:.2f} s"),
        ("recomputing the prefix", f"{t_r:.2f} s"),
        ("wall-time ratio", f"{t_r / t_c:.1f}×"),
        ("FLOP ratio (accounting, same steps)", f"{flops_r / flops_c:.1f}×"),
        ("same tokens chosen (float32)", f"{same} of {args.new}"),
    ]
    print("Cached decoding against recomputing the prefix")
    print_table(rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

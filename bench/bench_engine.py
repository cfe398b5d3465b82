"""Benchmark of the engine and the accounting (a report, not a test).

    .venv/bin/python bench/bench_engine.py [--skip-torch]

1. The build's path: importing the engine and the accounting (and that it does not import torch),
   one full toy trace, and every accounting row for the four GPT-2 sizes.
2. A GPT-2-small-shaped forward over 1,024 tokens in numpy float32 (full trace kept) against
   transformers' GPT-2 in torch float32 holding the same random weights: one run each.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

from report import print_table, timed  # bench/report.py (scripts run from bench/)

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-torch", action="store_true", help="only the build-path timings")
    parser.add_argument("--tokens", type=int, default=1024)
    args = parser.parse_args()
    rows: list[tuple[str, str]] = []

    _, t = timed(lambda: __import__("numpy"))
    rows.append(("import numpy", f"{t * 1000:.0f} ms"))

    def import_ours():
        import generator.accounting
        import generator.engine  # noqa: F401

    _, t = timed(import_ours)
    rows.append(("import generator.engine + accounting", f"{t * 1000:.0f} ms"))
    heavy = [m for m in ("torch", "transformers", "safetensors") if m in sys.modules]
    rows.append(("heavy modules imported by them", ", ".join(heavy) or "none"))

    import numpy as np

    from generator import accounting as acc
    from generator.config import CONFIGS, SIZES, TOY
    from generator.engine import (
        forward,
        load_safetensors,
        random_weights,
        toy_token_ids,
        toy_weights,
    )

    def toy_trace():
        return forward(toy_weights(TOY), TOY, toy_token_ids(TOY))

    _, t_toy = timed(toy_trace)
    rows.append(("toy weights + full traced forward (5 tokens)", f"{t_toy * 1000:.1f} ms"))

    def all_accounting():
        for name in SIZES:
            cfg = CONFIGS[name]
            for component in acc.COMPONENTS:
                for row in acc.param_rows(cfg, component) + acc.flop_rows(cfg, component):
                    row.text(), row.tex(), row.value
                acc.params_total(cfg, component), acc.flops_per_token(cfg, component)
            acc.model_summary(cfg)

    _, t_acc = timed(all_accounting)
    rows.append(("all accounting rows, four sizes", f"{t_acc * 1000:.1f} ms"))
    rows.append(("toy trace + accounting", f"{(t_toy + t_acc) * 1000:.1f} ms"))

    if not args.skip_torch:
        cfg = CONFIGS["gpt2"]
        T = args.tokens
        weights, t = timed(lambda: random_weights(cfg, seed=0, dtype=np.float32))
        rows.append(("random GPT-2 small weights (float32)", f"{t:.2f} s"))
        with tempfile.TemporaryDirectory() as tmp:
            from safetensors.numpy import save_file

            path = Path(tmp) / "model.safetensors"
            save_file(weights, path)
            _, t = timed(lambda: load_safetensors(path, cfg))
            size = path.stat().st_size
        rows.append((f"load_safetensors, GPT-2 small float32 ({size / 1e6:.0f} MB)", f"{t:.2f} s"))
        ids = np.random.default_rng(0).integers(0, cfg.vocab_size, size=T)
        trace, t_np = timed(lambda: forward(weights, cfg, ids, dtype=np.float32))
        rows.append((f"numpy float32 forward, {T} tokens, full trace", f"{t_np:.2f} s"))

        import torch

        from tests.engine_helpers import hf_model

        model, t = timed(lambda: hf_model(weights, cfg, dtype=torch.float32))
        rows.append(("build transformers model + load weights", f"{t:.2f} s"))
        with torch.no_grad():
            out, t_torch = timed(lambda: model(torch.as_tensor(ids)[None], use_cache=False))
        rows.append((f"torch float32 forward (eager attention), {T} tokens", f"{t_torch:.2f} s"))
        diff = np.abs(out.logits[0].numpy() - trace.logits).max()
        rows.append(("max |logit difference| numpy vs torch", f"{diff:.2e}"))
        flops = acc.flops_per_token(cfg, "model", T) * T
        rows.append(("forward FLOPs (matmuls)", f"{flops / 1e9:.1f} GFLOPs"))
        rows.append(("numpy throughput", f"{flops / t_np / 1e9:.1f} GFLOP/s"))
        rows.append(("torch throughput", f"{flops / t_torch / 1e9:.1f} GFLOP/s"))
        rows.append(("numpy / torch time", f"{t_np / t_torch:.2f}×"))
        rows.append(("torch threads / CPUs", f"{torch.get_num_threads()} / {os.cpu_count()}"))

    print_table(rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Benchmark of the engine and the accounting (a report, not a test).

    .venv/bin/python bench/bench_engine.py [--skip-torch] [--tokens 1024 128] [--repeat 3]
        [--baseline DIR]

1. The build's path: importing the engine and the accounting (and that it does not import torch),
   one full toy trace, and every accounting row for the four GPT-2 sizes.
2. A GPT-2-small-shaped forward in numpy float32 (keep="none": logits and probabilities only, and
   keep="all") against transformers' GPT-2 in torch float32 eager attention holding the same
   random weights. Each run is a fresh process that builds the weights, then times one forward
   and reads its peak memory above what it held before (the kernel's high-water mark, reset just
   before the forward), then times `--again` more forwards in the same process: what a caller
   running several sees (the two differ, torch's most). Runs alternate numpy / torch so both see
   the same machine load; the table shows medians, of the first forwards and of the later ones.

`--baseline DIR` adds a third kind to the alternation: numpy's forward in DIR, a checkout of an earlier
commit (`git worktree add DIR COMMIT`), so a figure from an earlier note can be checked on today's
machine, against today's torch, in the same run.

To compare against a current numpy, run it with OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE unset in
this command only (`env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE ...`); the table names the
OpenBLAS kernel that ran (threadpoolctl, when installed).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from report import TIME_ONE_RUN, print_table, timed  # bench/report.py (run from bench/)

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# One forward in a fresh process: {"seconds", "peak_mb" (above the memory held before), "check"}.
RUN = (
    """
import sys
import numpy as np
from generator.config import CONFIGS
from generator.engine import random_weights

cfg = CONFIGS["gpt2"]
which, T = {which!r}, {tokens}
weights = random_weights(cfg, seed=0, dtype=np.float32)
ids = np.random.default_rng(0).integers(0, cfg.vocab_size, size=T)
if which == "torch":
    import torch
    from tests.engine_helpers import hf_model
    model = hf_model(weights, cfg, dtype=torch.float32)
    del weights
    def run():
        with torch.no_grad():
            return model(torch.as_tensor(ids)[None], use_cache=False).logits[0].numpy()
else:
    from generator.engine import forward
    def run():
        return forward(weights, cfg, ids, dtype=np.float32, keep=which.split(":")[1]).logits
"""
    + TIME_ONE_RUN
)


def one_run(which: str, tokens: int, again: int, root: Path = ROOT) -> dict:
    """One fresh process running RUN with the engine (and tests' helpers) of the checkout root."""
    out = subprocess.run(
        [sys.executable, "-c", RUN.format(which=which, tokens=tokens, again=again)],
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
        capture_output=True,
        text=True,
    )
    if out.returncode:
        raise SystemExit(out.stderr)
    return json.loads(out.stdout.strip().splitlines()[-1])


def blas_kernel() -> str:
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return "unknown (threadpoolctl not installed)"
    import numpy  # noqa: F401  (loads OpenBLAS)

    info = [i for i in threadpool_info() if i.get("user_api") == "blas"]
    return ", ".join(f"{i['internal_api']} {i['version']} {i['architecture']}" for i in info)


def build_path_rows() -> list[tuple[str, str]]:
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

    from generator import accounting as acc
    from generator import scaling
    from generator.config import CONFIGS, SIZES, TOY
    from generator.engine import forward, toy_token_ids, toy_weights
    from generator.render.numbers import row_tex, row_text

    _, t_toy = timed(lambda: forward(toy_weights(TOY), TOY, toy_token_ids(TOY)))
    rows.append(("toy weights + full traced forward (5 tokens)", f"{t_toy * 1000:.1f} ms"))

    def all_accounting():
        for name in SIZES:
            cfg = CONFIGS[name]
            for component in acc.COMPONENTS:
                for row in acc.param_rows(cfg, component) + acc.flop_rows(cfg, component):
                    row_text(row), row_tex(row), row.value
                acc.params_total(cfg, component), acc.flops_per_token(cfg, component)
            scaling.model_summary(cfg)

    _, t_acc = timed(all_accounting)
    rows.append(("all accounting rows, four sizes", f"{t_acc * 1000:.1f} ms"))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-torch", action="store_true", help="only the build-path timings")
    parser.add_argument("--tokens", type=int, nargs="+", default=[1024, 128])
    parser.add_argument("--repeat", type=int, default=3, help="runs of each, medians shown")
    parser.add_argument("--full-trace", action="store_true", help="also numpy with keep='all'")
    parser.add_argument(
        "--again", type=int, default=2, help="forwards timed after the first, in each process"
    )
    parser.add_argument(
        "--baseline",
        type=Path,
        metavar="DIR",
        help="also time numpy's forward in DIR, a checkout of an earlier commit",
    )
    args = parser.parse_args()
    if args.baseline and args.skip_torch:
        parser.error("--baseline times forwards, which --skip-torch leaves out")
    if args.baseline and not (args.baseline / "generator" / "engine").is_dir():
        parser.error(
            f"--baseline {args.baseline}: not a checkout of this project (no generator/engine)"
        )
    rows = build_path_rows()
    if not args.skip_torch:
        from generator import accounting as acc
        from generator.config import CONFIGS

        rows.append(("OpenBLAS kernel", blas_kernel()))
        for var in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
            rows.append((var, os.environ.get(var, "unset")))
        kinds = ["numpy:none", "torch"] + (["numpy:all"] if args.full_trace else [])
        roots = {kind: ROOT for kind in kinds}
        if args.baseline:
            kinds.append("baseline numpy:none")
            roots["baseline numpy:none"] = args.baseline.resolve()
            rows.append(("baseline", str(roots["baseline numpy:none"])))
        for T in args.tokens:
            runs: dict[str, list[dict]] = {kind: [] for kind in kinds}
            for _ in range(args.repeat):
                for kind in kinds:  # alternate, so all see the same load
                    which = kind.removeprefix("baseline ")
                    runs[kind].append(one_run(which, T, args.again, roots[kind]))
            checks = {kind: runs[kind][0]["check"] for kind in kinds}
            diff = max(
                abs(a - b) for a, b in zip(checks["numpy:none"], checks["torch"], strict=True)
            )
            flops = acc.flops_per_token(CONFIGS["gpt2"], "model", T) * T
            med = {
                kind: (
                    statistics.median(r["seconds"] for r in rs),
                    statistics.median(r["peak_mb"] for r in rs),
                )
                for kind, rs in runs.items()
            }
            for kind, (t, mb) in med.items():
                rows.append((f"{kind} forward, {T} tokens", f"{t:.2f} s, peak +{mb:.0f} MB"))
            t_np, mb_np = med["numpy:none"]
            t_torch, mb_torch = med["torch"]
            rows.append((f"  numpy / torch, {T} tokens: time", f"{t_np / t_torch:.2f}×"))
            if args.baseline:
                t_base = med["baseline numpy:none"][0]
                rows.append((f"  baseline / torch, {T} tokens: time", f"{t_base / t_torch:.2f}×"))
            if args.again:
                later = {
                    k: statistics.median(t for r in runs[k] for t in r["later"]) for k in kinds
                }
                for kind, t in later.items():
                    rows.append((f"{kind} later forwards, {T} tokens (median)", f"{t:.2f} s"))
                ratio = later["numpy:none"] / later["torch"]
                rows.append((f"  numpy / torch, {T} tokens: later forwards' time", f"{ratio:.2f}×"))
                if args.baseline:
                    ratio = later["baseline numpy:none"] / later["torch"]
                    rows.append(
                        (f"  baseline / torch, {T} tokens: later forwards' time", f"{ratio:.2f}×")
                    )
            rows.append((f"  numpy / torch, {T} tokens: peak memory", f"{mb_np / mb_torch:.2f}×"))
            rows.append(
                (
                    f"  numpy throughput ({flops / 1e9:.1f} GFLOP)",
                    f"{flops / t_np / 1e9:.0f} GFLOP/s",
                )
            )
            rows.append(("  max |logit difference|, last position", f"{diff:.1e}"))
        import torch

        rows.append(("torch threads / CPUs", f"{torch.get_num_threads()} / {os.cpu_count()}"))
    print_table(rows)
    print(f"\nload average at the end: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

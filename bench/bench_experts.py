"""Benchmark of the numpy MoE layer against transformers' (a report, not a test).

    .venv/bin/python bench/bench_experts.py [--repeat 7] [--intermediate 3584] [--tokens 512]
        [--grouped-mm]

Issue 32 item 7's shape: width 4,096, 2 layers, 8 experts, top-2, 512 tokens, float32. Each layer
is a Mixtral MoE MLP (router, softmax top-2, SwiGLU experts); the two run one after the other.
The experts' width defaults to 3,584, a quarter of Mixtral's 14,336, which keeps two layers'
weights at 2.8 GB per process on a shared machine (`--intermediate 14336` for Mixtral's own:
11.3 GB).

Memory: each kind runs one forward in a fresh process that first draws the same seeded weights and
tokens; its peak is the kernel's high-water mark (VmHWM, reset just before the forward) above what
the process held before, so both count what their forward allocates, whatever allocator it uses.
The numpy run also reads tracemalloc's peak over one more forward (numpy reports its buffers to
tracemalloc; torch does not). torch holds the very numpy weight buffers (torch.from_numpy into
modules built on the meta device), so both start from the same memory.

Time: one process holds every kind (on the same weight buffers) and runs their forwards in turn,
`--repeat` rounds after a warm-up round, so neighbours in time see the same machine load (this
machine is shared; there, `--threads 1` steadies both: OpenBLAS's two threads stall whenever one
is descheduled). The table shows each kind's median and minimum, every forward, and numpy's
ratio to the others: of the medians, of the minimums, and the median of each round's ratio.

transformers runs MixtralSparseMoeBlock with experts_implementation="eager" (the reference loop
the issue names); `--grouped-mm` adds its "grouped_mm" kernel (what a model loaded without
experts_implementation runs) as a third kind.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from report import print_table  # bench/report.py (scripts run from bench/)

ROOT = Path(__file__).resolve().parent.parent

SETUP = """
import json, time, tracemalloc
import numpy as np

T, d, E, I, k = {tokens}, {width}, {experts}, {inner}, {top_k}
rng = np.random.default_rng(0)
def matrix(*shape):
    return rng.standard_normal(shape, dtype=np.float32) / np.float32(np.sqrt(shape[-1]))
layers = [
    {{"gate.weight": matrix(E, d), "experts.gate_up_proj": matrix(E, 2 * I, d),
      "experts.down_proj": matrix(E, d, I)}}
    for _ in range({layers})
]
x = rng.standard_normal((T, d), dtype=np.float32)
kinds = {kinds!r}
runs = {{}}
if "numpy" in kinds:  # the one decoder's MoE layer, read from a Mixtral spec of this shape
    import dataclasses
    from generator.models import get_family
    from generator.models.decoder import moe
    mixtral = get_family("mixtral").sizes["mixtral-8x7b"]
    spec = dataclasses.replace(mixtral.experts, n_experts=E, top_k=k, d_expert=I)
    cfg = dataclasses.replace(mixtral, d_model=d, experts=spec)
    def run_numpy():
        h = x
        for w in layers:
            h = moe(h, w, cfg)
        return h
    runs["numpy"] = run_numpy
torch_kinds = [kind for kind in kinds if kind.startswith("torch:")]
if torch_kinds:
    import torch
    from transformers import MixtralConfig
    from transformers.models.mixtral.modeling_mixtral import MixtralSparseMoeBlock
    def torch_run(implementation):
        config = MixtralConfig(hidden_size=d, intermediate_size=I, num_local_experts=E,
                               num_experts_per_tok=k, experts_implementation=implementation)
        blocks = []
        for w in layers:  # on the meta device, then holding the numpy buffers themselves
            with torch.device("meta"):
                block = MixtralSparseMoeBlock(config)
            block.load_state_dict({{n: torch.from_numpy(v) for n, v in w.items()}}, assign=True)
            blocks.append(block.eval())
        tx = torch.from_numpy(x)[None]
        def run():
            with torch.no_grad():
                h = tx
                for block in blocks:
                    h = block(h)
            return h[0].numpy()
        return run
    for kind in torch_kinds:
        runs[kind] = torch_run(kind.split(":")[1])
"""

# Peak memory of one kind's first forward in a fresh process: the kernel's high-water mark above
# what the process held before (weights included in "before"), and numpy's tracemalloc peak.
MEMORY = """
import ctypes
def rss(field):
    for line in open("/proc/self/status"):
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024  # kB -> MB
run = runs[kinds[0]]
ctypes.CDLL("libc.so.6").malloc_trim(0)  # hand freed heap back, so "before" is what is live
open("/proc/self/clear_refs", "w").write("5")  # reset the high-water mark (VmHWM)
before = rss("VmRSS")
out = run()
peak_mb = rss("VmHWM") - before
traced_mb = None
if kinds[0] == "numpy":
    tracemalloc.start()
    run()
    traced_mb = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
print(json.dumps({{"peak_mb": peak_mb, "traced_mb": traced_mb,
                   "check": out[:4, :4].ravel().tolist()}}))
"""

# Every kind's forward in turn, `repeat` rounds, in one process: neighbours in time see the same
# machine load. One warm-up round first (thread pools, first-touch pages).
TIMES = """
for run in runs.values():
    run()
seconds = {{kind: [] for kind in kinds}}
for _ in range({repeat}):
    for kind in kinds:
        start = time.perf_counter()
        runs[kind]()
        seconds[kind].append(time.perf_counter() - start)
print(json.dumps(seconds))
"""


def in_fresh_process(script: str, kinds: list[str], args: argparse.Namespace) -> dict:
    """Run SETUP for `kinds`, then `script`, in a new Python; its last line of output, read."""
    settings = dict(
        tokens=args.tokens,
        width=args.width,
        experts=args.experts,
        inner=args.intermediate,
        top_k=args.top_k,
        layers=args.layers,
        kinds=kinds,
        repeat=args.repeat,
    )
    out = subprocess.run(
        [sys.executable, "-c", (SETUP + script).format(**settings)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), **threads_env(args.threads)},
        capture_output=True,
        text=True,
    )
    if out.returncode:
        raise SystemExit(out.stderr)
    return json.loads(out.stdout.strip().splitlines()[-1])


def threads_env(threads: int | None) -> dict[str, str]:
    """The thread count numpy's OpenBLAS and torch's OpenMP (and MKL) start with, if given."""
    names = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
    return {name: str(threads) for name in names} if threads else {}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7, help="timed rounds of every kind")
    parser.add_argument("--tokens", type=int, default=512)
    parser.add_argument("--width", type=int, default=4096)
    parser.add_argument("--intermediate", type=int, default=3584, help="each expert's width I")
    parser.add_argument("--experts", type=int, default=8)
    parser.add_argument("--top-k", type=int, default=2)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--grouped-mm", action="store_true", help="also transformers' grouped_mm")
    parser.add_argument(
        "--threads", type=int, help="threads for both libraries (default: their own, all cores)"
    )
    args = parser.parse_args()
    kinds = ["numpy", "torch:eager"] + (["torch:grouped_mm"] if args.grouped_mm else [])
    memory = {kind: in_fresh_process(MEMORY, [kind], args) for kind in kinds}
    seconds = in_fresh_process(TIMES, kinds, args)
    rows = [
        (
            "shape",
            f"{args.layers} layers, width {args.width}, {args.experts} experts of width "
            f"{args.intermediate}, top-{args.top_k}, {args.tokens} tokens, float32",
        ),
        ("timed rounds (one process, kinds in turn)", str(args.repeat)),
        ("threads", str(args.threads or "the libraries' default") + f" ({os.cpu_count()} cores)"),
    ]
    for kind in kinds:
        times = seconds[kind]
        rows.append(
            (
                f"{kind}: median / min",
                f"{statistics.median(times):.3f} s / {min(times):.3f} s",
            )
        )
        rows.append((f"{kind}: every forward", " ".join(f"{t:.2f}" for t in times)))
        rows.append((f"{kind}: peak RSS above weights", f"{memory[kind]['peak_mb']:.0f} MB"))
    rows.append(("numpy: tracemalloc peak", f"{memory['numpy']['traced_mb']:.0f} MB"))
    for kind in kinds[1:]:
        pairs = [a / b for a, b in zip(seconds["numpy"], seconds[kind], strict=True)]
        rows.append(
            (
                f"numpy / {kind}: ratio of medians, of mins, median of rounds' ratios",
                f"{statistics.median(seconds['numpy']) / statistics.median(seconds[kind]):.3f}, "
                f"{min(seconds['numpy']) / min(seconds[kind]):.3f}, "
                f"{statistics.median(pairs):.3f}",
            )
        )
        checks = zip(memory["numpy"]["check"], memory[kind]["check"], strict=True)
        rows.append(
            (f"max |numpy − {kind}| over 16 outputs", f"{max(abs(a - b) for a, b in checks):.2e}")
        )
    print_table(rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

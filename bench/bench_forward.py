"""Benchmark of the forward-pass page (a report, not a test).

    .venv/bin/python bench/bench_forward.py [--skip-cold] [--skip-long]

1. Stand-in training from scratch (what `itm train-standin` does; no build does it), in a fresh
   process: wall time, steps and final loss.
2. A build's work for this page, in a fresh process: import generator.forward, load and verify
   the committed stand-in, run the engine, score heads, render every macro and generated file;
   and whether torch was imported (it must not be).
3. Page weight: the gallery's HTML, its thumbnails (loaded with the page), and the large views
   (loaded one at a time, on demand).
4. `itm forward` on a 1,024-token prompt through the GPT-2 branch: a GPT-2-small-shaped random
   checkpoint (548 MB of float32, written here, pinned by a pins file of its own) and a byte-level
   vocabulary, so every step GPT-2's own files would take runs: verify, tokenize, the traced
   forward, head scores, removals. Wall time and peak memory of the whole command.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from report import print_table  # bench/report.py (scripts run from bench/)

ROOT = Path(__file__).resolve().parent.parent

COLD = """
import json, time
start = time.perf_counter()
from generator.forward.standin_training import train
weights, record = train()
print(json.dumps({{"wall": time.perf_counter() - start, "record": record}}))
"""

CACHED = """
import json, sys, time, pathlib
start = time.perf_counter()
from generator.forward import current
from generator import blocks
from generator.forward import feature, render
from generator.settings import Settings
from generator.inputs import BuildInputs
settings = Settings.load(pathlib.Path({root!r}))
fp = current(settings)
site = BuildInputs(settings, excerpts={{}})  # files() reads only the settings
files = feature.files(site)
gallery = blocks.render(render.gallery_block(fp, lambda p: "../" + p))
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


def long_prompt(vocab: dict[str, int], merges: list[tuple[str, str]], n_tokens: int) -> str:
    """Text that the byte-level tokenizer cuts into n_tokens - 1 tokens (<|endoftext|> is added)."""
    from generator.forward.bpe import BPETokenizer

    with tempfile.TemporaryDirectory() as tmp:
        v, m = Path(tmp) / "vocab.json", Path(tmp) / "merges.txt"
        v.write_text(json.dumps(vocab))
        m.write_text("#version: 0.2\n" + "".join(f"{a} {b}\n" for a, b in merges))
        tokenizer = BPETokenizer.from_files(v, m)
    sentence = "The quick brown fox jumps over the lazy dog near the old river bank. "
    text = sentence * (n_tokens // 20)
    while len(tokenizer.encode(text)) > n_tokens - 1:
        text = text[:-1]
    return text


def gpt2_sized_vocab(small: dict[str, int], size: int) -> dict[str, int]:
    """The byte-level vocabulary padded to `size` with tokens no merge makes (so every id the
    model predicts has a text), <|endoftext|> last as in GPT-2's."""
    symbols = [s for s in small if s != "<|endoftext|>"]
    symbols += [f"zz{n}" for n in range(size - 1 - len(symbols))]
    return {s: i for i, s in enumerate([*symbols, "<|endoftext|>"])}


def itm_forward_long(
    env: dict[str, str], n_tokens: int = 1024, profile: Path | None = None
) -> tuple[float, float, str]:
    """(seconds, peak MB, last line) of `itm forward` on GPT-2-small-shaped random files
    (profiled by cProfile into `profile` if given)."""
    import resource

    import numpy as np
    from safetensors.numpy import save_file

    sys.path.insert(0, str(ROOT))
    from generator.config import CONFIGS
    from generator.engine import random_weights
    from tests.forward_helpers import TINY_MERGES, sha256_file, tiny_vocab

    cfg = CONFIGS["gpt2"]
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        folder = tmp / "weights"
        folder.mkdir()
        weights = random_weights(cfg, seed=0, dtype=np.float32)
        save_file(
            {k: np.ascontiguousarray(v) for k, v in weights.items()}, folder / "model.safetensors"
        )
        del weights
        vocab = gpt2_sized_vocab(tiny_vocab(), cfg.vocab_size)
        (folder / "vocab.json").write_text(json.dumps(vocab), encoding="utf-8")
        merges = "#version: 0.2\n" + "".join(f"{a} {b}\n" for a, b in TINY_MERGES)
        (folder / "merges.txt").write_text(merges, encoding="utf-8")
        files = "".join(
            f'\n[checkpoints.gpt2.files."{p.name}"]\nsize = {p.stat().st_size}\n'
            f'sha256 = "{sha256_file(p)}"\n'
            for p in sorted(folder.iterdir())
        )
        root = tmp / "project"
        (root / "sources").mkdir(parents=True)
        (root / "sources" / "checkpoints.toml").write_text(
            'version = 1\n\n[checkpoints.gpt2]\nrepo = "example-owner/gpt2-shaped"\n'
            f'revision = "{"0" * 40}"\nmodel = "gpt2"\nlicense = "test"\n'
            'env = "ITM_BENCH_WEIGHTS"\n' + files
        )
        prompt = long_prompt(vocab, TINY_MERGES, n_tokens)
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        start = time.perf_counter()
        profiler = [sys.executable, "-m", "cProfile", "-o", str(profile)] if profile else []
        out = subprocess.run(
            [*profiler, str(Path(sys.executable).with_name("itm")), "forward", "--root", str(root),
             "--weights", str(folder), "--prompt", prompt],
            env={**env, "ITM_CACHE_DIR": str(tmp / "cache")},
            capture_output=True,
            text=True,
        )  # fmt: skip
        seconds = time.perf_counter() - start
        if out.returncode:
            raise SystemExit(out.stderr)
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        if peak <= before:  # an earlier child was bigger: the maximum does not say this one's
            peak = float("nan")
        tokens = next(line for line in out.stdout.splitlines() if line.startswith("tokens ("))
        return seconds, peak / 1024, tokens.split(":")[0]


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
    parser.add_argument("--skip-long", action="store_true", help="no 1,024-token itm forward")
    args = parser.parse_args()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    rows: list[tuple[str, str]] = []

    if not args.skip_long:  # first, so the children's peak memory is this command's
        seconds, peak_mb, tokens = itm_forward_long(env)
        rows.append((f"itm forward, GPT-2-small-shaped, {tokens}", f"{seconds:.1f} s"))
        rows.append(("  peak memory (resident)", f"{peak_mb:.0f} MB"))

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

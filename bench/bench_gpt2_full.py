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
import hashlib
import itertools
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from report import print_table  # noqa: E402  (bench/report.py)

from generator.config import CONFIGS  # noqa: E402
from generator.engine import random_weights, weight_shapes, write_safetensors  # noqa: E402
from generator.forward.bpe import ENDOFTEXT, bytes_to_unicode  # noqa: E402

N_MERGES = 50_000  # GPT-2's merges.txt has 50,000 rules; 256 + 50,000 + 1 = 50,257 tokens


def write_checkpoint(folder: Path) -> dict[str, Path]:
    """model.safetensors (random, GPT-2 small's shapes), vocab.json and merges.txt."""
    cfg = CONFIGS["gpt2"]
    folder.mkdir(parents=True)
    weights = random_weights(cfg, seed=0, dtype=np.float32)
    assert set(weights) == set(weight_shapes(cfg))
    with (folder / "model.safetensors").open("wb") as handle:
        write_safetensors(handle, weights, {"format": "pt"})
    del weights
    symbols = list(bytes_to_unicode().values())  # the 256 byte symbols, in byte order
    merges = list(itertools.islice(itertools.product(symbols, symbols), N_MERGES))
    vocab = {s: i for i, s in enumerate(symbols)}
    for a, b in merges:
        vocab[a + b] = len(vocab)
    vocab[ENDOFTEXT] = len(vocab)
    assert len(vocab) == cfg.vocab_size, len(vocab)
    (folder / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
    text = "#version: 0.2\n" + "".join(f"{a} {b}\n" for a, b in merges)
    (folder / "merges.txt").write_text(text, encoding="utf-8")
    return {name: folder / name for name in ("model.safetensors", "vocab.json", "merges.txt")}


def pin(paths: dict[str, Path]) -> str:
    """A pins file like the real one, naming these files."""
    out = (
        "version = 1\n\n[checkpoints.gpt2]\n"
        'repo = "bench/gpt2-random"\nrevision = "' + "0" * 40 + '"\nmodel = "gpt2"\n'
        'license = "none: random weights"\nenv = "ITM_GPT2_WEIGHTS"\n'
    )
    for name, path in paths.items():
        sha = hashlib.sha256(path.read_bytes()).hexdigest()
        out += f'\n[checkpoints.gpt2.files."{name}"]\nsize = {path.stat().st_size}\n'
        out += f'sha256 = "{sha}"\n'
    real = (ROOT / "sources" / "checkpoints.toml").read_text(encoding="utf-8")
    return out + "\n" + real[real.index("# The stand-in") :]  # the stand-in's pin, unchanged


def project(scratch: Path, paths: dict[str, Path]) -> Path:
    copy = scratch / "project"
    for name in ("docs", "sources", "overrides"):
        if (ROOT / name).exists():
            shutil.copytree(ROOT / name, copy / name)
    shutil.copy(ROOT / "mkdocs.yml", copy / "mkdocs.yml")
    (copy / "sources" / "checkpoints.toml").write_text(pin(paths), encoding="utf-8")
    return copy


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
        root = project(scratch, paths)
        site = scratch / "site"
        env = {
            **os.environ,
            "ITM_GPT2_WEIGHTS": str(scratch / "weights"),
            "ITM_CACHE_DIR": str(scratch / "cache"),
            "HF_HUB_CACHE": str(scratch / "hub"),
            "SOURCE_DATE_EPOCH": "1700000000",
            "NO_MKDOCS_2_WARNING": "1",
        }
        shutil.copytree(ROOT / ".cache" / "sha256", scratch / "cache" / "sha256")  # no refetch
        mkdocs = str(Path(sys.executable).with_name("mkdocs"))
        started = time.perf_counter()
        out = subprocess.run(
            [mkdocs, "build", "--site-dir", str(site)],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
        )
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

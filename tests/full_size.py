"""A GPT-2-small-shaped checkpoint with random weights, a byte-level vocabulary of GPT-2's size
and its own pin, in a project copy: the GPT-2 branch at full size without the hub (used by
bench/bench_gpt2_full.py and the slow full-size browser test)."""

from __future__ import annotations

import hashlib
import itertools
import json
import shutil
from pathlib import Path

import numpy as np

from generator.config import CONFIGS
from generator.engine import random_weights, weight_shapes, write_safetensors
from generator.forward.bpe import ENDOFTEXT, bytes_to_unicode
from tests.site_helpers import ROOT

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


def build(scratch: Path, site: Path, **env: str):
    """`mkdocs build` (torch unimportable, as every test build) of the project copy in `scratch`
    with the files in scratch/weights; returns the finished process."""
    from tests.site_helpers import mkdocs_build

    return mkdocs_build(
        site,
        config_dir=scratch / "project",
        ITM_GPT2_WEIGHTS=str(scratch / "weights"),
        HF_HUB_CACHE=str(scratch / "hub"),
        **env,
    )

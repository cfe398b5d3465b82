"""A GPT-2-small-shaped checkpoint with random weights, a byte-level vocabulary of GPT-2's size
and its own pin, in a project copy: the GPT-2 branch at full size without the hub (used by
bench/bench_gpt2_full.py and the slow full-size browser test); and a prompt of a given length in
tokens of that vocabulary."""

from __future__ import annotations

import hashlib
import itertools
import json
import shutil
from pathlib import Path

import numpy as np

from generator.config import CONFIGS
from generator.engine import random_weights, weight_shapes, write_safetensors
from generator.forward.bpe import ENDOFTEXT, BPETokenizer, bytes_to_unicode
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


def prompt_of(folder: Path, n_tokens: int) -> str:
    """A repeated sentence cut to the longest prefix that the vocabulary in `folder` makes
    n_tokens - 1 tokens of, so that with <|endoftext|> the page's prompt is n_tokens long (1,024:
    GPT-2's whole context). The repeats give induction scores something to find."""
    tokenizer = BPETokenizer.from_files(folder / "vocab.json", folder / "merges.txt")
    text = "The quick brown fox jumps over the lazy dog near the old river bank. " * n_tokens
    low, high = 0, len(text)  # token counts grow with the prefix: search its length
    while low < high:
        middle = (low + high + 1) // 2
        if len(tokenizer.encode(text[:middle])) <= n_tokens - 1:
            low = middle
        else:
            high = middle - 1
    found = len(tokenizer.encode(text[:low])) + 1
    if found != n_tokens:
        raise ValueError(f"no prefix makes {n_tokens} tokens (the closest makes {found})")
    return text[:low]


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

"""Shared helpers for the forward-pass tests: a tiny GPT-2-shaped checkpoint written by the test,
a pin for it, a guard that fails any socket to a host other than 127.0.0.1, and a digest that
tells two sets of weights apart."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import socket
from pathlib import Path

import numpy as np

from generator.checkpoints import CheckpointPin, PinnedFile
from generator.config import CONFIGS
from generator.engine import random_weights
from generator.engine.layers import Weights
from generator.forward.bpe import bytes_to_unicode

# GPT-2's shape rules with everything small: 2 blocks, 2 heads, width 16, a byte-level vocabulary.
TINY = dataclasses.replace(
    CONFIGS["gpt2"], name="tiny", label="tiny", n_layer=2, n_head=2, d_model=16, n_ctx=32,
    vocab_size=256 + 8 + 1,
)  # fmt: skip
# The same with a context long enough for prompts the forward-pass page draws in summary (over
# head_images.LABELLED_MAX tokens), registered as "tiny" by the tests that use it.
TINY_LONG = dataclasses.replace(TINY, n_ctx=512)
TINY_MERGES = [("Ġ", "t"), ("h", "e"), ("Ġt", "he"), ("Ġ", "a"), ("o", "w"), ("Ġ", "c"),
               ("a", "t"), ("Ġc", "at")]  # fmt: skip
REVISION = "0123456789abcdef0123456789abcdef01234567"


def tiny_vocab() -> dict[str, int]:
    """256 byte symbols, the tiny merges' results, and <|endoftext|> last (as GPT-2's)."""
    symbols = [bytes_to_unicode()[b] for b in range(256)]
    symbols += [a + b for a, b in TINY_MERGES]
    symbols.append("<|endoftext|>")
    return {s: i for i, s in enumerate(symbols)}


def write_tiny_checkpoint(folder: Path, seed: int = 0, cfg=TINY) -> dict[str, Path]:
    """model.safetensors (hub names, float32, cfg's shapes), vocab.json and merges.txt in
    `folder`."""
    from safetensors.numpy import save_file

    folder.mkdir(parents=True, exist_ok=True)
    weights = random_weights(cfg, seed=seed, dtype=np.float32)
    save_file(
        {k: np.ascontiguousarray(v) for k, v in weights.items()}, folder / "model.safetensors"
    )
    (folder / "vocab.json").write_text(json.dumps(tiny_vocab()), encoding="utf-8")
    merges = "#version: 0.2\n" + "".join(f"{a} {b}\n" for a, b in TINY_MERGES)
    (folder / "merges.txt").write_text(merges, encoding="utf-8")
    return {name: folder / name for name in ("model.safetensors", "vocab.json", "merges.txt")}


def sha256_file(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def pin_for(paths: dict[str, Path], env: str = "ITM_TINY_WEIGHTS") -> CheckpointPin:
    """A pin whose sizes and hashes are those of the files the test just wrote."""
    files = {
        name: PinnedFile(name, path.stat().st_size, sha256_file(path))
        for name, path in paths.items()
    }
    return CheckpointPin(
        key="tiny",
        repo="example-owner/tiny-gpt2",
        revision=REVISION,
        model="tiny",
        license="test",
        env=env,
        files=files,
    )


def hub_snapshot(hub: Path, pin: CheckpointPin) -> Path:
    return hub / "models--example-owner--tiny-gpt2" / "snapshots" / pin.revision


def block_network(monkeypatch) -> list[object]:
    """Make every connection to a host other than 127.0.0.1 fail the test; returns the attempts."""
    attempts: list[object] = []
    real_connect = socket.socket.connect
    real_create = socket.create_connection

    def local(address) -> bool:
        host = address[0] if isinstance(address, tuple) else address
        return host in ("127.0.0.1", "localhost", "::1") or isinstance(address, str | bytes)

    def connect(self, address):
        if not local(address):
            attempts.append(address)
            raise AssertionError(f"network access to {address!r} during a test")
        return real_connect(self, address)

    def create_connection(address, *args, **kwargs):
        if not local(address):
            attempts.append(address)
            raise AssertionError(f"network access to {address!r} during a test")
        return real_create(address, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket, "create_connection", create_connection)
    return attempts


def pins_toml(paths: dict[str, Path]) -> str:
    pin = pin_for(paths)
    files = "".join(
        f'\n[checkpoints.gpt2.files."{f.name}"]\nsize = {f.size}\nsha256 = "{f.sha256}"\n'
        for f in pin.files.values()
    )
    return (
        "version = 1\n\n[checkpoints.gpt2]\n"
        f'repo = "{pin.repo}"\nrevision = "{pin.revision}"\nmodel = "tiny"\n'
        'license = "test"\nenv = "ITM_GPT2_WEIGHTS"\n' + files
    )


def weights_digest(weights: Weights) -> str:
    """sha256 over every tensor's name, shape and bytes, in name order."""
    digest = hashlib.sha256()
    for name in sorted(weights):
        array = np.ascontiguousarray(weights[name], dtype=np.float32)
        digest.update(f"{name}{array.shape}".encode())
        digest.update(array.tobytes())
    return digest.hexdigest()

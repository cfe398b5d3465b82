"""A checkpoint found and verified by the resolver, loaded by the engine, gives the logits of
transformers' GPT2LMHeadModel loaded from the same files (float64, eager attention)."""

from __future__ import annotations

import numpy as np
import pytest

from generator.checkpoint_files import resolve
from generator.engine import forward, load_safetensors
from generator.forward.bpe import BPETokenizer
from tests.forward_helpers import TINY, block_network, pin_for, write_tiny_checkpoint

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
pytestmark = pytest.mark.slow


def test_resolved_tiny_checkpoint_matches_gpt2lmheadmodel(tmp_path, monkeypatch):
    attempts = block_network(monkeypatch)
    folder = tmp_path / "tiny"
    paths = write_tiny_checkpoint(folder, seed=3)
    pin = pin_for(paths)
    found = resolve(
        pin,
        cache_dir=tmp_path / "cache",
        hub_cache=tmp_path / "hub",
        user_path=folder,
    )
    tokenizer = BPETokenizer.from_files(found.paths["vocab.json"], found.paths["merges.txt"])
    ids = np.array([tokenizer.bos_id, *tokenizer.encode(" the cat sat on the mat, the cat")])
    ours = forward(load_safetensors(found.weights, TINY), TINY, ids)

    from tests.engine_helpers import hf_config

    config = hf_config(TINY)
    config.save_pretrained(folder)  # the model folder: config.json beside model.safetensors
    model = transformers.GPT2LMHeadModel.from_pretrained(
        folder, dtype=torch.float64, attn_implementation="eager"
    ).eval()
    with torch.no_grad():
        out = model(torch.as_tensor(ids)[None], use_cache=False, output_attentions=True)
    np.testing.assert_allclose(ours.logits, out.logits[0].numpy(), rtol=0, atol=1e-10)
    for block, theirs in zip(ours.blocks, out.attentions, strict=True):
        np.testing.assert_allclose(block.attention["weights"], theirs[0].numpy(), atol=1e-12)
    assert attempts == []

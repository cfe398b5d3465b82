"""The frontier families (Mixtral, gpt-oss, DeepSeek-V3), proven like GPT-2 and Llama against
transformers: every count equals numel() of the model on the meta device at the released shape;
the engine's logits equal the family's ForCausalLM in float64 on tiny random specs of its shape
(routing, windows shorter than the sequence, sinks, latent attention, YaRN); cached decoding
equals transformers' cache step by step, and the cache holds what the site says; FLOPs equal
FlopCounterMode on those models (eager attention computes every cell, so a spec with a window
is counted without it there; the window's own count is the decoding test of the Llama family).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from torch.utils.flop_counter import FlopCounterMode  # noqa: E402
from transformers import DynamicCache  # noqa: E402

from generator import accounting  # noqa: E402
from generator.models import FAMILIES  # noqa: E402
from generator.models.decoder import decode_step, forward  # noqa: E402
from generator.models.weights import random_weights  # noqa: E402
from tests.frontier_helpers import CLASSES, hf_config, hf_logits, hf_model, tiny  # noqa: E402
from tests.llama_helpers import float64_inside  # noqa: E402

pytestmark = pytest.mark.slow
ATOL = 1e-12
FRONTIER = [name for name in CLASSES if name in FAMILIES]
SPECS = [cfg for name in FRONTIER for cfg in FAMILIES[name].sizes.values()]
TINY = [tiny(cfg, seed) for cfg in SPECS for seed in range(20)]


@pytest.mark.parametrize("cfg", SPECS, ids=lambda c: c.name)
def test_every_parameter_and_tensor_equals_the_model_on_the_meta_device(cfg) -> None:
    with torch.device("meta"):
        model = CLASSES[cfg.family][1](hf_config(cfg))
    assert accounting.params_total(cfg, "model") == sum(p.numel() for p in model.parameters())
    shapes = {name: tuple(t.shape) for name, t in model.state_dict().items()}
    if cfg.tied_embeddings:
        del shapes["lm_head.weight"]
    assert FAMILIES[cfg.family].weight_shapes(cfg) == shapes
    for component in FAMILIES[cfg.family].components:  # each row's total is the model's sum
        accounting.params_total(cfg, component)


@pytest.mark.parametrize("cfg", TINY, ids=lambda c: c.name)
def test_logits_equal_transformers_in_float64(cfg) -> None:
    weights = random_weights(cfg, seed=sum(map(ord, cfg.name)))
    ids = np.random.default_rng(7).integers(0, cfg.vocab_size, 11)
    ours = forward(weights, cfg, ids).logits
    theirs = hf_logits(hf_model(weights, cfg), ids)
    assert np.abs(ours - theirs).max() < ATOL


@pytest.mark.parametrize("cfg", TINY[::5], ids=lambda c: c.name)
def test_cached_decoding_equals_transformers_cache_step_by_step(cfg) -> None:
    weights = random_weights(cfg, seed=3)
    ids = np.random.default_rng(2).integers(0, cfg.vocab_size, 12)
    model = hf_model(weights, cfg)
    cache, ours, theirs = None, [], []
    hf_cache = DynamicCache(config=model.config)
    for chunk in (ids[:5], ids[5:6], ids[6:7], ids[7:10], ids[10:11], ids[11:12]):
        step = decode_step(weights, cfg, chunk, cache)
        cache = step.cache
        ours.append(step.logits)
        with float64_inside(), torch.no_grad():
            out = model(torch.as_tensor(chunk)[None, :], cache=hf_cache, use_cache=True)
        hf_cache = out.cache
        theirs.append(out.logits[0].numpy())
    for mine, their in zip(ours, theirs, strict=True):
        assert np.abs(mine - their).max() < ATOL
    held = sum(layer.keys.numel() + layer.values.numel() for layer in hf_cache.layers)
    assert cache is not None and cache.values == held
    rows = {r.key: r.value for r in accounting.kv_cache_rows(cfg, len(ids))}
    assert rows["context.values"] == held


@pytest.mark.parametrize("cfg", TINY[::4], ids=lambda c: c.name)
def test_flops_equal_the_flop_counter(cfg) -> None:
    """FlopCounterMode on the model with its real routing: each token runs its top_k experts, so
    the count is the active path's, whatever the router chose."""
    T = 9
    weights = random_weights(cfg, seed=5)
    model = hf_model(weights, cfg)
    ids = torch.as_tensor(np.random.default_rng(4).integers(0, cfg.vocab_size, T))[None, :]
    with FlopCounterMode(display=False) as counter, float64_inside(), torch.no_grad():
        model(ids, use_cache=False)
    eager = dataclasses.replace(cfg, sliding_window=None, layer_types=None)  # every cell
    assert counter.get_total_flops() == accounting.flops_per_token(eager, "model", T) * T


@pytest.mark.parametrize("cfg", TINY[1::5], ids=lambda c: c.name)
def test_a_decoding_step_equals_the_flop_counter(cfg) -> None:
    """One cached step at token t: FlopCounterMode on transformers' own step equals decode_flops
    (a window's layers read only what their cache keeps; latent attention reads every cached
    latent out again, as transformers does)."""
    t = 10
    weights = random_weights(cfg, seed=6)
    model = hf_model(weights, cfg)
    ids = np.random.default_rng(8).integers(0, cfg.vocab_size, t)
    cache = DynamicCache(config=model.config)
    with float64_inside(), torch.no_grad():
        cache = model(torch.as_tensor(ids[:-1])[None, :], cache=cache, use_cache=True).cache
        with FlopCounterMode(display=False) as counter:
            model(torch.as_tensor(ids[-1:])[None, :], cache=cache, use_cache=True)
    assert counter.get_total_flops() == accounting.decode_flops(cfg, t, cached=True)

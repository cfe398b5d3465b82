"""Cached decoding and sampling against transformers: GPT2LMHeadModel with a KV cache holding the
same weights (float64, 1e-10), its logits processors on the same logits, and its greedy generate().
"""

from __future__ import annotations

import dataclasses
import inspect

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

pytestmark = pytest.mark.slow  # runs torch / transformers

from transformers import DynamicCache  # noqa: E402
from transformers.generation.logits_process import (  # noqa: E402
    LogitsProcessorList,
    TemperatureLogitsWarper,
    TopKLogitsWarper,
    TopPLogitsWarper,
)

from generator.config import CONFIGS, TOY  # noqa: E402
from generator.engine import random_weights, toy_weights  # noqa: E402
from generator.engine.decode import decode_step  # noqa: E402
from generator.engine.sampling import Sampling, generate, process  # noqa: E402
from tests.engine_helpers import hf_model  # noqa: E402


def shaped(size: str, n_layer: int) -> dataclasses.replace:
    """A GPT-2 size's width and heads, fewer blocks and a small vocabulary to stay fast."""
    return dataclasses.replace(
        CONFIGS[size], name=f"{size}-{n_layer}l", n_layer=n_layer, vocab_size=307
    )


# The keyword the installed transformers uses for the cache (`past_key_values`, later `cache`).
import transformers.models.gpt2.modeling_gpt2 as _m  # noqa: E402

CACHE_KW = (
    "cache"
    if "cache" in inspect.signature(_m.GPT2LMHeadModel.forward).parameters
    else "past_key_values"
)


def layer_kv(cache, i: int) -> tuple[np.ndarray, np.ndarray]:
    """Layer i's keys and values [h, ns, dh] from a transformers cache object."""
    if hasattr(cache, "layers"):
        layer = cache.layers[i]
        k, v = layer.keys, layer.values
    else:  # older releases: key_cache / value_cache lists
        k, v = cache.key_cache[i], cache.value_cache[i]
    return k[0].numpy(), v[0].numpy()


@pytest.mark.parametrize(
    ("cfg", "seed"),
    [
        (TOY, None),
        (TOY, 5),
        (shaped("gpt2", 2), 1),
        (shaped("gpt2-medium", 1), 2),
        (shaped("gpt2-xl", 1), 3),
    ],
    ids=["toy", "toy-random", "small-2l", "medium-1l", "xl-1l"],
)
def test_cached_decoding_equals_transformers_with_cache(cfg, seed):
    weights = toy_weights(cfg) if seed is None else random_weights(cfg, seed=seed)
    model = hf_model(weights, cfg)
    ids = np.random.default_rng(11).integers(0, cfg.vocab_size, size=9)
    chunks = (5, 1, 1, 2)  # a prompt, then one token, one, two
    cache_hf = DynamicCache()
    ours = None
    start = 0
    for size in chunks:
        new = ids[start : start + size]
        ours = decode_step(weights, cfg, new, None if ours is None else ours.cache)
        with torch.no_grad():
            out = model(torch.as_tensor(new)[None, :], use_cache=True, **{CACHE_KW: cache_hf})
        cache_hf = getattr(out, "past_key_values", None) or getattr(out, "cache", None) or cache_hf
        np.testing.assert_allclose(ours.logits, out.logits[0].numpy(), atol=1e-10, rtol=0)
        assert ours.cache.shape[3] == cache_hf.get_seq_length() == start + size
        for i in range(cfg.n_layer):
            k, v = layer_kv(cache_hf, i)
            np.testing.assert_allclose(ours.cache[i, 0], k, atol=1e-10, rtol=0)
            np.testing.assert_allclose(ours.cache[i, 1], v, atol=1e-10, rtol=0)
        start += size


SETTINGS = [
    Sampling(),
    Sampling(temperature=0.7),
    Sampling(temperature=1.6, top_k=5),
    Sampling(top_k=1),
    Sampling(top_k=10_000),  # more than the vocabulary: keeps everything
    Sampling(top_p=0.9),
    Sampling(top_p=0.05),  # keeps only the most probable token
    Sampling(top_p=1.0),
    Sampling(temperature=0.8, top_k=40, top_p=0.5),
]


def hf_processors(s: Sampling) -> LogitsProcessorList:
    """transformers' warpers for the same settings, in generate()'s order."""
    found = LogitsProcessorList()
    if s.temperature != 1.0:
        found.append(TemperatureLogitsWarper(s.temperature))
    if s.top_k is not None:
        found.append(TopKLogitsWarper(s.top_k))
    if s.top_p is not None:
        found.append(TopPLogitsWarper(s.top_p))
    return found


@pytest.mark.parametrize("sampling", SETTINGS, ids=repr)
def test_logit_processing_equals_transformers_warpers(sampling):
    logits = np.random.default_rng(4).normal(scale=3.0, size=(6, 257))
    ours = process(logits, sampling)
    theirs = hf_processors(sampling)(
        torch.zeros((6, 1), dtype=torch.long), torch.tensor(logits)
    ).numpy()
    np.testing.assert_array_equal(np.isneginf(ours), np.isneginf(theirs))
    kept = ~np.isneginf(ours)
    assert kept.sum(axis=-1).min() >= 1
    np.testing.assert_allclose(ours[kept], theirs[kept], rtol=1e-15, atol=0)


def test_greedy_generation_equals_transformers_generate():
    cfg = shaped("gpt2", 2)
    weights = random_weights(cfg, seed=6)
    prompt = np.array([3, 141, 59, 26])
    ours = generate(weights, cfg, prompt, 8, Sampling(greedy=True))
    model = hf_model(weights, cfg)
    with torch.no_grad():
        out = model.generate(
            torch.as_tensor(prompt)[None, :],
            attention_mask=torch.ones((1, len(prompt)), dtype=torch.long),
            max_new_tokens=8,
            do_sample=False,
            use_cache=True,
            pad_token_id=0,
        )
    assert [c.token for c in ours] == out[0, len(prompt) :].tolist()

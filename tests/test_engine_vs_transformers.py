"""The numpy engine against transformers' GPT-2 modules holding the same weights.

Every traced intermediate (embeddings, LayerNorms, q/k/v, scores, scaled, masked, weights,
per-head outputs, merged, projected, MLP steps, residuals, ln_f, logits, probabilities) must equal
what transformers computes inside a real model forward (eager attention, causal mask), to 1e-10
in float64.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

pytestmark = pytest.mark.slow  # runs torch / transformers

from generator.config import CONFIGS, TOY, TOY_TOKENS  # noqa: E402
from generator.engine import forward, random_weights, toy_token_ids, toy_weights  # noqa: E402
from tests.engine_helpers import engine_trace_dict, hf_model, hf_trace  # noqa: E402

# GPT-2 small's width and heads, two blocks, a small vocabulary to stay fast.
SMALL_SHAPED = dataclasses.replace(CONFIGS["gpt2"], name="gpt2-2layer", n_layer=2, vocab_size=509)


def compare(ours: dict, theirs: dict, atol: float, rtol: float = 0.0) -> int:
    """Assert every key of ours matches theirs; return how many arrays were compared."""
    assert set(ours) == set(theirs), set(ours) ^ set(theirs)
    for key, value in ours.items():
        expected = theirs[key]
        assert value.shape == expected.shape, (key, value.shape, expected.shape)
        if key.endswith(".masked"):  # ours: −inf above the diagonal; transformers: + finfo.min
            hidden = np.isneginf(value)
            assert hidden.sum() == value.shape[0] * value.shape[1] * (value.shape[1] - 1) // 2
            assert np.all(expected[hidden] <= np.finfo(expected.dtype).min / 2), key
            value, expected = value[~hidden], expected[~hidden]
        np.testing.assert_allclose(value, expected, rtol=rtol, atol=atol, err_msg=key)
    return len(ours)


def test_toy_matches_transformers_float64():
    weights = toy_weights(TOY)
    ids = toy_token_ids(TOY)
    assert ids.shape == (TOY_TOKENS,)
    theirs = hf_trace(hf_model(weights, TOY), ids)
    ours = engine_trace_dict(forward(weights, TOY, ids))
    assert compare(ours, theirs, atol=1e-10) == 3 + TOY.n_layer * 17 + 3


def test_random_toy_shape_with_random_layernorm_matches():
    """Random LayerNorm gains and shifts too (the toy's own are 1 and 0)."""
    weights = random_weights(TOY, seed=3)
    ids = np.arange(TOY.n_ctx) % TOY.vocab_size  # the full context
    theirs = hf_trace(hf_model(weights, TOY), ids)
    compare(engine_trace_dict(forward(weights, TOY, ids)), theirs, atol=1e-10)


def test_gpt2_small_shaped_matches_transformers_float64():
    cfg = SMALL_SHAPED
    weights = random_weights(cfg, seed=1)
    ids = np.random.default_rng(2).integers(0, cfg.vocab_size, size=24)
    theirs = hf_trace(hf_model(weights, cfg), ids)
    ours = engine_trace_dict(forward(weights, cfg, ids))
    assert ours["0.attention.q"].shape == (12, 24, 64)
    compare(ours, theirs, atol=1e-10)


def test_float32_matches_transformers_float32():
    cfg = SMALL_SHAPED
    weights = random_weights(cfg, seed=4, dtype=np.float32)
    ids = np.random.default_rng(5).integers(0, cfg.vocab_size, size=16)
    trace = forward(weights, cfg, ids, dtype=np.float32)
    ours = engine_trace_dict(trace)
    assert all(value.dtype == np.float32 for value in ours.values())
    theirs = hf_trace(hf_model(weights, cfg, dtype=torch.float32), ids)
    compare(ours, theirs, atol=2e-4, rtol=2e-4)


def test_float32_and_float64_engines_agree():
    weights = random_weights(SMALL_SHAPED, seed=6)
    ids = np.arange(10)
    low = forward(weights, SMALL_SHAPED, ids, dtype=np.float32).logits
    high = forward(weights, SMALL_SHAPED, ids, dtype=np.float64).logits
    assert low.dtype == np.float32 and high.dtype == np.float64
    np.testing.assert_allclose(low, high, rtol=1e-4, atol=1e-4)

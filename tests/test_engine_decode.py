"""KV-cache decoding: cached steps give the logits of a full recompute of the prefix, and the
cache holds exactly the keys and values the full forward pass computes. numpy only."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from generator.config import CONFIGS, TOY
from generator.engine import forward, random_weights, toy_weights
from generator.engine.decode import causal_mask, decode_step, empty_cache
from generator.errors import InputError

SMALLISH = dataclasses.replace(CONFIGS["gpt2"], name="gpt2-2layer", n_layer=2, vocab_size=211)


def run_in_chunks(weights, cfg, ids, chunks):
    """decode_step over ids split into chunks of the given sizes; every step's logits, in order."""
    cache, rows, start = None, [], 0
    for size in chunks:
        step = decode_step(weights, cfg, ids[start : start + size], cache)
        assert step.present.shape == (cfg.n_layer, 2, cfg.n_head, size, cfg.d_head)
        assert step.cache.shape[3] == start + size
        np.testing.assert_array_equal(step.positions, np.arange(start, start + size))
        rows.append(step.logits)
        cache, start = step.cache, start + size
    return np.concatenate(rows), cache


@pytest.mark.parametrize(
    ("cfg", "weights", "chunks"),
    [
        (TOY, toy_weights(TOY), (5, 1, 1, 1)),
        (TOY, random_weights(TOY, seed=7), (1,) * 16),
        (TOY, random_weights(TOY, seed=8), (3, 2, 4, 7)),
        (SMALLISH, random_weights(SMALLISH, seed=1), (6, 1, 1, 2)),
    ],
    ids=["toy-prefill-then-one", "toy-one-at-a-time", "toy-uneven-chunks", "small-width"],
)
def test_cached_steps_equal_full_recompute(cfg, weights, chunks):
    ids = np.random.default_rng(3).integers(0, cfg.vocab_size, size=sum(chunks))
    cached_logits, cache = run_in_chunks(weights, cfg, ids, chunks)
    full = forward(weights, cfg, ids)
    # Row t of one full pass over all tokens is what the cached step computed for token t.
    np.testing.assert_allclose(cached_logits, full.logits, atol=1e-10, rtol=0)
    # And each prefix recomputed on its own ends in the same row (causality, checked directly).
    for t in range(1, len(ids) + 1):
        prefix = forward(weights, cfg, ids[:t])
        np.testing.assert_allclose(prefix.logits[-1], cached_logits[t - 1], atol=1e-10, rtol=0)
    for i, blk in enumerate(full.blocks):  # the cache is the full pass's keys and values
        np.testing.assert_allclose(cache[i, 0], blk.attention["k"], atol=1e-12, rtol=0)
        np.testing.assert_allclose(cache[i, 1], blk.attention["v"], atol=1e-12, rtol=0)


def test_one_new_row_attends_to_every_cached_position():
    w = random_weights(TOY, seed=2)
    ids = np.arange(6)
    first = decode_step(w, TOY, ids[:5])
    step = decode_step(w, TOY, ids[5:], first.cache)
    full = forward(w, TOY, ids)
    for i, weights in enumerate(step.weights):
        assert weights.shape == (TOY.n_head, 1, 6)
        np.testing.assert_allclose(
            weights[:, 0], full.blocks[i].attention["weights"][:, 5], atol=1e-12
        )


def test_causal_mask_is_the_last_rows_of_the_square_mask():
    for ns in range(1, 9):
        square = np.tril(np.ones((ns, ns), dtype=bool))
        np.testing.assert_array_equal(causal_mask(ns, ns), square)
        for nd in range(1, ns + 1):
            np.testing.assert_array_equal(causal_mask(nd, ns), square[ns - nd :])


def test_float32_cache_stays_float32():
    w = random_weights(TOY, seed=4, dtype=np.float32)
    step = decode_step(w, TOY, np.arange(3), empty_cache(TOY, np.float32), dtype=np.float32)
    assert step.cache.dtype == np.float32 and step.logits.dtype == np.float32


def test_bad_cache_and_overlong_context_are_input_errors():
    w = toy_weights(TOY)
    with pytest.raises(InputError, match="cache shape"):
        decode_step(w, TOY, np.arange(2), np.zeros((TOY.n_layer, 2, TOY.n_head, 3, 99)))
    full = decode_step(w, TOY, np.arange(TOY.n_ctx))
    with pytest.raises(InputError, match="exceed"):
        decode_step(w, TOY, np.arange(1), full.cache)


def test_a_step_without_grids_computes_the_same_and_keeps_none():
    """grids=False (what generate asks for) drops the per-layer scores and weights, nothing else:
    a 1,024-token prefill of GPT-2 small would otherwise hold 2.4 GB of them."""
    w = random_weights(SMALLISH, seed=4)
    ids = np.random.default_rng(6).integers(0, SMALLISH.vocab_size, size=40)
    kept = decode_step(w, SMALLISH, ids[:30])
    lean = decode_step(w, SMALLISH, ids[:30], grids=False)
    assert len(kept.scores) == len(kept.weights) == SMALLISH.n_layer
    assert lean.scores == [] and lean.weights == []
    np.testing.assert_array_equal(lean.logits, kept.logits)
    np.testing.assert_array_equal(lean.cache, kept.cache)
    after = decode_step(w, SMALLISH, ids[30:], lean.cache, grids=False)
    np.testing.assert_array_equal(
        after.logits, decode_step(w, SMALLISH, ids[30:], kept.cache).logits
    )

"""Removing a head reruns the prompt only from the removed head's block on (engine.forward_from,
from the stream the intact run kept): its numbers must be a whole rerun's, to the last bit, or
the page's removal table would depend on where the rerun starts. 300 positions, so the products
take the paths a long prompt's do."""

from __future__ import annotations

import numpy as np
import pytest

from generator.engine import forward, forward_from, random_weights
from generator.forward.ablation import measure, removals, without_head
from generator.forward.analysis import HeadScore
from tests.forward_helpers import TINY_LONG as CFG


def test_a_run_from_any_block_on_gives_the_full_forwards_logits_bit_for_bit():
    weights = random_weights(CFG, seed=2)
    ids = np.random.default_rng(4).integers(0, CFG.vocab_size, size=300)
    trace = forward(weights, CFG, ids, keep="patterns")
    streams = [b.resid_in for b in trace.blocks] + [trace.blocks[-1].resid_out]
    for start, entering in enumerate(streams):
        np.testing.assert_array_equal(forward_from(weights, CFG, entering, start), trace.logits)
    with pytest.raises(ValueError):
        forward_from(weights, CFG, streams[0], CFG.n_layer + 1)


def test_removals_from_the_heads_block_on_equal_whole_reruns():
    """removals() reruns only from the removed head's block; its rows must be those of a whole
    forward pass with the head removed, every number to the last bit."""
    weights = random_weights(CFG, seed=3)
    ids = np.random.default_rng(5).integers(0, 40, size=300)  # 40 ids: plenty of repeats
    trace = forward(weights, CFG, ids, keep="patterns")
    # Every head pointed out (made-up scores that reach every threshold), strongest distinct.
    heads = [(layer, head) for layer in range(CFG.n_layer) for head in range(CFG.n_head)]
    scores = [
        HeadScore(*lh, 0.9 - 0.1 * n, 0.9 - 0.1 * n, 0.9 - 0.1 * n) for n, lh in enumerate(heads)
    ]
    rows = removals(weights, CFG, trace, scores, str)
    assert [(r.layer, r.head) for r in rows] == [(None, None), (0, 0), (0, 1), (1, 0)]
    assert rows[0] == measure(trace.probs, ids, str)
    for row in rows[1:]:
        whole = forward(without_head(weights, CFG, row.layer, row.head), CFG, ids, keep="patterns")
        assert row == measure(whole.probs, ids, str, row.layer, row.head)
        assert row != rows[0]  # the head mattered: the comparison can fail

"""Sampling: seeded draws are reproducible, follow the processed distribution, never pick a
filtered token; greedy takes the argmax; the loop's cache grows one position per token."""

from __future__ import annotations

import numpy as np
import pytest

from generator.config import TOY
from generator.engine import forward, random_weights
from generator.engine.layers import softmax
from generator.engine.sampling import (
    Sampling,
    choose,
    generate,
    process,
    top_p_filter,
    top_p_filter_gpt2,
)
from generator.errors import InputError

LOGITS = np.array([2.0, 1.0, 0.5, 0.0, -1.0, -3.0])


def draws(sampling: Sampling, n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.array([choose(LOGITS, sampling, rng)[0] for _ in range(n)])


def test_draw_frequencies_follow_the_processed_probabilities():
    sampling = Sampling(temperature=0.8, top_k=4)
    n = 40_000
    counts = np.bincount(draws(sampling, n), minlength=LOGITS.size) / n
    probs = softmax(process(LOGITS, sampling))
    assert probs[4] == probs[5] == 0 and counts[4] == counts[5] == 0  # filtered: never drawn
    # Binomial standard error at n = 40,000 is below 0.0025; allow four of them.
    np.testing.assert_allclose(counts, probs, atol=0.01)


def test_same_seed_same_tokens_other_seed_other_tokens():
    s = Sampling(temperature=1.3)
    assert draws(s, 50, seed=1).tolist() == draws(s, 50, seed=1).tolist()
    assert draws(s, 50, seed=1).tolist() != draws(s, 50, seed=2).tolist()


def test_greedy_is_the_argmax_and_ignores_the_generator():
    token, probs = choose(LOGITS, Sampling(greedy=True), np.random.default_rng(0))
    assert token == 0
    np.testing.assert_allclose(probs, softmax(LOGITS.copy()))


def test_top_p_keeps_the_fewest_tokens_reaching_p():
    probs = softmax(LOGITS.copy())
    for p in (0.3, 0.6, 0.8, 0.95, 0.999):
        kept = np.isfinite(process(LOGITS, Sampling(top_p=p)))
        n = int(kept.sum())
        assert kept[:n].all()  # LOGITS are sorted: the kept ones are a prefix
        assert probs[:n].sum() >= p and (n == 1 or probs[: n - 1].sum() < p)


def test_generate_continues_like_full_recomputes():
    w = random_weights(TOY, seed=9)
    prompt = np.array([1, 5, 7])
    chosen = generate(w, TOY, prompt, 6, Sampling(greedy=True), n_candidates=3)
    ids = list(prompt)
    for c in chosen:
        logits = forward(w, TOY, np.array(ids)).logits[-1]
        assert c.token == int(np.argmax(logits))
        assert c.position == len(ids) and c.cached == (0 if len(ids) == 3 else len(ids) - 1)
        assert c.candidates[0][0] == c.token and len(c.candidates) == 3
        ids.append(c.token)


@pytest.mark.parametrize(
    "kwargs", [{"temperature": 0}, {"top_k": 0}, {"top_p": 0}, {"top_p": 1.5}], ids=str
)
def test_bad_settings_are_input_errors(kwargs):
    with pytest.raises(InputError):
        Sampling(**kwargs)


def test_a_prompt_that_fills_the_context_generates_nothing_and_runs_nothing():
    """n_new = 0 returns before the prefill: the weights are never read (an empty dict here)."""
    assert generate({}, TOY, np.arange(TOY.n_ctx), 0, Sampling()) == []


def test_too_many_new_tokens_is_an_input_error():
    with pytest.raises(InputError, match="context"):
        generate(random_weights(TOY), TOY, np.arange(10), TOY.n_ctx, Sampling())


def test_gpt2_top_p_drops_the_token_that_crosses_p_transformers_keeps_it():
    logits = np.log(np.array([0.05, 0.5, 0.15, 0.3]))  # unsorted on purpose
    # Cumulative from the top: 0.5, 0.8, 0.95, 1.0. At p = 0.9 the third token crosses p.
    assert np.isfinite(top_p_filter_gpt2(logits, 0.9)).tolist() == [False, True, False, True]
    assert np.isfinite(top_p_filter(logits, 0.9)).tolist() == [False, True, True, True]
    # Below the first probability both keep the single most probable token.
    assert np.isfinite(top_p_filter_gpt2(logits, 0.2)).sum() == 1
    assert np.isfinite(top_p_filter(logits, 0.2)).sum() == 1

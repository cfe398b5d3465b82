"""The sampling loop: logits -> temperature -> top-k -> top-p -> sample, one token at a time.

Like gpt-2's src/sample.py (top_k_logits, top_p_logits, sample_sequence), in numpy. The filters
follow transformers' logits processors (TemperatureLogitsWarper, TopKLogitsWarper,
TopPLogitsWarper): a removed token's logit becomes −∞, so softmax gives it probability 0.
Every random draw comes from a seeded numpy Generator, so a run is reproducible.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from generator.config import ModelConfig
from generator.engine.decode import decode_step
from generator.engine.layers import Weights, cast, softmax
from generator.errors import InputError


@dataclass(frozen=True)
class Sampling:
    """How the next token is chosen from the logits. Defaults: plain sampling from softmax."""

    temperature: float = 1.0  # logits ÷ temperature: below 1 sharpens, above 1 flattens
    top_k: int | None = None  # keep the k largest logits (None: all)
    top_p: float | None = None  # keep the fewest tokens whose probabilities reach p (None: all)
    greedy: bool = False  # always take the largest logit (no randomness)

    def __post_init__(self) -> None:
        problem = None
        if not self.temperature > 0:
            problem = f"temperature {self.temperature}; it must be > 0"
        elif self.top_k is not None and self.top_k < 1:
            problem = f"top_k {self.top_k}; it must be at least 1"
        elif self.top_p is not None and not 0 < self.top_p <= 1:
            problem = f"top_p {self.top_p}; it must be in (0, 1]"
        if problem:
            raise InputError(
                problem, entry="sampling", fix="use temperature > 0, top_k >= 1 and 0 < top_p <= 1"
            )


def apply_temperature(logits: np.ndarray, temperature: float) -> np.ndarray:
    """logits / temperature (transformers' TemperatureLogitsWarper; gpt-2's `logits / temperature`)."""
    return logits / temperature


def top_k_filter(logits: np.ndarray, k: int) -> np.ndarray:
    """Logits below the k-th largest become −∞ (ties with the k-th are kept, as transformers)."""
    k = min(k, logits.shape[-1])
    kth = np.sort(logits, axis=-1)[..., -k, None]  # [..., 1]: the k-th largest
    return np.where(logits < kth, -np.inf, logits)


def top_p_filter(logits: np.ndarray, p: float) -> np.ndarray:
    """Keep the most probable tokens until their probabilities add up to at least p; −∞ elsewhere.

    transformers' rule: sort ascending, drop every token whose cumulative probability from the
    bottom is <= 1 − p, but always keep the most probable one.
    """
    order = np.argsort(logits, axis=-1, kind="stable")  # ascending
    ascending = np.take_along_axis(logits, order, axis=-1)
    cumulative = np.cumsum(softmax(ascending.copy(), axis=-1), axis=-1)
    drop_sorted = cumulative <= 1 - p
    drop_sorted[..., -1] = False  # min_tokens_to_keep = 1
    drop = np.empty_like(drop_sorted)
    np.put_along_axis(drop, order, drop_sorted, axis=-1)
    return np.where(drop, -np.inf, logits)


def top_p_filter_gpt2(logits: np.ndarray, p: float) -> np.ndarray:
    """gpt-2's top_p_logits (src/sample.py): keep the tokens whose cumulative probability, from
    the most probable down, stays at or below p (at least one); the token that crosses p goes.

    transformers' rule (top_p_filter) keeps that crossing token, so it keeps one more token
    whenever the cumulative probabilities do not land exactly on p.
    """
    descending = -np.sort(-logits, axis=-1)
    cumulative = np.cumsum(softmax(descending.copy(), axis=-1), axis=-1)
    n_keep = np.maximum((cumulative <= p).sum(axis=-1, keepdims=True), 1)  # [..., 1]
    smallest_kept = np.take_along_axis(descending, n_keep - 1, axis=-1)
    return np.where(logits < smallest_kept, -np.inf, logits)


def process(logits: np.ndarray, sampling: Sampling) -> np.ndarray:
    """The logits the next token is drawn from, in transformers' (and gpt-2's) order."""
    out = apply_temperature(np.asarray(logits, dtype=np.float64), sampling.temperature)
    if sampling.top_k is not None:
        out = top_k_filter(out, sampling.top_k)
    if sampling.top_p is not None:
        out = top_p_filter(out, sampling.top_p)
    return out


def choose(
    logits: np.ndarray, sampling: Sampling, rng: np.random.Generator
) -> tuple[int, np.ndarray]:
    """The next token for one row of logits [V], and the probabilities [V] it was drawn from.

    Greedy takes the argmax (its probabilities are those of the processed logits all the same).
    Sampling inverts the cumulative distribution at one uniform draw from rng.
    """
    probs = softmax(process(logits, sampling), axis=-1)  # [V], removed tokens are 0
    if sampling.greedy:
        return int(np.argmax(logits)), probs
    u = rng.random()  # one draw per token, in [0, 1)
    token = int(np.searchsorted(np.cumsum(probs), u * probs.sum(), side="right"))
    return min(token, probs.shape[-1] - 1), probs


@dataclass
class Chosen:
    """One generated token and the distribution it came from."""

    position: int  # where it will stand in the sequence
    token: int
    prob: float  # its probability after temperature / top-k / top-p
    candidates: list[tuple[int, float]] = field(
        default_factory=list
    )  # the most probable, best first
    kept: int = 0  # how many tokens had probability > 0
    cached: int = 0  # how many positions the cache held when its logits were computed


def generate(
    weights: Weights,
    cfg: ModelConfig,
    prompt: np.ndarray,
    n_new: int,
    sampling: Sampling,
    seed: int = 0,
    n_candidates: int = 5,
    dtype: np.dtype | type = np.float64,
) -> list[Chosen]:
    """Continue `prompt` [T] by n_new tokens, as gpt-2's sample_sequence does.

    The first step reads the whole prompt with an empty cache; every later step reads only the
    token just chosen, with the cache of all before it. The weights are cast to `dtype` once for
    every step, and no step keeps its attention grids (decode_step's grids=False).
    """
    prompt = np.asarray(prompt, dtype=np.int64)
    if n_new < 0 or prompt.shape[0] + n_new > cfg.n_ctx:
        raise InputError(
            f"{prompt.shape[0]} prompt tokens + {n_new} new exceed {cfg.name}'s context of {cfg.n_ctx}",
            entry="n_new",
            fix=f"ask for at most {cfg.n_ctx - prompt.shape[0]} new tokens",
        )
    if n_new == 0:  # a prompt that fills the context: nothing to choose, no prefill to run
        return []
    rng = np.random.default_rng(seed)
    out: list[Chosen] = []
    weights = cast(weights, dtype)  # once, not once per step
    step = decode_step(weights, cfg, prompt, None, dtype, grids=False)  # prefill: the whole prompt
    cached = 0
    for _ in range(n_new):
        token, probs = choose(step.logits[-1], sampling, rng)
        top = np.argsort(-probs, kind="stable")[:n_candidates]
        out.append(
            Chosen(
                position=int(step.positions[-1]) + 1,
                token=token,
                prob=float(probs[token]),
                candidates=[(int(i), float(probs[i])) for i in top],
                kept=int(np.count_nonzero(probs)),
                cached=cached,
            )
        )
        cached = step.cache.shape[3]
        if len(out) < n_new:
            step = decode_step(weights, cfg, np.array([token]), step.cache, dtype, grids=False)
    return out

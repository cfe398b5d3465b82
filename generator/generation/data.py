"""What the Generation page shows, computed once: the toy's cached decoding step by step, the
forward-pass model continuing its prompt token by token, and one distribution under each filter.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from generator import per_build
from generator.config import TOY, ModelConfig
from generator.engine import toy_weights
from generator.engine.decode import decode_step
from generator.engine.layers import cast, softmax
from generator.engine.sampling import (
    Chosen,
    Sampling,
    generate,
    process,
    top_p_filter,
    top_p_filter_gpt2,
)
from generator.forward import once_per_model
from generator.settings import Settings
from generator.walkthrough.toy import BLOCK, SEED, TOKENS, toy_attention

TOY_CHUNKS = (3, 1, 1)  # the toy's prompt, then one token per step
N_NEW = 8  # tokens the page's model generates
SAMPLING = Sampling(temperature=0.8, top_k=10)  # how it chooses them
SEED_GENERATE = 0
FILTERS: tuple[tuple[str, Sampling], ...] = (
    ("softmax", Sampling()),
    ("temperature 0.7", Sampling(temperature=0.7)),
    ("top-k 5", Sampling(top_k=5)),
    ("top-p 0.9", Sampling(top_p=0.9)),
)
N_SHOWN = 8  # tokens in the filter table


@dataclass(frozen=True)
class ToyStep:
    """One decoding step of the toy: which positions it read, and its layer's cache afterwards."""

    new: tuple[int, ...]  # positions this step reads
    cached: tuple[int, ...]  # positions whose K and V came from the cache
    k: np.ndarray  # [h, ns, dh] block BLOCK's keys after the step
    v: np.ndarray  # [h, ns, dh]
    scores: np.ndarray  # [h, nd, ns] the new rows' scaled, masked scores
    weights: np.ndarray  # [h, nd, ns] the new rows' attention weights


@functools.cache
def toy_steps() -> tuple[ToyStep, ...]:
    """The walkthrough's toy sequence decoded with a cache: a prompt of 3, then one at a time."""
    ids = toy_attention(SEED, BLOCK).token_ids
    w = toy_weights(TOY, SEED)
    steps, cache, start = [], None, 0
    for size in TOY_CHUNKS:
        step = decode_step(w, TOY, ids[start : start + size], cache)
        cache = step.cache
        steps.append(
            ToyStep(
                new=tuple(range(start, start + size)),
                cached=tuple(range(start)),
                k=cache[BLOCK, 0],
                v=cache[BLOCK, 1],
                scores=step.scores[BLOCK],
                weights=step.weights[BLOCK],
            )
        )
        start += size
    return tuple(steps)


def toy_tokens() -> tuple[str, ...]:
    return TOKENS[: sum(TOY_CHUNKS)]


@dataclass(frozen=True)
class Continuation:
    """The page's model continuing the forward-pass prompt."""

    cfg: ModelConfig
    is_gpt2: bool
    prompt: list[str]  # token texts, <|endoftext|> first
    chosen: list[Chosen]
    texts: dict[int, str]  # token id -> text, for every id shown
    unsure: int  # the prompt position the filters are shown at: the least certain next token
    top_p: tuple[float, int, int]  # p, and the tokens transformers' and gpt-2's rules keep there
    filters: list[tuple[str, np.ndarray]]  # (name, probabilities [V]) after position `unsure`


_RUNS: dict[tuple, Continuation] = {}
per_build(_RUNS.clear)  # like the forward pass it continues


def continuation(settings: Settings) -> Continuation:
    """Computed on first use per root, cache and model settings, then reused."""
    return once_per_model(_RUNS, _continuation, settings)


def _continuation(settings: Settings) -> Continuation:
    from generator.forward.pipeline import DEFAULT_PROMPT, load_model, prompt_ids

    source, cfg, tokenizer, weights = load_model(settings)
    ids = np.array(prompt_ids(tokenizer, settings.forward_prompt or DEFAULT_PROMPT, cfg))
    n_new = min(N_NEW, cfg.n_ctx - len(ids))
    # generate's dtype, cast once here so GPT-2's float32 copy is let go (not at all when the
    # prompt fills the context and there is nothing to generate)
    weights = cast(weights, np.float64) if n_new else {}
    chosen = generate(weights, cfg, ids, n_new, SAMPLING, seed=SEED_GENERATE)
    del weights  # 1 GB for GPT-2 small, not needed below
    from generator.forward import current

    run = current(settings)  # the forward-pass page's run of the same prompt and model
    assert np.array_equal(run.token_ids, ids), "the forward pass read another prompt"
    probs = run.trace.probs  # [T, V]
    # -Σ p log p per position, with one [T, V] temporary (412 MB at 1,024 tokens), not three
    plogp = np.where(probs > 0, probs, 1.0)
    np.log(plogp, out=plogp)
    plogp *= probs
    entropy = -plogp.sum(axis=-1)  # [T]
    del plogp
    unsure = int(np.argmax(entropy))  # the position whose next token the model is least sure of
    logits = np.log(probs[unsure])  # softmax(log p) = p: the same distribution, as logits
    filters = [(name, softmax(process(logits, s))) for name, s in FILTERS]
    top_p = next(s.top_p for _, s in FILTERS if s.top_p is not None)
    kept_gpt2 = int(np.isfinite(top_p_filter_gpt2(logits, top_p)).sum())
    shown = {int(i) for i in ids} | {c.token for c in chosen}
    shown |= {i for c in chosen for i, _ in c.candidates}
    shown |= {int(i) for i in np.argsort(-filters[0][1], kind="stable")[:N_SHOWN]}
    return Continuation(
        cfg=cfg,
        is_gpt2=source.is_gpt2,
        prompt=[tokenizer.token_text(int(i)) for i in ids],
        chosen=chosen,
        texts={i: tokenizer.token_text(i) for i in sorted(shown)},
        unsure=unsure,
        top_p=(top_p, int(np.isfinite(top_p_filter(logits, top_p)).sum()), kept_gpt2),
        filters=filters,
    )

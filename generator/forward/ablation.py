"""Removing a head: the prompt again with one head's output set to zero, and what is left of the
model's copying.

A pattern suggests what a head does; removing the head tests it. For each head the page points
out, the engine reruns the prompt with that head silenced and measures, at the positions whose
next token repeats what followed the same token earlier in the prompt (where an induction
circuit can help), the probability the model gives the actual next token, and how often it is
the top guess.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from generator.config import ModelConfig
from generator.engine import Trace, forward_from
from generator.engine.layers import Weights, softmax
from generator.forward.analysis import KINDS, HeadScore, strongest

PER_KIND = 3  # pointed-out heads removed per kind, strongest first


@dataclass(frozen=True)
class Removal:
    """The prompt's predictions with one head removed (layer and head None: nothing removed)."""

    layer: int | None
    head: int | None
    repeat_prob: float  # mean probability of the actual next token at the repeat positions
    repeat_hits: int  # repeat positions where the actual next token is the top guess
    last_top: str  # the top guess after the last token, as text
    last_top_prob: float

    @property
    def label(self) -> str:
        return "none" if self.layer is None else f"{self.layer}.{self.head}"


def repeat_positions(token_ids: np.ndarray) -> list[int]:
    """Positions i whose next token followed the same token earlier: some j < i has
    token j == token i and token j+1 == token i+1. The last position has no next token."""
    ids = [int(t) for t in token_ids]
    seen: set[tuple[int, int]] = set()  # (token, the token after it) pairs so far
    positions = []
    for i in range(len(ids) - 1):
        pair = (ids[i], ids[i + 1])
        if pair in seen:
            positions.append(i)
        seen.add(pair)
    return positions


def without_head(weights: Weights, cfg: ModelConfig, layer: int, head: int) -> Weights:
    """A copy of weights in which block `layer`'s head `head` writes nothing to the residual
    stream: its d_head rows of the attention output projection (Conv1D layout [in, out]) are 0."""
    d_head = cfg.d_model // cfg.n_head
    name = f"h.{layer}.attn.c_proj.weight"
    proj = np.array(weights[name], copy=True)  # [d_model, d_model]
    proj[head * d_head : (head + 1) * d_head, :] = 0
    return {**weights, name: proj}


def heads_to_remove(scores: list[HeadScore]) -> list[HeadScore]:
    """The heads the page points out: per kind, the strongest that reach its threshold."""
    chosen: list[HeadScore] = []
    for kind in KINDS:
        named = [h for h in strongest(scores, kind, n=len(scores)) if kind in h.kinds]
        chosen += [h for h in named[:PER_KIND] if h not in chosen]
    return chosen


def measure(
    probs: np.ndarray,
    token_ids: np.ndarray,
    token_text: Callable[[int], str],
    layer=None,
    head=None,
) -> Removal:
    """probs: [T, V], each position's next-token distribution."""
    positions = repeat_positions(token_ids)
    actual = token_ids[[i + 1 for i in positions]]
    at = probs[positions, actual] if positions else np.zeros(0)
    hits = int(np.sum(probs[positions].argmax(axis=-1) == actual)) if positions else 0
    top = int(probs[-1].argmax())
    return Removal(
        layer=layer,
        head=head,
        repeat_prob=float(at.mean()) if positions else 0.0,
        repeat_hits=hits,
        last_top=token_text(top),
        last_top_prob=float(probs[-1, top]),
    )


def removals(
    weights: Weights,
    cfg: ModelConfig,
    trace: Trace,
    scores: list[HeadScore],
    token_text: Callable[[int], str],
) -> list[Removal]:
    """The intact model first (from trace, a keep="patterns" run of the prompt), then one row per
    pointed-out head with that head removed.

    A head of block L writes nothing before block L, so each rerun starts from the stream the
    intact run kept entering block L and runs only blocks L … n_layer - 1 and the unembedding
    (engine.forward_from): the same float64 operations on the same arrays as a full rerun, so the
    same bits (tests/test_forward_ablation.py compares them), and on average about half the
    blocks' work. The unembedding still covers every position (in a repeated prompt most of them
    are repeat positions), and its softmax runs in place over the logits, so one [T, V] array per
    rerun is alive (412 MB at 1,024 tokens in float64) instead of two.
    """
    token_ids = trace.token_ids
    rows = [measure(trace.probs, token_ids, token_text)]
    for h in heads_to_remove(scores):
        entering = trace.blocks[h.layer].resid_in  # [T, d], unchanged by the removal
        logits = forward_from(without_head(weights, cfg, h.layer, h.head), cfg, entering, h.layer)
        probs = softmax(logits, out=logits)  # [T, V]; the logits are not needed again
        rows.append(measure(probs, token_ids, token_text, h.layer, h.head))
    return rows

"""A trained head for the walkthrough: the forward-pass page's model (GPT-2 when its pinned weights
are here, else the committed stand-in) run on a short phrase that repeats, and one of its heads
traced through the seven steps.

Which head: on the stand-in, its strongest induction head on the phrase; on GPT-2, the named
induction head (generator.forward.literature, Wang et al. 2022) that scores highest on it (a
checkpoint with neither, as in tests, gives its strongest induction head). The toy stays for
numbers small enough to print; a trained head's rows are d_head numbers long, so its grids print
the first SHOWN columns and say so.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from generator import per_build
from generator.config import ModelConfig
from generator.forward.analysis import HeadNames
from generator.settings import Settings

# Short, and repeated once: from its second copy on, each word's next word can be read off the
# first copy. Its words are in the stand-in's vocabulary; GPT-2's BPE takes any text.
PHRASE = " The quick brown fox. The quick brown fox"
SHOWN = 8  # columns of a d_head- or d_model-wide matrix the grids print
# Okabe and Ito's colour-blind-safe palette (the toy's five and two more), one per distinct word:
# a repeated word keeps its colour, so a weighted sum's blend shows which word it drew from.
WORD_COLOURS = ("#e69f00", "#56b4e9", "#009e73", "#cc79a7", "#d55e00", "#0072b2", "#f0e442")
START_COLOUR = "#bbbbbb"  # <|endoftext|>
_HEADS: dict[tuple, TrainedHead] = {}
per_build(_HEADS.clear)  # the weights found: an input a next build may change


@dataclass(frozen=True)
class TrainedHead(HeadNames):
    """One head of a trained model, traced on PHRASE by the engine."""

    model: str  # "stand-in" or "GPT-2 small"
    is_gpt2: bool
    cfg: ModelConfig
    tokens: tuple[str, ...]  # [T] as the model's tokenizer writes them
    token_ids: np.ndarray  # [T]
    layer: int  # from 0
    head: int  # from 0
    named: str  # "Wang et al. 2022 …" when the literature names this head, else ""
    x: np.ndarray  # [T, d] ln_1's output entering the head's block
    trace: dict[str, np.ndarray]  # the block's attention trace, per-head arrays cut to this head
    induction: float  # its induction score on PHRASE
    chance: float  # the same score for evenly spread attention
    targets: dict[int, list[int]]  # repeated position -> positions after its earlier copies


def trained_head(settings: Settings) -> TrainedHead:
    """The build's trained head; computed on first use, then reused for the build."""
    s = settings
    key = (s.root, s.cache_dir, s.hub_cache, s.gpt2_weights, s.may_download)
    if key not in _HEADS:
        _HEADS[key] = compute(settings)
    return _HEADS[key]


def compute(settings: Settings) -> TrainedHead:
    from generator.engine import forward
    from generator.forward.analysis import (
        chance_scores,
        induction_targets,
        score_heads,
    )
    from generator.forward.literature import KNOWN_HEADS
    from generator.forward.pipeline import Gpt2Source, load_model, prompt_ids

    source, cfg, tokenizer, weights = load_model(settings)
    ids = np.array(prompt_ids(tokenizer, PHRASE, cfg), dtype=np.int64)
    trace = forward(weights, cfg, ids, keep="all")  # float64
    del weights
    heads = score_heads([b.attention["weights"] for b in trace.blocks], ids)
    is_gpt2 = isinstance(source, Gpt2Source)
    named = {
        (k.layer, k.head): k.source
        for k in KNOWN_HEADS
        if k.kind == "induction" and is_gpt2 and k.layer < cfg.n_layer and k.head < cfg.n_head
    }
    pool = [h for h in heads if (h.layer, h.head) in named] or heads
    best = max(pool, key=lambda h: (h.induction or 0.0, -h.layer, -h.head))
    block = trace.blocks[best.layer]
    assert block.ln1 is not None  # keep="all"
    attention = {
        key: value[best.head : best.head + 1] if value.ndim == 3 else value
        for key, value in block.attention.items()
    }
    return TrainedHead(
        model=cfg.label,
        is_gpt2=is_gpt2,
        cfg=cfg,
        tokens=tuple(tokenizer.token_text(int(i)) for i in ids),
        token_ids=ids,
        layer=best.layer,
        head=best.head,
        named=named.get((best.layer, best.head), ""),
        x=block.ln1,
        trace=attention,
        induction=float(best.induction or 0.0),
        chance=float(chance_scores(ids)["induction"] or 0.0),
        targets=induction_targets(ids),
    )


def colours(tokens: tuple[str, ...]) -> list[str]:
    """A colour per position: one per distinct word (a repeat keeps its word's colour)."""
    seen: dict[str, str] = {}
    out = []
    for i, token in enumerate(tokens):
        word = token.strip()
        if i == 0 and word == "<|endoftext|>":
            out.append(START_COLOUR)
            continue
        if word not in seen:
            seen[word] = WORD_COLOURS[len(seen) % len(WORD_COLOURS)]
        out.append(seen[word])
    return out


@dataclass(frozen=True)
class Reading:
    """What the softmax step's text says of the head, from its weights: the last position (a
    repeat), where its earlier copy was, and the weight on the word that followed it."""

    row: int  # the last position
    copy: int  # its earlier copy
    target: int  # the position after the copy
    weight: float  # row's weight on target
    even: float  # the weight an even spread would give it: 1 / (row + 1)
    top: int  # the position row weighs most


def reading(head: TrainedHead) -> Reading | None:
    """The last position's reading, if it repeats an earlier word (None otherwise)."""
    row = len(head.tokens) - 1
    if row not in head.targets:
        return None
    target = head.targets[row][-1]
    weights = head.trace["weights"][0][row]  # [T]
    return Reading(
        row=row,
        copy=target - 1,
        target=target,
        weight=float(weights[target]),
        even=1.0 / (row + 1),
        top=int(np.argmax(weights[: row + 1])),
    )


def word(token: str) -> str:
    """A token as the walkthrough labels it: its word, without GPT-2's leading space."""
    return token.strip() or token


def trained_words(head: TrainedHead, forward_head: str) -> dict[str, str]:
    """What the steps say of the trained head (Markdown, every number from its trace), by
    step; `forward_head` is the URL of the same head on the forward-pass page (an HTML link:
    MkDocs rewrites Markdown links to docs paths, and this is already a URL)."""
    from generator.forward.analysis import THRESHOLDS

    toks = [word(t) for t in head.tokens]
    dh, shown = head.cfg.d_head, min(SHOWN, head.cfg.d_head)
    says: dict[str, str] = {
        "projections": (
            f"The trained {head.model} adds biases, as GPT-2 does. Its head is {fmt(dh)} numbers "
            f"wide, so each grid prints the first {shown} columns of every row."
        ),
    }
    r = reading(head)
    if r is not None:
        row, copy, target = (f"“{toks[i]}” (position {i})" for i in (r.row, r.copy, r.target))
        says["scores"] = (
            f"In the trained head the scores already point somewhere: row {row} scores "
            f"{'highest' if r.top == r.target else 'high'} at {target}, the word after its "
            f"earlier copy {copy}."
        )
        kind = (
            "That is an induction head: it lets the model read the next word off the phrase's "
            "first copy."
            if head.induction >= THRESHOLDS["induction"]
            else "An induction head would put most of it there; this one does not."
        )
        says["softmax"] = (
            f"After softmax the pattern is plain: row {row} gives {r.weight:.2f} of its weight to "
            f"{target} (an even spread would give {r.even:.2f}), and each word of the second "
            f"copy looks at the word that followed it in the first. Averaged over the repeat, this head's induction score is "
            f"{head.induction:.2f} (even attention: {head.chance:.2f}). {kind} "
            f'<a href="{forward_head}">Head {head.label} on the forward pass</a> shows it on a '
            "longer prompt."
        )
        says["weighted-sum"] = (
            "Here each word has one colour wherever it occurs, so a row of the second copy "
            "takes the colour of the word it will help predict."
        )
    return says


def fmt(n: int) -> str:
    from generator.render.numbers import fmt_int

    return fmt_int(n)

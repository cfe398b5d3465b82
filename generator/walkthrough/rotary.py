"""The rotary step at toy scale: where a Llama-family layer rotates its queries and keys.

GPT-2 has no such step, so its walkthrough keeps its seven; this one is the Llama family's. The
toy is a one-layer Llama-family model with the walkthrough's five labelled tokens, run by the
shared decoder (generator/models/decoder.py), whose trace holds q and k before and after the
rotation. The angles are generator.models.ops.rope_angles, the rotation ops.apply_rotary: the
ones every Llama-family forward pass uses. The Llama sizes beside each step come from
generator/models/llama/sizes.py and the same ops.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import msgspec
import numpy as np

from generator.engine import toy_token_ids
from generator.models.config import ModelConfig
from generator.models.decoder import forward
from generator.models.llama.names import NAMES as LLAMA_NAMES
from generator.models.llama.sizes import SIZES
from generator.models.ops import apply_rotary, rope_angles, rope_cos_sin, rope_inv_freq
from generator.models.weights import random_weights
from generator.render.numbers import fmt_int
from generator.walkthrough.data import rounded, shared_data
from generator.walkthrough.gpt2_scale import ELEMENTWISE, Figure
from generator.walkthrough.steps import WALKTHROUGHS, Matrix, Step, fill
from generator.walkthrough.toy import TOKEN_COLOURS, TOKENS

SEED = 0  # seeds the toy's weights and token ids
BLOCK = 0  # the layer shown, from 0
THETA_FROM = "llama-2-7b"  # the size whose base θ (rope_theta) the toy uses


def toy_config() -> ModelConfig:
    """One Llama-family layer small enough to print: d_model 16, 2 heads of 8 (4 pairs each)."""
    return ModelConfig(
        name="toy-rope",
        label="toy",
        family="llama",
        names=LLAMA_NAMES,
        n_layer=1,
        n_head=2,
        d_model=16,
        n_ctx=16,
        vocab_size=32,
        norm="rmsnorm",
        norm_eps=SIZES[THETA_FROM].norm_eps,
        mlp="swiglu",
        positions="rope",
        rope_theta=SIZES[THETA_FROM].rope_theta,
        bias=False,
        tied_embeddings=False,
    )


@dataclass(frozen=True)
class RotaryToy:
    """The toy's layer-0 queries and keys, the angles, and the rotated queries and keys."""

    cfg: ModelConfig
    tokens: tuple[str, ...]  # [T] labels
    token_ids: np.ndarray  # [T]
    positions: np.ndarray  # [T] 0 … T − 1
    rates: np.ndarray  # [dh/2] θ_i, radians per position (ops.rope_inv_freq)
    trace: dict[str, np.ndarray]  # q, k, q_rotated, k_rotated [h, T, dh]; angles [T, dh/2]

    @property
    def n_tokens(self) -> int:
        return len(self.tokens)


@functools.cache
def rotary_toy(seed: int = SEED) -> RotaryToy:
    """The decoder's forward pass on the toy, keeping layer BLOCK's attention trace."""
    cfg = toy_config()
    token_ids = toy_token_ids(cfg, seed, len(TOKENS))  # [T]
    run = forward(random_weights(cfg, seed), cfg, token_ids, keep=True)
    layer = run.attention[BLOCK]
    assert layer.q is not None and layer.k is not None  # a RoPE layer keeps them (not latent)
    assert layer.q_rotated is not None and layer.k_rotated is not None
    return RotaryToy(
        cfg=cfg,
        tokens=TOKENS,
        token_ids=token_ids,
        positions=run.positions,
        rates=rope_inv_freq(cfg.d_head, cfg.rope_theta),
        trace={
            "q": layer.q,
            "k": layer.k,
            "angles": rope_angles(run.positions, cfg.d_head, cfg.rope_theta),
            "q_rotated": layer.q_rotated,
            "k_rotated": layer.k_rotated,
        },
    )


# -- the steps (their words: steps.toml's [rotary]) -------------------------------------------
MATRICES: dict[str, Matrix] = {matrix.key: matrix for matrix in WALKTHROUGHS.rotary.matrices}


def steps(cfg: ModelConfig) -> tuple[Step, ...]:
    """The three steps, their words sized by the toy's config (never typed)."""
    fields = {
        "pairs": fmt_int(cfg.d_head // 2),
        "d_head": fmt_int(cfg.d_head),
        "base": fmt_int(round(cfg.rope_theta)),
    }
    return tuple(
        msgspec.structs.replace(step, text=fill(step.text, fields, f"rotary.steps[{i}].text"))
        for i, step in enumerate(WALKTHROUGHS.rotary.steps)
    )


# -- the relative-position property, shown with the engine's numbers ----------------------------
QUERY, KEY = 4, 1  # the toy's tokens whose query and key are moved ("mats" looks at "cat")
SHIFTS = (0, 3, 1000)  # both moved by these many positions: the score stays
APART = 3  # the query alone moved by this many: the gap, and the score, change


@dataclass(frozen=True)
class ShiftedScore:
    t: int  # the query's position
    s: int  # the key's position
    score: float  # q̃_t · k̃_s


def shifted_scores(toy: RotaryToy, head: int = 0) -> tuple[ShiftedScore, ...]:
    """The toy's query of token QUERY and key of token KEY (head `head`, before rotation: what
    the projections made of the two tokens), rotated by the engine's own ops as if they stood at
    other positions: both moved by each of SHIFTS, then the query alone moved APART further.
    The last score differs; the others are equal up to rounding, as the rotation promises."""
    cfg = toy.cfg
    pair = np.stack([toy.trace["q"][head, QUERY], toy.trace["k"][head, KEY]])[None]  # [1, 2, dh]
    t0, s0 = int(toy.positions[QUERY]), int(toy.positions[KEY])
    placed = [(t0 + d, s0 + d) for d in SHIFTS] + [(t0 + APART, s0)]
    out = []
    for t, s in placed:
        cos, sin = rope_cos_sin(np.array([t, s]), cfg.d_head, cfg.rope_theta)
        q, k = apply_rotary(pair, cos, sin)[0]
        out.append(ShiftedScore(t=t, s=s, score=float(q @ k)))
    return tuple(out)


# -- the Llama sizes beside each step -----------------------------------------------------------
def turns(rate: float) -> str:
    """Positions per full turn, 2π / rate, as the page prints it."""
    per_turn = 2 * math.pi / rate
    return f"{per_turn:.2f}" if per_turn < 100 else fmt_int(round(per_turn))


def rate_text(rate: float) -> str:
    """A rate in radians per position: "1" for pair 0, three significant digits otherwise."""
    return fmt_int(int(rate)) if float(rate).is_integer() else f"{rate:.3g}"


def step_figures(toy: ModelConfig, n_tokens: int, big: ModelConfig) -> dict[str, Figure]:
    """{step key: Figure} of Llama-family size `big` beside the toy (n_tokens positions)."""
    N, dh, h, h_kv = big.n_ctx, big.d_head, big.n_head, big.n_kv_head
    half = dh // 2
    rates = rope_inv_freq(dh, big.rope_theta)  # [dh/2]: the same op the engine turns them with
    last_angle = float(rope_angles(np.array([N - 1]), dh, big.rope_theta)[0, -1])
    rotated = (h + h_kv) * half  # pairs turned per token and layer
    return {
        "pairs": Figure(
            gpt2_line=f"d_head {fmt_int(dh)} → {fmt_int(half)} pairs per head",
            facts=(
                ("Pairs per head", f"{fmt_int(dh)} ÷ 2 = {fmt_int(half)}"),
                ("Pairing", f"dimension i with i + {fmt_int(half)}"),
                ("Heads rotated", f"{fmt_int(h)} query heads, {fmt_int(h_kv)} key heads"),
                ("Values", "not rotated"),
            ),
            grid=(N, dh),
            toy_grid=(n_tokens, toy.d_head),
        ),
        "angles": Figure(
            gpt2_line=(
                f"θ_i = {fmt_int(round(big.rope_theta))}^(−2i/{fmt_int(dh)}) · pair 0: "
                f"{rate_text(rates[0])} rad per position, pair {fmt_int(half - 1)}: "
                f"{rate_text(rates[-1])}"
            ),
            facts=(
                ("Base (rope_theta)", fmt_int(round(big.rope_theta))),
                (
                    "Pair 0",
                    f"{rate_text(rates[0])} rad per position, a turn every "
                    f"{turns(rates[0])} positions",
                ),
                (
                    f"Pair {fmt_int(half - 1)}",
                    f"{rate_text(rates[-1])} rad per position, a turn "
                    f"every {turns(rates[-1])} positions",
                ),
                (f"Pair {fmt_int(half - 1)} at position {fmt_int(N - 1)}", f"{last_angle:.2f} rad"),
                ("Parameters", "none: the angles are computed, not learned"),
            ),
            grid=(N, half),
            toy_grid=(n_tokens, toy.d_head // 2),
            per_head=False,
        ),
        "rotate": Figure(
            gpt2_line=f"{fmt_int(h)} + {fmt_int(h_kv)} heads × {fmt_int(half)} pairs turned "
            "per token and layer",
            facts=(
                (
                    "Pairs turned per token and layer",
                    f"({fmt_int(h)} + {fmt_int(h_kv)}) × {fmt_int(half)} = {fmt_int(rotated)}",
                ),
                ("… in all layers", f"{fmt_int(rotated * big.n_layer)}"),
                ELEMENTWISE,
                ("Cache", "keeps the rotated keys"),
            ),
            grid=(N, dh),
            toy_grid=(n_tokens, toy.d_head),
        ),
    }


# -- the widget's JSON ----------------------------------------------------------------------------
def widget_data(toy: RotaryToy, lines: dict[str, tuple[int, int]], code_block: str) -> dict:
    """What walkthrough.js draws, in the attention walkthrough's shape (data.widget_data)."""
    cfg = toy.cfg
    return {
        **shared_data(
            BLOCK, cfg, toy.tokens, toy.token_ids, toy.trace, steps(cfg), lines, code_block
        ),
        "colours": list(TOKEN_COLOURS),
        "positions": [int(t) for t in toy.positions],
        "rates": rounded(toy.rates),
        "matrices": {
            key: {"symbol": m.symbol, "caption": m.caption, "columns": m.columns, "masked": False}
            for key, m in MATRICES.items()
        },
    }

"""The walkthrough's toy: the engine's trace of one attention layer on five labelled tokens.

Everything the page shows at toy scale comes from here, so the page, its JSON and the tests
read the same arrays: the engine's attention trace of block 0 (ln_1's output goes in).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from generator.config import TOY, TOY_TOKENS, ModelConfig
from generator.engine import forward, toy_token_ids, toy_weights
from generator.errors import InputError

# Labels for the toy's positions. The embeddings behind them are random rows of a random wte:
# the words name the positions, they mean nothing to the toy model.
TOKENS: tuple[str, ...] = ("The", "cat", "sat", "on", "mats")
# One colour per token (Okabe and Ito's colour-blind-safe palette): the weighted-sum step blends
# them with the attention weights, so an output row's colour shows which tokens it drew from.
TOKEN_COLOURS: tuple[str, ...] = ("#e69f00", "#56b4e9", "#009e73", "#cc79a7", "#d55e00")
SEED = 0  # seeds toy_weights and toy_token_ids
BLOCK = 0  # the block shown (numbered from 0 on every page, as transformers' h.0)


@dataclass(frozen=True)
class Toy:
    """One attention layer of the toy model, traced by the engine."""

    cfg: ModelConfig
    tokens: tuple[str, ...]  # [T] labels
    token_ids: np.ndarray  # [T] ids into the toy's random wte
    block: int  # 0-based block index
    x: np.ndarray  # [T, d] ln_1's output: attention's input
    trace: dict[str, np.ndarray]  # the engine's attention trace: q … projected

    @property
    def n_tokens(self) -> int:
        return len(self.tokens)


@functools.cache
def toy_attention(seed: int = SEED, block: int = BLOCK) -> Toy:
    """The engine's forward pass on the toy, keeping block `block`'s attention trace."""
    cfg = TOY
    if len(TOKENS) != TOY_TOKENS or len(TOKEN_COLOURS) != TOY_TOKENS:
        raise InputError(
            f"{len(TOKENS)} token labels and {len(TOKEN_COLOURS)} colours for "
            f"{TOY_TOKENS} toy tokens",
            file="generator/walkthrough/toy.py",
            entry="TOKENS",
            fix="give one label and one colour per toy token (generator.config.TOY_TOKENS)",
        )
    token_ids = toy_token_ids(cfg, seed)  # [T]
    trace = forward(toy_weights(cfg, seed), cfg, token_ids, keep="all")
    layer = trace.blocks[block]
    assert layer.ln1 is not None  # keep="all" traces every step
    return Toy(
        cfg=cfg,
        tokens=TOKENS,
        token_ids=token_ids,
        block=block,
        x=layer.ln1,
        trace=dict(layer.attention),
    )

"""Notation used on every page: each symbol, what it means, and its value per GPT-2 size."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from generator.accounting import kaplan_n
from generator.config import ModelConfig


@dataclass(frozen=True)
class Symbol:
    anchor: str  # #sym-<anchor> on the glossary page
    tex: str
    meaning: str
    value: Callable[[ModelConfig], int] | None = None  # None: depends on the input, not the model


SYMBOLS: dict[str, Symbol] = {
    "B": Symbol("B", "B", "batch size: how many sequences run side by side"),
    "T": Symbol("T", "T", "sequence length: tokens in the input (at most n_ctx)"),
    "d": Symbol("d", r"d", "width of the residual stream (d_model, n_embd)", lambda c: c.d_model),
    "h": Symbol("h", "h", "attention heads per block (n_head)", lambda c: c.n_head),
    "d_head": Symbol(
        "d_head", r"d_{\mathrm{head}}", "width of one head: d / h", lambda c: c.d_head
    ),
    "d_ff": Symbol("d_ff", r"d_{\mathrm{ff}}", "hidden width of the MLP: 4·d", lambda c: c.d_mlp),
    "L": Symbol("L", "L", "number of transformer blocks (n_layer)", lambda c: c.n_layer),
    "V": Symbol("V", "V", "vocabulary size: rows of wte (n_vocab)", lambda c: c.vocab_size),
    "n_ctx": Symbol(
        "n_ctx", r"n_{\mathrm{ctx}}", "longest context: rows of wpe", lambda c: c.n_ctx
    ),
    "N": Symbol(
        "N",
        "N",
        "non-embedding parameters in Kaplan et al.'s sense: 12·L·d² (block weights only)",
        kaplan_n,
    ),
}

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

# The Llama family's: the same letters where they mean the same, and what it adds.
LLAMA_SYMBOLS: dict[str, Symbol] = {
    "llama-d": Symbol(
        "llama-d", "d", "width of the residual stream (hidden_size)", lambda c: c.d_model
    ),
    "llama-h": Symbol(
        "llama-h", "h", "query heads per layer (num_attention_heads)", lambda c: c.n_head
    ),
    "h_kv": Symbol(
        "h_kv",
        r"h_{\mathrm{kv}}",
        "key/value heads per layer (num_key_value_heads); h / h_kv query heads share each",
        lambda c: c.n_kv_head,
    ),
    "llama-d_head": Symbol(
        "llama-d_head", r"d_{\mathrm{head}}", "width of one head: d / h", lambda c: c.d_head
    ),
    "llama-d_ff": Symbol(
        "llama-d_ff",
        r"d_{\mathrm{ff}}",
        "hidden width of the SwiGLU MLP (intermediate_size), set by the config",
        lambda c: c.d_mlp,
    ),
    "llama-L": Symbol(
        "llama-L", "L", "number of decoder layers (num_hidden_layers)", lambda c: c.n_layer
    ),
    "llama-V": Symbol(
        "llama-V", "V", "vocabulary size: rows of embed_tokens and lm_head", lambda c: c.vocab_size
    ),
    "llama-n_ctx": Symbol(
        "llama-n_ctx",
        r"n_{\mathrm{ctx}}",
        "longest context the config allows (max_position_embeddings); no table limits it",
        lambda c: c.n_ctx,
    ),
    "theta": Symbol("theta", r"\theta", "RoPE's base (rope_theta)", lambda c: round(c.rope_theta)),
    "W": Symbol(
        "W",
        "W",
        "sliding window: the positions a query sees, itself included (— when it sees all)",
        lambda c: c.sliding_window or 0,
    ),
}

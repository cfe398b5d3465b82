"""The whole model's figures beside the conventions they are compared with, from the accounting's
rows: the summary, Kaplan et al.'s N and C_forward, the FLOP ledger (2N + grid + unembedding,
6N, PaLM's estimate) and a training step's FLOPs and memory. Nothing here imports numpy or the
renderers.
"""

from __future__ import annotations

import math

from generator.accounting import (
    ATTENTION_GRID,
    active_params,
    context_length,
    flop_rows,
    flops_per_token,
    grid_per_key,
    kaplan_n,
    param_rows,
    params_total,
)
from generator.config import ModelConfig
from generator.models import get_family
from generator.models.layer_kinds import causal_cells, layer_groups, seen_keys
from generator.models.rows import Row, total

KAPLAN_NOTE: str = (
    "Kaplan et al. (2020), Table 1: N ≈ 2·d_model·n_layer·(2·d_attn + d_ff) = 12·n_layer·d_model² "
    "(weights of the block matrices only: no biases, LayerNorms or embeddings) and "
    "C_forward ≈ 2N + 2·n_layer·n_ctx·d_attn. Our exact count relates to it exactly: "
    "ours = C_forward + 2·n_layer·n_ctx·d_attn + 2·d_model·n_vocab. The first extra term is "
    "because we count both QKᵀ and A·V over the full T×T grid, where Kaplan's attention term is "
    "half that; the second is the unembedding (Kaplan's de-embed row, left out of C_forward). "
    "Kaplan's N differs from the exact non-embedding count by the biases and LayerNorm "
    "parameters (13·n_layer·d_model + 2·d_model with biases), at most 1.25/d_model of N: "
    "0.14% for GPT-2 small, 0.07% for GPT-2 XL."
)


def kaplan_shape(cfg: ModelConfig) -> bool:
    """Whether Kaplan et al.'s N = 12·n_layer·d_model² describes cfg's layers: GPT-2's shape
    (multi-head attention d_model wide, a GELU MLP 4 × d_model wide, no experts, no latent)."""
    return (
        cfg.mlp == "gelu"
        and cfg.d_mlp == 4 * cfg.d_model
        and cfg.n_kv_head == cfg.n_head
        and cfg.d_attn == cfg.d_model
        and cfg.experts is None
        and cfg.latent is None
    )


def kaplan_c_forward(cfg: ModelConfig, n_ctx: int | None = None) -> int:
    """Kaplan et al. (2020) Table 1: C_forward ≈ 2N + 2·n_layer·n_ctx·d_attn, per token."""
    T = context_length(cfg, n_ctx)
    return 2 * kaplan_n(cfg) + 2 * cfg.n_layer * T * cfg.d_attn


def block_weights(cfg: ModelConfig, *, active: bool = False) -> int:
    """The weights of every block's matrices (no biases, norms or embeddings): the N whose
    2N is the projections' and MLP's share of the forward FLOPs per token, in every family
    (GPT-2's equals Kaplan's N; Llama's counts its narrower K and V and its three MLP matrices).
    With experts, every expert's (active=False) or only the top_k a token runs (active=True,
    the N of 2N: the router scores all experts, so its matrix counts whole)."""
    found = 0
    for _, layers in layer_groups(cfg, by_window=False):
        rows = param_rows(cfg, "block", layer=layers[0])
        weights = sum(math.prod(term) for row in rows for term in row.terms if len(term) >= 2)
        if active and cfg.moe_layer(layers[0]):
            assert cfg.experts is not None
            moe = cfg.experts
            weights -= (moe.n_experts - moe.top_k) * 3 * cfg.d_model * moe.d_expert
        found += weights * len(layers)
    return found


def attention_grid_flops(cfg: ModelConfig, n_ctx: int | None = None) -> int:
    """FLOPs per token of QKᵀ and A·V, every block, over the keys each query sees: 4·n_layer·T·d_attn
    without windows (the full T × T grid)."""
    T = context_length(cfg, n_ctx)
    return sum(
        total([r for r in flop_rows(cfg, "attention", T, layers[0]) if r.key in ATTENTION_GRID])
        * len(layers)
        for _, layers in layer_groups(cfg)
    )


def embedding_params(cfg: ModelConfig) -> int:
    """The embedding tables' parameters: wte, and wpe where positions are learned."""
    return sum(
        params_total(cfg, key) for key in ("wte", "wpe") if key in get_family(cfg.family).components
    )


def model_summary(cfg: ModelConfig, n_ctx: int | None = None) -> dict:
    """The headline numbers of one model at context n_ctx (default: its full context)."""
    T = context_length(cfg, n_ctx)
    tied = params_total(cfg, "model", tied=True)
    embedding = embedding_params(cfg)
    flops = flops_per_token(cfg, "model", T)
    kaplan_c = kaplan_c_forward(cfg, T)
    return {
        "name": cfg.name,
        "label": cfg.label,
        "n_ctx": T,
        "params": params_total(cfg, "model"),  # as the model is (tied or not)
        "active_params": active_params(cfg),  # those one token reads (experts: top_k of them)
        "params_tied": tied,
        "params_untied": params_total(cfg, "model", tied=False),
        "embedding_params": embedding,  # wte (+ wpe)
        "non_embedding_params": tied - embedding,  # exact: blocks and the final norm
        "block_weights": block_weights(cfg),
        "active_block_weights": block_weights(cfg, active=True),
        "kaplan_n": kaplan_n(cfg),
        "kaplan_c_forward": kaplan_c,
        "flops_per_token": flops,  # exact, FLOP_CONVENTION
        "flops_minus_kaplan": flops - kaplan_c,  # = 2·n_layer·n_ctx·d_attn + 2·d_model·n_vocab
        "flops_per_sequence": flops * T,
    }


def flop_relations(cfg: ModelConfig, n_ctx: int | None = None) -> list[Row]:
    """A FLOP ledger: the forward FLOPs per token at T, split into the convention's three terms,
    and the counts other conventions give, each computed here: multiply-adds counted once (fvcore,
    ptflops), without the unembedding, 2 × every parameter, 6N and PaLM's training estimate
    against the exact count, and a causal kernel's cells. Separate quantities, not a sum.

    forward = 2N + grid + 2·d_model·V exactly, N the weights of the matrices a token runs (with
    experts: the top_k it runs), grid QKᵀ and A·V over the keys each query sees (4·n_layer·T·d_attn
    without windows). A causal kernel computes only the cells a query sees: t keys for the query at
    position t (min(t, W) with a window), about half the grid over a whole sequence.
    """
    T = context_length(cfg, n_ctx)
    forward, n = flops_per_token(cfg, "model", T), block_weights(cfg, active=True)
    groups = layer_groups(cfg)
    per_key = {layers[0]: grid_per_key(cfg, layers[0]) for _, layers in groups}
    grid_terms = tuple(
        (per_key[layers[0]] * len(layers), seen_keys(cfg, layers[0], T)) for _, layers in groups
    )
    causal_terms = tuple(  # the cells a causal kernel computes, each kind of layer
        (per_key[layers[0]] * len(layers), causal_cells(cfg, layers[0], T)) for _, layers in groups
    )
    grid = sum(math.prod(term) for term in grid_terms)
    unembedding = 2 * cfg.d_model * cfg.vocab_size
    every = "the full T × T grid" if cfg.sliding_window is None else "the keys each query sees"
    return [
        Row("forward", "Forward FLOPs per token at T = {T}, exact", ((forward,),), (("T", T),)),
        Row("2n", "… 2N: the matrices a token runs (N = their weights)", ((2, n),)),
        Row("grid", f"… QKᵀ and A·V over {every}", grid_terms),
        Row("unembedding", "… the unembedding", ((2, cfg.d_model, cfg.vocab_size),)),
        Row(
            "macs",
            "Multiply-adds, each counted once (fvcore, ptflops): forward ÷ 2",
            ((forward // 2,),),
        ),  # fmt: skip
        Row("no_unembedding", "Forward without the unembedding", ((forward - unembedding,),)),
        Row("2p", "2 × every parameter, embeddings included", ((2, params_total(cfg, "model")),)),
        Row("6n", "6N: the usual training estimate per token", ((6, n),)),
        Row(
            "palm",
            "PaLM's training estimate 6N + 12·L·H·Q·T: 6N + 3 × the grid",
            ((6, n), (3, grid)),
        ),  # fmt: skip
        Row("train", "Training per token, exact: 3 × forward", ((3, forward),)),
        Row(
            "grid_sequence",
            "The full grid over a whole sequence of T tokens",
            tuple((per_key[layers[0]] * len(layers), T, T) for _, layers in groups),
        ),
        Row("causal_sequence", "… only the cells a causal kernel computes", causal_terms),
    ]


TRAIN_NOTE: str = (
    "A training step runs the forward pass and then the backward pass. Backward costs two "
    "matmuls for each forward one: the gradient with respect to the input and the gradient with "
    "respect to the weight (or, for QKᵀ and A·V, with respect to both operands). So a training "
    "token costs exactly three times its forward FLOPs under the convention above. Kaplan et "
    "al.'s rule of thumb is 6N per token, with N the non-embedding weights; it leaves out the "
    "attention grid and the unembedding."
)


ADAM_BYTES: int = 4  # float32 weights, gradients and both Adam moments


def train_flop_rows(cfg: ModelConfig, n_ctx: int | None = None) -> list[Row]:
    """FLOPs per token of one training step at context T: forward, then backward (2 × forward)."""
    forward = flops_per_token(cfg, "model", context_length(cfg, n_ctx))
    return [
        Row("forward", "Forward pass", ((forward,),)),
        Row("backward", "Backward pass: gradients of inputs and of weights", ((2, forward),)),
    ]


def train_flops_per_token(cfg: ModelConfig, n_ctx: int | None = None) -> int:
    return sum(row.value for row in train_flop_rows(cfg, n_ctx))


def six_n(cfg: ModelConfig) -> int:
    """Kaplan et al.'s training FLOPs per token, 6N (N: non-embedding block weights)."""
    return 6 * kaplan_n(cfg)


def train_memory_rows(cfg: ModelConfig) -> list[Row]:
    """Bytes a float32 Adam training step keeps per parameter: weights, gradients, two moments.

    Activations come on top and depend on batch and context; they are not counted here.
    """
    n = params_total(cfg, "model")  # tied: wte is one tensor, with one gradient and one state
    return [
        Row("weights", "Weights (float32)", ((n, ADAM_BYTES),)),
        Row("gradients", "Gradients (float32)", ((n, ADAM_BYTES),)),
        Row("adam.m", "Adam first moment m", ((n, ADAM_BYTES),)),
        Row("adam.v", "Adam second moment v", ((n, ADAM_BYTES),)),
    ]

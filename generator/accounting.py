"""Exact parameter and FLOP accounting per component, as rows (label, formula, value).

Each model family gives its own rows (generator/models/<family>/accounting.py); this module
checks the component and the context, dispatches on the config's family, and derives what every
family shares: totals (the KV cache and decoding: generator/decode_costs.py; the summary, the FLOP
ledger and training: generator/scaling.py). Pages,
LaTeX tables and the `itm numbers` CLI all print these rows, so a number on the site is always
the value of a formula shown next to it. Nothing here imports torch, numpy or the renderers.
"""

from __future__ import annotations

from generator.config import ModelConfig
from generator.errors import InputError
from generator.models import get_family
from generator.models.layer_kinds import has, layer_groups, layer_phrases
from generator.models.rows import Row, prefixed, total, with_bias

__all__ = ["Row", "prefixed", "with_bias"]  # the rows' type, for the modules that print them

FLOP_CONVENTION: str = (
    "FLOPs are counted for the forward pass, per token, for a sequence of T tokens (on the "
    "component pages, the model's full context). One multiply-add counts as 2 FLOPs, so "
    "[m×k]·[k×n] costs 2·m·k·n. Only matrix multiplications are counted: the projections of "
    "each layer (GPT-2's fused QKV, attention output and two MLP matrices; Llama's q, k, v, o "
    "and three MLP matrices), the attention scores QKᵀ and the weighted sum A·V, and the "
    "unembedding. Scores and weighted sum are counted over the full T×T grid, masked cells "
    "included: no causal saving. That is what torch.utils.flop_counter.FlopCounterMode reports "
    "for eager attention, which the tests check for every size of every family. A layer with a "
    "sliding window of W is counted as a windowed kernel computes it: each query against the "
    "min(T, W) keys it may see, not the masked rest of the grid (the tests count a cached "
    "decoding step, whose cache holds only those keys). Lookups, bias and residual additions, "
    "norms, activations, the rotary position embedding and softmax are elementwise and are not "
    "counted."
)


# GPT-2's component keys and titles (each family's are get_family(name).registry).
COMPONENTS: tuple[str, ...] = get_family("gpt2").components

ATTENTION_GRID = ("scores", "weighted_sum")  # the attention rows that grow with T (T×T matmuls)


def _check(cfg: ModelConfig, component: str) -> None:
    keys = get_family(cfg.family).components
    if component not in keys:
        raise InputError(
            f"unknown component {component!r}",
            entry=component,
            fix=f"use one of: {', '.join(keys)}",
        )


def context_length(cfg: ModelConfig, n_ctx: int | None) -> int:
    n_ctx = cfg.n_ctx if n_ctx is None else n_ctx
    if not 1 <= n_ctx <= cfg.n_ctx:
        raise InputError(
            f"context length {n_ctx} is outside 1..{cfg.n_ctx} for {cfg.name}",
            entry=str(n_ctx),
            fix=f"pass a context between 1 and {cfg.n_ctx} (the longest the model reads)",
        )
    return n_ctx


# --- parameters -------------------------------------------------------------------------------


def param_rows(
    cfg: ModelConfig, component: str, *, tied: bool | None = None, layer: int | None = None
) -> list[Row]:
    """The learned tensors of one instance of `component`, one row each.

    tied: whether the unembedding reuses the token embedding (no parameters of its own) or is a
    separate lm_head [d, V]; by default what the model does (GPT-2 ties, Llama does not).
    """
    _check(cfg, component)
    tied = cfg.tied_embeddings if tied is None else tied
    return get_family(cfg.family).param_rows(cfg, component, tied=tied, layer=layer)


def params_per_instance(
    cfg: ModelConfig, component: str, *, tied: bool | None = None, layer: int | None = None
) -> int:
    return total(param_rows(cfg, component, tied=tied, layer=layer))


def instances(cfg: ModelConfig, component: str) -> int:
    """How many copies the model has: for the parts of a block, the layers that have it (every
    layer; experts in the MoE layers, a dense MLP in the others), 1 otherwise."""
    _check(cfg, component)
    if component not in get_family(cfg.family).per_block:
        return 1
    return sum(has(cfg, component, i) for i in range(cfg.n_layer))


def layer_kinds(
    cfg: ModelConfig, component: str, n_ctx: int | None = None
) -> list[tuple[str, tuple[int, ...]]]:
    """The instances of `component` grouped by what one of them counts (its parameter and FLOP
    rows at n_ctx): (what sets the group apart, its layers), in order of first layer. One group,
    ("", layers), when every instance is alike, or for a part of the model that is not per layer
    ((0,): its one instance). gpt-oss's attention: its sliding-window and its full layers."""
    T = context_length(cfg, n_ctx)
    if component not in get_family(cfg.family).per_block:
        _check(cfg, component)
        return [("", (0,))]
    found: dict[tuple, list[int]] = {}
    for i in range(cfg.n_layer):
        if has(cfg, component, i):
            params = tuple(r.value for r in param_rows(cfg, component, layer=i))
            flops = tuple(r.value for r in flop_rows(cfg, component, T, i))
            found.setdefault((params, flops), []).append(i)
    groups = [tuple(layers) for layers in found.values()]
    if len(groups) == 1:
        return [("", groups[0])]
    return list(zip(layer_phrases(cfg, groups), groups, strict=True))


def params_total(cfg: ModelConfig, component: str, *, tied: bool | None = None) -> int:
    """Every instance's parameters (a block: each layer's own, dense and MoE layers apart)."""
    if component != "block" or instances(cfg, component) == 1:
        return params_per_instance(cfg, component, tied=tied) * instances(cfg, component)
    return sum(
        total(param_rows(cfg, component, tied=tied, layer=layers[0])) * len(layers)
        for _, layers in layer_groups(cfg, by_window=False)
    )


def active_params(cfg: ModelConfig) -> int:
    """The parameters one token's forward pass reads: all but the routed experts it does not
    run (each MoE layer runs top_k of n_experts; its router scores them all)."""
    unused = 0
    if cfg.experts is not None:
        moe = cfg.experts
        per_expert = 3 * cfg.d_model * moe.d_expert
        if cfg.biased("mlp"):
            per_expert += 2 * moe.d_expert + cfg.d_model
        unused = instances(cfg, "experts") * (moe.n_experts - moe.top_k) * per_expert
    return params_total(cfg, "model") - unused


# --- FLOPs ------------------------------------------------------------------------------------


def flop_rows(
    cfg: ModelConfig, component: str, n_ctx: int | None = None, layer: int | None = None
) -> list[Row]:
    """Forward FLOPs per token of one instance of `component` (matmuls only, FLOP_CONVENTION),
    the one in layer `layer` for the parts of a layer (attention's window, a block's MLP or
    experts); by default the layer whose parameters param_rows counts.

    n_ctx is the sequence length T (default: the model's context); only attention depends on it.
    """
    _check(cfg, component)
    return get_family(cfg.family).flop_rows(cfg, component, context_length(cfg, n_ctx), layer)


def flops_per_token(
    cfg: ModelConfig, component: str, n_ctx: int | None = None, layer: int | None = None
) -> int:
    """Forward FLOPs per token of one instance (flops_total_per_token: the whole model's share)."""
    return total(flop_rows(cfg, component, n_ctx, layer))


def flops_total_per_token(cfg: ModelConfig, component: str, n_ctx: int | None = None) -> int:
    """Forward FLOPs per token of every instance of `component`, each layer with its window."""
    if component not in get_family(cfg.family).per_block:
        return flops_per_token(cfg, component, n_ctx)
    return sum(
        flops_per_token(cfg, component, n_ctx, layers[0]) * len(layers)
        for _, layers in layer_groups(cfg)
        if has(cfg, component, layers[0])
    )


# --- shared by the summary and the cache -----------------------------------------------------


def kaplan_n(cfg: ModelConfig) -> int:
    """Kaplan et al. (2020) Table 1: N ≈ 2·d_model·n_layer·(2·d_attn + d_ff). Its attention has
    four d_model × d_attn matrices and its MLP two: GPT-2's shape, not Llama's (block_weights is
    the exact count for any family)."""
    return 2 * cfg.d_model * cfg.n_layer * (2 * cfg.d_attn + cfg.d_mlp)


def grid_per_key(cfg: ModelConfig, layer: int) -> int:
    """FLOPs of QKᵀ and A·V for one query against one key in layer `layer`, every head: 4·d_attn
    (latent attention: 2·h·(qk_head_dim + v_head_dim))."""
    return sum(r.value for r in flop_rows(cfg, "attention", 1, layer) if r.key in ATTENTION_GRID)

"""Exact parameter and FLOP accounting per component, as rows (label, formula, value).

Each model family gives its own rows (generator/models/<family>/accounting.py); this module
checks the component and the context, dispatches on the config's family, and derives what every
family shares: totals, the KV cache and decoding (the summary, the FLOP ledger and training:
generator/scaling.py). Pages,
LaTeX tables and the `itm numbers` CLI all print these rows, so a number on the site is always
the value of a formula shown next to it. Nothing here imports torch, numpy or the renderers.
"""

from __future__ import annotations

import math

from generator.config import ModelConfig
from generator.errors import InputError
from generator.models import get_family
from generator.models.layer_kinds import has, layer_groups, layer_phrases, seen_keys
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


# --- generation: the KV cache -----------------------------------------------------------------

KV_DTYPES: dict[str, int] = {"float32": 4, "float16": 2}  # bytes per cached value

DECODE_NOTE: str = (
    "Generating with a cache, the step that reads token number t (the cache holds the t − 1 "
    "before it) projects that one token and compares its query with t keys: its FLOPs are the "
    "forward FLOPs per token at T = t. Without a cache the whole prefix of t tokens is run again "
    "(every block over t positions, each at T = t), and only the last position's logits are "
    "needed. Same convention as above: matmuls only, full grids."
)


def cached_positions(cfg: ModelConfig, layer: int, T: int) -> int:
    """How many positions layer `layer` keeps after reading T tokens: all T, or with a window of
    W the last W − 1 (the next query sees those and itself; transformers keeps as many)."""
    window = cfg.window(layer)
    return T if window is None else min(T, window - 1)


def kv_cache_rows(cfg: ModelConfig, n_ctx: int | None = None) -> list[Row]:
    """What the KV cache holds: per token (values, then bytes), then after n_ctx tokens.

    Each block keeps one key and one value vector per position, each n_kv_head × d_head wide
    (all key/value heads side by side: d_model in GPT-2, narrower with grouped-query attention),
    so a token costs 2 · n_layer · n_kv_head · d_head values, until a layer's window is full: it
    then keeps its last W − 1 positions and grows no more. The rows are separate quantities,
    not parts of a sum.
    """
    T = context_length(cfg, n_ctx)
    width = cache_width(cfg)  # (2, n_kv_head · d_head): a key and a value; latent: (c + r,)
    per_token = (width[0], cfg.n_layer, *width[1:]) if len(width) == 2 else (cfg.n_layer, *width)
    what = (
        "a key and a value per block" if len(width) == 2 else "a latent and a rotated key per layer"
    )
    rows = [Row("values", f"Values per token: {what}", (per_token,))]
    rows += [
        Row(f"bytes.{dtype}", f"Bytes per token in {dtype}", ((*per_token, size),))
        for dtype, size in KV_DTYPES.items()
    ]
    held = tuple(
        (*width[:-1], len(layers), width[-1], cached_positions(cfg, layers[0], T))
        for _, layers in layer_groups(cfg)
    )
    label, numbers = "Values for {T} tokens", [("T", T)]
    if cfg.sliding_window is not None:
        label += " (a window keeps the last {kept})"
        numbers.append(("kept", cfg.sliding_window - 1))
    rows.append(Row("context.values", label, held, tuple(numbers)))
    rows += [
        Row(
            f"context.{dtype}",
            f"Bytes for {{T}} tokens in {dtype}",
            tuple((*term, size) for term in held),
            (("T", T),),
        )
        for dtype, size in KV_DTYPES.items()
    ]
    return rows


def cache_width(cfg: ModelConfig) -> tuple[int, ...]:
    """What one layer's cache holds per position: a key and a value n_kv_head · d_head wide,
    (2, d_kv); with latent attention the latent and the shared rotated key, (kv_rank + rope_dim,),
    from which every head's keys and values are read out again."""
    if cfg.latent is not None:
        return (cfg.latent.kv_rank + cfg.latent.rope_dim,)
    return (2, cfg.d_kv)


def full_kv_values_per_token(cfg: ModelConfig) -> int:
    """What a cache of every head's key and value would hold per token, all layers: latent
    attention's keys are h · (nope + rope) wide and its values h · v_dim (its latent cache holds
    kv_rank + rope_dim instead); without a latent, the cache itself."""
    if cfg.latent is None:
        return kv_values_per_token(cfg)
    lat = cfg.latent
    return cfg.n_layer * cfg.n_head * (lat.qk_dim + lat.v_dim)


def kv_values_per_token(cfg: ModelConfig) -> int:
    """2 · n_layer · n_kv_head · d_head: one key and one value per block."""
    return next(r.value for r in kv_cache_rows(cfg) if r.key == "values")


def decode_flop_rows(cfg: ModelConfig, t: int, *, cached: bool) -> list[Row]:
    """FLOPs of the decoding step that reads token number t (DECODE_NOTE), with or without cache.

    A layer with a window of W compares the new query with min(t, W) keys (its cache holds no
    more); recomputing, each of the t positions does the same.
    """
    t = context_length(cfg, t)
    logits = Row("lm_head", "Logits of the last position only", ((2, cfg.d_model, cfg.vocab_size),))
    groups = layer_groups(cfg)
    blocks = tuple(
        (flops_per_token(cfg, "block", t, layers[0]), len(layers)) for _, layers in groups
    )
    keys = "t keys" if cfg.sliding_window is None else "the keys its window keeps"
    if cached:
        rows = [Row("h", f"Blocks: one new position against {keys}", blocks)]
        if cfg.latent is not None and t > 1:  # transformers reads every cached latent out again
            rows.append(
                Row(
                    "readout",
                    "The t − 1 cached latents read out again (kv_b)",
                    (latent_readout(cfg, t),),
                )
            )
        return [*rows, logits]
    again = tuple((*term, t) for term in blocks)
    return [Row("h", "Blocks: all t positions again", again), logits]


def latent_readout(cfg: ModelConfig, t: int) -> tuple[int, ...]:
    """The factors of kv_b_proj reading the t − 1 cached latents out again, every layer, in the
    step that reads token number t (transformers' latent cache); () without latent attention."""
    if cfg.latent is None:
        return ()
    lat = cfg.latent
    return (2, lat.kv_rank, cfg.n_head * (lat.nope_dim + lat.v_dim), t - 1, cfg.n_layer)


def decode_flops(cfg: ModelConfig, t: int, *, cached: bool) -> int:
    return sum(row.value for row in decode_flop_rows(cfg, t, cached=cached))


def cache_crossover(cfg: ModelConfig) -> int | None:
    """The first t at which reading the cache (scores and weighted sum against the cached keys,
    all blocks) costs more FLOPs than everything else the step does (projections, MLP, logits);
    None when it never does (every layer's window caps the keys read below that).

    The cached step costs a + b·t without windows; this is the smallest t with b·t > a, which
    may lie past n_ctx. A layer with a window of W stops adding to b past t = W; latent attention
    adds to b the read-out of every cached latent (transformers' cache), and its grid is
    h · (qk_head_dim + v_head_dim) wide, not 2 · d_attn.
    """
    fixed = decode_flops(cfg, 1, cached=True) - cache_crossover_slope(cfg)  # a

    def reading(t: int) -> int:  # what the cache adds to the step at t, all blocks
        grid = sum(
            grid_per_key(cfg, layers[0]) * len(layers) * seen_keys(cfg, layers[0], t)
            for _, layers in layer_groups(cfg)
        )
        return grid + (math.prod(latent_readout(cfg, t)) if cfg.latent is not None else 0)

    every_layer_windowed = all(w is not None for w in cfg.windows)
    if every_layer_windowed and reading(max(w or 0 for w in cfg.windows)) <= fixed:
        return None
    low, high = 1, fixed + 2  # reading(t) >= t > fixed at t = fixed + 1
    while low < high:  # the smallest t with reading(t) > fixed
        middle = (low + high) // 2
        low, high = (middle + 1, high) if reading(middle) <= fixed else (low, middle)
    return low


def cache_crossover_slope(cfg: ModelConfig) -> int:
    """FLOPs each cached position adds to a decoding step while no window is full: scores and
    weighted sum, all blocks."""
    grid = sum(r.value for r in flop_rows(cfg, "attention", 1) if r.key in ATTENTION_GRID)
    return grid * cfg.n_layer  # the grid rows are linear in t


def cache_outweighs_weights(cfg: ModelConfig, dtype: str = "float32") -> int:
    """How many full-context sequences' caches outweigh the weights (same dtype): the smallest
    batch whose KV caches at n_ctx hold more values than the model has parameters (a window's
    layers holding their last W − 1 positions, as kv_cache_rows counts them)."""
    per_sequence = next(r.value for r in kv_cache_rows(cfg) if r.key == "context.values")
    return params_total(cfg, "model") // per_sequence + 1

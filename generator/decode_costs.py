"""The KV cache and decoding, for every family: what the cache holds per token and after T tokens,
the FLOPs of a decoding step with and without it, and where reading the cache outweighs the rest
of the step. Built on the per-component rows of generator/accounting.py (same FLOP_CONVENTION);
the generation page, the comparison pages and `itm numbers` print these rows.
"""

from __future__ import annotations

import math

from generator.accounting import (
    ATTENTION_GRID,
    context_length,
    flop_rows,
    flops_per_token,
    grid_per_key,
    params_total,
)
from generator.config import ModelConfig
from generator.models.layer_kinds import layer_groups, seen_keys
from generator.models.rows import Row

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

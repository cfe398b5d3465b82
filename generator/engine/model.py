"""The whole GPT-2 forward pass in numpy, keeping its intermediates in a Trace.

x = wte[ids] + wpe[:T]
for each block:  x = x + attn(ln_1(x));  x = x + mlp(ln_2(x))
logits = ln_f(x) @ wteᵀ;  probs = softmax(logits)

forward_from runs the same pass from a given block on, from the residual stream entering it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from generator.config import ModelConfig
from generator.engine.attention import attention
from generator.engine.layers import (
    KEEPS,
    Keep,
    StepTrace,
    Weights,
    cast,
    embed,
    layer_norm,
    linear,
    mlp,
    softmax,
    sub_weights,
    unembed,
)
from generator.models.checkpoint import check_token_ids, check_weights
from generator.models.ops import causal_attention_by_tiles
from generator.models.tensors import weight_shapes


@dataclass
class BlockTrace:
    """What one transformer block computed. Arrays are [T, d] unless noted.

    keep="patterns" fills resid_in, resid_out and attention["weights"] only (the rest is None or
    empty); keep="all" fills everything.
    """

    resid_in: np.ndarray  # the residual stream entering the block
    resid_out: np.ndarray  # resid_mid + MLP output: the next block's input
    attention: StepTrace  # q, k, v [h, T, dh]; scores … weights [h, T, T]; heads; merged; projected
    ln1: np.ndarray | None = None  # ln_1(resid_in): attention's input
    ln1_trace: StepTrace | None = None  # mean [T], var [T], normalized, out
    resid_mid: np.ndarray | None = None  # resid_in + attention output
    ln2: np.ndarray | None = None  # ln_2(resid_mid): the MLP's input
    ln2_trace: StepTrace | None = None
    mlp: StepTrace | None = None  # fc [T, 4d], gelu [T, 4d], proj [T, d]


@dataclass
class Trace:
    """Everything one forward pass computed, for pages to show and tests to check."""

    token_ids: np.ndarray  # [T]
    logits: np.ndarray  # [T, V]
    blocks: list[BlockTrace]  # one per block; empty for keep="none"
    embed: StepTrace | None = None  # tok, pos, sum [T, d] (keep="all")
    lnf: np.ndarray | None = None  # ln_f of the last block's output [T, d] (keep="all")
    lnf_trace: StepTrace | None = None

    @cached_property
    def probs(self) -> np.ndarray:
        """[T, V], softmax over the vocabulary: row t predicts token t + 1 (computed when read)."""
        return softmax(self.logits)


def attention_output(
    x: np.ndarray, w: Weights, cfg: ModelConfig, dtype: np.dtype | type = np.float64
) -> np.ndarray:
    """attention(x, w, cfg, dtype, keep="none")'s output [T, d], for a forward that keeps no trace.

    The same projections; the softmax attention runs a tile of query rows at a time over the keys
    they may see (causal_attention_by_tiles), never holding the [h, T, T] grid nor computing its
    masked half. Equal to attention()'s to rounding (tests compare both with transformers).
    """
    x = np.asarray(x, dtype=dtype)
    w = {name: np.asarray(value, dtype=dtype) for name, value in w.items()}
    T, d = x.shape
    qkv = linear(x, w["c_attn.weight"], w.get("c_attn.bias"))  # [T, 3d]
    q, k, v = qkv.reshape(T, 3, cfg.n_head, cfg.d_head).transpose(1, 2, 0, 3)  # 3 × [h, T, dh]
    heads = causal_attention_by_tiles(q, k, v)  # [h, T, dh]
    merged = heads.transpose(1, 0, 2).reshape(T, d)  # [T, d]
    return linear(merged, w["c_proj.weight"], w.get("c_proj.bias"))  # [T, d]


def block(
    x: np.ndarray,
    w: Weights,
    cfg: ModelConfig,
    dtype: np.dtype | type = np.float64,
    keep: Keep = "all",
) -> tuple[np.ndarray, BlockTrace]:
    """One pre-norm transformer block; w holds its tensors without the "h.{i}." prefix."""
    eps, traced = cfg.layer_norm_eps, keep == "all"
    ln1, ln1_trace = layer_norm(x, w["ln_1.weight"], w["ln_1.bias"], eps, traced)
    if keep == "none":  # nothing to trace: attention by tiles, without its [h, T, T] grids
        attn_out = attention_output(ln1, sub_weights(w, "attn."), cfg, dtype)
        attn_trace: StepTrace = {}
    else:
        attn_out, attn_trace = attention(ln1, sub_weights(w, "attn."), cfg, dtype, keep)
    resid_mid = x + attn_out  # [T, d]
    ln2, ln2_trace = layer_norm(resid_mid, w["ln_2.weight"], w["ln_2.bias"], eps, traced)
    mlp_out, mlp_trace = mlp(ln2, sub_weights(w, "mlp."))
    resid_out = resid_mid + mlp_out  # [T, d]
    if keep != "all":
        return resid_out, BlockTrace(resid_in=x, resid_out=resid_out, attention=attn_trace)
    trace = BlockTrace(
        resid_in=x,
        resid_out=resid_out,
        attention=attn_trace,
        ln1=ln1,
        ln1_trace=ln1_trace,
        resid_mid=resid_mid,
        ln2=ln2,
        ln2_trace=ln2_trace,
        mlp=mlp_trace,
    )
    return resid_out, trace


def forward(
    weights: Weights,
    cfg: ModelConfig,
    token_ids: np.ndarray,
    dtype: np.dtype | type = np.float64,
    keep: Keep = "all",
) -> Trace:
    """Run GPT-2 on token_ids [T] in `dtype` (float64 or float32), keeping what `keep` names.

    "all": every intermediate; "patterns": each block's residual stream and attention weights;
    "none": only the logits and probabilities; attention then runs by tiles of rows
    (attention_output), equal to the traced runs' logits to rounding, not to the bit.
    """
    if keep not in KEEPS:
        raise ValueError(f"keep must be one of {KEEPS}, not {keep!r}")
    token_ids = np.asarray(token_ids, dtype=np.int64)
    check_token_ids(cfg, token_ids)
    check_weights(
        weights, cfg, weight_shapes(cfg, cfg.names)
    )  # a missing tensor is an error, never a zero
    w = cast(weights, dtype)

    x, embed_trace = embed(w, token_ids)  # [T, d]
    blocks = []
    for i in range(cfg.n_layer):
        x, block_trace = block(x, sub_weights(w, f"h.{i}."), cfg, dtype, keep)
        if keep != "none":
            blocks.append(block_trace)
    lnf, lnf_trace = layer_norm(
        x, w["ln_f.weight"], w["ln_f.bias"], cfg.layer_norm_eps, trace=keep == "all"
    )
    logits = unembed(lnf, w["wte.weight"])  # [T, V], tied: the same wte as the input
    trace = Trace(token_ids=token_ids, logits=logits, blocks=blocks)
    if keep == "all":
        trace.embed, trace.lnf, trace.lnf_trace = embed_trace, lnf, lnf_trace
    return trace


def forward_from(
    weights: Weights,
    cfg: ModelConfig,
    x: np.ndarray,
    start: int,
    dtype: np.dtype | type = np.float64,
) -> np.ndarray:
    """The logits [T, V] of blocks start … n_layer - 1, ln_f and the unembedding run on x [T, d],
    the residual stream entering block `start`.

    Given forward()'s own stream there (trace.blocks[start].resid_in, kept by keep="patterns"),
    these are the operations forward() does after it, on the same arrays: the same bits as
    forward(weights, cfg, ids).logits, for a fraction (n_layer - start) / n_layer of the blocks'
    work. A change to the weights of block `start` or later (a removed head) needs nothing before
    it recomputed, since the blocks before it read none of those weights.
    """
    if not 0 <= start <= cfg.n_layer:
        raise ValueError(f"start must be a block index 0 … {cfg.n_layer}, not {start}")
    check_weights(weights, cfg, weight_shapes(cfg, cfg.names))
    w = cast(weights, dtype)
    x = np.asarray(x, dtype=dtype)
    for i in range(start, cfg.n_layer):
        # "patterns", not "none": attention over the whole grid, as forward() ran it (same bits)
        x, _ = block(x, sub_weights(w, f"h.{i}."), cfg, dtype, keep="patterns")
    lnf, _ = layer_norm(x, w["ln_f.weight"], w["ln_f.bias"], cfg.layer_norm_eps, trace=False)
    return unembed(lnf, w["wte.weight"])  # [T, V]

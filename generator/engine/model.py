"""The whole GPT-2 forward pass in numpy, keeping every intermediate in a Trace.

x = wte[ids] + wpe[:T]
for each block:  x = x + attn(ln_1(x));  x = x + mlp(ln_2(x))
logits = ln_f(x) @ wteᵀ;  probs = softmax(logits)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from generator.config import ModelConfig
from generator.engine.attention import attention
from generator.engine.layers import (
    StepTrace,
    Weights,
    cast,
    check_config,
    embed,
    layer_norm,
    mlp,
    sub_weights,
    unembed,
)


@dataclass
class BlockTrace:
    """What one transformer block computed. Arrays are [T, d] unless noted."""

    resid_in: np.ndarray  # the residual stream entering the block
    ln1: np.ndarray  # ln_1(resid_in): attention's input
    ln1_trace: StepTrace  # mean [T], var [T], normalized, out
    attention: StepTrace  # q, k, v [h, T, dh]; scores … weights [h, T, T]; heads; merged; projected
    resid_mid: np.ndarray  # resid_in + attention output
    ln2: np.ndarray  # ln_2(resid_mid): the MLP's input
    ln2_trace: StepTrace
    mlp: StepTrace  # fc [T, 4d], gelu [T, 4d], proj [T, d]
    resid_out: np.ndarray  # resid_mid + MLP output: the next block's input


@dataclass
class Trace:
    """Everything one forward pass computed, for pages to show and tests to check."""

    token_ids: np.ndarray  # [T]
    embed: StepTrace  # tok, pos, sum [T, d]
    blocks: list[BlockTrace]
    lnf: np.ndarray  # ln_f of the last block's output [T, d]
    lnf_trace: StepTrace
    logits: np.ndarray  # [T, V]
    probs: np.ndarray  # [T, V], softmax over the vocabulary: row t predicts token t + 1


def block(
    x: np.ndarray, w: Weights, cfg: ModelConfig, dtype: np.dtype | type = np.float64
) -> tuple[np.ndarray, BlockTrace]:
    """One pre-norm transformer block; w holds its tensors without the "h.{i}." prefix."""
    ln1, ln1_trace = layer_norm(x, w["ln_1.weight"], w["ln_1.bias"], cfg.layer_norm_eps)
    attn_out, attn_trace = attention(ln1, sub_weights(w, "attn."), cfg, dtype)
    resid_mid = x + attn_out  # [T, d]
    ln2, ln2_trace = layer_norm(resid_mid, w["ln_2.weight"], w["ln_2.bias"], cfg.layer_norm_eps)
    mlp_out, mlp_trace = mlp(ln2, sub_weights(w, "mlp."))
    resid_out = resid_mid + mlp_out  # [T, d]
    trace = BlockTrace(
        resid_in=x,
        ln1=ln1,
        ln1_trace=ln1_trace,
        attention=attn_trace,
        resid_mid=resid_mid,
        ln2=ln2,
        ln2_trace=ln2_trace,
        mlp=mlp_trace,
        resid_out=resid_out,
    )
    return resid_out, trace


def forward(
    weights: Weights, cfg: ModelConfig, token_ids: np.ndarray, dtype: np.dtype | type = np.float64
) -> Trace:
    """Run GPT-2 on token_ids [T] in `dtype` (float64 or float32) and trace every step."""
    token_ids = np.asarray(token_ids, dtype=np.int64)
    check_config(cfg, token_ids)
    w = cast(weights, dtype)

    x, embed_trace = embed(w, token_ids)  # [T, d]
    blocks = []
    for i in range(cfg.n_layer):
        x, block_trace = block(x, sub_weights(w, f"h.{i}."), cfg, dtype)
        blocks.append(block_trace)
    lnf, lnf_trace = layer_norm(x, w["ln_f.weight"], w["ln_f.bias"], cfg.layer_norm_eps)
    logits, head = unembed(lnf, w["wte.weight"])  # tied: the same wte as the input
    return Trace(
        token_ids=token_ids,
        embed=embed_trace,
        blocks=blocks,
        lnf=lnf,
        lnf_trace=lnf_trace,
        logits=logits,
        probs=head["probs"],
    )

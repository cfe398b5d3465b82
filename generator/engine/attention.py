"""Masked multi-head self-attention in numpy, one numbered step per block.

The walkthrough page shows these lines: each step starts with a `# step: NAME` marker
(`step_lines()` finds them), in the order the page explains them.
"""

from __future__ import annotations

import inspect
import math

import numpy as np

from generator.config import ModelConfig
from generator.engine.layers import Keep, StepTrace, Weights, linear, softmax

STEPS = (
    "projections",
    "scores",
    "scale",
    "causal-mask",
    "softmax",
    "weighted-sum",
    "output-projection",
)


def attention(
    x: np.ndarray,
    w: Weights,
    cfg: ModelConfig,
    dtype: np.dtype | type = np.float64,
    keep: Keep = "all",
) -> tuple[np.ndarray, StepTrace]:
    """Causal self-attention of x [T, d] (the output of ln_1); returns [T, d] and the trace.

    w holds one block's attention tensors without prefix: "c_attn.weight" [d, 3d],
    "c_proj.weight" [d, d], and "c_attn.bias" [3d], "c_proj.bias" [d] when the model has biases.
    keep="all" traces every step; otherwise the [h, T, T] grid is scaled, masked and softmaxed in
    place, and the trace holds the weights ("patterns") or nothing ("none").
    """
    x = np.asarray(x, dtype=dtype)
    w = {name: np.asarray(value, dtype=dtype) for name, value in w.items()}
    T, d = x.shape
    h, dh = cfg.n_head, cfg.d_head
    copy = keep == "all"  # each step below writes a new grid only when the trace keeps them all

    # step: projections
    # One GEMM for queries, keys and values: [T, d] @ [d, 3d] -> [T, 3d], then split the heads.
    qkv = linear(x, w["c_attn.weight"], w.get("c_attn.bias"))  # [T, 3d]
    q, k, v = qkv.reshape(T, 3, h, dh).transpose(1, 2, 0, 3)  # 3 × [h, T, dh], views of qkv

    # step: scores
    # Row i, column j: how well token i's query matches token j's key.
    scores = q @ k.transpose(0, 2, 1)  # [h, T, dh] @ [h, dh, T] -> [h, T, T]

    # step: scale
    scaled = np.divide(scores, math.sqrt(dh), out=None if copy else scores)  # [h, T, T], ÷ √d_head

    # step: causal-mask
    # Token i may look at positions j <= i only: the upper triangle becomes −∞.
    hidden = np.triu(np.ones((T, T), dtype=bool), k=1)  # [T, T], True where j > i
    masked = scaled.copy() if copy else scaled  # [h, T, T]
    np.copyto(masked, -np.inf, where=hidden)

    # step: softmax
    weights = softmax(masked, axis=-1, out=None if copy else masked)  # [h, T, T], rows sum to 1

    # step: weighted-sum
    heads = weights @ v  # [h, T, T] @ [h, T, dh] -> [h, T, dh]

    # step: output-projection
    # Put the heads side by side again and mix them: [T, d] @ [d, d] -> [T, d].
    merged = heads.transpose(1, 0, 2).reshape(T, d)  # [T, h·dh] = [T, d]
    projected = linear(merged, w["c_proj.weight"], w.get("c_proj.bias"))  # [T, d]

    if keep == "none":
        return projected, {}
    if keep == "patterns":
        return projected, {"weights": weights}
    trace = {
        "q": q,
        "k": k,
        "v": v,
        "scores": scores,
        "scaled": scaled,
        "masked": masked,
        "weights": weights,
        "heads": heads,
        "merged": merged,
        "projected": projected,
    }
    return projected, trace


def step_lines(func=attention) -> dict[str, tuple[int, int]]:
    """{step: (first, last)} line numbers in func's file of each `# step:` block of func.

    A step runs from its marker to the line before the next marker; the last one ends at the
    last non-blank line before the first blank line that follows it.
    """
    source, start = inspect.getsourcelines(func)
    markers: list[tuple[str, int]] = []
    for offset, line in enumerate(source):
        text = line.strip()
        if text.startswith("# step:"):
            markers.append((text.removeprefix("# step:").strip(), start + offset))
    found: dict[str, tuple[int, int]] = {}
    for index, (name, first) in enumerate(markers):
        if index + 1 < len(markers):
            last = markers[index + 1][1] - 1
        else:
            last = first
            while last - start + 1 < len(source) and source[last - start + 1].strip():
                last += 1
        while not source[last - start].strip():  # drop trailing blank lines
            last -= 1
        found[name] = (first, last)
    return found

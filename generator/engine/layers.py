"""The small pieces of GPT-2 in numpy: linear (Conv1D), LayerNorm, GELU, softmax, embedding, MLP.

Each component returns its output and a trace: a dict of its intermediates, named after the steps
the pages explain. Shapes in comments: T positions, d = d_model, V = vocab_size.
"""

from __future__ import annotations

import math
from typing import Literal, get_args

import numpy as np

from generator.config import ModelConfig
from generator.errors import InputError

Weights = dict[str, np.ndarray]
StepTrace = dict[str, np.ndarray]
# What a forward pass keeps: every intermediate (the walkthrough, the tests against transformers);
# the residual stream and each block's attention weights (the forward-pass page); or only the
# logits and probabilities (a long prompt, a removed head). Less kept: less memory, fewer copies.
Keep = Literal["all", "patterns", "none"]
KEEPS: tuple[str, ...] = get_args(Keep)


def linear(x: np.ndarray, weight: np.ndarray, bias: np.ndarray | None) -> np.ndarray:
    """x @ W + b in GPT-2's Conv1D layout: weight is [in, out] (torch.nn.Linear's is [out, in])."""
    y = x @ weight  # [T, in] @ [in, out] -> [T, out]
    if bias is not None:
        y += bias  # y is new: add in place
    return y


def layer_norm(
    x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float
) -> tuple[np.ndarray, StepTrace]:
    """Normalize each position to mean 0, variance 1, then scale by gain γ and shift by β."""
    mean = x.mean(axis=-1, keepdims=True)  # [T, 1]
    centered = x - mean  # [T, d]
    var = (centered * centered).mean(axis=-1, keepdims=True)  # [T, 1], biased, as torch
    normalized = centered / np.sqrt(var + eps)  # [T, d]
    out = normalized * weight + bias  # [T, d]
    trace = {"mean": mean[..., 0], "var": var[..., 0], "normalized": normalized, "out": out}
    return out, trace


def gelu(x: np.ndarray) -> np.ndarray:
    """GELU with GPT-2's tanh approximation (OpenAI's `gelu`, transformers' "gelu_new")."""
    # x * x * x, not x**3: numpy's power of a negative float takes a path ~100× slower.
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * (x * x * x))))


def softmax(x: np.ndarray, axis: int = -1, out: np.ndarray | None = None) -> np.ndarray:
    """exp(x) / sum exp(x) along `axis`; subtracting the row max keeps exp finite, −∞ becomes 0.

    out=x computes it in place, over x (attention's [h, T, T] grids are large).
    """
    e = np.subtract(x, x.max(axis=axis, keepdims=True), out=out)  # the largest entry becomes 0
    np.exp(e, out=e)
    e /= e.sum(axis=axis, keepdims=True)
    return e


def embed(w: Weights, token_ids: np.ndarray) -> tuple[np.ndarray, StepTrace]:
    """Token embedding (row lookup in wte) plus position embedding (rows 0..T-1 of wpe)."""
    T = token_ids.shape[0]
    tok = w["wte.weight"][token_ids]  # [T, d]
    pos = w["wpe.weight"][:T]  # [T, d]
    x = tok + pos  # [T, d]: the residual stream starts here
    return x, {"tok": tok, "pos": pos, "sum": x}


def mlp(x: np.ndarray, w: Weights) -> tuple[np.ndarray, StepTrace]:
    """Position-wise feed-forward: c_fc widens to 4d, GELU, c_proj narrows back to d."""
    fc = linear(x, w["c_fc.weight"], w.get("c_fc.bias"))  # [T, d] -> [T, 4d]
    act = gelu(fc)  # [T, 4d]
    proj = linear(act, w["c_proj.weight"], w.get("c_proj.bias"))  # [T, 4d] -> [T, d]
    return proj, {"fc": fc, "gelu": act, "proj": proj}


def unembed(x: np.ndarray, wte: np.ndarray) -> np.ndarray:
    """Logits from the tied token embedding: x @ wteᵀ. softmax() of them are the probabilities."""
    return x @ wte.T  # [T, d] @ [d, V] -> [T, V]


def cast(w: Weights, dtype: np.dtype | type) -> Weights:
    """The same tensors as `dtype` (no copy when they already are)."""
    return {name: np.asarray(value, dtype=dtype) for name, value in w.items()}


def sub_weights(w: Weights, prefix: str) -> Weights:
    """The tensors under `prefix` ("h.0.attn."), with the prefix stripped ("c_attn.weight")."""
    return {name[len(prefix) :]: value for name, value in w.items() if name.startswith(prefix)}


def check_config(cfg: ModelConfig, token_ids: np.ndarray) -> None:
    """Token ids must be a 1-D sequence of valid ids, no longer than the context."""
    problem = None
    if token_ids.ndim != 1:
        problem = f"token ids must be one sequence [T], got shape {list(token_ids.shape)}"
    elif not 1 <= token_ids.shape[0] <= cfg.n_ctx:
        problem = f"{token_ids.shape[0]} tokens; {cfg.name} reads 1 to {cfg.n_ctx}"
    elif token_ids.min() < 0 or token_ids.max() >= cfg.vocab_size:
        problem = f"token ids outside [0, {cfg.vocab_size}) for {cfg.name}"
    if problem:
        raise InputError(
            problem,
            entry="token_ids",
            fix=f"pass 1 to {cfg.n_ctx} ids, each in [0, {cfg.vocab_size})",
        )

"""The numpy operations every decoder family is built from, written once.

linear, layer_norm, rms_norm, gelu, silu, swiglu, softmax, the rotary position embedding and
causal attention with n_kv_head <= n_head (and an optional sliding window). Each follows the
function of transformers it stands for, named in its docstring. Shapes in comments: T positions,
d = d_model, h query heads, h_kv key/value heads, dh = d_head, nd new and ns seen positions.
"""

from __future__ import annotations

import math

import numpy as np

StepTrace = dict[str, np.ndarray]


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


def rms_norm(x: np.ndarray, weight: np.ndarray, eps: float) -> tuple[np.ndarray, StepTrace]:
    """Divide each position by its root mean square, then scale by gain γ (LlamaRMSNorm).

    No mean is subtracted and there is no shift β: LayerNorm without its centring.
    """
    mean_square = (x * x).mean(axis=-1, keepdims=True)  # [T, 1]
    normalized = x / np.sqrt(mean_square + eps)  # [T, d]
    out = normalized * weight  # [T, d]
    return out, {"mean_square": mean_square[..., 0], "normalized": normalized, "out": out}


def gelu(x: np.ndarray) -> np.ndarray:
    """GELU with GPT-2's tanh approximation (OpenAI's `gelu`, transformers' "gelu_new")."""
    # x * x * x, not x**3: numpy's power of a negative float takes a path ~100× slower.
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * (x * x * x))))


def silu(x: np.ndarray) -> np.ndarray:
    """SiLU (swish): x · sigmoid(x) = x / (1 + e^−x), torch's nn.SiLU."""
    with np.errstate(over="ignore"):  # e^−x overflows to inf for x < −709: x / inf is −0, right
        return x / (1.0 + np.exp(-x))


def swiglu(gate: np.ndarray, up: np.ndarray) -> np.ndarray:
    """SwiGLU's gating, LlamaMLP's act_fn(gate_proj(x)) * up_proj(x): silu(gate) · up."""
    return silu(gate) * up


def softmax(x: np.ndarray, axis: int = -1, out: np.ndarray | None = None) -> np.ndarray:
    """exp(x) / sum exp(x) along `axis`; subtracting the row max keeps exp finite, −∞ becomes 0.

    out=x computes it in place, over x (attention's [h, T, T] grids are large).
    """
    e = np.subtract(x, x.max(axis=axis, keepdims=True), out=out)  # the largest entry becomes 0
    np.exp(e, out=e)
    e /= e.sum(axis=axis, keepdims=True)
    return e


# -- rotary position embedding (RoPE) ---------------------------------------------------------------
def rope_inv_freq(d_head: int, theta: float) -> np.ndarray:
    """The angle per position of each pair of dimensions: theta^(−2i/d_head), i < d_head/2 [dh/2].

    compute_default_rope_parameters' inv_freq, in float64.
    """
    return 1.0 / theta ** (np.arange(0, d_head, 2, dtype=np.float64) / d_head)


def rope_angles(positions: np.ndarray, d_head: int, theta: float) -> np.ndarray:
    """The angle of each pair at each position: position t · inv_freq[i], in radians [T, dh/2]."""
    return np.asarray(positions, dtype=np.float64)[:, None] * rope_inv_freq(d_head, theta)


def rope_cos_sin(
    positions: np.ndarray, d_head: int, theta: float, dtype: np.dtype | type = np.float64
) -> tuple[np.ndarray, np.ndarray]:
    """cos and sin of every position's angles [T, dh], as LlamaRotaryEmbedding.forward returns.

    Pair i turns by positions · inv_freq[i]; the angles are repeated for the two halves of a
    head (dimension i is paired with i + dh/2, as rotate_half pairs them).
    """
    freqs = rope_angles(positions, d_head, theta)  # [T, dh/2]
    angles = np.concatenate([freqs, freqs], axis=-1)  # [T, dh]
    return np.cos(angles).astype(dtype), np.sin(angles).astype(dtype)


def rotate_half(x: np.ndarray) -> np.ndarray:
    """[x1, x2] -> [−x2, x1] over the last axis, where x1, x2 are its halves (Llama's rotate_half)."""
    half = x.shape[-1] // 2
    return np.concatenate([-x[..., half:], x[..., :half]], axis=-1)


def apply_rotary(x: np.ndarray, cos: np.ndarray, sin: np.ndarray) -> np.ndarray:
    """Rotate each pair (i, i + dh/2) of x [heads, T, dh] by its angle (apply_rotary_pos_emb)."""
    return x * cos + rotate_half(x) * sin  # cos, sin [T, dh] broadcast over the heads


# -- causal attention ------------------------------------------------------------------------------
def causal_mask(nd: int, ns: int, window: int | None = None) -> np.ndarray:
    """[nd, ns] booleans: may new row i (position ns − nd + i) see position j?

    Causal: j <= ns − nd + i (every cached position and the new ones up to itself; gpt-2's
    attention_mask(nd, ns)). With a sliding window W, also j > ns − nd + i − W: the W latest
    positions, itself included (transformers' sliding_window_overlay).
    """
    i = np.arange(nd)[:, None] + (ns - nd)  # [nd, 1]: each new row's position
    j = np.arange(ns)[None, :]  # [1, ns]
    visible = j <= i  # gpt-2: m = i >= j - ns + nd
    if window is not None:
        visible &= j > i - window
    return visible


def repeat_kv(x: np.ndarray, n_rep: int) -> np.ndarray:
    """[h_kv, T, dh] -> [h_kv · n_rep, T, dh]: query head j reads key/value head j // n_rep.

    transformers' repeat_kv (expand, then reshape); with n_rep 1, x itself.
    """
    return x if n_rep == 1 else np.repeat(x, n_rep, axis=0)


def causal_attention(
    q: np.ndarray, k: np.ndarray, v: np.ndarray, window: int | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Softmax attention of nd queries over ns keys, the last nd of which are the queries' own.

    q [h, nd, dh]; k, v [h_kv, ns, dh] with h_kv dividing h. Returns the heads' outputs
    [h, nd, dh], the scaled, masked scores and the attention weights (both [h, nd, ns], −∞ and 0
    where masked).
    """
    h, nd, dh = q.shape
    ns = k.shape[1]
    k = repeat_kv(k, h // k.shape[0])  # [h, ns, dh]
    v = repeat_kv(v, h // v.shape[0])  # [h, ns, dh]
    scores = q @ k.transpose(0, 2, 1) / math.sqrt(dh)  # [h, nd, dh] @ [h, dh, ns] -> [h, nd, ns]
    scores = np.where(causal_mask(nd, ns, window), scores, -np.inf)  # [h, nd, ns]
    weights = softmax(scores, axis=-1)  # [h, nd, ns]
    heads = weights @ v  # [h, nd, ns] @ [h, ns, dh] -> [h, nd, dh]
    return heads, scores, weights

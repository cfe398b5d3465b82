"""The numpy operations every decoder family is built from, written once.

linear, layer_norm, rms_norm, gelu, silu, swiglu, softmax, the rotary position embedding and
causal attention with n_kv_head <= n_head (and an optional sliding window, attention sinks and a
scale of its own; values may be narrower or wider than keys). Each follows the
function of transformers it stands for, named in its docstring. Shapes in comments: T positions,
d = d_model, h query heads, h_kv key/value heads, dh = d_head, nd new and ns seen positions.
"""

from __future__ import annotations

import math

import numpy as np

StepTrace = dict[str, np.ndarray]


def linear(x: np.ndarray, weight: np.ndarray, bias: np.ndarray | None) -> np.ndarray:
    """x @ W + b in GPT-2's Conv1D layout: weight is [in, out] (torch.nn.Linear's is [out, in])."""
    y: np.ndarray = x @ weight  # [T, in] @ [in, out] -> [T, out]
    if bias is not None:
        y += bias  # y is new: add in place
    return y


def layer_norm(
    x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float, trace: bool = True
) -> tuple[np.ndarray, StepTrace]:
    """Normalize each position to mean 0, variance 1, then scale by gain γ and shift by β.

    trace=False returns an empty trace and normalizes in place of the centred copy: two [T, d]
    arrays instead of four, and the same bits.
    """
    mean = x.mean(axis=-1, keepdims=True)  # [T, 1]
    centered = x - mean  # [T, d]
    squares = centered * centered  # [T, d]
    var = squares.mean(axis=-1, keepdims=True)  # [T, 1], biased, as torch
    normalized = np.divide(centered, np.sqrt(var + eps), out=None if trace else centered)  # [T, d]
    dtype = np.result_type(normalized, weight, bias)  # γ, β in a wider dtype widen the output
    out = squares if squares.dtype == dtype else np.empty(x.shape, dtype)  # reuse when it fits
    np.multiply(normalized, weight, out=out)
    out += bias  # [T, d]
    if not trace:
        return out, {}
    return out, {"mean": mean[..., 0], "var": var[..., 0], "normalized": normalized, "out": out}


def rms_norm(x: np.ndarray, weight: np.ndarray, eps: float) -> tuple[np.ndarray, StepTrace]:
    """Divide each position by its root mean square, then scale by gain γ (LlamaRMSNorm).

    No mean is subtracted and there is no shift β: LayerNorm without its centring.
    """
    mean_square = (x * x).mean(axis=-1, keepdims=True)  # [T, 1]
    normalized = x / np.sqrt(mean_square + eps)  # [T, d]
    out = normalized * weight  # [T, d]
    return out, {"mean_square": mean_square[..., 0], "normalized": normalized, "out": out}


CHUNK = 1 << 16  # elements per slab of an elementwise chain: 256 KB of float32 stays in cache


def gelu(x: np.ndarray) -> np.ndarray:
    """GELU with GPT-2's tanh approximation (OpenAI's `gelu`, transformers' "gelu_new").

    0.5 · x · (1 + tanh(√(2/π) · (x + 0.044715 · x³))), in place in a new array, a cache-sized
    slab at a time: nine passes over the slab while it is in cache, not nine over all of x.
    """
    x = np.asarray(x)
    y = np.empty(x.shape, dtype=np.result_type(x, 0.5))
    flat_x, flat_y = x.reshape(-1), y.reshape(-1)  # views when x is contiguous
    for start in range(0, flat_x.size, CHUNK):
        _gelu_into(flat_x[start : start + CHUNK], flat_y[start : start + CHUNK])
    return y


def _gelu_into(x: np.ndarray, y: np.ndarray) -> None:
    # x * x * x, not x**3: numpy's power of a negative float takes a path ~100× slower.
    np.multiply(x, x, out=y)
    y *= x  # x³
    y *= 0.044715
    y += x
    y *= math.sqrt(2.0 / math.pi)
    np.tanh(y, out=y)
    y += 1.0
    y *= 0.5  # halved first (exact), then times x: the same bytes as 0.5 · x · (1 + tanh(…)),
    y *= x  # where x · (1 + tanh(…)) first would overflow for x past half the largest float


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
    e: np.ndarray = np.subtract(x, x.max(axis=axis, keepdims=True), out=out)  # the max becomes 0
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
    return visible_keys(np.arange(ns - nd, ns), np.arange(ns), window)


def visible_keys(rows: np.ndarray, keys: np.ndarray, window: int | None = None) -> np.ndarray:
    """[len(rows), len(keys)] booleans: may the query at position rows[i] see position keys[j]?"""
    i = rows[:, None]  # [nd, 1]: each query row's position
    j = keys[None, :]  # [1, ns]
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
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    window: int | None = None,
    *,
    sinks: np.ndarray | None = None,
    scale: float | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Softmax attention of nd queries over ns keys, the last nd of which are the queries' own.

    q [h, nd, dh]; k [h_kv, ns, dh], v [h_kv, ns, dv] with h_kv dividing h. Returns the heads'
    outputs [h, nd, dv], the scaled, masked scores and the attention weights (both [h, nd, ns],
    −∞ and 0 where masked). scale: the scores' factor (dh^−½ when None).

    sinks [h]: a learned logit per head joined to each row's softmax as one more key with no
    value, then dropped (gpt-oss's eager_attention_forward): a row's weights sum to less than 1,
    so a head can attend to nothing.
    """
    h, nd, dh = q.shape
    ns = k.shape[1]
    k = repeat_kv(k, h // k.shape[0])  # [h, ns, dh]
    v = repeat_kv(v, h // v.shape[0])  # [h, ns, dv]
    products = q @ k.transpose(0, 2, 1)  # [h, nd, dh] @ [h, dh, ns] -> [h, nd, ns]
    scores = products / math.sqrt(dh) if scale is None else products * scale  # [h, nd, ns]
    scores = np.where(causal_mask(nd, ns, window), scores, -np.inf)  # [h, nd, ns]
    if sinks is None:
        weights = softmax(scores, axis=-1)  # [h, nd, ns]
    else:
        sink_column = np.broadcast_to(sinks[:, None, None], (h, nd, 1))  # [h, nd, 1]
        joined = np.concatenate([scores, sink_column], axis=-1)  # [h, nd, ns + 1]
        weights = softmax(joined, axis=-1, out=joined)[..., :-1]  # [h, nd, ns]: sink dropped
    heads = weights @ v  # [h, nd, ns] @ [h, ns, dv] -> [h, nd, dv]
    return heads, scores, weights


TILE_ROWS = 128  # query rows per tile: one head's tile [128, ≤ ns] stays in the core's cache


def _tiles(
    nd: int, ns: int, window: int | None, rows: int
) -> list[tuple[slice, slice, list[tuple[slice, np.ndarray]]]]:
    """Each tile of `rows` query rows: (its rows, the keys some row of it may see, its masks).

    Row i hides keys after itself (the last r columns at most) and, with a window, keys before it
    that fell out (the first r at most): a mask is (columns, [r, ≤ r] hidden booleans) for those
    two edges only. The same for every head, so computed once.
    """
    tiles = []
    for first in range(0, nd, rows):
        tile_rows = slice(first, min(first + rows, nd))  # r new rows
        positions = np.arange(tile_rows.start, tile_rows.stop) + (ns - nd)  # [r]
        last_key = int(positions[-1]) + 1  # keys past the tile's last row are hidden from all of it
        first_key = 0 if window is None else max(0, int(positions[0]) - window + 1)
        keys = np.arange(first_key, last_key)  # [n]
        edge = min(len(positions), len(keys))
        masks = [
            (cols, ~visible_keys(positions, keys[cols], window))  # [r, edge]
            for cols in (slice(0, edge), slice(len(keys) - edge, len(keys)))
        ]
        tiles.append((tile_rows, slice(first_key, last_key), masks))
    return tiles


def causal_attention_by_tiles(
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    window: int | None = None,
    rows: int = TILE_ROWS,
    *,
    sinks: np.ndarray | None = None,
    scale: float | None = None,
) -> np.ndarray:
    """causal_attention's heads [h, nd, dv] without its [h, nd, ns] grids, for when no one reads them.

    One head at a time, `rows` query rows at a time, each tile against only the keys some row of
    it may see: the masked triangle (and, with a window, what fell out of it) is never computed,
    and each tile's scores [r, n] are masked and exponentiated in place while they are still in
    cache. Query head j reads key/value head j // n_rep, as repeat_kv would give it, without the
    copies. The queries are scaled before the product, and each row is divided by its sum after
    it (exp(s) @ v / (exp(s) @ 1)): the same softmax attention, with an [r, dh] division instead
    of an [r, n] one, so the last bits round differently from causal_attention's.

    sinks [h] and scale as causal_attention's: a sink takes part in each row's largest logit and
    adds its exponential to the row's sum, and is never multiplied with a value.
    """
    h, nd, dh = q.shape
    ns = k.shape[1]
    n_rep = h // k.shape[0]
    q = q / math.sqrt(dh) if scale is None else q * scale  # [h, nd, dh]: scores come out scaled
    heads = np.empty((h, nd, v.shape[-1]), dtype=np.result_type(q, k, v))  # [h, nd, dv]
    ones = np.ones(ns, dtype=heads.dtype)  # [ns]: a row's sum as a product, faster than sum()
    tiles = _tiles(nd, ns, window, rows)
    for head in range(h):
        k_t, v_h = k[head // n_rep].T, v[head // n_rep]  # [dh, ns], [ns, dv]
        for tile_rows, keys, masks in tiles:
            scores = q[head, tile_rows] @ k_t[:, keys]  # [r, dh] @ [dh, n] -> [r, n]
            for cols, hidden in masks:
                np.copyto(scores[:, cols], -np.inf, where=hidden)
            if sinks is None:
                scores -= scores.max(axis=-1, keepdims=True)  # each row's largest becomes 0
                np.exp(scores, out=scores)  # [r, n], 0 where hidden
                out = scores @ v_h[keys]  # [r, n] @ [n, dv] -> [r, dv]
                out /= (scores @ ones[: scores.shape[1]])[:, None]  # the softmax's division
            else:
                out = _tile_with_sink(scores, v_h[keys], sinks[head], ones)
            heads[head, tile_rows] = out
    return heads


def _tile_with_sink(
    scores: np.ndarray, values: np.ndarray, sink: np.ndarray, ones: np.ndarray
) -> np.ndarray:
    """One tile's heads [r, dv] from its masked scores [r, n] (overwritten) and values [n, dv],
    with the head's sink logit as one more key of value 0 in each row's softmax."""
    largest = np.maximum(scores.max(axis=-1), sink)  # [r]: the sink may be the largest logit
    scores -= largest[:, None]
    np.exp(scores, out=scores)  # [r, n], 0 where hidden
    out: np.ndarray = scores @ values  # [r, n] @ [n, dv] -> [r, dv]
    out /= (scores @ ones[: scores.shape[1]] + np.exp(sink - largest))[:, None]  # sink's share
    return out

"""Multi-head latent attention (MLA, DeepSeek-V2/V3) in numpy: transformers' DeepseekV3Attention.

Keys and values are not projected from x per head: x is first compressed to one latent c_kv per
position (kv_lora_rank wide, RMS-normalised), and every head's key and value are read out of it
by kv_b_proj. Positions enter through a separate, narrow part of each head (qk_rope_head_dim)
whose key k_rope is shared by all heads (one key head, as in multi-query attention):

    q        = q_b(rms(q_a(x)))  (q_proj(x) when q_lora_rank is None)   [h, nd, nope + r]
    c_kv, kr = split(kv_a_proj_with_mqa(x));  c_kv = rms(c_kv)          [nd, c], [nd, r]
    q_rope, k_rope = rotate(q[..., nope:]), rotate(kr)                  (DeepSeek's pairs)
    k_nope, v = split(kv_b(c_kv))                                       [h, ns, nope], [h, ns, dv]
    keys = [k_nope ‖ k_rope for every head];  softmax attention, scale qk_head_dim^−½ (× YaRN's
    mscale² when the rope is scaled);  o_proj

So a cache need only hold c_kv and k_rope per position ("latent": c + r values per layer), not
every head's key and value (h · (nope + r + dv)). Reading the cache, kv_b's two halves can be
moved onto the other side of the products (the paper's "absorbed" inference): the query is
turned into the latent's space (q_nope · W_UK), attends over the cache rows themselves as keys
and their c_kv as values (multi-query attention with one key head c + r wide), and the result
is turned into values' space after (· W_UV). absorb=False expands keys and values as
transformers does; both give the same outputs to float64 rounding.

Shapes: d = d_model, h heads, nope = qk_nope_head_dim, r = qk_rope_head_dim, dv = v_head_dim,
c = kv_lora_rank, nd new positions, ns positions seen (cached + new).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from generator.models.checkpoint import Weights
from generator.models.config import Yarn
from generator.models.ops import apply_rotary, causal_attention, linear, rms_norm
from generator.models.rope import (
    apply_rotary_interleaved,
    inv_freq_of,
    rotary_cos_sin,
    yarn_softmax_scale,
)


@dataclass(frozen=True)
class LatentAttention:
    """One MLA layer's shape: DeepseekV3Config's attention fields, under shorter names."""

    d_model: int  # hidden_size
    n_head: int  # num_attention_heads (num_key_value_heads must equal it in transformers)
    q_lora_rank: int | None  # the query's compression; None: q_proj reads x directly
    kv_lora_rank: int  # c: the latent's width
    qk_nope_head_dim: int  # the part of a query/key head without positions
    qk_rope_head_dim: int  # r: the rotated part, its key shared by all heads
    v_head_dim: int
    rope_theta: float = 10000.0
    yarn: Yarn | None = None  # rope_parameters with rope_type "yarn"; None: plain RoPE
    rope_interleave: bool = True  # rotate pairs (2i, 2i + 1) as DeepSeek's checkpoints lay them
    bias: bool = False  # attention_bias: on q_a_proj, kv_a_proj_with_mqa and o_proj only
    latent_norm_eps: float = 1e-6  # q_a/kv_a_layernorm keep DeepseekV3RMSNorm's default ε

    @property
    def qk_head_dim(self) -> int:
        """A query's and a key's width: nope + r."""
        return self.qk_nope_head_dim + self.qk_rope_head_dim

    @property
    def latent_width(self) -> int:
        """What one position adds to a layer's latent cache: c_kv ‖ k_rope, c + r values."""
        return self.kv_lora_rank + self.qk_rope_head_dim


def weight_shapes(cfg: LatentAttention) -> dict[str, tuple[int, ...]]:
    """DeepseekV3Attention's state_dict() names (under self_attn.) and shapes, [out, in]."""
    h, d = cfg.n_head, cfg.d_model
    shapes: dict[str, tuple[int, ...]] = {}
    if cfg.q_lora_rank is None:
        shapes["q_proj.weight"] = (h * cfg.qk_head_dim, d)
    else:
        shapes["q_a_proj.weight"] = (cfg.q_lora_rank, d)
        shapes["q_a_layernorm.weight"] = (cfg.q_lora_rank,)
        shapes["q_b_proj.weight"] = (h * cfg.qk_head_dim, cfg.q_lora_rank)
    shapes["kv_a_proj_with_mqa.weight"] = (cfg.latent_width, d)
    shapes["kv_a_layernorm.weight"] = (cfg.kv_lora_rank,)
    shapes["kv_b_proj.weight"] = (h * (cfg.qk_nope_head_dim + cfg.v_head_dim), cfg.kv_lora_rank)
    shapes["o_proj.weight"] = (d, h * cfg.v_head_dim)
    if cfg.bias:
        for name in ("q_a_proj", "kv_a_proj_with_mqa", "o_proj"):
            if name + ".weight" in shapes:
                shapes[name + ".bias"] = shapes[name + ".weight"][:1]
    return shapes


def softmax_scale(cfg: LatentAttention) -> float:
    """The scores' factor: qk_head_dim^−½, × YaRN's mscale² (DeepseekV3Attention.scaling)."""
    return yarn_softmax_scale(cfg.qk_head_dim, cfg.yarn)


def rotary(
    cfg: LatentAttention, positions: np.ndarray, dtype: np.dtype | type = np.float64
) -> tuple[np.ndarray, np.ndarray]:
    """cos and sin [T, r] of the rope part at `positions` (DeepseekV3RotaryEmbedding.forward)."""
    inv_freq, factor = inv_freq_of(cfg.yarn, cfg.qk_rope_head_dim, cfg.rope_theta)
    return rotary_cos_sin(positions, inv_freq, factor, dtype)


def latent_attention(
    x: np.ndarray,
    w: Weights,
    cfg: LatentAttention,
    cos: np.ndarray,
    sin: np.ndarray,
    past: np.ndarray,
    *,
    absorb: bool = True,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """MLA of the new rows x [nd, d] over the latent cache past [ns_past, c + r] and themselves.

    w holds the layer's self_attn tensors without prefix ("kv_b_proj.weight"); cos, sin [nd, r]
    are the new positions' (see rotary). Returns the output [nd, d], the new cache rows
    [nd, c + r] (normalised c_kv ‖ rotated k_rope) and the attention weights [h, nd, ns].
    """
    nd = x.shape[0]
    h, nope, c = cfg.n_head, cfg.qk_nope_head_dim, cfg.kv_lora_rank
    q = _queries(x, w, cfg).reshape(nd, h, cfg.qk_head_dim).transpose(1, 0, 2)  # [h, nd, nope+r]
    q_nope, q_rope = q[..., :nope], _rotate(cfg, q[..., nope:], cos, sin)  # [h, nd, ·]
    compressed = linear(x, w["kv_a_proj_with_mqa.weight"].T, w.get("kv_a_proj_with_mqa.bias"))
    c_kv, _ = rms_norm(compressed[:, :c], w["kv_a_layernorm.weight"], cfg.latent_norm_eps)
    k_rope = _rotate(cfg, compressed[:, c:], cos, sin)  # [nd, r]: one key for all heads
    present = np.concatenate([c_kv, k_rope], axis=-1)  # [nd, c + r]: what the cache keeps
    seen = np.concatenate([past, present])  # [ns, c + r], cached rows first
    kv_b = w["kv_b_proj.weight"].reshape(h, nope + cfg.v_head_dim, c)  # [h, nope + dv, c]
    scale = softmax_scale(cfg)
    if absorb:  # multi-query attention over the latent rows: W_UK before, W_UV after
        q_latent = q_nope @ kv_b[:, :nope]  # [h, nd, nope] @ [h, nope, c] -> [h, nd, c]
        queries = np.concatenate([q_latent, q_rope], axis=-1)  # [h, nd, c + r]
        latent_heads, _, weights = causal_attention(
            queries, seen[None], seen[None, :, :c], scale=scale
        )  # keys [1, ns, c + r], values [1, ns, c] -> [h, nd, c]
        heads = latent_heads @ kv_b[:, nope:].transpose(0, 2, 1)  # [h, nd, c] @ [h, c, dv]
    else:  # expand_kv: every head's key and value, as transformers computes them
        kv = seen[:, :c] @ kv_b.transpose(0, 2, 1)  # [ns, c] @ [h, c, nope + dv] -> [h, ns, ·]
        shared = np.broadcast_to(seen[:, c:], (h, *seen[:, c:].shape))  # [h, ns, r]
        keys = np.concatenate([kv[..., :nope], shared], axis=-1)  # [h, ns, nope + r]
        queries = np.concatenate([q_nope, q_rope], axis=-1)  # [h, nd, nope + r]
        heads, _, weights = causal_attention(queries, keys, kv[..., nope:], scale=scale)
    merged = heads.transpose(1, 0, 2).reshape(nd, h * cfg.v_head_dim)  # [nd, h·dv]
    out = linear(merged, w["o_proj.weight"].T, w.get("o_proj.bias"))  # [nd, d]
    return out, present, weights


def _queries(x: np.ndarray, w: Weights, cfg: LatentAttention) -> np.ndarray:
    """Every head's query [nd, h·(nope + r)], through the compression q_a → rms → q_b or not."""
    if cfg.q_lora_rank is None:
        return linear(x, w["q_proj.weight"].T, None)  # q_proj has no bias
    compressed = linear(x, w["q_a_proj.weight"].T, w.get("q_a_proj.bias"))  # [nd, q_lora_rank]
    normed, _ = rms_norm(compressed, w["q_a_layernorm.weight"], cfg.latent_norm_eps)
    return linear(normed, w["q_b_proj.weight"].T, None)  # q_b_proj has no bias


def _rotate(cfg: LatentAttention, x: np.ndarray, cos: np.ndarray, sin: np.ndarray) -> np.ndarray:
    """x [..., nd, r] rotated by its positions: DeepSeek's pairs, or Llama's halves."""
    return (
        apply_rotary_interleaved(x, cos, sin) if cfg.rope_interleave else apply_rotary(x, cos, sin)
    )

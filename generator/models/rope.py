"""Rotary position embedding beyond Llama's: YaRN's rescaled frequencies and DeepSeek's pairs.

ops.py rotates pairs (i, i + dh/2) by position · θ^(−2i/dh) (Llama). Two families change that:

- YaRN (gpt-oss, DeepSeek-V3 as released) stretches the slow pairs' wavelengths by `factor` to
  reach a longer context, keeps the fast pairs as trained, ramps between the two, and scales
  cos and sin by an attention factor (transformers' `_compute_yarn_parameters`).
- DeepSeek's checkpoints pair neighbouring dimensions (2i, 2i + 1) instead
  (`apply_rotary_pos_emb_interleave`), and rotate only the qk_rope_head_dim part of a head.

Shapes in comments: T positions, r = d_rot the rotated width (d_head, or qk_rope_head_dim).
"""

from __future__ import annotations

import math
from dataclasses import asdict

import numpy as np

from generator.models.config import Yarn
from generator.models.ops import rope_inv_freq


def inv_freq_of(yarn: Yarn | None, d_rot: int, theta: float) -> tuple[np.ndarray, float]:
    """The angle per position of each pair [r/2] and cos and sin's factor: plain RoPE's (factor
    1), or YaRN's (yarn_inv_freq with the spec's parameters)."""
    if yarn is None:
        return rope_inv_freq(d_rot, theta), 1.0
    return yarn_inv_freq(d_rot, theta, **asdict(yarn))


def yarn_inv_freq(
    d_rot: int,
    theta: float,
    *,
    factor: float,
    original_max_position_embeddings: int,
    beta_fast: float = 32.0,
    beta_slow: float = 1.0,
    truncate: bool = True,
    mscale: float | None = None,
    mscale_all_dim: float | None = None,
    attention_factor: float | None = None,
) -> tuple[np.ndarray, float]:
    """YaRN's angle per position of each pair [r/2], and the factor cos and sin are scaled by.

    transformers' `_compute_yarn_parameters`, in float64. Pair i has wavelength 2π·θ^(2i/r); the
    pairs turning more than beta_fast times over the original context keep their frequency
    (extrapolation), those turning fewer than beta_slow times are divided by `factor`
    (interpolation), and a linear ramp over the pair index blends the two between. truncate
    rounds the ramp's ends to whole pairs (gpt-oss's config says truncate: False).

    The attention factor defaults to 0.1·ln(factor) + 1 (YaRN's "mscale"); with DeepSeek's mscale
    and mscale_all_dim both set, to the ratio of that formula at each (1 for DeepSeek-V3, where
    both are 1: its softmax scale carries the correction instead, see latent.py).
    """
    if attention_factor is None:
        if mscale and mscale_all_dim:
            attention_factor = _yarn_mscale(factor, mscale) / _yarn_mscale(factor, mscale_all_dim)
        else:
            attention_factor = _yarn_mscale(factor)
    low = _correction_dim(beta_fast, d_rot, theta, original_max_position_embeddings)
    high = _correction_dim(beta_slow, d_rot, theta, original_max_position_embeddings)
    if truncate:
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, d_rot - 1)
    if low == high:
        high += 0.001  # transformers' guard against a zero-width ramp
    ramp = np.clip((np.arange(d_rot // 2, dtype=np.float64) - low) / (high - low), 0, 1)  # [r/2]
    keep = 1 - ramp  # [r/2]: 1 where a pair keeps its trained frequency
    # θ^(2i/r) one by one with libm's pow, correctly rounded in practice (numpy's vectorised
    # power misses by an ulp for ~6 % of them, torch's for ~1 %; an ulp at position 131,071 is
    # a few 1e-12 in cos and sin)
    pos_freqs = np.array([math.pow(theta, i / d_rot) for i in range(0, d_rot, 2)])  # [r/2]
    extrapolation = 1.0 / pos_freqs  # [r/2]: the trained frequencies
    interpolation = 1.0 / (factor * pos_freqs)  # [r/2]: stretched `factor` times
    return interpolation * (1 - keep) + extrapolation * keep, float(attention_factor)


def _yarn_mscale(scale: float, mscale: float = 1.0) -> float:
    """YaRN's attention temperature 0.1 · mscale · ln(scale) + 1 (1 when not stretched).

    transformers' `get_mscale` in `_compute_yarn_parameters` (DeepSeek's `yarn_get_mscale`).
    """
    return 1.0 if scale <= 1 else 0.1 * mscale * math.log(scale) + 1.0


def _correction_dim(rotations: float, d_rot: int, theta: float, context: int) -> float:
    """The (fractional) pair index that turns `rotations` times over `context` positions.

    transformers' `find_correction_dim`.
    """
    return (d_rot * math.log(context / (rotations * 2 * math.pi))) / (2 * math.log(theta))


def yarn_softmax_scale(qk_head_dim: int, yarn: Yarn | None) -> float:
    """DeepSeek's attention scale: qk_head_dim^−½, times mscale(factor, mscale_all_dim)² when the
    rope is scaled and mscale_all_dim is set (DeepseekV3Attention's `yarn_apply_mscale`)."""
    scaling: float = qk_head_dim ** (-0.5)
    if yarn is not None and yarn.mscale_all_dim:
        correction = _yarn_mscale(yarn.factor, yarn.mscale_all_dim)
        scaling = scaling * correction * correction
    return scaling


def rotary_cos_sin(
    positions: np.ndarray,
    inv_freq: np.ndarray,
    attention_factor: float = 1.0,
    dtype: np.dtype | type = np.float64,
) -> tuple[np.ndarray, np.ndarray]:
    """cos and sin of every position's angles times attention_factor [T, r], any inv_freq [r/2].

    The rotary embedding modules' forward (LlamaRotaryEmbedding, DeepseekV3RotaryEmbedding,
    GptOssRotaryEmbedding): angles position · inv_freq, repeated for both halves, and cos, sin
    multiplied by their `attention_scaling`. Rotating q and k by them scales every score by
    attention_factor². With the default inv_freq and factor 1 it is ops.rope_cos_sin.
    """
    freqs = np.asarray(positions, dtype=np.float64)[:, None] * inv_freq  # [T, r/2]
    angles = np.concatenate([freqs, freqs], axis=-1)  # [T, r]
    cos = np.cos(angles) * attention_factor  # [T, r]
    sin = np.sin(angles) * attention_factor  # [T, r]
    return cos.astype(dtype), sin.astype(dtype)


def apply_rotary_interleaved(x: np.ndarray, cos: np.ndarray, sin: np.ndarray) -> np.ndarray:
    """Rotate each neighbouring pair (2i, 2i + 1) of x [..., T, r] by pair i's angle.

    apply_rotary_pos_emb_interleave (DeepSeek's rope_interleave): cos, sin [T, r] are the
    rotary embedding's (both halves alike; the first is read). The rotated pairs come out
    de-interleaved, evens then odds ([x₀', x₂', …, x₁', x₃', …]), as transformers returns them:
    queries and keys alike, so their dot products are the interleaved rotation's.
    """
    half = cos.shape[-1] // 2
    cos, sin = cos[..., :half], sin[..., :half]  # [T, r/2]
    even, odd = x[..., 0::2], x[..., 1::2]  # [..., T, r/2] each
    return np.concatenate([even * cos - odd * sin, odd * cos + even * sin], axis=-1)

"""The KV cache both families' decoders keep: one array, the keys and values of every position.

    cache: [n_layer, 2, n_kv_head, positions, d_head]   [k, v] per layer (gpt-2's `past`)

A step appends its new positions along axis 3. GPT-2 has n_kv_head = n_head; grouped-query
attention keeps n_kv_head < n_head heads, so its cache is n_head / n_kv_head times smaller.
"""

from __future__ import annotations

import numpy as np

from generator.errors import InputError
from generator.models.config import ModelConfig


def empty_cache(cfg: ModelConfig, dtype: np.dtype | type = np.float64) -> np.ndarray:
    """A cache holding no positions yet: [n_layer, 2, n_kv_head, 0, d_head]."""
    return np.zeros((cfg.n_layer, 2, cfg.n_kv_head, 0, cfg.d_head), dtype=dtype)


def bytes_per_token(cfg: ModelConfig, dtype: np.dtype | type = np.float32) -> int:
    """What one more position adds to the cache: a key and a value per layer and kv head."""
    return cfg.n_layer * 2 * cfg.n_kv_head * cfg.d_head * np.dtype(dtype).itemsize


def check_cache(cfg: ModelConfig, cache: np.ndarray, nd: int) -> None:
    """The cache has this size's layout, and its positions plus nd new ones fit the context."""
    want = (cfg.n_layer, 2, cfg.n_kv_head, cache.shape[3] if cache.ndim == 5 else 0, cfg.d_head)
    if cache.shape != want:
        raise InputError(
            f"cache shape {list(cache.shape)}; {cfg.name} needs "
            "[n_layer, 2, n_kv_head, positions, d_head] = "
            f"[{cfg.n_layer}, 2, {cfg.n_kv_head}, positions, {cfg.d_head}]",
            entry="cache",
            fix="pass the cache a previous decode_step returned (or None to start)",
        )
    if cache.shape[3] + nd > cfg.n_ctx:
        raise InputError(
            f"{cache.shape[3]} cached + {nd} new positions exceed {cfg.name}'s context of "
            f"{cfg.n_ctx}",
            entry="token_ids",
            fix=f"keep cached + new tokens within {cfg.n_ctx} (start again from a shorter prefix)",
        )

"""The KV cache: what a decoder keeps between steps, per layer, and GPT-2's one-array layout.

    KVCache.layers[i]: [2, n_kv_head, kept, d_head]   layer i's rotated keys and values
                       [kept, kv_rank + rope_dim]      latent attention's rows instead

A step appends its new positions to every layer; a layer with a sliding window of W then keeps
only its last W − 1 positions (the next query sees those and itself), as transformers'
DynamicSlidingWindowLayer does, so its cache stops growing: a rolling buffer. `seen` counts every
position read. GPT-2's engine keeps one array, [n_layer, 2, n_head, positions, d_head] (gpt-2's
`past`), with empty_cache and check_cache below.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from generator.errors import InputError
from generator.models.config import ModelConfig


@dataclass
class KVCache:
    """Per layer, the keys and values of the positions a later query may still see."""

    layers: list[np.ndarray]  # layer_shape(cfg, kept) each; kept <= seen
    seen: int = 0  # positions read so far

    @classmethod
    def empty(cls, cfg: ModelConfig, dtype: np.dtype | type = np.float64) -> KVCache:
        return cls([np.zeros(layer_shape(cfg, 0), dtype) for _ in range(cfg.n_layer)])

    def kept(self, layer: int) -> int:
        """How many positions layer `layer` holds."""
        kept: int = self.layers[layer].shape[-2]
        return kept

    @property
    def values(self) -> int:
        """Every number the cache holds (keys and values, all layers)."""
        return sum(layer.size for layer in self.layers)

    @property
    def nbytes(self) -> int:
        return sum(layer.nbytes for layer in self.layers)

    def check(self, cfg: ModelConfig, nd: int) -> None:
        """The cache has cfg's layout, and its positions plus nd new ones fit the context."""
        for i, layer in enumerate(self.layers):
            window = cfg.window(i)
            longest = self.seen if window is None else min(self.seen, window - 1)
            want = layer_shape(cfg, longest)
            if layer.shape != want:
                raise InputError(
                    f"layer {i} of the cache is {list(layer.shape)}; {cfg.name} keeps "
                    f"{list(want)} after {self.seen} positions",
                    entry="cache",
                    fix="pass the cache a previous decode_step returned (or None to start)",
                )
        if len(self.layers) != cfg.n_layer:
            raise InputError(
                f"the cache has {len(self.layers)} layers, {cfg.name} {cfg.n_layer}",
                entry="cache",
                fix="pass the cache a previous decode_step returned (or None to start)",
            )
        check_context(cfg, self.seen, nd)


def layer_shape(cfg: ModelConfig, kept: int) -> tuple[int, ...]:
    """One layer's cache holding `kept` positions: [2, n_kv_head, kept, d_head], or with latent
    attention the latent rows [kept, kv_rank + rope_dim] (normalised c_kv ‖ rotated k_rope)."""
    if cfg.latent is not None:
        return (kept, cfg.latent.kv_rank + cfg.latent.rope_dim)
    return (2, cfg.n_kv_head, kept, cfg.d_head)


def keep_window(cfg: ModelConfig, layer: int, grown: np.ndarray) -> np.ndarray:
    """What layer `layer` keeps of its grown cache [..., positions, d]: all of it, or with a
    window of W the last W − 1 positions."""
    window = cfg.window(layer)
    if window is None or grown.shape[-2] < window:
        return grown
    return grown[..., grown.shape[-2] - (window - 1) :, :]


def check_context(cfg: ModelConfig, seen: int, nd: int) -> None:
    if seen + nd > cfg.n_ctx:
        raise InputError(
            f"{seen} cached + {nd} new positions exceed {cfg.name}'s context of {cfg.n_ctx}",
            entry="token_ids",
            fix=f"keep cached + new tokens within {cfg.n_ctx} (start again from a shorter prefix)",
        )


def empty_cache(cfg: ModelConfig, dtype: np.dtype | type = np.float64) -> np.ndarray:
    """GPT-2's cache holding no positions yet: [n_layer, 2, n_kv_head, 0, d_head]."""
    return np.zeros((cfg.n_layer, 2, cfg.n_kv_head, 0, cfg.d_head), dtype=dtype)


def check_cache(cfg: ModelConfig, cache: np.ndarray, nd: int) -> None:
    """GPT-2's cache has this size's layout, and its positions plus nd new ones fit the context."""
    want = (cfg.n_layer, 2, cfg.n_kv_head, cache.shape[3] if cache.ndim == 5 else 0, cfg.d_head)
    if cache.shape != want:
        raise InputError(
            f"cache shape {list(cache.shape)}; {cfg.name} needs "
            "[n_layer, 2, n_kv_head, positions, d_head] = "
            f"[{cfg.n_layer}, 2, {cfg.n_kv_head}, positions, {cfg.d_head}]",
            entry="cache",
            fix="pass the cache a previous decode_step returned (or None to start)",
        )
    check_context(cfg, cache.shape[3], nd)

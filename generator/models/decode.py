"""Cached decoding on the shared decoder (decoder.py): one step reads the new tokens after the
positions the KV cache (cache.py) holds and returns the cache the next step reads. GPT-2's traced
engine has its own (generator/engine/decode.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from generator.models.cache import KVCache, keep_window
from generator.models.checkpoint import Weights
from generator.models.config import ModelConfig
from generator.models.decoder import forward


@dataclass
class Step:
    """One decoding step: the new tokens' logits, what they added to the cache, and the cache."""

    token_ids: np.ndarray  # [nd] the tokens this step read
    positions: np.ndarray  # [nd] their positions: ns_past … ns − 1
    logits: np.ndarray  # [nd, V]: row i predicts the token after position positions[i]
    present: list[np.ndarray]  # per layer [2, n_kv_head, nd, d_head]: the new keys and values
    cache: KVCache  # the cache the next step reads


def decode_step(
    weights: Weights,
    cfg: ModelConfig,
    token_ids: np.ndarray,
    cache: KVCache | None = None,
    dtype: np.dtype | type = np.float64,
) -> Step:
    """Run the nd new tokens token_ids [nd] through the model, reading and growing the cache.

    With no cache this is the prompt's forward pass (the "prefill"); after it, one token per
    step is enough, since every earlier position's keys and values are cached. The cache keeps
    n_kv_head heads, not n_head: grouped-query attention's saving is there; a layer with a window
    keeps only its last W − 1 positions.
    """
    cache = KVCache.empty(cfg, dtype) if cache is None else cache
    trace = forward(weights, cfg, token_ids, dtype, past=cache)
    layers = [
        keep_window(cfg, i, np.concatenate([np.asarray(old, dtype=dtype), new], axis=-2))
        for i, (old, new) in enumerate(zip(cache.layers, trace.present, strict=True))
    ]
    return Step(
        token_ids=trace.token_ids,
        positions=trace.positions,
        logits=trace.logits,
        present=trace.present,
        cache=KVCache(layers, cache.seen + len(trace.token_ids)),
    )

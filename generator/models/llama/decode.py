"""Incremental decoding with a KV cache for the Llama family, in numpy.

A step reads nd new tokens and the cache of the ns_past positions before them; it returns the new
tokens' logits and the grown cache. Only the new tokens are projected and rotated (at positions
ns_past … ns − 1); their queries attend to the cached keys and their own:

    cache: [n_layer, 2, n_kv_head, ns_past, d_head]   rotated keys and values, per layer
    grown cache = concat(cache, present) along the positions axis

The cache keeps n_kv_head heads, not n_head: grouped-query attention's saving is here, and
generator.models.cache.bytes_per_token measures it. A sliding window hides the positions it has
passed, but the cache keeps them (Mistral's rolling buffer would drop them; the logits are the
same either way).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from generator.models.cache import empty_cache
from generator.models.checkpoint import Weights
from generator.models.config import ModelConfig
from generator.models.llama.engine import forward


@dataclass
class Step:
    """One decoding step: the new tokens' logits, what they added to the cache, and the cache."""

    token_ids: np.ndarray  # [nd] the tokens this step read
    positions: np.ndarray  # [nd] their positions: ns_past … ns − 1
    logits: np.ndarray  # [nd, V]: row i predicts the token after position positions[i]
    present: np.ndarray  # [n_layer, 2, n_kv_head, nd, d_head]: the new keys and values
    cache: np.ndarray  # [n_layer, 2, n_kv_head, ns, d_head]: the cache the next step reads


def decode_step(
    weights: Weights,
    cfg: ModelConfig,
    token_ids: np.ndarray,
    cache: np.ndarray | None = None,
    dtype: np.dtype | type = np.float64,
) -> Step:
    """Run the nd new tokens token_ids [nd] through the model, reading and growing the cache.

    With no cache this is the prompt's forward pass (the "prefill"); after it, one token per
    step is enough, since every earlier position's keys and values are cached.
    """
    cache = empty_cache(cfg, dtype) if cache is None else np.asarray(cache, dtype=dtype)
    trace = forward(weights, cfg, token_ids, dtype, past=cache)
    return Step(
        token_ids=trace.token_ids,
        positions=trace.positions,
        logits=trace.logits,
        present=trace.present,
        cache=np.concatenate([cache, trace.present], axis=3),
    )

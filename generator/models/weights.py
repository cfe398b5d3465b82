"""Random weights of any size: a stand-in with every tensor its spec names, for tests and pages.

Scales keep activations near unit size at any width: embeddings N(0, 1), matrices N(0, 1/fan_in),
biases N(0, 0.1²), norm gains 1 + N(0, 0.1²) and shifts N(0, 0.1²), sinks and buffers N(0, 0.1²).
Values are drawn in float64, in the state dict's order, and then cast, so float32 weights are the
float64 ones rounded, and the same seed gives the same weights.
"""

from __future__ import annotations

import numpy as np

from generator.models.checkpoint import Weights
from generator.models.config import ModelConfig
from generator.models.tensors import tensors


def random_weights(cfg: ModelConfig, seed: int = 0, dtype: np.dtype | type = np.float64) -> Weights:
    """Every tensor of cfg, seeded: the same seed gives the same weights."""
    rng = np.random.default_rng(seed)
    weights: Weights = {}
    for name, tensor in tensors(cfg, cfg.names).items():
        noise = rng.standard_normal(tensor.shape)
        if tensor.kind == "embedding":
            value = noise
        elif tensor.kind == "gain":
            value = 1.0 + 0.1 * noise
        elif tensor.kind in ("matrix", "experts"):
            value = noise / np.sqrt(tensor.fan_in)
        else:  # biases, LayerNorm's shift, sinks, buffers
            value = 0.1 * noise
        weights[name] = value.astype(dtype)
    return weights

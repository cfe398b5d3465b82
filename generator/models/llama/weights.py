"""Random Llama-family weights: a stand-in of any size's shapes, for tests and pages.

Scales keep activations near unit size at any width: the embedding N(0, 1), matrices
N(0, 1/fan_in), biases N(0, 0.1²), RMSNorm gains 1 + N(0, 0.1²). Values are drawn in float64
and then cast, so float32 weights are the float64 ones rounded.
"""

from __future__ import annotations

import numpy as np

from generator.models.checkpoint import Weights
from generator.models.config import ModelConfig
from generator.models.llama.tensors import weight_shapes


def random_weights(cfg: ModelConfig, seed: int = 0, dtype: np.dtype | type = np.float64) -> Weights:
    """Every tensor of cfg, seeded: the same seed gives the same weights."""
    rng = np.random.default_rng(seed)
    weights: Weights = {}
    for name, shape in weight_shapes(cfg).items():
        noise = rng.standard_normal(shape)
        if name == "model.embed_tokens.weight":
            value = noise
        elif name.endswith("norm.weight"):
            value = 1.0 + 0.1 * noise
        elif name.endswith(".bias"):
            value = 0.1 * noise
        else:
            value = noise / np.sqrt(shape[1])  # nn.Linear's [out, in]: fan_in is shape[1]
        weights[name] = value.astype(dtype)
    return weights

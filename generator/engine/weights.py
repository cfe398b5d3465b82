"""GPT-2's weights made up: seeded toy weights and random stand-ins.

Their names and shapes are GPT-2's checkpoint tensors (generator.models.gpt2.tensors, whose
weight_shapes this module re-exports).
"""

from __future__ import annotations

import numpy as np

from generator.config import TOY_TOKENS, ModelConfig
from generator.models.checkpoint import Weights
from generator.models.gpt2.tensors import is_layer_norm
from generator.models.gpt2.tensors import weight_shapes as weight_shapes


def random_weights(cfg: ModelConfig, seed: int = 0, dtype: np.dtype | type = np.float64) -> Weights:
    """Every tensor random, LayerNorms included: a GPT-2-shaped stand-in for tests and pages.

    Scales keep activations near unit size at any width: embeddings N(0, 1), matrices
    N(0, 1/fan_in), biases N(0, 0.1²), LayerNorm gain 1 + N(0, 0.1²) and shift N(0, 0.1²).
    Values are drawn in float64 and then cast, so float32 weights are the float64 ones rounded.
    """
    rng = np.random.default_rng(seed)
    weights: Weights = {}
    for name, shape in weight_shapes(cfg).items():
        noise = rng.standard_normal(shape)
        if name in ("wte.weight", "wpe.weight"):
            value = noise
        elif is_layer_norm(name):
            value = 1.0 + 0.1 * noise if name.endswith(".weight") else 0.1 * noise
        elif name.endswith(".bias"):
            value = 0.1 * noise
        else:
            value = noise / np.sqrt(shape[0])
        weights[name] = value.astype(dtype)
    return weights


def toy_weights(cfg: ModelConfig, seed: int = 0, dtype: np.dtype | type = np.float64) -> Weights:
    """Seeded random weights for the walkthrough's toy.

    Projections and embeddings are drawn as in random_weights; the projection biases exist only
    if cfg.bias (the toy config has none, as seed 000 says). The LayerNorm tensors are kept, so
    names, shapes and parameter counts follow GPT-2, but set to LayerNorm's initial values
    (gain 1, shift 0): the toy's LayerNorm is the plain normalization and adds no bias either.
    """
    weights = random_weights(cfg, seed, dtype)
    for name in weights:
        if is_layer_norm(name):
            fill = 1.0 if name.endswith(".weight") else 0.0
            weights[name] = np.full_like(weights[name], fill)
    return weights


def toy_token_ids(cfg: ModelConfig, seed: int = 0, n_tokens: int = TOY_TOKENS) -> np.ndarray:
    """A seeded sequence of `n_tokens` token ids for the toy walkthrough: [T] int64."""
    rng = np.random.default_rng([seed, 1])  # a stream of its own, apart from the weights'
    return rng.integers(0, cfg.vocab_size, size=n_tokens, dtype=np.int64)

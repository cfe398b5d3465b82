"""GPT-2's weights made up: seeded toy weights (random stand-ins are generator.models.weights')."""

from __future__ import annotations

import numpy as np

from generator.config import TOY_TOKENS, ModelConfig
from generator.models.checkpoint import Weights
from generator.models.tensors import tensors
from generator.models.weights import random_weights


def weight_shapes(cfg: ModelConfig) -> dict[str, tuple[int, ...]]:
    """Every tensor of GPT-2 size cfg, in transformers' order, with its shape."""
    return {name: tensor.shape for name, tensor in tensors(cfg, cfg.names).items()}


def toy_weights(cfg: ModelConfig, seed: int = 0, dtype: np.dtype | type = np.float64) -> Weights:
    """Seeded random weights for the walkthrough's toy.

    Projections and embeddings are drawn as in random_weights; the projection biases exist only
    if cfg.bias (the toy config has none, as seed 000 says). The LayerNorm tensors are kept, so
    names, shapes and parameter counts follow GPT-2, but set to LayerNorm's initial values
    (gain 1, shift 0): the toy's LayerNorm is the plain normalization and adds no bias either.
    """
    weights = random_weights(cfg, seed, dtype)
    for name, tensor in tensors(cfg, cfg.names).items():
        if tensor.kind in ("gain", "shift"):
            weights[name] = np.full_like(weights[name], 1.0 if tensor.kind == "gain" else 0.0)
    return weights


def toy_token_ids(cfg: ModelConfig, seed: int = 0, n_tokens: int = TOY_TOKENS) -> np.ndarray:
    """A seeded sequence of `n_tokens` token ids for the toy walkthrough: [T] int64."""
    rng = np.random.default_rng([seed, 1])  # a stream of its own, apart from the weights'
    return rng.integers(0, cfg.vocab_size, size=n_tokens, dtype=np.int64)

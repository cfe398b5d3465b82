"""GPT-2's tensors by name: the expected shapes, seeded toy weights and random stand-ins.

Names are transformers' without the "transformer." prefix (as the hub checkpoint stores them),
and matrices keep Conv1D's [in, out] layout: "h.0.attn.c_attn.weight" is [d, 3d].
"""

from __future__ import annotations

import numpy as np

from generator.config import TOY_TOKENS, ModelConfig
from generator.engine.layers import Weights

LAYER_NORMS = ("ln_1", "ln_2")
PROJECTIONS = ("attn.c_attn", "attn.c_proj", "mlp.c_fc", "mlp.c_proj")
BLOCK_PARTS = ("ln_1", "attn.c_attn", "attn.c_proj", "ln_2", "mlp.c_fc", "mlp.c_proj")  # in order


def projection_shape(cfg: ModelConfig, name: str) -> tuple[int, int]:
    """[in, out] of one of the four projections of a block."""
    d = cfg.d_model
    return {
        "attn.c_attn": (d, 3 * d),
        "attn.c_proj": (d, d),
        "mlp.c_fc": (d, cfg.d_mlp),
        "mlp.c_proj": (cfg.d_mlp, d),
    }[name]


def weight_shapes(cfg: ModelConfig) -> dict[str, tuple[int, ...]]:
    """Every learned tensor of the model, in transformers' order, with its shape.

    LayerNorms always have a gain and a shift (GPT-2's do); the projections' biases are present
    only when cfg.bias (the toy has none).
    """
    d = cfg.d_model
    shapes: dict[str, tuple[int, ...]] = {
        "wte.weight": (cfg.vocab_size, d),
        "wpe.weight": (cfg.n_ctx, d),
    }
    for i in range(cfg.n_layer):
        for part in BLOCK_PARTS:
            if part in LAYER_NORMS:
                shapes[f"h.{i}.{part}.weight"] = (d,)
                shapes[f"h.{i}.{part}.bias"] = (d,)
                continue
            n_in, n_out = projection_shape(cfg, part)
            shapes[f"h.{i}.{part}.weight"] = (n_in, n_out)
            if cfg.bias:
                shapes[f"h.{i}.{part}.bias"] = (n_out,)
    shapes["ln_f.weight"] = (d,)
    shapes["ln_f.bias"] = (d,)
    return shapes


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
        elif _is_layer_norm(name):
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
        if _is_layer_norm(name):
            fill = 1.0 if name.endswith(".weight") else 0.0
            weights[name] = np.full_like(weights[name], fill)
    return weights


def toy_token_ids(cfg: ModelConfig, seed: int = 0, n_tokens: int = TOY_TOKENS) -> np.ndarray:
    """A seeded sequence of `n_tokens` token ids for the toy walkthrough: [T] int64."""
    rng = np.random.default_rng([seed, 1])  # a stream of its own, apart from the weights'
    return rng.integers(0, cfg.vocab_size, size=n_tokens, dtype=np.int64)


def _is_layer_norm(name: str) -> bool:
    return name.startswith("ln_f.") or any(f".{ln}." in name for ln in LAYER_NORMS)

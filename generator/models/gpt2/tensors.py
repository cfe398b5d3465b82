"""GPT-2's tensors by name and shape, as its checkpoints store them.

Names are transformers' without the "transformer." prefix (as the hub checkpoint stores them),
and matrices keep Conv1D's [in, out] layout: "h.0.attn.c_attn.weight" is [d, 3d]. The unembedding
is the token embedding (tied), so there is no lm_head tensor.
"""

from __future__ import annotations

from generator.models.config import ModelConfig

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


def is_layer_norm(name: str) -> bool:
    """Is `name` a LayerNorm's gain or shift ("h.0.ln_1.weight", "ln_f.bias")?"""
    return name.startswith("ln_f.") or any(f".{ln}." in name for ln in LAYER_NORMS)

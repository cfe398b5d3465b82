"""The Llama family's tensors by name and shape: transformers' LlamaForCausalLM / MistralForCausalLM.

Names are the state dict's (as the hub's safetensors store them); matrices keep torch.nn.Linear's
[out, in] layout: "model.layers.0.self_attn.k_proj.weight" is [n_kv_head · d_head, d_model].
Norms have a gain and no shift. lm_head.weight exists only when the unembedding is untied.
"""

from __future__ import annotations

from generator.models.config import ModelConfig

ATTENTION = ("q_proj", "k_proj", "v_proj", "o_proj")
MLP = ("gate_proj", "up_proj", "down_proj")
NORMS = ("input_layernorm", "post_attention_layernorm")


def projection_shape(cfg: ModelConfig, name: str) -> tuple[int, int]:
    """[out, in] of one of a layer's seven projections (nn.Linear's layout)."""
    d = cfg.d_model
    return {
        "q_proj": (cfg.d_attn, d),
        "k_proj": (cfg.d_kv, d),  # n_kv_head heads: grouped-query attention's saving
        "v_proj": (cfg.d_kv, d),
        "o_proj": (d, cfg.d_attn),
        "gate_proj": (cfg.d_mlp, d),
        "up_proj": (cfg.d_mlp, d),
        "down_proj": (d, cfg.d_mlp),
    }[name]


def weight_shapes(cfg: ModelConfig) -> dict[str, tuple[int, ...]]:
    """Every learned tensor of the model, in the state dict's order, with its shape.

    Projection biases (attention_bias, mlp_bias in transformers) only when cfg.bias.
    """
    d = cfg.d_model
    shapes: dict[str, tuple[int, ...]] = {"model.embed_tokens.weight": (cfg.vocab_size, d)}
    for i in range(cfg.n_layer):
        layer = f"model.layers.{i}."
        for module, names in (("self_attn", ATTENTION), ("mlp", MLP)):
            for name in names:
                n_out, n_in = projection_shape(cfg, name)
                shapes[f"{layer}{module}.{name}.weight"] = (n_out, n_in)
                if cfg.bias:
                    shapes[f"{layer}{module}.{name}.bias"] = (n_out,)
        for norm in NORMS:
            shapes[f"{layer}{norm}.weight"] = (d,)
    shapes["model.norm.weight"] = (d,)
    if not cfg.tied_embeddings:
        shapes["lm_head.weight"] = (cfg.vocab_size, d)
    return shapes

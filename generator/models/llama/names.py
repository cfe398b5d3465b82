"""Where LlamaForCausalLM and MistralForCausalLM keep each tensor (the rows' words: family.toml)."""

from __future__ import annotations

from generator.models.names import TensorNames

NAMES = TensorNames(
    embed="model.embed_tokens.weight",
    layer="model.layers.{i}.",
    norm1="input_layernorm",
    norm2="post_attention_layernorm",
    final_norm="model.norm",
)

"""Where LlamaForCausalLM and MistralForCausalLM keep each tensor, and what the rows say."""

from __future__ import annotations

from generator.models.counts import Words
from generator.models.names import TensorNames

NAMES = TensorNames(
    embed="model.embed_tokens.weight",
    layer="model.layers.{i}.",
    norm1="input_layernorm",
    norm2="post_attention_layernorm",
    final_norm="model.norm",
)

WORDS = Words(
    embed=("embed_tokens", "Token embedding embed_tokens"),
    layers=("layers", "Decoder layers"),
    final_norm=("norm", "Final RMSNorm norm"),
    logits="Logits x · lm_headᵀ",
    unembedding="Unembedding lm_head",
    flops={
        "q": "Query projection",
        "k": "Key projection (n_kv_head heads)",
        "v": "Value projection (n_kv_head heads)",
        "o": "Output projection",
        "scores": "Scores QKᵀ, all n_head heads",
        "weighted_sum": "Weighted sum A·V, all n_head heads",
        "gate": "Gate projection",
        "up": "Up projection",
        "down": "Down projection",
    },
    params={
        "k": "Key projection k_proj (n_kv_head heads)",
        "v": "Value projection v_proj (n_kv_head heads)",
    },
)

"""Where DeepseekV3ForCausalLM keeps each tensor, and what DeepSeek-V3's accounting rows say."""

from __future__ import annotations

import dataclasses

from generator.models.counts import Words
from generator.models.llama.names import NAMES as LLAMA_NAMES
from generator.models.mixtral.names import WORDS as MIXTRAL_WORDS

NAMES = LLAMA_NAMES  # the router is mlp.gate; the shared experts mlp.shared_experts

WORDS: Words = dataclasses.replace(
    MIXTRAL_WORDS,
    flops={
        **MIXTRAL_WORDS.flops,
        "router": "Router gate (a sigmoid score for every expert)",
        "q": "Query projection",
        "q_a": "Query down-projection to its latent",
        "q_b": "Query up-projection, every head",
        "kv_a": "Key/value down-projection to the latent, and the rotated key",
        "kv_b": "Key and value up-projection from the latent, every head",
        "o": "Output projection",
        "scores": "Scores QKᵀ, every head (qk_head_dim wide)",
        "weighted_sum": "Weighted sum A·V, every head (v_head_dim wide)",
    },
    params={
        **MIXTRAL_WORDS.params,
        "q": "Query projection q_proj",
        "q_a": "Query down-projection q_a_proj",
        "q_b": "Query up-projection q_b_proj",
        "kv_a": "Latent down-projection kv_a_proj_with_mqa",
        "kv_b": "Key and value up-projection kv_b_proj",
        "o": "Output projection o_proj",
    },
)

"""Where MixtralForCausalLM keeps each tensor, and what Mixtral's accounting rows say."""

from __future__ import annotations

import dataclasses

from generator.models.llama.names import NAMES as LLAMA_NAMES
from generator.models.llama.names import WORDS as LLAMA_WORDS

NAMES = LLAMA_NAMES  # the router is mlp.gate, the experts mlp.experts (stacked, gate rows first)

WORDS = dataclasses.replace(
    LLAMA_WORDS,
    flops={
        **LLAMA_WORDS.flops,
        "router": "Router gate (scores every expert)",
        "experts_gate_up": "Experts' gate and up projections",
        "experts_down": "Experts' down projections",
    },
)

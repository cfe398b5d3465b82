"""Where GptOssForCausalLM keeps each tensor, and what gpt-oss's accounting rows say."""

from __future__ import annotations

import dataclasses

from generator.models.counts import Words
from generator.models.llama.names import NAMES as LLAMA_NAMES
from generator.models.mixtral.names import WORDS as MIXTRAL_WORDS

# the router is mlp.router (with a bias); the experts store [in, out], gate and up interleaved
NAMES = dataclasses.replace(LLAMA_NAMES, router="router", experts_layout="interleaved-transposed")

WORDS: Words = dataclasses.replace(
    MIXTRAL_WORDS,
    flops={**MIXTRAL_WORDS.flops, "router": "Router (scores every expert, with a bias)"},
    params={
        **MIXTRAL_WORDS.params,
        "q": "Query projection q_proj",
        "o": "Output projection o_proj",
    },
)

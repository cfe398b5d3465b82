"""The Llama family (Llama 2, Mistral): RMSNorm, rotary positions, grouped-query attention, a
SwiGLU MLP, no biases, an untied lm_head; Mistral adds a sliding window.

sizes.py: the sizes, from transformers' config defaults (checked against the pinned lines);
names.py: its checkpoint's tensor names and what its rows say; components.py: its pages' prose;
map.py: its architecture map. The engine, the accounting and the tensors are the shared ones.
"""

from __future__ import annotations

from generator.models.family import Family
from generator.models.llama.components import COMPONENTS
from generator.models.llama.map import MAP, NO_PARAMS
from generator.models.llama.names import WORDS
from generator.models.llama.sizes import SIZES, check_pinned

FAMILY = Family(
    "llama",
    "Llama",
    SIZES,
    WORDS,
    registry=COMPONENTS,
    map=MAP,
    no_params=NO_PARAMS,
    check_pinned=check_pinned,
)

"""GPT-2: learned positions, LayerNorm, a GELU MLP 4 × d_model wide, biases, tied unembedding.

sizes.py: its four sizes; names.py: what its rows say (its tensor names are ModelConfig's
default); components.py: its pages' prose; map.py: its architecture map. Its traced engine, whose
steps the walkthrough and the forward-pass page show, is generator/engine/.
"""

from __future__ import annotations

from generator.models.family import Family
from generator.models.gpt2.components import COMPONENTS
from generator.models.gpt2.map import MAP, NO_PARAMS
from generator.models.gpt2.names import WORDS
from generator.models.gpt2.sizes import SIZES

FAMILY = Family(
    "gpt2",
    "GPT-2",
    SIZES,
    WORDS,
    registry=COMPONENTS,
    map=MAP,
    no_params=NO_PARAMS,
)

"""Mixtral 8×7B: Mistral's decoder layer with a mixture of eight SwiGLU experts, two per token.

sizes.py: its size, from MixtralConfig()'s defaults (checked against the pinned lines); names.py:
its checkpoint's names and its rows' words; components.py: its pages' prose; map.py: its map.
"""

from __future__ import annotations

from generator.models.family import Family
from generator.models.mixtral.components import COMPONENTS
from generator.models.mixtral.map import MAP, NO_PARAMS
from generator.models.mixtral.names import WORDS
from generator.models.mixtral.sizes import SIZES, TABLE

FAMILY = Family(
    "mixtral",
    "Mixtral",
    SIZES,
    WORDS,
    registry=COMPONENTS,
    map=MAP,
    no_params=NO_PARAMS,
    check_pinned=TABLE.check_pinned,
)

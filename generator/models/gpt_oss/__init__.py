"""gpt-oss-120b: grouped-query attention with sinks and biases, alternating sliding and full
layers, YaRN-scaled rotary positions, 128 clamped-SwiGLU experts of which four run per token.

sizes.py: its size, from GptOssConfig()'s defaults (checked against the pinned lines); names.py:
its checkpoint's names and its rows' words; components.py: its pages' prose; map.py: its map.
"""

from __future__ import annotations

from generator.models.family import Family
from generator.models.gpt_oss.components import COMPONENTS
from generator.models.gpt_oss.map import MAP, NO_PARAMS
from generator.models.gpt_oss.names import WORDS
from generator.models.gpt_oss.sizes import SIZES, TABLE

FAMILY = Family(
    "gpt-oss",
    "gpt-oss",
    SIZES,
    WORDS,
    registry=COMPONENTS,
    map=MAP,
    no_params=NO_PARAMS,
    check_pinned=TABLE.check_pinned,
)

"""DeepSeek-V3: multi-head latent attention, three dense layers, then 58 layers of 256 routed
experts (group-limited top-8) and one shared expert.

sizes.py: its size, from DeepseekV3Config()'s defaults (checked against the pinned lines);
names.py: its checkpoint's names and its rows' words; components.py: its pages' prose; map.py.
"""

from __future__ import annotations

from generator.models.deepseek_v3.components import COMPONENTS
from generator.models.deepseek_v3.map import MAP, NO_PARAMS
from generator.models.deepseek_v3.names import WORDS
from generator.models.deepseek_v3.sizes import SIZES, TABLE
from generator.models.family import Family

FAMILY = Family(
    "deepseek-v3",
    "DeepSeek-V3",
    SIZES,
    WORDS,
    registry=COMPONENTS,
    map=MAP,
    no_params=NO_PARAMS,
    check_pinned=TABLE.check_pinned,
)

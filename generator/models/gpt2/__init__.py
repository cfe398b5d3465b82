"""GPT-2: learned positions, LayerNorm, a GELU MLP 4 × d_model wide, biases, tied unembedding.

Its engine is generator/engine/ (traced step by step for the walkthrough and the forward-pass
page); this folder holds its sizes and its checkpoint tensors.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from generator.models.config import ModelConfig
from generator.models.family import Family
from generator.models.gpt2 import accounting
from generator.models.gpt2.components import COMPONENTS
from generator.models.gpt2.map import MAP, NO_PARAMS
from generator.models.gpt2.sizes import SIZES
from generator.models.gpt2.tensors import weight_shapes

if TYPE_CHECKING:
    import numpy as np


def forward(
    weights: Mapping[str, np.ndarray],
    cfg: ModelConfig,
    token_ids: np.ndarray,
    dtype: np.dtype | type,
) -> np.ndarray:
    """GPT-2's logits [T, V], from generator.engine (imported when first run: it needs numpy)."""
    from generator.engine.model import forward as gpt2_forward

    return gpt2_forward(dict(weights), cfg, token_ids, dtype, keep="none").logits


FAMILY = Family(
    "gpt2",
    "GPT-2",
    SIZES,
    weight_shapes,
    forward,
    registry=COMPONENTS,
    per_block=accounting.PER_BLOCK,
    param_rows=accounting.param_rows,
    flop_rows=accounting.flop_rows,
    map=MAP,
    no_params=NO_PARAMS,
)

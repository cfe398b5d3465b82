"""The Llama family (Llama 2, Mistral): RMSNorm, rotary positions, grouped-query attention, a
SwiGLU MLP, no biases, an untied lm_head; Mistral adds a sliding window.

sizes.py: the sizes, from transformers' config defaults; tensors.py: the checkpoint tensors;
engine.py: the forward pass; decode.py: decoding with a KV cache.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from generator.models.config import ModelConfig
from generator.models.family import Family
from generator.models.llama import accounting
from generator.models.llama.components import COMPONENTS
from generator.models.llama.map import MAP, NO_PARAMS
from generator.models.llama.sizes import SIZES, check_pinned
from generator.models.llama.tensors import weight_shapes

if TYPE_CHECKING:
    import numpy as np


def forward(
    weights: Mapping[str, np.ndarray],
    cfg: ModelConfig,
    token_ids: np.ndarray,
    dtype: np.dtype | type,
) -> np.ndarray:
    """The logits [T, V], from engine.py (imported when first run: it needs numpy)."""
    from generator.models.llama.engine import forward as llama_forward

    return llama_forward(dict(weights), cfg, token_ids, dtype).logits


FAMILY = Family(
    "llama",
    "Llama",
    SIZES,
    weight_shapes,
    forward,
    registry=COMPONENTS,
    per_block=accounting.PER_BLOCK,
    param_rows=accounting.param_rows,
    flop_rows=accounting.flop_rows,
    map=MAP,
    no_params=NO_PARAMS,
    check_pinned=check_pinned,
)

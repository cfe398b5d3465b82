"""The small pieces of GPT-2 in numpy: embedding, MLP, unembedding.

linear (Conv1D), LayerNorm, GELU and softmax are the shared ops of generator.models.ops; the
weight-dict helpers and the token check are generator.models.checkpoint's.

Each component returns its output and a trace: a dict of its intermediates, named after the steps
the pages explain. Shapes in comments: T positions, d = d_model, V = vocab_size.
"""

from __future__ import annotations

from typing import Literal, get_args

import numpy as np

# Shared with every family (generator.models) and re-exported (`x as x`) for GPT-2's modules:
# attention.py is shown on the walkthrough page line by line, so its imports stay as they are.
from generator.models.checkpoint import Weights as Weights
from generator.models.checkpoint import cast as cast
from generator.models.checkpoint import sub_weights as sub_weights
from generator.models.ops import StepTrace as StepTrace
from generator.models.ops import gelu as gelu
from generator.models.ops import layer_norm as layer_norm
from generator.models.ops import linear as linear
from generator.models.ops import softmax as softmax

# What a forward pass keeps: every intermediate (the walkthrough, the tests against transformers);
# the residual stream and each block's attention weights (the forward-pass page); or only the
# logits and probabilities (a long prompt, a removed head). Less kept: less memory, fewer copies.
Keep = Literal["all", "patterns", "none"]
KEEPS: tuple[str, ...] = get_args(Keep)


def embed(w: Weights, token_ids: np.ndarray) -> tuple[np.ndarray, StepTrace]:
    """Token embedding (row lookup in wte) plus position embedding (rows 0..T-1 of wpe)."""
    T = token_ids.shape[0]
    tok = w["wte.weight"][token_ids]  # [T, d]
    pos = w["wpe.weight"][:T]  # [T, d]
    x = tok + pos  # [T, d]: the residual stream starts here
    return x, {"tok": tok, "pos": pos, "sum": x}


def mlp(x: np.ndarray, w: Weights) -> tuple[np.ndarray, StepTrace]:
    """Position-wise feed-forward: c_fc widens to 4d, GELU, c_proj narrows back to d."""
    fc = linear(x, w["c_fc.weight"], w.get("c_fc.bias"))  # [T, d] -> [T, 4d]
    act = gelu(fc)  # [T, 4d]
    proj = linear(act, w["c_proj.weight"], w.get("c_proj.bias"))  # [T, 4d] -> [T, d]
    return proj, {"fc": fc, "gelu": act, "proj": proj}


def unembed(x: np.ndarray, wte: np.ndarray) -> np.ndarray:
    """Logits from the tied token embedding: x @ wteᵀ. softmax() of them are the probabilities."""
    return x @ wte.T  # [T, d] @ [d, V] -> [T, V]

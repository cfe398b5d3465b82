"""The numpy GPT-2 engine: a traced forward pass, toy and random weights, a checkpoint loader.

Imports numpy only (never torch), so the site's build stays fast.
"""

from __future__ import annotations

from generator.engine.attention import STEPS, attention, step_lines
from generator.engine.layers import embed, gelu, layer_norm, linear, mlp, softmax, unembed
from generator.engine.model import BlockTrace, Trace, block, forward, forward_from
from generator.engine.safetensors_file import load_safetensors, parse_safetensors, write_safetensors
from generator.engine.weights import random_weights, toy_token_ids, toy_weights, weight_shapes

__all__ = [
    "STEPS",
    "BlockTrace",
    "Trace",
    "attention",
    "block",
    "embed",
    "forward",
    "forward_from",
    "gelu",
    "layer_norm",
    "linear",
    "load_safetensors",
    "parse_safetensors",
    "write_safetensors",
    "mlp",
    "random_weights",
    "softmax",
    "step_lines",
    "toy_token_ids",
    "toy_weights",
    "unembed",
    "weight_shapes",
]

"""Mixtral 8×7B, as transformers' `MixtralConfig()` defaults: Mistral's layer with a mixture of
eight SwiGLU experts in place of its MLP, two of them run per token.

The row (sizes.toml beside this file) keeps the class's defaults under transformers' own field
names; the build checks each against the pinned lines of MixtralConfig
(generator/models/hf_sizes.py). Where the default is not the released Mixtral-8x7B-v0.1, its page
says so.
"""

from __future__ import annotations

from generator.models.config import ModelConfig
from generator.models.hf_sizes import Table
from generator.models.llama.names import NAMES
from generator.models.sizes_file import read_sizes

SIZES_FILE, DEFAULTS = read_sizes(__file__)  # its sizes.toml: the rows, by size name

TABLE = Table(
    family="mixtral",
    file=SIZES_FILE,
    rows=DEFAULTS,
    # Llama's tensor names: the router is mlp.gate, the experts mlp.experts (stacked,
    # gate rows first)
    constants=dict(norm="rmsnorm", mlp="swiglu", positions="rope", names=NAMES),
    # MixtralConfig declares no bias fields: its projections and experts have none
    when_undeclared={"attention_bias": False},
    router="softmax-topk",
)
SIZES: dict[str, ModelConfig] = TABLE.sizes()

"""Mixtral 8×7B, as transformers' `MixtralConfig()` defaults: Mistral's layer with a mixture of
eight SwiGLU experts in place of its MLP, two of them run per token.

The row keeps the class's defaults under transformers' own field names; the build checks each
against the pinned lines of MixtralConfig (generator/models/hf_sizes.py). Where the default is
not the released Mixtral-8x7B-v0.1, its page says so.
"""

from __future__ import annotations

from generator.models.config import ModelConfig
from generator.models.hf_sizes import Table
from generator.models.llama.names import NAMES
from generator.models.pinned_defaults import Defaults

DEFAULTS: dict[str, Defaults] = {
    "mixtral-8x7b": Defaults(
        "MixtralConfig",
        "Mixtral 8×7B",
        pinned="mixtral.config-defaults",
        fields={
            "vocab_size": 32000,
            "hidden_size": 4096,
            "intermediate_size": 14336,  # each expert's width
            "num_hidden_layers": 32,
            "num_attention_heads": 32,
            "num_key_value_heads": 8,
            "head_dim": None,  # None: hidden_size / num_attention_heads
            "hidden_act": "silu",
            "max_position_embeddings": 4096 * 32,
            "rms_norm_eps": 1e-5,
            "rope_theta": 1e6,  # the class's default_theta (rope_parameters None)
            "tie_word_embeddings": False,
            "sliding_window": None,
            "attention_bias": False,  # not a field of MixtralConfig: no projection has a bias
            "num_experts_per_tok": 2,
            "num_local_experts": 8,
        },
    ),
}

SIZES_FILE = "generator/models/mixtral/sizes.py"
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

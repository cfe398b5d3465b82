"""gpt-oss-120b, as transformers' `GptOssConfig()` defaults: 36 layers alternating a sliding
window of 128 with full attention, attention sinks, biases, YaRN-scaled rotary positions, and 128
experts with a clamped SwiGLU, four per token.

The row keeps the class's defaults under transformers' own field names; the build checks each
against the pinned lines (generator/models/hf_sizes.py): the YaRN defaults and the alternation
are built in GptOssConfig.__post_init__, and the clamp's α and limit are written into the experts'
module (gpt-oss.experts-init) in the release pinned here.
"""

from __future__ import annotations

import dataclasses

from generator.models.config import ModelConfig
from generator.models.hf_sizes import Table
from generator.models.llama.names import NAMES as LLAMA_NAMES
from generator.models.pinned_defaults import Defaults

# Llama's names, but the router is mlp.router (with a bias); the experts store [in, out], gate
# and up interleaved
NAMES = dataclasses.replace(LLAMA_NAMES, router="router", experts_layout="interleaved-transposed")

DEFAULTS: dict[str, Defaults] = {
    "gpt-oss-120b": Defaults(
        "GptOssConfig",
        "gpt-oss-120b",
        pinned="gpt-oss.config-defaults",
        fields={
            "num_hidden_layers": 36,
            "num_local_experts": 128,
            "vocab_size": 201088,
            "hidden_size": 2880,
            "intermediate_size": 2880,  # each expert's width
            "head_dim": 64,
            "num_attention_heads": 64,
            "num_key_value_heads": 8,
            "sliding_window": 128,
            "tie_word_embeddings": False,
            "hidden_act": "silu",
            "max_position_embeddings": 131072,
            "rms_norm_eps": 1e-5,
            "rope_theta": 150000.0,  # the class's default_theta
            "num_experts_per_tok": 4,
            "attention_bias": True,  # on q, k, v, o, and (one flag) the router and the experts
            "rope_type": "yarn",
            "rope_factor": 32.0,
            "rope_beta_fast": 32.0,
            "rope_beta_slow": 1.0,
            "rope_truncate": False,
            "rope_original_max_position_embeddings": 4096,
            "swiglu_alpha": 1.702,
            "swiglu_limit": 7.0,
        },
    ),
}

# GptOssConfig.__post_init__: layer i slides when i + 1 is odd (0, 2, 4, …), full otherwise
ALTERNATION = '"sliding_attention" if bool((i + 1) % 2) else "full_attention"'


def alternating(n_layer: int) -> tuple[str, ...]:
    """The layer types GptOssConfig builds: sliding, full, sliding, … (ALTERNATION)."""
    return tuple("sliding" if (i + 1) % 2 else "full" for i in range(n_layer))


SIZES_FILE = "generator/models/gpt_oss/sizes.py"
TABLE = Table(
    family="gpt-oss",
    file=SIZES_FILE,
    rows=DEFAULTS,
    constants=dict(
        norm="rmsnorm", mlp="swiglu-clamped", positions="rope", attention_sinks=True, names=NAMES
    ),
    router="topk-softmax",
    layer_types=alternating,
    elsewhere={
        "swiglu_alpha": ("gpt-oss.experts-init", "alpha"),
        "swiglu_limit": ("gpt-oss.experts-init", "limit"),
    },
    rules={"layer_types": ("gpt-oss.config-defaults", ALTERNATION)},
)
SIZES: dict[str, ModelConfig] = TABLE.sizes()

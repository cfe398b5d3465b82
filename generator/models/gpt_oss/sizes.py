"""gpt-oss-120b, as transformers' `GptOssConfig()` defaults: 36 layers alternating a sliding
window of 128 with full attention, attention sinks, biases, YaRN-scaled rotary positions, and 128
experts with a clamped SwiGLU, four per token.

The row (sizes.toml beside this file) keeps the class's defaults under transformers' own field
names; the build checks each against the pinned lines (generator/models/hf_sizes.py): the YaRN
defaults and the alternation are built in GptOssConfig.__post_init__, and the clamp's α and limit
are written into the experts' module (gpt-oss.experts-init) in the release pinned here.
"""

from __future__ import annotations

import dataclasses

from generator.models.config import ModelConfig
from generator.models.hf_sizes import Table
from generator.models.llama.names import NAMES as LLAMA_NAMES
from generator.models.sizes_file import read_sizes

# Llama's names, but the router is mlp.router (with a bias); the experts store [in, out], gate
# and up interleaved
NAMES = dataclasses.replace(LLAMA_NAMES, router="router", experts_layout="interleaved-transposed")

SIZES_FILE, DEFAULTS = read_sizes(__file__)  # its sizes.toml: the rows, by size name

# GptOssConfig.__post_init__: layer i slides when i + 1 is odd (0, 2, 4, …), full otherwise
ALTERNATION = '"sliding_attention" if bool((i + 1) % 2) else "full_attention"'


def alternating(n_layer: int) -> tuple[str, ...]:
    """The layer types GptOssConfig builds: sliding, full, sliding, … (ALTERNATION)."""
    return tuple("sliding" if (i + 1) % 2 else "full" for i in range(n_layer))


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

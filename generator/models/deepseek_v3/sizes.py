"""DeepSeek-V3, as transformers' `DeepseekV3Config()` defaults: 61 layers of multi-head latent
attention, the first three with a dense SwiGLU MLP, the other 58 with 256 routed experts (8 per
token, chosen within the 4 best of 8 groups) and one shared expert.

The row (sizes.toml beside this file) keeps the class's defaults under transformers' own field
names; the build checks each against the pinned lines (generator/models/hf_sizes.py).
DeepseekV3Config() has plain RoPE and a context of 4,096; the released model scales RoPE with YaRN
to 163,840 (its page says so). The multi-token prediction module the config counts (num_mtp_layers)
is not part of transformers' DeepseekV3ForCausalLM, nor of the counts here.
"""

from __future__ import annotations

from generator.models.config import ModelConfig
from generator.models.hf_sizes import Table
from generator.models.llama.names import NAMES
from generator.models.sizes_file import read_sizes

SIZES_FILE, DEFAULTS = read_sizes(__file__)  # its sizes.toml: the rows, by size name

TABLE = Table(
    family="deepseek-v3",
    file=SIZES_FILE,
    rows=DEFAULTS,
    # Llama's tensor names: the router is mlp.gate; the shared experts mlp.shared_experts
    constants=dict(norm="rmsnorm", mlp="swiglu", positions="rope", names=NAMES),
    router="sigmoid-grouped",
    theta_pin="hf.rope-default-theta",
)
SIZES: dict[str, ModelConfig] = TABLE.sizes()

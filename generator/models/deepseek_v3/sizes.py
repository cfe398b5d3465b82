"""DeepSeek-V3, as transformers' `DeepseekV3Config()` defaults: 61 layers of multi-head latent
attention, the first three with a dense SwiGLU MLP, the other 58 with 256 routed experts (8 per
token, chosen within the 4 best of 8 groups) and one shared expert.

The row keeps the class's defaults under transformers' own field names; the build checks each
against the pinned lines (generator/models/hf_sizes.py). DeepseekV3Config() has plain RoPE and a
context of 4,096; the released model scales RoPE with YaRN to 163,840 (its page says so). The
multi-token prediction module the config counts (num_mtp_layers) is not part of transformers'
DeepseekV3ForCausalLM, nor of the counts here.
"""

from __future__ import annotations

from generator.models.config import ModelConfig
from generator.models.hf_sizes import Table
from generator.models.llama.names import NAMES
from generator.models.pinned_defaults import Defaults

DEFAULTS: dict[str, Defaults] = {
    "deepseek-v3": Defaults(
        "DeepseekV3Config",
        "DeepSeek-V3",
        pinned="deepseek-v3.config-defaults",
        fields={
            "vocab_size": 129280,
            "hidden_size": 7168,
            "intermediate_size": 18432,  # the dense MLP of the first layers
            "moe_intermediate_size": 2048,  # each expert's width
            "num_hidden_layers": 61,
            "num_attention_heads": 128,
            "num_key_value_heads": 128,
            "n_shared_experts": 1,
            "n_routed_experts": 256,
            "routed_scaling_factor": 2.5,
            "kv_lora_rank": 512,
            "q_lora_rank": 1536,
            "qk_rope_head_dim": 64,
            "v_head_dim": 128,
            "qk_nope_head_dim": 128,
            "n_group": 8,
            "topk_group": 4,
            "num_experts_per_tok": 8,
            "first_k_dense_replace": 3,
            "norm_topk_prob": True,
            "hidden_act": "silu",
            "max_position_embeddings": 4096,
            "rms_norm_eps": 1e-6,
            "tie_word_embeddings": False,
            "rope_theta": 10000.0,  # rope_parameters None: the rotary mixin's default_theta
            "rope_interleave": True,
            "attention_bias": False,
        },
    ),
}

SIZES_FILE = "generator/models/deepseek_v3/sizes.py"
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

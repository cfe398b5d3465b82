"""The Llama family's sizes: Llama 2 7B and Mistral 7B v0.1, as transformers' config defaults.

`LlamaConfig()` describes Llama 2 7B and `MistralConfig()` Mistral 7B v0.1. DEFAULTS keeps each
class's default values under transformers' own field names, and the build checks them against
the pinned lines of both classes (generator/models/hf_sizes.py). rope_theta is not a line of
either config class: both take RotaryEmbeddingConfigMixin.default_theta (modeling_rope_utils.py)
when rope_parameters is None.
"""

from __future__ import annotations

from collections.abc import Mapping

from generator.models.config import ModelConfig
from generator.models.hf_sizes import Table
from generator.models.llama.names import NAMES
from generator.models.pinned_defaults import Defaults, defaults_in

DEFAULTS: dict[str, Defaults] = {
    "llama-2-7b": Defaults(
        "LlamaConfig",
        "Llama 2 7B",
        pinned="llama.config-defaults",
        fields={
            "vocab_size": 32000,
            "hidden_size": 4096,
            "intermediate_size": 11008,
            "num_hidden_layers": 32,
            "num_attention_heads": 32,
            "num_key_value_heads": None,  # None: num_attention_heads (multi-head attention)
            "max_position_embeddings": 2048,
            "rms_norm_eps": 1e-6,
            "rope_theta": 10000.0,
            "tie_word_embeddings": False,
            "attention_bias": False,
            "mlp_bias": False,
            "sliding_window": None,  # LlamaConfig has none: every earlier position
        },
    ),
    "mistral-7b-v0.1": Defaults(
        "MistralConfig",
        "Mistral 7B v0.1",
        pinned="mistral.config-defaults",
        fields={
            "vocab_size": 32000,
            "hidden_size": 4096,
            "intermediate_size": 14336,
            "num_hidden_layers": 32,
            "num_attention_heads": 32,
            "num_key_value_heads": 8,
            "max_position_embeddings": 4096 * 32,
            "rms_norm_eps": 1e-6,
            "rope_theta": 10000.0,
            "tie_word_embeddings": False,
            "attention_bias": False,  # MistralConfig has no such field: its projections have none
            "mlp_bias": False,
            "sliding_window": 4096,
        },
    ),
}


SIZES_FILE = "generator/models/llama/sizes.py"  # where DEFAULTS is written, as errors name it
THETA_PIN = "hf.rope-default-theta"  # `default_theta = 10_000.0`: both classes' rope_theta

TABLE = Table(
    family="llama",
    file=SIZES_FILE,
    rows=DEFAULTS,
    constants=dict(norm="rmsnorm", mlp="swiglu", positions="rope", names=NAMES),
    # A field the pinned lines of a class do not declare has the one value the family models
    # when the class lacks it: MistralConfig declares no attention_bias or mlp_bias (its
    # projections have no bias), LlamaConfig no sliding_window (every earlier position is seen).
    when_undeclared={"attention_bias": False, "mlp_bias": False, "sliding_window": None},
    theta_pin=THETA_PIN,
)
WHEN_UNDECLARED = TABLE.when_undeclared


def from_transformers(name: str, defaults: Defaults) -> ModelConfig:
    """The ModelConfig of a row of DEFAULTS (a transformers config's fields)."""
    return TABLE.spec(name, defaults)


def check_pinned(texts: Mapping[str, str], *, file: str) -> None:
    """Each size's defaults against the pinned lines of transformers (excerpt id -> text)."""
    TABLE.check_pinned(texts, file=file)


SIZES: dict[str, ModelConfig] = TABLE.sizes()

__all__ = ["DEFAULTS", "SIZES", "SIZES_FILE", "Defaults", "check_pinned", "defaults_in"]

"""The Llama family's sizes: Llama 2 7B and Mistral 7B v0.1, as transformers' config defaults.

`LlamaConfig()` describes Llama 2 7B and `MistralConfig()` Mistral 7B v0.1. DEFAULTS holds each
class's default values under transformers' own field names, read from sizes.toml beside this file,
and the build checks them against the pinned lines of both classes (generator/models/hf_sizes.py).
rope_theta is not a line of either config class: both take RotaryEmbeddingConfigMixin.default_theta
(modeling_rope_utils.py) when rope_parameters is None.
"""

from __future__ import annotations

from collections.abc import Mapping

from generator.models.config import ModelConfig
from generator.models.hf_sizes import Table
from generator.models.llama.names import NAMES
from generator.models.pinned_defaults import Defaults, defaults_in
from generator.models.sizes_file import read_sizes

SIZES_FILE, DEFAULTS = read_sizes(__file__)  # its sizes.toml: the rows, by size name
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


def check_pinned(texts: Mapping[str, str], *, file: str) -> None:
    """Each size's defaults against the pinned lines of transformers (excerpt id -> text)."""
    TABLE.check_pinned(texts, file=file)


SIZES: dict[str, ModelConfig] = TABLE.sizes()

__all__ = ["DEFAULTS", "SIZES", "SIZES_FILE", "Defaults", "check_pinned", "defaults_in"]

"""The Llama family's sizes: Llama 2 7B and Mistral 7B v0.1, as transformers' config defaults.

`LlamaConfig()` describes Llama 2 7B and `MistralConfig()` Mistral 7B v0.1. DEFAULTS keeps each
class's default values under transformers' own field names, one small table, so a later step can
read the same numbers from the pinned configuration files and compare; `from_transformers` turns
a row into a ModelConfig. rope_theta is not a line of either config class: both take
RotaryEmbeddingConfigMixin.default_theta (modeling_rope_utils.py) when rope_parameters is None.
"""

from __future__ import annotations

from dataclasses import dataclass

from generator.models.config import ModelConfig

Value = int | float | bool | None


@dataclass(frozen=True)
class Defaults:
    """One size: the transformers config class whose defaults it is, and those defaults."""

    config_class: str  # "LlamaConfig"
    label: str  # the name a page prints
    fields: dict[str, Value]  # transformers' field name -> default value


DEFAULTS: dict[str, Defaults] = {
    "llama-2-7b": Defaults(
        "LlamaConfig",
        "Llama 2 7B",
        {
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
        {
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


def from_transformers(name: str, defaults: Defaults) -> ModelConfig:
    """The ModelConfig of a row of DEFAULTS (a transformers config's fields)."""
    f = defaults.fields

    def number(key: str, kind: type[int] | type[float]) -> int | float:
        value = f[key]
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(f"{name}: {key} is {value!r}, not a number")
        return kind(value)

    def whole(key: str) -> int:
        return int(number(key, int))

    if f["attention_bias"] != f["mlp_bias"]:
        raise ValueError(f"{name}: biases on attention only or on the MLP only are not modelled")
    return ModelConfig(
        name=name,
        label=defaults.label,
        family="llama",
        n_layer=whole("num_hidden_layers"),
        n_head=whole("num_attention_heads"),
        n_kv_head=whole(
            "num_attention_heads" if f["num_key_value_heads"] is None else "num_key_value_heads"
        ),
        d_model=whole("hidden_size"),
        d_mlp=whole("intermediate_size"),
        n_ctx=whole("max_position_embeddings"),
        vocab_size=whole("vocab_size"),
        norm="rmsnorm",
        norm_eps=number("rms_norm_eps", float),
        mlp="swiglu",
        positions="rope",
        rope_theta=number("rope_theta", float),
        sliding_window=None if f["sliding_window"] is None else whole("sliding_window"),
        bias=bool(f["attention_bias"]),
        tied_embeddings=bool(f["tie_word_embeddings"]),
    )


SIZES: dict[str, ModelConfig] = {
    name: from_transformers(name, row) for name, row in DEFAULTS.items()
}

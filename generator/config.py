"""Model configurations: the four GPT-2 sizes and the toy of the attention walkthrough.

The config class and GPT-2's sizes live with the model families (generator/models/); this module
keeps the names the GPT-2 pages import: CONFIGS (the toy and GPT-2's sizes), SIZES, TOY.
"""

from __future__ import annotations

from generator.errors import InputError
from generator.models.config import ModelConfig
from generator.models.gpt2.sizes import GPT2_CONTEXT, GPT2_VOCAB
from generator.models.gpt2.sizes import SIZES as GPT2_SIZES

__all__ = [
    "CONFIGS",
    "GPT2_CONTEXT",
    "GPT2_VOCAB",
    "SIZES",
    "TOY",
    "TOY_TOKENS",
    "ModelConfig",
    "get_config",
]

TOY = ModelConfig(
    name="toy",
    label="toy",
    n_layer=2,
    n_head=2,
    d_model=8,
    n_ctx=16,
    vocab_size=32,
    bias=False,  # the walkthrough's toy leaves the projection biases out (seed 000)
)
TOY_TOKENS: int = 5  # tokens in the walkthrough's toy sequence

CONFIGS: dict[str, ModelConfig] = {"toy": TOY, **GPT2_SIZES}
SIZES: tuple[str, ...] = tuple(GPT2_SIZES)  # GPT-2's four, smallest first


def get_config(name: str) -> ModelConfig:
    """The config called `name`; an InputError listing the valid names otherwise."""
    try:
        return CONFIGS[name]
    except KeyError:
        raise InputError(
            f"unknown model {name!r}",
            entry=name,
            fix=f"use one of: {', '.join(CONFIGS)}",
        ) from None

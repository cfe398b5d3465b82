"""GPT-2's four sizes (Radford et al. 2019, Table 2; the hub's config.json files).

Every size shares the vocabulary, the context and 64-wide heads; the MLP is 4 × d_model wide
(ModelConfig's default d_mlp, derived again when dataclasses.replace() changes d_model).
"""

from __future__ import annotations

from generator.models.config import ModelConfig

GPT2_VOCAB = 50257  # 50,000 BPE merges + 256 byte tokens + <|endoftext|>
GPT2_CONTEXT = 1024


def _gpt2(name: str, label: str, n_layer: int, n_head: int, d_model: int) -> ModelConfig:
    return ModelConfig(name, label, n_layer, n_head, d_model, GPT2_CONTEXT, GPT2_VOCAB)


SIZES: dict[str, ModelConfig] = {
    "gpt2": _gpt2("gpt2", "GPT-2 small", 12, 12, 768),
    "gpt2-medium": _gpt2("gpt2-medium", "GPT-2 medium", 24, 16, 1024),
    "gpt2-large": _gpt2("gpt2-large", "GPT-2 large", 36, 20, 1280),
    "gpt2-xl": _gpt2("gpt2-xl", "GPT-2 XL", 48, 25, 1600),
}

"""What GPT-2's accounting rows say (its tensor names are ModelConfig's default, GPT2_NAMES)."""

from __future__ import annotations

from generator.models.counts import Words

WORDS = Words(
    embed=("wte", "Token embedding table wte"),
    layers=("h", "Transformer blocks"),
    final_norm=("ln_f", "Final LayerNorm ln_f"),
    logits="Logits x · wteᵀ",
    unembedding="Unembedding",
    flops={
        "qkv": "Fused Q, K, V projection",
        "scores": "Scores QKᵀ, all heads",
        "weighted_sum": "Weighted sum A·V, all heads",
        "o": "Attention output projection",
        "up": "MLP expansion c_fc",
        "down": "MLP projection c_proj",
    },
    params={
        "qkv": "Fused Q, K, V projection",
        "o": "Attention output projection",
        "up": "MLP expansion c_fc",
        "down": "MLP projection c_proj",
    },
    gain=("g", "Gain γ"),
    norms_labelled=True,
)

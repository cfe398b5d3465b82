"""Llama's architecture map: no position table and no embedding sum (positions are rotations
inside attention, the RoPE box beside it); the other boxes where GPT-2's map has them."""

from __future__ import annotations

from generator.models.map import DECODER_REST, LN1, Box, MapLayout

MAP = MapLayout(
    boxes=(
        Box("wte", 20, 40, 150, 34),
        LN1,
        Box("rope", 280, 160, 50, 32),
        *DECODER_REST,
    ),
    name="Llama architecture: token embedding, {n_layer} pre-norm decoder layers with rotary"
    " positions, final RMSNorm, untied lm_head",
    block_label="Layer",
    caption="Llama decoder layer: pre-norm, rotary positions inside attention",
    figure="Llama 2 and Mistral: token embedding, {n_layer} pre-norm decoder layers (rotary"
    " positions inside attention), final RMSNorm, untied lm_head.",
)

# Why a component without parameters of its own has none (its page's parameter section).
NO_PARAMS = {
    "rope": (
        "No parameters: each angle is fixed by the position and rope_theta, and the cos and "
        "sin tables are computed, not learned."
    ),
}

"""Mixtral's architecture map: Llama's boxes, with the experts where the MLP was."""

from __future__ import annotations

import dataclasses

from generator.models.llama.map import MAP as LLAMA_MAP
from generator.models.map import MapLayout

MAP = MapLayout(
    boxes=tuple(
        dataclasses.replace(box, key="experts") if box.key == "mlp" else box
        for box in LLAMA_MAP.boxes
    ),
    name="Mixtral architecture: token embedding, {n_layer} pre-norm decoder layers with rotary"
    " positions and a mixture of experts, final RMSNorm, untied lm_head",
    block_label="Layer",
    caption="Mixtral decoder layer: Mistral's, with eight experts in place of the MLP",
    figure="Mixtral: token embedding, {n_layer} pre-norm decoder layers (rotary positions inside"
    " attention, a mixture of experts in place of the MLP), final RMSNorm, untied lm_head.",
)

NO_PARAMS = {
    "rope": (
        "No parameters: each angle is fixed by the position and rope_theta, and the cos and "
        "sin tables are computed, not learned."
    ),
}

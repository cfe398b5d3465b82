"""DeepSeek-V3's architecture map: Mixtral's boxes (experts where the MLP was; the first layers'
dense MLP is on the experts' page)."""

from __future__ import annotations

from generator.models.map import MapLayout
from generator.models.mixtral.map import MAP as MIXTRAL_MAP

MAP = MapLayout(
    boxes=MIXTRAL_MAP.boxes,
    name="DeepSeek-V3 architecture: token embedding, {n_layer} pre-norm decoder layers of latent "
    "attention with a dense MLP (the first three) or a mixture of experts, final RMSNorm, untied "
    "lm_head",
    block_label="Layer",
    caption="DeepSeek-V3 decoder layer: latent attention, then experts (a dense MLP at first)",
    figure="DeepSeek-V3: token embedding, {n_layer} pre-norm decoder layers (latent attention;"
    " a dense MLP in the first, a mixture of experts in the rest), final RMSNorm, untied lm_head.",
)

NO_PARAMS = {
    "rope": (
        "No parameters: each angle is fixed by the position and rope_theta; only the "
        "qk_rope_head_dim part of each head is rotated."
    ),
}

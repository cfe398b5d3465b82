"""gpt-oss's architecture map: Mixtral's boxes (experts where the MLP was)."""

from __future__ import annotations

from generator.models.map import MapLayout
from generator.models.mixtral.map import MAP as MIXTRAL_MAP
from generator.models.mixtral.map import NO_PARAMS as NO_PARAMS

MAP = MapLayout(
    boxes=MIXTRAL_MAP.boxes,
    name="gpt-oss architecture: token embedding, {n_layer} pre-norm decoder layers alternating "
    "sliding and full attention with sinks, a mixture of experts, final RMSNorm, untied lm_head",
    block_label="Layer",
    caption="gpt-oss decoder layer: attention with sinks (every other layer windowed), experts",
    figure="gpt-oss: token embedding, {n_layer} pre-norm decoder layers (attention with sinks,"
    " windowed on every other layer; a mixture of experts), final RMSNorm, untied lm_head.",
)

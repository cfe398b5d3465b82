"""GPT-2's architecture map: its boxes, top (input) to bottom (output), and its words."""

from __future__ import annotations

from generator.models.map import DECODER_REST, LN1, Box, MapLayout

MAP = MapLayout(
    boxes=(
        Box("wte", 20, 40, 120, 34),
        Box("wpe", 170, 40, 120, 34),
        LN1,
        *DECODER_REST,
    ),
    name="GPT-2 architecture: embeddings, {n_layer} pre-norm blocks, final norm, unembedding",
    block_label="Block",
    caption="GPT-2 pre-normalized transformer block",
    figure="GPT-2: embeddings, {n_layer} pre-norm blocks, final norm, unembedding.",
)

# Why a component without parameters of its own has none (its page's parameter section).
NO_PARAMS = {
    "embed": "No parameters of its own: it adds two vectors that the embeddings already hold.",
    "unembed": (
        "No new parameters: GPT-2 ties the unembedding to the token embedding, so the logits "
        "are computed with wte itself, transposed. Untied, the same matrix would cost as much "
        "again as wte:"
    ),
}

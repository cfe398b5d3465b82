"""GPT-2's architecture map: its boxes, top (input) to bottom (output), and its words."""

from __future__ import annotations

from generator.models.map import Box, MapLayout

MAP = MapLayout(
    boxes=(
        Box("wte", 20, 40, 120, 34),
        Box("wpe", 170, 40, 120, 34),
        Box("ln1", 150, 160, 120, 32),
        Box("attention", 150, 208, 180, 36),
        Box("ln2", 150, 290, 120, 32),
        Box("mlp", 150, 338, 180, 36),
        Box("lnf", 20, 448, 120, 32),
        Box("unembed", 20, 504, 120, 34),
        Box("model", 200, 504, 130, 34),
    ),
    name="GPT-2 architecture: embeddings, {n_layer} pre-norm blocks, final norm, unembedding",
    block_label="Block",
    caption="GPT-2 pre-normalized transformer block",
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

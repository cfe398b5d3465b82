"""What a family's architecture map needs from its folder: where each box sits, and the words.

The drawing itself (lines, ⊕, the frame, the links) is generator/render/diagram.py, the same for
every family: a pre-norm decoder whose boxes have the keys ln1, attention, ln2, mlp, wte, lnf,
unembed and model, and either wpe (learned positions, added to the stream) or rope (rotations
fed into attention).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Box:
    """One component's box, in the map's SVG user units (352 × 580, top is the input)."""

    key: str  # the component's key: its page, and data-light= in formulas
    x: int
    y: int
    w: int
    h: int


@dataclass(frozen=True)
class MapLayout:
    boxes: tuple[Box, ...]  # top (input) to bottom (output)
    name: str  # the map's accessible name; {n_layer} is filled in
    block_label: str  # the block frame's label: "Block" gives "Block × 12"
    caption: str  # under the map on a component page
    figure: str  # under the whole-model map of the family's index page; {n_layer} filled


# Where every family's block and output boxes sit: diagram.py's ⊕ heights (ADDS) and block frame
# (BLOCK_FRAME) are drawn around them. A family adds its embedding boxes (and any box beside
# ln_1, such as RoPE) in front: (*its embeddings, LN1, *its extras, *DECODER_REST).
LN1 = Box("ln1", 150, 160, 120, 32)
DECODER_REST = (
    Box("attention", 150, 208, 180, 36),
    Box("ln2", 150, 290, 120, 32),
    Box("mlp", 150, 338, 180, 36),
    Box("lnf", 20, 448, 120, 32),
    Box("unembed", 20, 504, 120, 34),
    Box("model", 200, 504, 130, 34),
)

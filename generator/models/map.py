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

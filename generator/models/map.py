"""What a family's architecture map needs from its family.toml: where each box sits, the words.

The drawing itself (lines, ⊕, the frame, the links) is generator/render/diagram.py, the same for
every family: a pre-norm decoder whose boxes have the keys ln1, attention, ln2, mlp, wte, lnf,
unembed and model, and either wpe (learned positions, added to the stream) or rope (rotations
fed into attention). The boxes every family has (ln1 to model) keep GPT-2's places in each
family.toml: diagram.py's ⊕ heights (ADDS) and block frame (BLOCK_FRAME) are drawn around them.
"""

from __future__ import annotations

import msgspec


class Box(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One component's box, in the map's SVG user units (352 × 580, top is the input)."""

    key: str  # the component's key: its page, and data-light= in formulas
    x: int
    y: int
    w: int
    h: int


class MapLayout(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    boxes: tuple[Box, ...]  # top (input) to bottom (output)
    name: str  # the map's accessible name; {n_layer} is filled in
    block_label: str  # the block frame's label: "Block" gives "Block × 12"
    caption: str  # under the map on a component page
    figure: str  # under the whole-model map of the family's index page; {n_layer} filled

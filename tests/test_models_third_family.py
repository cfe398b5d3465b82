"""A third family plugs in the way ARCHITECTURE.md says: a Family with its own sizes, registry
and map, registered in FAMILIES. Its map, its accounting and `itm numbers` then follow, with no
table elsewhere to extend (the map's layout, accessible name, frame label and caption were dicts
keyed by family in the renderer and the page code, and a new family was a KeyError)."""

from __future__ import annotations

import dataclasses

import msgspec
import pytest

from generator import accounting
from generator.models import FAMILIES
from generator.models.map import Box, MapLayout
from generator.render.diagram import architecture_map


@pytest.fixture
def third(monkeypatch: pytest.MonkeyPatch):
    """Llama's folder under another name, with a map of its own words."""
    sizes = {
        f"third-{name}": dataclasses.replace(cfg, name=f"third-{name}", family="third")
        for name, cfg in FAMILIES["llama"].sizes.items()
    }
    family = dataclasses.replace(
        FAMILIES["llama"],
        name="third",
        label="Third",
        sizes=sizes,
        map=msgspec.structs.replace(
            FAMILIES["llama"].map,
            name="Third architecture: {n_layer} stages",
            block_label="Stage",
            caption="A third family's stage",
        ),
    )
    monkeypatch.setitem(FAMILIES, "third", family)
    return family


def test_a_registered_family_draws_its_own_map(third) -> None:
    cfg = next(iter(third.sizes.values()))
    diagram = architecture_map(lambda key: f"{key}/", n_layer=cfg.n_layer, family="third")
    assert diagram.parts == "Third architecture: {n_layer} stages"
    labels = [box.label for box in diagram.boxes]
    assert f"Stage × {cfg.n_layer}" in labels
    assert {box.key for box in diagram.boxes} >= {b.key for b in third.map.boxes}


def test_a_registered_family_counts_like_its_folder_says(third) -> None:
    for name, cfg in third.sizes.items():
        original = FAMILIES["llama"].sizes[name.removeprefix("third-")]
        assert accounting.params_total(cfg, "model") == accounting.params_total(original, "model")


def test_a_map_box_that_is_no_component_is_refused() -> None:
    stray = msgspec.structs.replace(
        FAMILIES["llama"].map, boxes=(*FAMILIES["llama"].map.boxes, Box("wpe", 170, 40, 120, 34))
    )
    with pytest.raises(ValueError, match=r"family 'llama': map boxes \['wpe'\]"):
        dataclasses.replace(FAMILIES["llama"], map=stray)


def test_every_family_has_a_map_of_its_own() -> None:
    for family in FAMILIES.values():
        assert isinstance(family.map, MapLayout) and family.map.boxes
        keys = {box.key for box in family.map.boxes}
        assert {"ln1", "attention", "ln2", "wte", "lnf", "unembed"} <= keys
        assert {"mlp", "experts"} & keys, family.name  # a dense MLP or experts
        assert family.map.figure, family.name


def test_a_map_without_a_box_the_lines_need_is_refused() -> None:
    """diagram.py draws its lines between these boxes: a map without one was a KeyError at build."""
    without = tuple(box for box in FAMILIES["llama"].map.boxes if box.key != "ln2")
    with pytest.raises(ValueError, match=r"missing \['ln2'\]"):
        dataclasses.replace(
            FAMILIES["llama"], map=msgspec.structs.replace(FAMILIES["llama"].map, boxes=without)
        )
    no_positions = tuple(box for box in FAMILIES["llama"].map.boxes if box.key != "rope")
    with pytest.raises(ValueError, match="wpe or rope"):
        dataclasses.replace(
            FAMILIES["llama"],
            map=msgspec.structs.replace(FAMILIES["llama"].map, boxes=no_positions),
        )

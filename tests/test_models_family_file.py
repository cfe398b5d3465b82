"""A family's family.toml: every mistake in it is one InputError naming the file, the entry and
the fix (generator/models/family_file.py), never a traceback or a family built half right."""

from __future__ import annotations

import dataclasses
import os
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import tomli_w

from generator.data_file import MAX_BYTES
from generator.errors import InputError
from generator.models import FAMILIES, FOLDERS
from generator.models.family import Family
from generator.models.family_file import FAMILY_FILE
from generator.models.llama.changes import CHANGES, CHANGES_FILE, read_changes

MODELS = Path(__file__).resolve().parent.parent / "generator" / "models"
Edit = Callable[[dict[str, Any]], object]


def shipped(folder: str) -> dict[str, Any]:
    return tomllib.loads((MODELS / folder / FAMILY_FILE).read_text("utf-8"))


def load(tmp_path: Path, folder: str, edit: Edit) -> Family:
    """The family of a copy of `folder` whose family.toml `edit` changed."""
    data = shipped(folder)
    edit(data)
    (tmp_path / folder).mkdir(parents=True)
    (tmp_path / folder / FAMILY_FILE).write_text(tomli_w.dumps(data), "utf-8")
    loaded = {name: FAMILIES[name] for name in ("gpt2", "llama")}
    return Family.from_folder(tmp_path / folder, loaded)


def refusal(tmp_path: Path, folder: str, edit: Edit) -> InputError:
    with pytest.raises(InputError) as caught:
        load(tmp_path, folder, edit)
    error = caught.value
    assert error.file == str(tmp_path / folder / FAMILY_FILE) and error.fix
    assert "\n" not in error.problem
    return error


def test_each_shipped_file_makes_its_family_again(tmp_path: Path) -> None:
    """A copy read on its own is the family the package registered (the shared reader)."""
    for folder in FOLDERS:
        family = load(tmp_path / folder, folder, lambda data: None)
        assert family.file == str(tmp_path / folder / folder / FAMILY_FILE)
        assert dataclasses.replace(family, file=FAMILIES[family.name].file) == FAMILIES[family.name]


def _set(path: str, value: object) -> Edit:
    """An edit putting `value` at `path` ("components.3.formula"), None removing the key."""

    def edit(data: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        node: Any = data
        for part in parents:
            node = node[int(part)] if part.isdigit() else node[part]
        if value is None:
            del node[last]
        else:
            node[last] = value

    return edit


@pytest.mark.parametrize(
    ("edit", "entry", "problem"),
    [
        (_set("components.3.formula", 3), "components[3].formula", "Expected `str`, got `int`"),
        (_set("components.0.colour", "red"), "components[0]", "unknown field `colour`"),
        (_set("components.1.title", None), "components[1]", "missing required field `title`"),
        (_set("map.boxes.2.x", "150"), "map.boxes[2].x", "Expected `int`, got `str`"),
        (_set("words.flops.qkv", ["a"]), "words.flops[...]", "Expected `str`, got `array`"),
        (_set("label", None), None, "missing required field `label`"),
        (_set("components.0.inputs.0.dims", "B"), "components[0].inputs[0].dims", "Expected"),
    ],
)
def test_a_wrong_entry_is_named(tmp_path: Path, edit: Edit, entry: str, problem: str) -> None:
    error = refusal(tmp_path, "gpt2", edit)
    assert error.entry == entry and problem in error.problem


def test_a_borrowing_family_names_what_it_cannot_place(tmp_path: Path) -> None:
    def unknown(data: dict[str, Any]) -> None:
        data["order"][2] = "ropes"

    error = refusal(tmp_path, "mixtral", unknown)
    assert (error.entry, "'ropes'" in error.problem) == ("order[2]", True)

    def unplaced(data: dict[str, Any]) -> None:
        data["order"].remove("experts")

    assert refusal(tmp_path / "b", "mixtral", unplaced).entry == "order"
    error = refusal(tmp_path / "c", "mixtral", _set("borrow", "mixtral"))
    assert error.entry == "borrow" and "gpt2, llama" in (error.fix or "")
    error = refusal(tmp_path / "d", "deepseek_v3", _set("borrowed_roles.experts", "Runs."))
    assert error.entry == "borrowed_roles.experts"


def test_the_family_cross_checks_name_the_file(tmp_path: Path) -> None:
    """Family.__post_init__'s checks (here: a map box that is no component) keep holding, and
    their refusal names the file it came from."""

    def stray_box(data: dict[str, Any]) -> None:
        data["map"]["boxes"].append({"key": "wpe", "x": 1, "y": 1, "w": 1, "h": 1})

    error = refusal(tmp_path, "llama", stray_box)
    assert "['wpe'] are not its components" in error.problem


def _write(tmp_path: Path, make: Callable[[Path], object]) -> InputError:
    (tmp_path / "gpt2").mkdir(parents=True)
    make(tmp_path / "gpt2" / FAMILY_FILE)
    with pytest.raises(InputError) as caught:
        Family.from_folder(tmp_path / "gpt2", {})
    assert caught.value.file == str(tmp_path / "gpt2" / FAMILY_FILE)
    return caught.value


def test_bad_toml_a_huge_or_odd_file_is_one_line(tmp_path: Path) -> None:
    error = _write(tmp_path / "a", lambda path: path.write_text('name = "gpt2\n'))
    assert error.problem.startswith("is not valid TOML") and "line 1" in error.problem
    error = _write(tmp_path / "b", lambda path: path.write_bytes(b"#" * (MAX_BYTES + 1)))
    assert "larger than" in error.problem
    error = _write(tmp_path / "c", os.mkfifo)  # a read would block forever
    assert "FIFO" in error.problem
    error = _write(tmp_path / "d", lambda path: path.write_bytes(b"name = '\xff'"))
    assert "not UTF-8" in error.problem


def test_a_change_cites_papers_papers_toml_has(tmp_path: Path) -> None:
    """llama/changes.toml names its papers; a name papers.toml lacks, or an unknown key, is refused
    naming the entry."""
    data = tomllib.loads(CHANGES_FILE.read_text("utf-8"))
    assert read_changes(CHANGES_FILE) == CHANGES
    data["changes"][1]["papers"][0] = "ROPES"
    path = tmp_path / "changes.toml"
    path.write_text(tomli_w.dumps(data), "utf-8")
    with pytest.raises(InputError) as caught:
        read_changes(path)
    assert (caught.value.entry, caught.value.file) == ("changes[1].papers[0]", str(path))
    assert "ROPE" in (caught.value.fix or "")
    data["changes"][1]["papers"][0] = "ROPE"
    data["changes"][2]["cites"] = ["ROPE"]
    path.write_text(tomli_w.dumps(data), "utf-8")
    with pytest.raises(InputError) as caught:
        read_changes(path)
    assert caught.value.entry == "changes[2]" and "unknown field `cites`" in caught.value.problem


def test_a_component_comes_once(tmp_path: Path) -> None:
    def twice(data: dict[str, Any]) -> None:
        data["order"].insert(1, "wte")

    assert "['wte'] appear twice" in refusal(tmp_path, "mixtral", twice).problem

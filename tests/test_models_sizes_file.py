"""A family's sizes.toml (its rows of transformers config defaults): every mistake in it is one
InputError naming the file, the entry and the fix (generator/models/sizes_file.py), never a
traceback or a size read half right."""

from __future__ import annotations

import importlib
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import tomli_w

from generator.errors import InputError
from generator.models.pinned_defaults import Defaults
from generator.models.sizes_file import SIZES_FILE, read_sizes

MODELS = Path(__file__).resolve().parent.parent / "generator" / "models"
FOLDERS = ("llama", "mixtral", "gpt_oss", "deepseek_v3")  # the families with a sizes.toml
Edit = Callable[[dict[str, Any]], object]


def load(tmp_path: Path, folder: str, edit: Edit) -> dict[str, Defaults]:
    """The rows of a copy of `folder`'s sizes.toml that `edit` changed."""
    data = tomllib.loads((MODELS / folder / SIZES_FILE).read_text("utf-8"))
    edit(data)
    (tmp_path / SIZES_FILE).write_text(tomli_w.dumps(data), "utf-8")
    file, rows = read_sizes(str(tmp_path / "sizes.py"))
    assert file == str(tmp_path / SIZES_FILE)
    return rows


@pytest.mark.parametrize("folder", FOLDERS)
def test_each_shipped_file_reads_as_its_rows(tmp_path: Path, folder: str) -> None:
    """A copy read on its own gives the rows the family's sizes.py holds, each value of its type
    (4096 is not 4096.0, False is not 0) and each unset field None."""
    sizes = importlib.import_module(f"generator.models.{folder}.sizes")
    rows = load(tmp_path, folder, lambda data: None)
    assert rows == sizes.DEFAULTS and sizes.TABLE.rows is sizes.DEFAULTS
    assert f"generator/models/{folder}/{SIZES_FILE}" == sizes.SIZES_FILE
    for name, row in rows.items():
        typed = {key: (type(value), value) for key, value in row.fields.items()}
        assert typed == {k: (type(v), v) for k, v in sizes.DEFAULTS[name].fields.items()}


def llama_row(change: Callable[[dict[str, Any]], object]) -> Edit:
    return lambda data: change(data["llama-2-7b"])


def _set(key: str, value: object) -> Callable[[dict[str, Any]], object]:
    return lambda row: row.__setitem__(key, value)


def _set_field(key: str, value: object) -> Callable[[dict[str, Any]], object]:
    return lambda row: row["fields"].__setitem__(key, value)


@pytest.mark.parametrize(
    ("change", "entry", "said"),
    [
        (_set_field("hidden_size", [4096]), "llama-2-7b.fields.hidden_size", "got `array`"),
        (_set_field("rope_theta", {"a": 1}), "llama-2-7b.fields.rope_theta", "got `object`"),
        (_set("label", 7), "llama-2-7b.label", "Expected `str`"),
        (_set("unset", "sliding_window"), "llama-2-7b.unset", "Expected `array`"),
        (_set("fields", 3), "llama-2-7b.fields", "Expected `object`"),
        (_set("lable", "Llama 2"), "llama-2-7b", "unknown field `lable`"),
        (lambda row: row.pop("pinned"), "llama-2-7b", "missing required field `pinned`"),
        (_set_field("sliding_window", 4096), "llama-2-7b.unset", "both"),  # and in unset
    ],
    ids=["list", "table", "label", "unset", "fields", "unknown", "missing", "set-and-unset"],
)
def test_a_bad_row_is_refused_naming_file_entry_and_fix(
    tmp_path: Path, change: Callable[[dict[str, Any]], object], entry: str, said: str
) -> None:
    """A row of the wrong type, with an unknown or missing key, or a field both given a value
    and unset (which made it None silently: unset won) is one InputError."""
    with pytest.raises(InputError) as caught:
        load(tmp_path, "llama", llama_row(change))
    error = caught.value
    assert (error.file, error.entry) == (str(tmp_path / SIZES_FILE), entry), error.render()
    assert said in error.problem and error.fix and "\n" not in error.problem


def test_a_size_that_is_not_a_table_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError) as caught:
        load(tmp_path, "mixtral", lambda data: data.__setitem__("mixtral-8x7b", 3))
    assert caught.value.entry == "mixtral-8x7b" and caught.value.fix


def test_a_row_missing_a_field_the_spec_needs_is_refused(tmp_path: Path) -> None:
    """A field left out of a row (hidden_size) stopped the import with a KeyError traceback."""
    from generator.models.llama.sizes import SIZES_FILE as LLAMA_FILE
    from generator.models.llama.sizes import TABLE

    rows = load(tmp_path, "llama", llama_row(lambda row: row["fields"].pop("hidden_size")))
    with pytest.raises(InputError) as caught:
        TABLE.spec("llama-2-7b", rows["llama-2-7b"])
    error = caught.value
    assert (error.file, error.entry) == (LLAMA_FILE, "llama-2-7b.hidden_size"), error.render()
    assert "missing" in error.problem and "unset" in (error.fix or "")

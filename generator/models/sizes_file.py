"""A family's sizes as data: the sizes.toml beside its sizes.py, one table per size holding a
transformers config class's defaults under transformers' own field names (`Defaults`).

    ["mistral-7b-v0.1"]
    config_class = "MistralConfig"
    label = "Mistral 7B v0.1"
    pinned = "mistral.config-defaults"  # the excerpt of the class's default lines
    unset = ["head_dim"]  # the fields whose default is None, which TOML cannot write

    ["mistral-7b-v0.1".fields]
    hidden_size = 4096

One typed schema (msgspec, through generator/data_file.py), so a wrong type, a missing or unknown
key, bad TOML, a field both set and unset or a file that is not a small regular file is one
InputError naming the file, the entry and the fix. What each value must be (a whole number, a
flag) is checked when the row is read (hf_reader.py), and against the pinned lines (hf_sizes.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeAlias, cast

import msgspec

from generator.data_file import convert, read_data
from generator.errors import InputError
from generator.models.pinned_defaults import Defaults

Scalar: TypeAlias = int | float | bool | str  # a field's value; None is written as unset
SIZES_FILE = "sizes.toml"
ROOT = Path(__file__).resolve().parents[2]  # the project folder: files are named from it
FIX = (
    "write each size as the schema in generator/models/sizes_file.py says (config_class, label,"
    " pinned, unset and a table of fields), or restore it from git"
)


class SizeRow(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    config_class: str  # "LlamaConfig": the transformers class whose defaults the row holds
    label: str  # the name a page prints
    pinned: str  # the id of the pinned excerpt of the class's default lines (sources/lock.toml)
    fields: dict[str, Any]  # transformers' field name -> default value, each a Scalar
    unset: tuple[str, ...] = ()  # the fields whose default is None


def read_sizes(module: str) -> tuple[str, dict[str, Defaults]]:
    """The sizes.toml beside `module` (a family's sizes.py): its name as errors give it, and its
    rows by size name, in the file's order, each unset field's value None."""
    path = Path(module).resolve().with_name(SIZES_FILE)
    file = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else str(path)
    table: dict[str, Any] = read_data(path, dict[str, Any], fix=FIX, name=file)
    return file, {name: _defaults(name, data, file) for name, data in table.items()}


def _defaults(name: str, data: Any, file: str) -> Defaults:
    row = convert(data, SizeRow, file=file, fix=FIX, entry=name)
    fields = {  # one by one, so that an error names the field (msgspec names none in a dict)
        key: convert(
            value, cast(type[Scalar], Scalar), file=file, fix=FIX, entry=f"{name}.fields.{key}"
        )
        for key, value in row.fields.items()
    }
    for key in row.unset:
        if key in fields:
            raise InputError(
                f"{key} is both given a value in fields and unset (None)",
                file=file,
                entry=f"{name}.unset",
                fix=f"keep {key} in fields or in unset, not both: unset if transformers' default"
                " is None",
            )
    return Defaults(row.config_class, row.label, {**fields, **dict.fromkeys(row.unset)}, row.pinned)

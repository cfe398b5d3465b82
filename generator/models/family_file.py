"""A family's declarative part, read from its folder's family.toml: its name, the words of its
rows, its architecture map, its components' prose, formulas and evidence. One typed schema
(msgspec), so a wrong type, a missing or unknown key, bad TOML or a file that is not a small
regular file is one InputError naming the file, the entry (`components[3].formula`) and the fix.

A family may take components from one loaded before it (`borrow = "llama"`): `order` lists its
registry's keys, each one of its own [[components]] or, if it has none by that key, the
borrowed family's, shown on that family's page (Component.borrowed; `borrowed_roles` gives one
its own words). TeX is written in TOML literal strings ('...' or '''...'''), backslashes kept.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import NoReturn

import msgspec

from generator.data_file import read_data
from generator.errors import InputError
from generator.models.component import Component
from generator.models.counts import Words
from generator.models.map import MapLayout

FAMILY_FILE = "family.toml"
FIX = (
    "write it as the schema in generator/models/family_file.py says (the fields of Component,"
    " Words and MapLayout), or restore it from git"
)


class FamilyFile(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    name: str  # "llama": the `family` of each of its sizes
    label: str  # "Llama": the name a page prints
    words: Words
    map: MapLayout
    components: tuple[Component, ...]  # its own, in forward order
    # why a component without parameters of its own has none, by key (its page says it)
    no_params: dict[str, str] = {}
    borrow: str | None = None  # the family loaded before it whose components `order` may name
    order: tuple[str, ...] = ()  # the registry's keys in forward order (with `borrow`)
    borrowed_roles: dict[str, str] = {}  # a borrowed component's own role, by key


def read_family_file(path: Path) -> FamilyFile:
    """The family.toml at `path`, checked against the schema (an InputError otherwise)."""
    return read_data(path, FamilyFile, fix=FIX)


def registry(
    data: FamilyFile, loaded: Mapping[str, tuple[Component, ...]], path: Path
) -> tuple[Component, ...]:
    """Its components in forward order: its own, and those `order` borrows from `data.borrow`
    (`loaded`: the registries of the families loaded before it, by name)."""
    if data.borrow is None:
        if data.order or data.borrowed_roles:
            raise InputError(
                "order and borrowed_roles need borrow",
                file=str(path),
                entry="borrow",
                fix=f"name the family they borrow from: {', '.join(loaded)}",
            )
        return data.components
    if data.borrow not in loaded:
        raise InputError(
            f"borrows from {data.borrow!r}, not a family loaded before it",
            file=str(path),
            entry="borrow",
            fix=f"use one of: {', '.join(loaded)}",
        )
    own = {c.key: c for c in data.components}
    theirs = {c.key: c for c in loaded[data.borrow]}
    _check_order(data, own, theirs, path)
    return tuple(
        own[key] if key in own else theirs[key].borrowed(data.borrowed_roles.get(key))
        for key in data.order
    )


def _check_order(
    data: FamilyFile, own: Mapping[str, Component], theirs: Mapping[str, Component], path: Path
) -> None:
    """An InputError unless `order` names each of its own components, and otherwise only the
    borrowed family's; borrowed_roles only borrowed ones. (Family checks that no key repeats.)"""
    for index, key in enumerate(data.order):
        if key not in own and key not in theirs:
            _refuse(
                path,
                f"order[{index}]",
                f"{key!r} is neither a component of this file nor of {data.borrow}",
                f"add a [[components]] entry with key = {key!r}, or remove it",
            )
    for key in own:
        if key not in data.order:
            _refuse(path, "order", f"lacks {key!r}, one of its [[components]]", "add it")
    for key in data.borrowed_roles:
        if key in own or key not in data.order:
            _refuse(
                path,
                f"borrowed_roles.{key}",
                f"{key!r} is not a component it borrows",
                "give roles to keys of order that have no [[components]] entry here",
            )


def _refuse(path: Path, entry: str, problem: str, fix: str) -> NoReturn:
    raise InputError(problem, file=str(path), entry=entry, fix=fix)

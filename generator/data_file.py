"""The site's declarative tables, read from TOML beside the code that uses them: one typed
loader (msgspec), so a wrong type, a missing or unknown key, bad TOML or a file that is not a
small regular file is one InputError naming the file, the entry (`terms[3].pattern`) and the fix.

    TERMS = read_data(Path(__file__).with_name("glossary.toml"), GlossaryFile, fix=FIX).terms

TeX and regular expressions are written in TOML literal strings ('...' or '''...'''), their
backslashes kept. Numbers the code computes are never written here: a text names them with a
placeholder its module fills.
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable, Collection, Iterable, Sequence
from pathlib import Path
from typing import TypeVar

import msgspec

from generator.checked_io import read_text_input
from generator.errors import InputError

T = TypeVar("T")
MAX_BYTES = 256 << 10  # the largest is about 16 KB


def read_data(path: Path, schema: type[T], *, fix: str) -> T:
    """The TOML file at `path` (a regular file of at most MAX_BYTES) as a `schema`; an InputError
    naming the file, the entry and `fix` if it is not one."""
    text = read_text_input(path, max_bytes=MAX_BYTES, fix=fix)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise InputError(f"is not valid TOML ({error})", file=str(path), fix=fix) from None
    try:
        return msgspec.convert(data, schema)
    except msgspec.ValidationError as error:
        problem, _, where = str(error).partition(" - at `$")
        entry = where.removesuffix("`").removeprefix(".") or None
        raise InputError(problem, file=str(path), entry=entry, fix=fix) from None


def keyed(
    entries: Sequence[T], key: Callable[[T], str], *, path: Path, entry: str, fix: str
) -> dict[str, T]:
    """{key: entry} in the file's order; an InputError naming `entry[i]` if a key repeats (a dict
    would keep the last one silently)."""
    found: dict[str, T] = {}
    for index, item in enumerate(entries):
        name = key(item)
        if name in found:
            raise InputError(
                f"{name!r} repeats", file=str(path), entry=f"{entry}[{index}]", fix=fix
            )
        found[name] = item
    return found


def one_of(
    names: Iterable[str], known: Collection[str], *, what: str, path: Path, entry: str
) -> None:
    """An InputError naming `entry` for the first of `names` that is not `what` (one of `known`):
    an entry naming another (a matrix, a placeholder) that does not exist."""
    for name in names:
        if name not in known:
            raise InputError(
                f"{name!r} is not {what}",
                file=str(path),
                entry=entry,
                fix=f"use one of: {', '.join(known)}",
            )

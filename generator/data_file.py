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


def read_data(
    path: Path, schema: type[T], *, fix: str, name: str | None = None, max_bytes: int = MAX_BYTES
) -> T:
    """The TOML file at `path` (a regular file of at most `max_bytes`) as a `schema`; an
    InputError naming the file (as `name`, if given), the entry and `fix` if it is not one."""
    file = name or str(path)
    try:
        text = read_text_input(path, max_bytes=max_bytes, fix=fix)
        data = tomllib.loads(text)
    except InputError as error:
        raise InputError(error.problem, file=file, fix=fix) from None
    except tomllib.TOMLDecodeError as error:
        raise InputError(f"is not valid TOML ({error})", file=file, fix=fix) from None
    except RecursionError:  # tomllib recurses once per nested [ or {
        raise InputError("is nested too deeply to be read", file=file, fix=fix) from None
    return convert(data, schema, file=file, fix=fix)


def convert(data: object, schema: type[T], *, file: str, fix: str, entry: str = "") -> T:
    """`data` (read from `file`, at `entry` in it) as a `schema`, or an InputError naming the
    entry msgspec found wrong (a table of tables converts each with its key as `entry`: msgspec
    names a dict's entries "[...]")."""
    try:
        return msgspec.convert(data, schema)
    except msgspec.ValidationError as error:
        problem, marker, where = str(error).rpartition(" - at `$")  # the last: a key may hold one
        if not marker:
            problem, where = str(error), ""
        inner = where.removesuffix("`").removeprefix(".")
        joined = f"{entry}{'' if inner.startswith('[') else '.'}{inner}" if entry and inner else ""
        raise InputError(
            problem, file=file, entry=joined or inner or entry or None, fix=fix
        ) from None


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

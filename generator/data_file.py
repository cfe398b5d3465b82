"""The site's declarative tables, read from TOML beside the code that uses them: one typed
loader (msgspec), so a wrong type, a missing or unknown key, bad TOML or a file that is not a
small regular file is one InputError naming the file, the entry (`terms[3].pattern`) and the fix.

    TERMS = read_data(Path(__file__).with_name("glossary.toml"), GlossaryFile, fix=FIX).terms

TeX and regular expressions are written in TOML literal strings ('...' or '''...'''), their
backslashes kept. Numbers the code computes are never written here: a text names them with a
placeholder its module fills.

A text leaves its file long before some errors are found in it: KaTeX typesets a page's math
once the page is whole. So every string read is remembered with its file and entry, and
`written_in(formula)` tells where a formula is written (the page only shows it).
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TypeVar

import msgspec

from generator.checked_io import read_text_input
from generator.errors import InputError

T = TypeVar("T")
MAX_BYTES = 256 << 10  # the largest is about 16 KB
# file -> (entry, text) of each string read from it: the last reading of each file. Not cleared
# per build: the modules read their files once, at import, and an edited file is code that
# `mkdocs serve` imports anew (generator/plugin.py), this module with it.
_TEXTS: dict[str, list[tuple[str, str]]] = {}


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
    typed = convert(data, schema, file=file, fix=fix)
    _TEXTS[file] = list(_strings(data, ""))
    return typed


def _strings(value: object, entry: str) -> Iterator[tuple[str, str]]:
    """(entry, text) of each string in a TOML document, entries named as errors name them."""
    if isinstance(value, str):
        yield entry, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(item, f"{entry}.{key}" if entry else key)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _strings(item, f"{entry}[{index}]")


def written_in(formula: str) -> tuple[str, str] | None:
    """(file, entry) of the first string read by read_data that holds `formula` whole: the
    string alone (a `formula` or `tex` field) or between math delimiters ($…$, \\(…\\), \\[…\\])
    in Markdown. None if no data file holds it: it is written in the page. A formula with a
    [[placeholder]] inside is not found (the page shows it filled); none is written so."""
    alone = re.escape(formula.strip())
    whole = re.compile(rf"(?:\A|\$|\\[(\[])\s*{alone}\s*(?:\Z|\$|\\[)\]])")
    for file, texts in tuple(_TEXTS.items()):  # the typesetter's thread asks
        for entry, text in texts:
            if whole.search(text):
                return file, entry
    return None


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

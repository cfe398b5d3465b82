"""Reading a pin lock: `load_lock` parses and validates, every problem an InputError naming
the file, the entry and the fix.

msgspec checks the keys and the types (lockschema.py's structs, `forbid_unknown_fields`); its
complaint, "Expected `int`, got `str` - at `$.excerpts[3].lines[0][1]`", is told in the lock's
own terms here (`_type_error`: the excerpt's id, "lines[0][1]: expected a whole number", and
what to write). The rules between values stay ours (lockrules.py).
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import msgspec

from generator.checked_io import utf8_text
from generator.errors import InputError
from generator.sources.gitobjects import CommitProof
from generator.sources.lockrules import (
    CARRIED_EXAMPLE,
    check_claim,
    check_file,
    check_file_in_commit,
    check_mirror,
    check_mirror_placements,
    check_proof,
    parse_pin,
    parse_repo,
)
from generator.sources.lockschema import (
    EVIDENCE_LEVELS,
    MAX_TEXT_BYTES,
    SECTIONS,
    CarriedBy,
    Lock,
    LockFile,
    Mirror,
    Repo,
    RepoTable,
    display_path,
)
from generator.sources.ranges import Fail, failing, format_ranges, parse_line_spec
from generator.store import read_regular

# what other folders of the generator read from here (and EVIDENCE_LEVELS, which every lock's
# header points to here)
__all__ = [
    "EVIDENCE_LEVELS",
    "MAX_TEXT_BYTES",
    "Lock",
    "Mirror",
    "Repo",
    "format_ranges",
    "load_lock",
    "parse_line_spec",
]


READ_FIX = "name a regular UTF-8 TOML lock file (the plugin's `lock` option, or --lock PATH)"


def load_lock(path: Path, *, root: Path | None = None) -> Lock:
    """Read and validate a lock file (a regular UTF-8 file, at most MAX_TEXT_BYTES: a FIFO, a
    device or a folder is refused without waiting). Raises InputError naming the entry and the
    fix; `root` (the site's folder) shortens the file's name in messages."""
    path = Path(path)
    file = display_path(path, root)
    try:
        data = read_regular(path, max_bytes=MAX_TEXT_BYTES)
    except FileNotFoundError:
        raise InputError(
            "lock file not found",
            file=file,
            fix="create it with `itm pin` (run in the site's folder, or pass --lock PATH), or"
            " point the plugin's `lock` option at the site's lock",
        ) from None
    except OSError as error:
        raise InputError(
            f"cannot read the lock: {error.strerror or error}", file=file, fix=READ_FIX
        ) from None
    fix = "save it as UTF-8, or restore it from git (`git checkout -- <lock>`)"
    return parse_lock(utf8_text(data, file=file, fix=fix), path, display=file)


def parse_lock(text: str, path: Path, *, display: str | None = None) -> Lock:
    file = display or display_path(path)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise InputError(
            f"not valid TOML: {error}", file=file, fix="fix the syntax at that line"
        ) from None
    except RecursionError:  # tomllib reads nested arrays and tables by recursion
        raise InputError(
            "not valid TOML for a lock: arrays or tables nested too deeply to read",
            file=file,
            fix="a lock nests lists two deep (lines = [[69, 112]]): restore it as `itm pin` wrote it",
        ) from None

    fail = failing(file)
    return checked_lock(_typed(data, fail), fail, path=path, display=file)


def checked_lock(typed: LockFile, fail: Fail, *, path: Path, display: str) -> Lock:
    """The Lock the typed tables make, every rule between values and entries checked."""
    if typed.version != 1:
        raise fail("version", f"unsupported lock version {typed.version!r}", "set version = 1")
    repos = {name: parse_repo(name, table, fail) for name, table in typed.repos.items()}
    for mirror in typed.mirrors:
        check_mirror(mirror, repos, fail)
    check_mirror_placements(typed.mirrors, fail)

    pins = tuple(parse_pin(table, repos, fail) for table in typed.excerpts)
    for i, pin in enumerate(pins):
        if any(p.id == pin.id for p in pins[:i]):
            raise fail(
                pin.id,
                "duplicate excerpt id (ids must be unique: pages cite them)",
                "rename one of the entries, or delete the duplicate",
            )
    for i, found in enumerate(typed.files):
        check_file(found, repos, fail)
        if any((f.repo, f.path) == (found.repo, found.path) for f in typed.files[:i]):
            raise fail(
                f"files {found.repo} {found.path}",
                "the file is listed twice",
                "delete the duplicate [[files]] entry",
            )
    commits = tuple(CommitProof(c.repo, c.commit, c.object, c.trees) for c in typed.commits)
    for i, proof in enumerate(commits):
        check_proof(proof, repos, fail)
        if any(c.repo == proof.repo for c in commits[:i]):
            raise fail(
                f"commits {proof.repo}",
                "the repo's commit is recorded twice",
                "keep one [[commits]] entry a repo: the one of its pinned commit",
            )
    for found in typed.files:
        check_file_in_commit(found, commits, fail)
    excerpt_ids = {p.id for p in pins}
    for i, claim in enumerate(typed.claims):
        check_claim(claim, excerpt_ids, fail)
        if any(c.id == claim.id for c in typed.claims[:i]):
            raise fail(
                f"claims {claim.id}",
                "the claim is approved twice",
                "keep one [[claims]] entry an id (`itm claim approve` writes it)",
            )
    return Lock(
        path=path,
        repos=repos,
        mirrors=typed.mirrors,
        pins=pins,
        files=typed.files,
        commits=commits,
        claims=typed.claims,
        display=display,
    )


# ------------------------------------------------ keys and types: msgspec's word, made ours

_STEP = re.compile(r"\.(\w+)|\[(\d+|\.\.\.)\]")  # one step of msgspec's path: .key or [index]
_EXAMPLES = {  # what to write for a key, where '"..."' (a string) would not say enough
    "version": "version = 1",
    "commit": 'commit = "<40 hex>", the full id of the commit it names (`git rev-parse COMMIT`)',
    "lines": "lines = [[69, 112]] or lines = [[185, 191], [204, 224]]",
    "offset": "offset = 2 (or 0)",
    "trees": "trees = ['''...''', ...]",
}


def _typed(data: dict[str, object], fail: Fail) -> LockFile:
    """The TOML's tables as typed structs; an unknown key, a missing one or a value of the wrong
    type is an InputError naming the entry (as the rules below name it) and the fix."""
    keys = LockFile.__struct_encode_fields__
    unknown = sorted(set(data) - set(keys))  # here, not from msgspec: see below
    if unknown:
        raise fail(
            "top level", f"unknown key {unknown[0]!r}", f"use only these keys: {', '.join(keys)}"
        )
    try:
        return msgspec.convert(data, type=LockFile)
    except msgspec.ValidationError as error:
        # "... - at `$.excerpts[0]`": a path holds no text of the lock's (a repo's name is
        # `[...]`), but a key's name may hold " - at `$", which is why the top level's
        # unknown key, told with no path, is found above
        message, _, at = str(error).rpartition(" - at `$")
        steps = [key or f"[{index}]" for key, index in _STEP.findall(at.rstrip("`"))]
        raise _type_error(message, steps, data, fail) from None


def _type_error(message: str, steps: list[str], data: dict[str, object], fail: Fail) -> InputError:
    """msgspec's "Expected `str`, got `int` - at `$.excerpts[3].lines`" as the lock's error."""
    unknown = re.fullmatch(r"Object contains unknown field `(.*)`", message, re.S)
    missing = re.fullmatch(r"Object missing required field `(.*)`", message, re.S)
    section, *inside = steps
    if not inside:
        fix = (
            'write each as [repos."OWNER/NAME"]'
            if section == "repos"
            else f"write {_example(section)}"
            if section == "version"
            else f"write each entry as [[{section}]]"
        )
        return fail(section, _in_toml_words(message), fix)
    entry = _entry_name(section, inside[0].strip("[]"), data)
    kind = CarriedBy if "carried_by" in inside else SECTIONS[section]
    keys = ", ".join(kind.__struct_encode_fields__)
    where = ".".join(inside[1:]).replace(".[", "[")
    if unknown:
        problem, fix = f"unknown key {unknown.group(1)!r}", f"use only these keys: {keys}"
    elif missing:
        key = missing.group(1)
        problem, fix = f"missing {key!r}", f"add {_example(key)} to the entry"
    elif not where:
        problem = "expected a table"
        fix = f"write it as a table with the keys {keys} (as `itm pin` writes them)"
    else:
        problem, fix = _in_toml_words(message), f"write {_example(inside[1])}"
    if kind is CarriedBy:
        fix = CARRIED_EXAMPLE
    return fail(entry, f"{where}: {problem}" if where else problem, fix)


def _example(key: str) -> str:
    return _EXAMPLES.get(key, f'{key} = "..."')


_TOML_WORDS = {"object": "table", "array": "list", "str": "string", "int": "whole number"}


def _in_toml_words(message: str) -> str:
    """ "Expected `array | null`, got `str`" -> "expected a list, got a string": TOML's words."""

    def kind(found: re.Match[str]) -> str:
        names = [_TOML_WORDS.get(n, n) for n in found.group(1).split(" | ") if n != "null"]
        return "a " + " or ".join(names)

    message = message.replace("`array` of length >= 1", "a non-empty list")
    return re.sub(r"`([^`]*)`", kind, message[:1].lower() + message[1:])


def _entry_name(section: str, step: str, data: dict[str, object]) -> str:
    """How the rules name an entry: "repos.OWNER/NAME", an excerpt's id, "claims ID", or the
    table's place ("files[2]"). msgspec says `repos[...]`: the first repo that fails is the one."""
    tables = data[section]
    if isinstance(tables, dict):
        for name, table in tables.items():
            try:
                msgspec.convert(table, type=RepoTable)
            except msgspec.ValidationError:
                return f"repos.{name}"
    table = tables[int(step)] if isinstance(tables, list) else None
    named = table.get("id") if isinstance(table, dict) else None
    if isinstance(named, str) and named and section in ("excerpts", "claims"):
        return named if section == "excerpts" else f"claims {named}"
    return f"{section}[{step}]"

"""Writing a pin lock in its canonical form (what `itm pin`, `itm bump`, `itm verify
--raise-evidence`, `itm claim` and `itm mirror add` write); `load_lock(dump_lock(x))` gives x."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import msgspec
import tomli_w

from generator.checked_io import write_output
from generator.sources.forges import default_forge
from generator.sources.lock import parse_lock
from generator.sources.lockschema import Lock

_HEADER = """\
# Pinned upstream code excerpts (read by the pinned-excerpts MkDocs plugin and `itm` commands).
#
# Upstream code is never committed here: builds fetch these lines from a cache, a local git
# checkout, GitHub at the commit, or a registry mirror whose lines hash to the pin, and show
# them with the upstream line numbers below. Change this file with `itm pin` and `itm bump`
# (they rewrite it in this canonical form); check it with `itm verify`.
#
# files: a whole upstream file read at a commit (git or GitHub): its sha256 and its git blob
# id (sha1_git), which names it in Software Heritage (swh:1:cnt:<sha1_git>). Recorded by
# `itm pin`, `itm bump` and `itm verify --raise-evidence`; a build that reads the file checks
# both. An entry vouches only while its commit is the repo's commit.
#
# excerpts: lines are inclusive upstream line ranges at the repo's commit; symbol (when given)
# is the dotted Python name that resolves to those lines; sha256 covers the lines, each ending
# in "\\n". evidence_level is one of: upstream, file-hash, mirror-window (strongest first;
# see EVIDENCE_LEVELS in generator/sources/lock.py), and evidence says how the text was checked.
#
# mirrors: a registry archive vouches only for the upstream lines it lists (lines; all when
# absent) of the file at its commit (the repo's commit, or it vouches for nothing), found at
# upstream line + offset in its member file; any other placement is refused. A member whose
# runs moved by different amounts is listed once per offset.
#
# carried_by (a mirror-window excerpt's): the package's releases that have its lines byte for
# byte at the same numbers, as compared: every release from the first to the last of each
# window, except those listed. Readers' cards say exactly this, and no more.
#
# claims: a sentence or paragraph of a page (`/// claim | ID`) or of the site's own registry,
# approved as true of an excerpt whose text then had this sha256. When the text changes (`itm
# bump`) the build stops, naming the claim, until `itm claim approve ID` approves it again.
"""


def _toml(value: object) -> str:
    """A value as the canonical form spells it on one line: a string or a number as tomli-w
    writes it (TOML's own escapes), a list [a, b] and a table {key = value} inline. tomli-w would
    spread every list over lines and every table into a [section] (2,752 lines for 1,638)."""
    if isinstance(value, list | tuple):
        return f"[{', '.join(_toml(item) for item in value)}]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{key} = {_toml(item)}" for key, item in value.items()) + "}"
    return tomli_w.dumps({"v": value})[len("v = ") : -1]


def _toml_text(value: str) -> str:
    """Text of many lines as a multi-line TOML string that reads back exactly: one line of the
    lock a line of text, escapes for quotes, backslashes and control characters (a tab too),
    and a line's trailing spaces spelled \\u0020 so that an editor trimming lines breaks nothing
    (tomli-w's multi-line strings keep tabs and trailing spaces raw, and turn \\r\\n into \\n)."""
    lines = []
    for line in value.split("\n"):
        escaped = _toml(line)[1:-1].replace("\t", "\\t")
        kept = escaped.rstrip(" ")
        lines.append(kept + "\\u0020" * (len(escaped) - len(kept)))
    return '"""\n' + "\n".join(lines) + '"""'


def _entry(header: str, table: Mapping[str, object]) -> str:
    return f"\n{header}\n" + "".join(f"{key} = {_toml(value)}\n" for key, value in table.items())


def dump_lock(lock: Lock) -> str:
    """The canonical text of a lock; load_lock(dump_lock(x)) gives x back. A struct's default
    values (a mirror's empty note, its lines when it vouches for the whole file) are left out."""
    out = [_HEADER, "\nversion = 1\n"]
    for repo in lock.repos.values():
        keys = {"url": repo.url, "commit": repo.commit, "license": repo.license}
        if repo.forge != default_forge(repo.url):
            keys["forge"] = repo.forge
        out.append(_entry(f"[repos.{_toml(repo.name)}]", keys))
    for proof in lock.commits:
        out.append(_entry("[[commits]]", {"repo": proof.repo, "commit": proof.commit}))
        out.append(f"object = {_toml_text(proof.text)}\n")
        trees = "".join(f"\n{_toml_text(tree)}," for tree in proof.trees)
        out.append(f"trees = [{trees}\n]\n")
    out += [_entry("[[files]]", msgspec.to_builtins(file)) for file in lock.files]
    out += [_entry("[[mirrors]]", msgspec.to_builtins(mirror)) for mirror in lock.mirrors]
    for pin in lock.pins:
        written = {  # as PinTable spells it, None left out
            "id": pin.id,
            "repo": pin.repo,
            "path": pin.path,
            "symbol": pin.symbol,
            "lines": pin.ranges or None,
            "sha256": pin.sha256,
            "evidence_level": pin.evidence_level,
            "evidence": pin.evidence,
            "carried_by": msgspec.to_builtins(pin.carried_by),
        }
        out.append(_entry("[[excerpts]]", {k: v for k, v in written.items() if v is not None}))
    out += [_entry("[[claims]]", msgspec.to_builtins(claim)) for claim in lock.claims]
    return "".join(out)


def write_lock(lock: Lock, path: Path | None = None) -> None:
    """Validate the new text, then replace the file atomically (temp file + os.replace)."""
    path = Path(path or lock.path)
    text = dump_lock(lock)
    parse_lock(text, path, display=lock.display)  # never write a lock that would not load
    write_output(path, text.encode("utf-8"))

"""The pin lock's schema: its tables as typed structs, and the Lock value they make.

A site's lock file (sources/lock.toml here) says which upstream lines a site may show, and
their hashes. Reading it: lock.py (the rules: lockrules.py); writing it: lockwrite.py.

The six tables are described where a reader of the lock sees them: its header
(lockwrite._HEADER), and each struct's docstring below.

A [[files]] or [[mirrors]] entry names the commit it was checked at, and vouches for that
commit only: when a repo's commit changes (by hand, or `itm bump`), evidence gathered at another
commit no longer counts (`Lock.file_id`, `Lock.vouches`), so no card links a commit nothing
checked. Where [[commits]] records the commit's objects, they must hash to the commit and name
the blob each [[files]] entry records: a commit id changed everywhere in the lock is caught too.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Annotated, TypeVar

import msgspec

from generator.errors import InputError
from generator.sources.gitobjects import CommitProof
from generator.sources.ranges import Range

T = TypeVar("T")

# How the text pinned in the lock was confirmed, strongest first. The site shows the
# description next to the excerpt and never claims more than the level says.
EVIDENCE_LEVELS: dict[str, str] = {
    "upstream": "read from the file at the pinned commit (git checkout or GitHub)",
    "file-hash": (
        "taken from the whole file rebuilt from registry copies, whose sha256 matches the hash"
        " recorded for the file at the pinned commit"
    ),
    "mirror-window": (
        "confirmed only indirectly: releases published on a package index carry these lines"
        " (carried_by names them); not checked against the file at the commit"
    ),
}

# A lock, or a trusted copy of an upstream file, is text: anything bigger is not what was meant.
MAX_TEXT_BYTES = 16 * 1024 * 1024


class _Table(msgspec.Struct, frozen=True, forbid_unknown_fields=True, omit_defaults=True):
    """A table of the lock as TOML spells it: msgspec checks its keys and their values' types
    (`_typed` turns its complaint into the entry and the fix); the rules between values are
    checked in lockrules.py."""


@dataclass(frozen=True)
class Repo:
    """An upstream repository pinned at one commit."""

    name: str  # "openai/gpt-2"
    url: str  # "https://github.com/openai/gpt-2": also its Software Heritage origin
    commit: str  # full 40-hex
    license: str
    forge: str = "github"  # github, gitlab, gitea or git (no web view): generator.sources.forges
    short: str = field(init=False)  # first 12 hex of the commit, as GitHub shows it

    def __post_init__(self) -> None:
        object.__setattr__(self, "short", self.commit[:12])


class RepoTable(_Table, frozen=True):
    """[repos."OWNER/REPO"]: the name is the table's key; forge only when the host does not say."""

    url: str
    commit: str
    license: str
    forge: str | None = None


class CommitTable(_Table, frozen=True):
    """[[commits]] as written: read into a gitobjects.CommitProof (its text is the key `object`)."""

    repo: str
    commit: str
    object: str
    trees: tuple[str, ...] = ()


class Mirror(_Table, frozen=True):
    """A package-registry archive holding verbatim lines of one upstream file at a commit."""

    repo: str
    commit: str  # the commit whose file its lines were compared with: it vouches for no other
    path: str  # upstream path the mirror stands in for
    package: str  # "gpt-2-finetuning"
    version: str  # "1.0.14"
    filename: str  # archive file name on the index
    sha256: str  # of the archive; checked against this, not only the index
    member: str  # path of the file inside the archive
    note: str = ""
    # upstream lines it carries verbatim; () (no key) means the whole file, an empty list nothing
    lines: Annotated[tuple[Range, ...], msgspec.Meta(min_length=1)] = ()
    offset: int = 0  # mirror line = upstream line + offset

    def carries(self, ranges: tuple[Range, ...]) -> bool:
        """Whether every range lies inside one of the upstream windows this mirror vouches for."""
        return not self.lines or all(
            any(a >= lo and b <= hi for lo, hi in self.lines) for a, b in ranges
        )

    @property
    def spec(self) -> str:
        return f"{self.package}=={self.version}"


class FileId(_Table, frozen=True):
    """A whole upstream file at a commit, as read once in full: its sha256 and its git blob id
    (sha1_git), which is the core of its Software Heritage id (SWHID)."""

    repo: str
    commit: str  # where it was read: the ids say nothing about the file at another commit
    path: str
    sha256: str  # of the file's bytes
    sha1_git: str  # git's blob id: sha1 of b"blob <size>\0" + the bytes
    evidence: str  # how the bytes were read (which command, from where)


class CarriedBy(_Table, frozen=True, rename={"excepted": "except"}):
    """The releases of a package on its index that have an excerpt's lines byte for byte at the
    same numbers, as compared (a "mirror-window" excerpt's evidence, for readers' cards)."""

    package: str  # "transformers"
    # windows of releases, first and last: every one has them
    releases: Annotated[tuple[tuple[str, str], ...], msgspec.Meta(min_length=1)]
    excepted: tuple[str, ...] = ()  # releases inside the windows that do not (key `except`)


@dataclass(frozen=True)
class Pin:
    """One [[excerpts]] entry as written in the lock (not yet resolved to text)."""

    id: str
    repo: str
    path: str
    symbol: str | None
    ranges: tuple[Range, ...]  # empty when only a symbol is given
    sha256: str
    evidence_level: str
    evidence: str
    carried_by: CarriedBy | None = None  # only for "mirror-window": which releases have the lines


class PinTable(_Table, frozen=True):
    """[[excerpts]] as written: read into a Pin (its lines are the Pin's ranges)."""

    id: str
    repo: str
    path: str
    evidence_level: str
    evidence: str
    symbol: str | None = None
    lines: Annotated[tuple[Range, ...], msgspec.Meta(min_length=1)] = ()  # () when absent
    sha256: str = ""  # missing: told how to record it (`itm pin`)
    carried_by: CarriedBy | None = None


class Claim(_Table, frozen=True):
    """A [[claims]] entry: a claim (a page's `/// claim | ID` block, or a Source of this site's
    component registry) approved as true of an excerpt's text, whose sha256 it records."""

    id: str
    excerpt: str
    sha256: str  # of the excerpt's text when the claim was approved


class LockFile(_Table, frozen=True):
    """The whole file, each table in the order the canonical form writes them."""

    version: int = 1
    repos: dict[str, RepoTable] = msgspec.field(default_factory=dict)
    commits: tuple[CommitTable, ...] = ()
    files: tuple[FileId, ...] = ()
    mirrors: tuple[Mirror, ...] = ()
    excerpts: tuple[PinTable, ...] = ()
    claims: tuple[Claim, ...] = ()


SECTIONS: dict[str, type[msgspec.Struct]] = {
    "repos": RepoTable,
    "commits": CommitTable,
    "files": FileId,
    "mirrors": Mirror,
    "excerpts": PinTable,
    "claims": Claim,
}


@dataclass(frozen=True)
class Lock:
    """A lock's entries, checked (lock.py reads them); empty, the lock `itm pin` starts."""

    path: Path
    repos: dict[str, Repo] = field(default_factory=dict)
    mirrors: tuple[Mirror, ...] = ()
    pins: tuple[Pin, ...] = ()
    files: tuple[FileId, ...] = ()
    commits: tuple[CommitProof, ...] = ()  # at most one a repo
    claims: tuple[Claim, ...] = ()
    display: str = ""  # the path as messages show it (relative to the site when inside it)

    def __post_init__(self) -> None:
        if not self.display:
            object.__setattr__(self, "display", display_path(self.path))

    def pin(self, excerpt_id: str) -> Pin:
        for pin in self.pins:
            if pin.id == excerpt_id:
                return pin
        raise InputError(
            "no excerpt with this id",
            file=self.display,
            entry=excerpt_id,
            fix=f"use one of: {', '.join(p.id for p in self.pins)}"
            if self.pins
            else "the lock has no excerpts yet: add one with `itm pin`",
        )

    def mirrors_for(self, repo: str, path: str) -> tuple[Mirror, ...]:
        """Every mirror of the file, whichever commit it vouches for (see `vouches`)."""
        return tuple(m for m in self.mirrors if m.repo == repo and m.path == path)

    def vouches(self, evidence: Mirror | FileId | CommitProof) -> bool:
        """Whether a [[mirrors]], [[files]] or [[commits]] entry is of its repo's pinned commit."""
        return evidence.commit == self.repos[evidence.repo].commit

    def proof(self, repo: str) -> CommitProof | None:
        """git's objects of the repo's pinned commit, when [[commits]] records them."""
        found = next((c for c in self.commits if c.repo == repo), None)
        return found if found is not None and self.vouches(found) else None

    def file_id(self, repo: str, path: str) -> FileId | None:
        """The whole file's recorded ids at the repo's pinned commit, when it has been read there
        in full (an entry read at another commit says nothing about this one)."""
        found = self.recorded_file(repo, path)
        return found if found is not None and self.vouches(found) else None

    def recorded_file(self, repo: str, path: str) -> FileId | None:
        """The file's [[files]] entry, at whichever commit it was read."""
        return next((f for f in self.files if f.repo == repo and f.path == path), None)

    def evidence(self, repo: str) -> list[CommitProof | FileId | Mirror]:
        """The repo's [[commits]], [[files]] and [[mirrors]] entries: each of one commit."""
        entries: list[CommitProof | FileId | Mirror] = [*self.commits, *self.files, *self.mirrors]
        return [e for e in entries if e.repo == repo]

    def with_proof(self, new: CommitProof) -> Lock:
        """A copy with `new` replacing the repo's [[commits]] entry, or appended."""
        kept = tuple(c for c in self.commits if c.repo != new.repo)
        return replace(self, commits=(*kept, new))

    def with_file(self, new: FileId) -> Lock:
        """A copy with `new` replacing the entry of the same file, or appended."""
        return replace(self, files=_put(self.files, new, lambda f: (f.repo, f.path)))

    def claims_about(self, excerpt_id: str) -> tuple[Claim, ...]:
        """The approved claims about one excerpt."""
        return tuple(c for c in self.claims if c.excerpt == excerpt_id)

    def with_claim(self, new: Claim) -> Lock:
        """A copy with `new` replacing the claim of the same id, or appended."""
        return replace(self, claims=_put(self.claims, new, lambda c: c.id))

    def with_pin(self, new: Pin) -> Lock:
        """A copy with `new` replacing the pin of the same id, or appended."""
        return replace(self, pins=_put(self.pins, new, lambda p: p.id))


def _put(entries: tuple[T, ...], new: T, key: Callable[[T], object]) -> tuple[T, ...]:
    """`entries` with `new` in place of the entry of its key, or appended."""
    if all(key(e) != key(new) for e in entries):
        return (*entries, new)
    return tuple(new if key(e) == key(new) else e for e in entries)


def display_path(path: Path, root: Path | None = None) -> str:
    """The path as a reader would type it: relative to `root` (the site's folder) or else to the
    current folder when inside it, absolute otherwise."""
    resolved = Path(path).absolute()
    for base in (root, Path.cwd()):
        if base is None:
            continue
        try:
            return resolved.relative_to(Path(base).absolute()).as_posix()
        except ValueError:
            continue
    return str(resolved)

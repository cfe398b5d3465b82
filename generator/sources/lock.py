"""The pin lock (a site's lock file, sources/lock.toml here): which upstream lines a site may
show, and their hashes.

One file, six tables:
  [repos."OWNER/REPO"]  url (its forge's page, or any git URL), full 40-hex commit, license,
                        forge when the host does not say it (generator/sources/forges.py)
  [[commits]]           git's own objects for a repo's commit: the commit's text and the trees
                        down to each recorded file, so the commit is checked with no clone
  [[files]]             a whole upstream file read at a commit: its sha256 and git blob id
                        (sha1_git, the core of its Software Heritage id), and how they were read
  [[mirrors]]           a registry archive that carries verbatim lines of an upstream file at a
                        commit (optional lines = upstream windows it vouches for, offset = shift)
  [[excerpts]]          id, repo, path, lines and/or symbol, sha256 of the text, evidence (and,
                        checked only in registry copies, carried_by: the releases that have them)
  [[claims]]            a writer's sentence about an excerpt, approved against its text (sha256):
                        when the text changes the claim must be approved again (`itm claim`)

A [[files]] or [[mirrors]] entry names the commit it was checked at, and vouches for that
commit only: when a repo's commit changes (by hand, or `itm bump`), evidence gathered at another
commit no longer counts (`Lock.file_id`, `Lock.vouches`), so no card links a commit nothing
checked. Where [[commits]] records the commit's objects, they must hash to the commit and name
the blob each [[files]] entry records: a commit id changed everywhere in the lock is caught too.

`load_lock` parses and validates; every problem is an InputError naming the file, the entry
and the fix. msgspec checks the keys and the types (the structs below, `forbid_unknown_fields`);
its complaint, "Expected `int`, got `str` - at `$.excerpts[3].lines[0][1]`", is told in the
lock's own terms (`_type_error`: the excerpt's id, "lines[0][1]: expected a whole number", and
what to write). The rules between values stay ours: an author editing a lock by hand needs
"line range 70-60 is reversed (empty)" with "write the first line first: [60, 70]", and the
`itm pin` command that writes the entry for them. `dump_lock` writes the same canonical text
back (used by `itm pin` / `itm bump`).
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Annotated

import msgspec
import tomli_w

from generator.checked_io import write_output
from generator.errors import InputError
from generator.sources.forges import ForgeError, check_repo, default_forge, valid_name
from generator.sources.gitobjects import CommitProof, ProofError
from generator.store import read_regular

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

Range = tuple[int, int]  # first and last line, 1-based, inclusive
# (entry, problem, fix) -> the error to raise, naming the lock's file (or a command's flag)
Fail = Callable[[str, str, str], InputError]

_HEX40 = re.compile(r"[0-9a-f]{40}")
_HEX64 = re.compile(r"[0-9a-f]{64}")
_EXCERPT_ID = re.compile(r"[a-z0-9][a-z0-9._-]*")
_SYMBOL = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")
CLAIM_ID = re.compile(r"[a-z0-9][a-z0-9._/-]*")
_VERSION = re.compile(r"[A-Za-z0-9][A-Za-z0-9.+!_-]*")


class _Table(msgspec.Struct, frozen=True, forbid_unknown_fields=True, omit_defaults=True):
    """A table of the lock as TOML spells it: msgspec checks its keys and their values' types
    (`_typed` turns its complaint into the entry and the fix); the rules between values are
    checked below, in Python."""


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


class _RepoTable(_Table, frozen=True):
    """[repos."OWNER/REPO"]: the name is the table's key; forge only when the host does not say."""

    url: str
    commit: str
    license: str
    forge: str | None = None


class _CommitTable(_Table, frozen=True):
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


class _PinTable(_Table, frozen=True):
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


class _LockFile(_Table, frozen=True):
    """The whole file, each table in the order the canonical form writes them."""

    version: int = 1
    repos: dict[str, _RepoTable] = msgspec.field(default_factory=dict)
    commits: tuple[_CommitTable, ...] = ()
    files: tuple[FileId, ...] = ()
    mirrors: tuple[Mirror, ...] = ()
    excerpts: tuple[_PinTable, ...] = ()
    claims: tuple[Claim, ...] = ()


_SECTIONS: dict[str, type[msgspec.Struct]] = {
    "repos": _RepoTable,
    "commits": _CommitTable,
    "files": FileId,
    "mirrors": Mirror,
    "excerpts": _PinTable,
    "claims": Claim,
}


@dataclass(frozen=True)
class Lock:
    path: Path
    repos: dict[str, Repo]
    mirrors: tuple[Mirror, ...]
    pins: tuple[Pin, ...]
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
        same = (new.repo, new.path)
        files = [new if (f.repo, f.path) == same else f for f in self.files]
        if self.recorded_file(*same) is None:
            files.append(new)
        return replace(self, files=tuple(files))

    def claims_about(self, excerpt_id: str) -> tuple[Claim, ...]:
        """The approved claims about one excerpt."""
        return tuple(c for c in self.claims if c.excerpt == excerpt_id)

    def with_claim(self, new: Claim) -> Lock:
        """A copy with `new` replacing the claim of the same id, or appended."""
        claims = [new if c.id == new.id else c for c in self.claims]
        if new.id not in {c.id for c in self.claims}:
            claims.append(new)
        return replace(self, claims=tuple(claims))

    def with_pin(self, new: Pin) -> Lock:
        """A copy with `new` replacing the pin of the same id, or appended."""
        pins = [new if p.id == new.id else p for p in self.pins]
        if new.id not in {p.id for p in self.pins}:
            pins.append(new)
        return replace(self, pins=tuple(pins))


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


def format_ranges(ranges: tuple[Range, ...], dash: str = "–") -> str:
    """(185, 191), (204, 224) -> "185–191, 204–224"; a one-line range is just its number."""
    return ", ".join(str(a) if a == b else f"{a}{dash}{b}" for a, b in ranges)


# ---------------------------------------------------------------- loading and validation


def load_lock(path: Path, *, root: Path | None = None) -> Lock:
    """Read and validate a lock file (a regular UTF-8 file, at most MAX_TEXT_BYTES: a FIFO, a
    device or a folder is refused without waiting). Raises InputError naming the entry and the
    fix; `root` (the site's folder) shortens the file's name in messages."""
    path = Path(path)
    file = display_path(path, root)
    try:
        text = read_regular(path, max_bytes=MAX_TEXT_BYTES).decode("utf-8")
    except FileNotFoundError:
        raise InputError(
            "lock file not found",
            file=file,
            fix="create it with `itm pin` (run in the site's folder, or pass --lock PATH), or"
            " point the plugin's `lock` option at the site's lock",
        ) from None
    except (OSError, UnicodeDecodeError) as error:
        raise InputError(
            f"cannot read the lock: {getattr(error, 'strerror', None) or error}",
            file=file,
            fix="name a regular UTF-8 TOML lock file (the plugin's `lock` option, or --lock PATH)",
        ) from None
    return parse_lock(text, path, display=file)


def empty_lock(path: Path, *, root: Path | None = None) -> Lock:
    """An empty lock to be written at `path` (`itm pin` starts a site's lock with it)."""
    return Lock(path=Path(path), repos={}, mirrors=(), pins=(), display=display_path(path, root))


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

    def fail(entry: str, problem: str, fix: str) -> InputError:
        return InputError(problem, file=file, entry=entry, fix=fix)

    typed = _typed(data, fail)
    if typed.version != 1:
        raise fail("version", f"unsupported lock version {typed.version!r}", "set version = 1")
    repos = {name: _parse_repo(name, table, fail) for name, table in typed.repos.items()}
    for mirror in typed.mirrors:
        _check_mirror(mirror, repos, fail)
    _check_mirror_placements(typed.mirrors, fail)

    pins = tuple(_parse_pin(table, repos, fail) for table in typed.excerpts)
    for i, pin in enumerate(pins):
        if any(p.id == pin.id for p in pins[:i]):
            raise fail(
                pin.id,
                "duplicate excerpt id (ids must be unique: pages cite them)",
                "rename one of the entries, or delete the duplicate",
            )
    for i, found in enumerate(typed.files):
        _check_file(found, repos, fail)
        if any((f.repo, f.path) == (found.repo, found.path) for f in typed.files[:i]):
            raise fail(
                f"files {found.repo} {found.path}",
                "the file is listed twice",
                "delete the duplicate [[files]] entry",
            )
    commits = tuple(CommitProof(c.repo, c.commit, c.object, c.trees) for c in typed.commits)
    for i, proof in enumerate(commits):
        _check_proof(proof, repos, fail)
        if any(c.repo == proof.repo for c in commits[:i]):
            raise fail(
                f"commits {proof.repo}",
                "the repo's commit is recorded twice",
                "keep one [[commits]] entry a repo: the one of its pinned commit",
            )
    for found in typed.files:
        _check_file_in_commit(found, commits, fail)
    excerpt_ids = {p.id for p in pins}
    for i, claim in enumerate(typed.claims):
        _check_claim(claim, excerpt_ids, fail)
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
        display=file,
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
_CARRIED_EXAMPLE = (
    'write carried_by = {package = "transformers", releases = [["5.6.2", "5.14.1"]]} (every'
    ' release from the first to the last has the lines; add except = ["5.10.0"] for those'
    " between that do not)"
)


def _typed(data: dict[str, object], fail: Fail) -> _LockFile:
    """The TOML's tables as typed structs; an unknown key, a missing one or a value of the wrong
    type is an InputError naming the entry (as the rules below name it) and the fix."""
    keys = _LockFile.__struct_encode_fields__
    unknown = sorted(set(data) - set(keys))  # here, not from msgspec: see below
    if unknown:
        raise fail(
            "top level", f"unknown key {unknown[0]!r}", f"use only these keys: {', '.join(keys)}"
        )
    try:
        return msgspec.convert(data, type=_LockFile)
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
    kind = CarriedBy if "carried_by" in inside else _SECTIONS[section]
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
        fix = _CARRIED_EXAMPLE
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
                msgspec.convert(table, type=_RepoTable)
            except msgspec.ValidationError:
                return f"repos.{name}"
    table = tables[int(step)] if isinstance(tables, list) else None
    named = table.get("id") if isinstance(table, dict) else None
    if isinstance(named, str) and named and section in ("excerpts", "claims"):
        return named if section == "excerpts" else f"claims {named}"
    return f"{section}[{step}]"


# ------------------------------------------------ the rules: values and the entries between them


def _parse_repo(name: str, table: _RepoTable, fail: Fail) -> Repo:
    entry = f"repos.{name}"
    if not valid_name(name):
        raise fail(entry, "repo name must be OWNER/REPO", 'write [repos."owner/name"]')
    try:
        url, forge = check_repo(name, table.url, table.forge or None)
    except ForgeError as error:
        raise fail(entry, error.problem, error.fix) from None
    _check_commit(table.commit, entry, fail)
    if not table.license.strip():
        raise fail(entry, "empty license", 'name the license, e.g. "Apache-2.0"')
    return Repo(name=name, url=url, commit=table.commit, license=table.license, forge=forge)


def _check_file(found: FileId, repos: dict[str, Repo], fail: Fail) -> None:
    entry = f"files {found.repo} {found.path}"
    if found.repo not in repos:
        raise fail(entry, f"unknown repo {found.repo!r}", _known_repos_fix(repos))
    _check_commit(found.commit, entry, fail)
    _check_path(found.path, entry, fail)
    _check_sha256(found.sha256, entry, fail, "the whole file")
    if not _HEX40.fullmatch(found.sha1_git):
        raise fail(
            entry,
            f"sha1_git {found.sha1_git!r} is not 40 lowercase hex digits",
            "record the file's git blob id (`itm verify --git REPO=DIR --raise-evidence` computes"
            " it), or delete the entry",
        )
    if not found.evidence.strip():
        raise fail(entry, "empty evidence", "say how the whole file was read")


def _check_proof(proof: CommitProof, repos: dict[str, Repo], fail: Fail) -> None:
    repo = proof.repo
    entry = f"commits {repo}"
    if repo not in repos:
        raise fail(entry, f"unknown repo {repo!r}", _known_repos_fix(repos))
    _check_commit(proof.commit, entry, fail)
    try:
        proof.check()
    except ProofError as error:
        raise fail(
            entry,
            f"{error}: the commit id, its object or its trees were edited",
            "restore the lock as `itm pin`, `itm bump` or `itm verify --raise-evidence` wrote it"
            " (if only the commit id was edited by hand, put back the id the object hashes to,"
            f' here and in [repos."{repo}"]); to move the pin, run'
            f" `itm bump {repo} COMMIT --git DIR --write`, which records the new commit's objects",
        ) from None


def _check_file_in_commit(found: FileId, commits: tuple[CommitProof, ...], fail: Fail) -> None:
    """Where [[commits]] records the trees down to a [[files]] entry read at that commit, they
    must name the same blob."""
    proof = next((c for c in commits if (c.repo, c.commit) == (found.repo, found.commit)), None)
    if proof is None:
        return
    try:
        blob = proof.blob_at(found.path)
    except ProofError as error:
        problem = str(error)
    else:
        if blob is None or blob == found.sha1_git:
            return
        problem = f"the commit's trees name blob {blob}, not the recorded {found.sha1_git}"
    raise fail(
        f"files {found.repo} {found.path}",
        f"{problem} (commit {found.commit[:12]}, recorded under [[commits]])",
        "record the file again from a clone of the commit (delete this entry, then `itm verify"
        " --git REPO=DIR --raise-evidence`), or restore the lock",
    )


def _check_mirror(mirror: Mirror, repos: dict[str, Repo], fail: Fail) -> None:
    entry = f"mirror {mirror.spec}"
    if mirror.repo not in repos:
        raise fail(entry, f"unknown repo {mirror.repo!r}", _known_repos_fix(repos))
    _check_commit(mirror.commit, entry, fail)
    _check_path(mirror.path, entry, fail)
    _check_path(mirror.member, entry, fail, key="member")
    _check_sha256(mirror.sha256, entry, fail, "the archive file")
    parse_ranges(mirror.lines, entry, fail)


def _check_mirror_placements(mirrors: tuple[Mirror, ...], fail: Fail) -> None:
    """One member may be listed once per offset (a copy that moved different runs by different
    amounts); no upstream line may be vouched for at two offsets."""
    seen: dict[tuple[str, str], list[Mirror]] = {}
    for mirror in mirrors:
        same = seen.setdefault((mirror.filename, mirror.member), [])
        for other in same:
            if other.offset == mirror.offset:
                raise fail(
                    f"mirror {mirror.spec}",
                    f"member {mirror.member!r} of {mirror.filename} is listed twice at offset"
                    f" {mirror.offset}",
                    "delete the duplicate [[mirrors]] entry, or merge its lines into the other",
                )
            if _windows_overlap(other.lines, mirror.lines):
                raise fail(
                    f"mirror {mirror.spec}",
                    f"member {mirror.member!r} of {mirror.filename} vouches for the same upstream"
                    f" lines at offsets {other.offset} and {mirror.offset}",
                    "give each [[mirrors]] entry of one member upstream lines of its own",
                )
        same.append(mirror)


def _windows_overlap(a: tuple[Range, ...], b: tuple[Range, ...]) -> bool:
    """Whether two mirrors' upstream windows share a line (no lines means the whole file)."""
    if not a or not b:
        return True
    return any(lo1 <= hi2 and lo2 <= hi1 for lo1, hi1 in a for lo2, hi2 in b)


def _check_commit(commit: str, entry: str, fail: Fail) -> None:
    if not _HEX40.fullmatch(commit):
        raise fail(
            entry,
            f"commit {commit!r} is not a full 40-hex commit id"
            + (" (short ids are ambiguous)" if re.fullmatch(r"[0-9a-f]{4,39}", commit) else ""),
            "write the full lowercase hash, e.g. from `git rev-parse COMMIT`",
        )


def check_commit(commit: str, *, file: str, entry: str) -> None:
    """InputError unless `commit` is a full 40-hex commit id."""

    def fail(entry: str, problem: str, fix: str) -> InputError:
        return InputError(problem, file=file, entry=entry, fix=fix)

    _check_commit(commit, entry, fail)


def _check_path(path: str, entry: str, fail: Fail, key: str = "path") -> None:
    parts = path.split("/")
    if not path or path.startswith("/") or "\\" in path or re.match(r"[A-Za-z]:", path):
        raise fail(
            entry,
            f"{key} {path!r} must be relative to the repository root",
            f'write it like {key} = "src/model.py" (no leading slash or drive)',
        )
    if any(part in ("", ".", "..") for part in parts):
        raise fail(
            entry,
            f"{key} {path!r} has an empty, '.' or '..' segment",
            f"write the plain path from the repository root, without '..'"
            f' (e.g. {key} = "src/model.py")',
        )


def _check_sha256(value: str, entry: str, fail: Fail, what: str) -> None:
    if not _HEX64.fullmatch(value):
        raise fail(
            entry,
            f"sha256 {value!r} is not 64 lowercase hex digits",
            f"record the sha256 of {what} (`itm pin` computes it)",
        )


def _known_repos_fix(repos: dict[str, Repo]) -> str:
    known = ", ".join(repos) or "none yet"
    return f'add a [repos."OWNER/REPO"] table for it, or use a known repo ({known})'


def _parse_pin(table: _PinTable, repos: dict[str, Repo], fail: Fail) -> Pin:
    entry = table.id or "excerpts"
    if not _EXCERPT_ID.fullmatch(table.id):
        raise fail(
            entry,
            "id must be lowercase letters, digits, '.', '_' or '-'",
            'name it like "gpt2.attn" or "hf.gpt2-mlp"',
        )
    if table.repo not in repos:
        raise fail(entry, f"unknown repo {table.repo!r}", _known_repos_fix(repos))
    _check_path(table.path, entry, fail)
    symbol = table.symbol
    if symbol is not None and not _SYMBOL.fullmatch(symbol):
        raise fail(
            entry,
            f"symbol {symbol!r} is not a dotted Python name",
            'write symbol = "attn" or symbol = "GPT2Attention.forward"',
        )
    ranges = parse_ranges(table.lines, entry, fail)
    if symbol is None and not ranges:
        raise fail(
            entry,
            "no lines and no symbol: nothing says which lines to show",
            'add lines = [[FIRST, LAST]] or symbol = "name" (then `itm pin` records the lines)',
        )
    if symbol is not None and len(ranges) > 1:
        raise fail(
            entry,
            "a symbol resolves to one run of lines, but several ranges are given",
            "drop the symbol to pin several ranges, or keep one range",
        )
    if not table.sha256:
        raise fail(
            entry,
            "missing sha256 of the excerpt text",
            'record it with `itm pin` (or add sha256 = "<64 hex>" of the lines,'
            " each ending in \\n)",
        )
    _check_sha256(table.sha256, entry, fail, "the excerpt text")
    level = table.evidence_level
    if level not in EVIDENCE_LEVELS:
        raise fail(
            entry,
            f"unknown evidence_level {level!r}",
            f"use one of: {', '.join(EVIDENCE_LEVELS)} (and never claim more than was checked)",
        )
    if not table.evidence.strip():
        raise fail(entry, "empty evidence", "say how the text was confirmed")
    if table.carried_by is not None:
        _check_carried_by(table.carried_by, level, entry, fail)
    return Pin(
        id=table.id,
        repo=table.repo,
        path=table.path,
        symbol=symbol,
        ranges=ranges,
        sha256=table.sha256,
        evidence_level=level,
        evidence=table.evidence,
        carried_by=table.carried_by,
    )


def _check_carried_by(carried: CarriedBy, level: str, entry: str, fail: Fail) -> None:
    """carried_by = {package, releases = [[first, last], ...], except = [...]}: every release of
    each window has the lines, but those excepted; only a "mirror-window" excerpt has one."""
    if level != "mirror-window":
        raise fail(
            entry,
            f"carried_by names releases that carry the lines, but evidence_level is {level!r}",
            "delete carried_by: an excerpt checked at its commit needs no release window",
        )
    names = (carried.package, *(v for w in carried.releases for v in w), *carried.excepted)
    bad = next((name for name in names if not _VERSION.fullmatch(name)), None)
    if bad is not None:
        raise fail(entry, f"carried_by: {bad!r} is not a package or a release", _CARRIED_EXAMPLE)


def _check_claim(claim: Claim, excerpt_ids: set[str], fail: Fail) -> None:
    entry = f"claims {claim.id}"
    if not CLAIM_ID.fullmatch(claim.id):
        raise fail(
            entry,
            "a claim id is lowercase letters, digits, '.', '_', '-' or '/'",
            'name it like "gpt2.attn.heads-joined"',
        )
    if claim.excerpt not in excerpt_ids:
        raise fail(
            entry,
            f"it is about excerpt {claim.excerpt!r}, which the lock does not pin",
            "delete the entry, or approve the claim about a pinned excerpt (`itm claim approve"
            f" {claim.id} --excerpt ID`)",
        )
    _check_sha256(claim.sha256, entry, fail, "the excerpt text the claim was approved against")


def parse_ranges(value: Sequence[Range], entry: str, fail: Fail) -> tuple[Range, ...]:
    """[[first, last], ...] checked: from line 1, each in order, ascending with gaps; `fail`
    makes the error (the lock's, naming its file, or `itm pin --lines`')."""
    for first, last in value:
        if first < 1:
            raise fail(
                entry, f"line range {first}-{last} starts before line 1", "lines count from 1"
            )
        if last < first:
            raise fail(
                entry,
                f"line range {first}-{last} is reversed (empty)",
                f"write the first line first: [{last}, {first}]",
            )
    for (a1, b1), (a2, b2) in zip(value, value[1:], strict=False):
        if a2 <= b1 + 1:
            raise fail(
                entry,
                f"line ranges {a1}-{b1} and {a2}-{b2} overlap, touch or are out of order",
                f"merge them into [{min(a1, a2)}, {max(b1, b2)}], or list ranges in ascending order"
                " with a gap",
            )
    return tuple(value)


def parse_line_spec(spec: object, *, entry: str, file: str | None = None) -> tuple[Range, ...]:
    """ "69-112" / "185-191, 204-224" / "126" / 126 -> ranges, checked as the lock checks them
    ("5-2" is reversed, "0-2" starts before line 1); en dashes count as hyphens. For `itm pin
    --lines` and a page's `lines:` option; the error names `entry` (and `file`)."""
    ranges = []
    for part in str(spec).replace("–", "-").split(","):
        first, _, last = part.strip().partition("-")
        try:
            ranges.append((int(first), int(last or first)))
        except ValueError:
            raise InputError(
                f"cannot read line range {part.strip()!r}",
                file=file,
                entry=entry,
                fix='write lines like "69-112" or "185-191, 204-224"',
            ) from None

    def fail(entry: str, problem: str, fix: str) -> InputError:
        return InputError(problem, file=file, entry=entry, fix=fix)

    return parse_ranges(ranges, entry, fail)


# ---------------------------------------------------------------- writing


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
        written = {  # as _PinTable spells it, None left out
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

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
and the fix. The validator is ours on purpose: a schema library (jsonschema, pydantic) reports
where a value breaks a type, not what to do about it; an author editing a lock by hand needs
"line range 70-60 is reversed (empty)" with "write the first line first: [60, 70]", and the
`itm pin` command that writes the entry for them. `dump_lock` writes the same canonical text
back (used by `itm pin` / `itm bump`).
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

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
_SHA1_GIT = _HEX40
_HEX64 = re.compile(r"[0-9a-f]{64}")
_EXCERPT_ID = re.compile(r"[a-z0-9][a-z0-9._-]*")
_SYMBOL = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")

_REPO_KEYS = ("url", "commit", "license", "forge")
_MIRROR_KEYS = (
    "repo",
    "commit",
    "path",
    "package",
    "version",
    "filename",
    "sha256",
    "member",
    "note",
)
_MIRROR_PLACEMENT = ("lines", "offset")  # optional: where the mirror vouches for upstream lines
_EXCERPT_KEYS = (
    "id",
    "repo",
    "path",
    "symbol",
    "lines",
    "sha256",
    "evidence_level",
    "evidence",
    "carried_by",
)
_CARRIED_KEYS = ("package", "releases", "except")
_CLAIM_KEYS = ("id", "excerpt", "sha256")
CLAIM_ID = re.compile(r"[a-z0-9][a-z0-9._/-]*")
_VERSION = re.compile(r"[A-Za-z0-9][A-Za-z0-9.+!_-]*")
_FILE_KEYS = ("repo", "commit", "path", "sha256", "sha1_git", "evidence")
_COMMIT_KEYS = ("repo", "commit", "object", "trees")


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


@dataclass(frozen=True)
class Mirror:
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
    lines: tuple[Range, ...] = ()  # upstream lines it carries verbatim; () means the whole file
    offset: int = 0  # mirror line = upstream line + offset

    def carries(self, ranges: tuple[Range, ...]) -> bool:
        """Whether every range lies inside one of the upstream windows this mirror vouches for."""
        return not self.lines or all(
            any(a >= lo and b <= hi for lo, hi in self.lines) for a, b in ranges
        )

    @property
    def spec(self) -> str:
        return f"{self.package}=={self.version}"


@dataclass(frozen=True)
class FileId:
    """A whole upstream file at a commit, as read once in full: its sha256 and its git blob id
    (sha1_git), which is the core of its Software Heritage id (SWHID)."""

    repo: str
    commit: str  # where it was read: the ids say nothing about the file at another commit
    path: str
    sha256: str  # of the file's bytes
    sha1_git: str  # git's blob id: sha1 of b"blob <size>\0" + the bytes
    evidence: str  # how the bytes were read (which command, from where)


@dataclass(frozen=True)
class CarriedBy:
    """The releases of a package on its index that have an excerpt's lines byte for byte at the
    same numbers, as compared (a "mirror-window" excerpt's evidence, for readers' cards)."""

    package: str  # "transformers"
    releases: tuple[tuple[str, str], ...]  # windows of releases, first and last: every one has them
    excepted: tuple[str, ...] = ()  # releases inside the windows that do not


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


@dataclass(frozen=True)
class Claim:
    """A [[claims]] entry: a claim (a page's `/// claim | ID` block, or a Source of this site's
    component registry) approved as true of an excerpt's text, whose sha256 it records."""

    id: str
    excerpt: str
    sha256: str  # of the excerpt's text when the claim was approved


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

    def fail(entry: str, problem: str, fix: str) -> InputError:
        return InputError(problem, file=file, entry=entry, fix=fix)

    _check_keys(
        data,
        ("version", "repos", "commits", "files", "mirrors", "excerpts", "claims"),
        "top level",
        fail,
    )
    if data.get("version", 1) != 1:
        raise fail("version", f"unsupported lock version {data['version']!r}", "set version = 1")

    tables = data.get("repos", {})
    if not isinstance(tables, dict):
        raise fail("repos", "repos must be a table of repos", 'write each as [repos."OWNER/NAME"]')
    repos = {name: _parse_repo(name, table, fail) for name, table in tables.items()}
    mirrors = tuple(
        _parse_mirror(i, table, repos, fail)
        for i, table in enumerate(_table_list(data, "mirrors", fail))
    )
    # One member may be listed once per offset (a copy that moved different runs by different
    # amounts); no upstream line may be vouched for at two offsets.
    seen_mirrors: dict[tuple[str, str], list[Mirror]] = {}
    for mirror in mirrors:
        same = seen_mirrors.setdefault((mirror.filename, mirror.member), [])
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

    pins: list[Pin] = []
    seen_ids: set[str] = set()
    for i, table in enumerate(_table_list(data, "excerpts", fail)):
        pin = _parse_pin(i, table, repos, fail)
        if pin.id in seen_ids:
            raise fail(
                pin.id,
                "duplicate excerpt id (ids must be unique: pages cite them)",
                "rename one of the entries, or delete the duplicate",
            )
        seen_ids.add(pin.id)
        pins.append(pin)
    files: list[FileId] = []
    for i, table in enumerate(_table_list(data, "files", fail)):
        found = _parse_file(i, table, repos, fail)
        if any((f.repo, f.path) == (found.repo, found.path) for f in files):
            raise fail(
                f"files {found.repo} {found.path}",
                "the file is listed twice",
                "delete the duplicate [[files]] entry",
            )
        files.append(found)
    commits: list[CommitProof] = []
    for i, table in enumerate(_table_list(data, "commits", fail)):
        proof = _parse_commit(i, table, repos, fail)
        if any(c.repo == proof.repo for c in commits):
            raise fail(
                f"commits {proof.repo}",
                "the repo's commit is recorded twice",
                "keep one [[commits]] entry a repo: the one of its pinned commit",
            )
        commits.append(proof)
    for found in files:
        _check_file_in_commit(found, commits, fail)
    claims: list[Claim] = []
    for i, table in enumerate(_table_list(data, "claims", fail)):
        claim = _parse_claim(i, table, seen_ids, fail)
        if any(c.id == claim.id for c in claims):
            raise fail(
                f"claims {claim.id}",
                "the claim is approved twice",
                "keep one [[claims]] entry an id (`itm claim approve` writes it)",
            )
        claims.append(claim)
    return Lock(
        path=path,
        repos=repos,
        mirrors=mirrors,
        pins=tuple(pins),
        files=tuple(files),
        commits=tuple(commits),
        claims=tuple(claims),
        display=file,
    )


def _table_list(data: dict[str, object], key: str, fail: Fail) -> list[object]:
    value = data.get(key, [])
    if not isinstance(value, list):
        raise fail(key, f"{key} must be a list of tables", f"write each entry as [[{key}]]")
    return value


def _parse_file(index: int, table: object, repos: dict[str, Repo], fail: Fail) -> FileId:
    entry = f"files[{index}]"
    table = _check_keys(table, _FILE_KEYS, entry, fail)
    _evidence_commit(table, entry, fail, "the commit the whole file was read at")
    values = {key: _string(table, key, entry, fail) for key in _FILE_KEYS}
    found = FileId(**values)
    entry = f"files {found.repo} {found.path}"
    if found.repo not in repos:
        raise fail(entry, f"unknown repo {found.repo!r}", _known_repos_fix(repos))
    _check_commit(found.commit, entry, fail)
    _check_path(found.path, entry, fail)
    _check_sha256(found.sha256, entry, fail, "the whole file")
    if not _SHA1_GIT.fullmatch(found.sha1_git):
        raise fail(
            entry,
            f"sha1_git {found.sha1_git!r} is not 40 lowercase hex digits",
            "record the file's git blob id (`itm verify --git REPO=DIR --raise-evidence` computes"
            " it), or delete the entry",
        )
    if not found.evidence.strip():
        raise fail(entry, "empty evidence", "say how the whole file was read")
    return found


def _parse_commit(index: int, table: object, repos: dict[str, Repo], fail: Fail) -> CommitProof:
    entry = f"commits[{index}]"
    table = _check_keys(table, _COMMIT_KEYS, entry, fail)
    repo, commit, text = (_string(table, key, entry, fail) for key in ("repo", "commit", "object"))
    entry = f"commits {repo}"
    if repo not in repos:
        raise fail(entry, f"unknown repo {repo!r}", _known_repos_fix(repos))
    _check_commit(commit, entry, fail)
    trees = table.get("trees", [])
    if not isinstance(trees, list) or not all(isinstance(t, str) for t in trees):
        raise fail(entry, "trees must be a list of strings", "write trees = ['''...''', ...]")
    proof = CommitProof(repo=repo, commit=commit, text=text, trees=tuple(trees))
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
    return proof


def _check_file_in_commit(found: FileId, commits: list[CommitProof], fail: Fail) -> None:
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


def _evidence_commit(table: dict[str, object], entry: str, fail: Fail, what: str) -> None:
    """A [[files]] or [[mirrors]] entry must say which commit it vouches for."""
    if "commit" not in table:
        raise fail(
            entry,
            "missing 'commit': evidence that names no commit vouches for none",
            f'add commit = "<40 hex>", {what} (`itm pin`, `itm bump` and `itm verify'
            " --raise-evidence` write it for [[files]])",
        )


def _windows_overlap(a: tuple[Range, ...], b: tuple[Range, ...]) -> bool:
    """Whether two mirrors' upstream windows share a line (no lines means the whole file)."""
    if not a or not b:
        return True
    return any(lo1 <= hi2 and lo2 <= hi1 for lo1, hi1 in a for lo2, hi2 in b)


def _check_keys(
    table: object, allowed: tuple[str, ...], entry: str, fail: Fail
) -> dict[str, object]:
    """The table, when it is one with only `allowed` keys."""
    if not isinstance(table, dict):
        raise fail(
            entry,
            "expected a table",
            f"write it as a table with the keys {', '.join(allowed)} (as `itm pin` writes them)",
        )
    unknown = sorted(set(table) - set(allowed))
    if unknown:
        raise fail(
            entry, f"unknown key {unknown[0]!r}", f"use only these keys: {', '.join(allowed)}"
        )
    return table


def _string(
    table: dict[str, object], key: str, entry: str, fail: Fail, *, required: bool = True
) -> str:
    value = table.get(key)
    if value is None:
        if required:
            raise fail(entry, f"missing {key!r}", f'add {key} = "..." to the entry')
        return ""
    if not isinstance(value, str):
        raise fail(entry, f"{key!r} must be a string, got {value!r}", f'write {key} = "..."')
    return value


def _parse_repo(name: str, table: object, fail: Fail) -> Repo:
    entry = f"repos.{name}"
    table = _check_keys(table, _REPO_KEYS, entry, fail)
    if not valid_name(name):
        raise fail(entry, "repo name must be OWNER/REPO", 'write [repos."owner/name"]')
    forge = _string(table, "forge", entry, fail, required=False) or None
    try:
        url, forge = check_repo(name, _string(table, "url", entry, fail), forge)
    except ForgeError as error:
        raise fail(entry, error.problem, error.fix) from None
    commit = _string(table, "commit", entry, fail)
    _check_commit(commit, entry, fail)
    license_name = _string(table, "license", entry, fail)
    if not license_name.strip():
        raise fail(entry, "empty license", 'name the license, e.g. "Apache-2.0"')
    return Repo(name=name, url=url, commit=commit, license=license_name, forge=forge)


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


def _parse_mirror(index: int, table: object, repos: dict[str, Repo], fail: Fail) -> Mirror:
    entry = f"mirrors[{index}]"
    table = _check_keys(table, _MIRROR_KEYS + _MIRROR_PLACEMENT, entry, fail)
    _evidence_commit(
        table, entry, fail, "the commit whose file you compared the member's lines with"
    )
    values = {key: _string(table, key, entry, fail, required=key != "note") for key in _MIRROR_KEYS}
    offset = table.get("offset", 0)
    if not isinstance(offset, int) or isinstance(offset, bool):
        raise fail(entry, f"offset {offset!r} is not a whole number", "write offset = 2 (or 0)")
    lines = parse_ranges(table.get("lines"), entry, fail)
    mirror = Mirror(**values, lines=lines, offset=offset)
    entry = f"mirror {mirror.spec}"
    if mirror.repo not in repos:
        raise fail(entry, f"unknown repo {mirror.repo!r}", _known_repos_fix(repos))
    _check_commit(mirror.commit, entry, fail)
    _check_path(mirror.path, entry, fail)
    _check_path(mirror.member, entry, fail, key="member")
    _check_sha256(mirror.sha256, entry, fail, "the archive file")
    return mirror


def _known_repos_fix(repos: dict[str, Repo]) -> str:
    known = ", ".join(repos) or "none yet"
    return f'add a [repos."OWNER/REPO"] table for it, or use a known repo ({known})'


def _parse_pin(index: int, table: object, repos: dict[str, Repo], fail: Fail) -> Pin:
    named = isinstance(table, dict) and isinstance(table.get("id"), str) and table["id"]
    entry = named or f"excerpts[{index}]"
    table = _check_keys(table, _EXCERPT_KEYS, entry, fail)
    excerpt_id = _string(table, "id", entry, fail)
    if not _EXCERPT_ID.fullmatch(excerpt_id):
        raise fail(
            entry,
            "id must be lowercase letters, digits, '.', '_' or '-'",
            'name it like "gpt2.attn" or "hf.gpt2-mlp"',
        )
    repo = _string(table, "repo", entry, fail)
    if repo not in repos:
        raise fail(entry, f"unknown repo {repo!r}", _known_repos_fix(repos))
    path = _string(table, "path", entry, fail)
    _check_path(path, entry, fail)

    symbol = table.get("symbol")
    if symbol is not None and (not isinstance(symbol, str) or not _SYMBOL.fullmatch(symbol)):
        raise fail(
            entry,
            f"symbol {symbol!r} is not a dotted Python name",
            'write symbol = "attn" or symbol = "GPT2Attention.forward"',
        )
    ranges = parse_ranges(table.get("lines"), entry, fail)
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

    sha256 = table.get("sha256")
    if sha256 is None or sha256 == "":
        raise fail(
            entry,
            "missing sha256 of the excerpt text",
            'record it with `itm pin` (or add sha256 = "<64 hex>" of the lines,'
            " each ending in \\n)",
        )
    if not isinstance(sha256, str):
        raise fail(entry, "sha256 must be a string", 'write sha256 = "<64 hex>"')
    _check_sha256(sha256, entry, fail, "the excerpt text")

    level = _string(table, "evidence_level", entry, fail)
    if level not in EVIDENCE_LEVELS:
        raise fail(
            entry,
            f"unknown evidence_level {level!r}",
            f"use one of: {', '.join(EVIDENCE_LEVELS)} (and never claim more than was checked)",
        )
    evidence = _string(table, "evidence", entry, fail)
    if not evidence.strip():
        raise fail(entry, "empty evidence", "say how the text was confirmed")
    carried_by = None
    if "carried_by" in table:
        if level != "mirror-window":
            raise fail(
                entry,
                f"carried_by names releases that carry the lines, but evidence_level is {level!r}",
                "delete carried_by: an excerpt checked at its commit needs no release window",
            )
        carried_by = _parse_carried_by(table["carried_by"], entry, fail)
    return Pin(
        id=excerpt_id,
        repo=repo,
        path=path,
        symbol=symbol,
        ranges=ranges,
        sha256=sha256,
        evidence_level=level,
        evidence=evidence,
        carried_by=carried_by,
    )


_CARRIED_EXAMPLE = (
    'write carried_by = {package = "transformers", releases = [["5.6.2", "5.14.1"]]} (every'
    ' release from the first to the last has the lines; add except = ["5.10.0"] for those'
    " between that do not)"
)


def _parse_carried_by(table: object, entry: str, fail: Fail) -> CarriedBy:
    """carried_by = {package, releases = [[first, last], ...], except = [...]}: every release of
    each window has the lines, but those excepted."""
    if not isinstance(table, dict):
        raise fail(entry, "carried_by is not a table", _CARRIED_EXAMPLE)
    _check_keys(table, _CARRIED_KEYS, f"{entry} carried_by", fail)
    package = table.get("package")
    windows = table.get("releases")
    excepted = table.get("except", [])

    def versions(value: object) -> bool:
        return isinstance(value, list) and all(
            isinstance(v, str) and _VERSION.fullmatch(v) for v in value
        )

    ok = (
        isinstance(package, str)
        and _VERSION.fullmatch(package)
        and isinstance(windows, list)
        and windows
        and all(versions(w) and len(w) == 2 for w in windows)
        and versions(excepted)
    )
    if not ok:
        raise fail(
            entry, "carried_by is not a package and its windows of releases", _CARRIED_EXAMPLE
        )
    assert isinstance(package, str) and isinstance(windows, list) and isinstance(excepted, list)
    return CarriedBy(
        package=package,
        releases=tuple((first, last) for first, last in windows),
        excepted=tuple(excepted),
    )


def _parse_claim(index: int, table: object, excerpt_ids: set[str], fail: Fail) -> Claim:
    named = isinstance(table, dict) and isinstance(table.get("id"), str) and table["id"]
    entry = f"claims {named}" if named else f"claims[{index}]"
    table = _check_keys(table, _CLAIM_KEYS, entry, fail)
    claim_id, excerpt, sha256 = (_string(table, key, entry, fail) for key in _CLAIM_KEYS)
    if not CLAIM_ID.fullmatch(claim_id):
        raise fail(
            entry,
            "a claim id is lowercase letters, digits, '.', '_', '-' or '/'",
            'name it like "gpt2.attn.heads-joined"',
        )
    if excerpt not in excerpt_ids:
        raise fail(
            entry,
            f"it is about excerpt {excerpt!r}, which the lock does not pin",
            "delete the entry, or approve the claim about a pinned excerpt (`itm claim approve"
            f" {claim_id} --excerpt ID`)",
        )
    _check_sha256(sha256, entry, fail, "the excerpt text the claim was approved against")
    return Claim(id=claim_id, excerpt=excerpt, sha256=sha256)


def parse_ranges(value: object, entry: str, fail: Fail) -> tuple[Range, ...]:
    """[[first, last], ...] checked: from line 1, each in order, ascending with gaps; `fail`
    makes the error (the lock's, naming its file, or `itm pin --lines`')."""
    if value is None:
        return ()
    example = "write lines = [[69, 112]] or lines = [[185, 191], [204, 224]]"
    if not isinstance(value, list) or not value:
        raise fail(entry, f"empty line range list {value!r}", example)
    ranges: list[Range] = []
    for item in value:
        ok = (
            isinstance(item, list)
            and len(item) == 2
            and all(isinstance(n, int) and not isinstance(n, bool) for n in item)
        )
        if not ok:
            raise fail(entry, f"line range {item!r} is not a pair [FIRST, LAST]", example)
        first, last = item
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
        ranges.append((first, last))
    for (a1, b1), (a2, b2) in zip(ranges, ranges[1:], strict=False):
        if a2 <= b1 + 1:
            raise fail(
                entry,
                f"line ranges {a1}-{b1} and {a2}-{b2} overlap, touch or are out of order",
                f"merge them into [{min(a1, a2)}, {max(b1, b2)}], or list ranges in ascending order"
                " with a gap",
            )
    return tuple(ranges)


def parse_line_spec(spec: object, *, entry: str, file: str | None = None) -> tuple[Range, ...]:
    """ "69-112" / "185-191, 204-224" / "126" / 126 -> ranges, checked as the lock checks them
    ("5-2" is reversed, "0-2" starts before line 1); en dashes count as hyphens. For `itm pin
    --lines` and a page's `lines:` option; the error names `entry` (and `file`)."""
    ranges = []
    for part in str(spec).replace("–", "-").split(","):
        first, _, last = part.strip().partition("-")
        try:
            ranges.append([int(first), int(last or first)])
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


def _toml_str(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)  # JSON escapes are valid TOML basic strings


def _toml_text(value: str) -> str:
    """Text of many lines as a multi-line TOML string that reads back exactly: one line of the
    lock a line of text, escapes for quotes, backslashes and control characters (a tab too),
    and a line's trailing spaces spelled \\u0020 so that an editor trimming lines breaks nothing."""
    lines = []
    for line in value.split("\n"):
        escaped = json.dumps(line, ensure_ascii=False)[1:-1].replace("\x7f", "\\u007f")
        kept = escaped.rstrip(" ")
        lines.append(kept + "\\u0020" * (len(escaped) - len(kept)))
    return '"""\n' + "\n".join(lines) + '"""'


def dump_lock(lock: Lock) -> str:
    """The canonical text of a lock; load_lock(dump_lock(x)) gives x back."""
    out = [_HEADER, "\nversion = 1\n"]
    for repo in lock.repos.values():
        out.append(f"\n[repos.{_toml_str(repo.name)}]\n")
        out.append(f"url = {_toml_str(repo.url)}\n")
        out.append(f"commit = {_toml_str(repo.commit)}\n")
        out.append(f"license = {_toml_str(repo.license)}\n")
        if repo.forge != default_forge(repo.url):
            out.append(f"forge = {_toml_str(repo.forge)}\n")
    for proof in lock.commits:
        out.append("\n[[commits]]\n")
        out.append(f"repo = {_toml_str(proof.repo)}\ncommit = {_toml_str(proof.commit)}\n")
        out.append(f"object = {_toml_text(proof.text)}\n")
        trees = "".join(f"\n{_toml_text(tree)}," for tree in proof.trees)
        out.append(f"trees = [{trees}\n]\n")
    for file in lock.files:
        out.append("\n[[files]]\n")
        for key in _FILE_KEYS:
            out.append(f"{key} = {_toml_str(getattr(file, key))}\n")
    for mirror in lock.mirrors:
        out.append("\n[[mirrors]]\n")
        for key in _MIRROR_KEYS:
            value = getattr(mirror, key)
            if key != "note" or value:
                out.append(f"{key} = {_toml_str(value)}\n")
        if mirror.lines:
            out.append(f"lines = [{', '.join(f'[{a}, {b}]' for a, b in mirror.lines)}]\n")
        if mirror.offset:
            out.append(f"offset = {mirror.offset}\n")
    for pin in lock.pins:
        out.append("\n[[excerpts]]\n")
        out.append(f"id = {_toml_str(pin.id)}\n")
        out.append(f"repo = {_toml_str(pin.repo)}\n")
        out.append(f"path = {_toml_str(pin.path)}\n")
        if pin.symbol is not None:
            out.append(f"symbol = {_toml_str(pin.symbol)}\n")
        if pin.ranges:
            pairs = ", ".join(f"[{a}, {b}]" for a, b in pin.ranges)
            out.append(f"lines = [{pairs}]\n")
        out.append(f"sha256 = {_toml_str(pin.sha256)}\n")
        out.append(f"evidence_level = {_toml_str(pin.evidence_level)}\n")
        out.append(f"evidence = {_toml_str(pin.evidence)}\n")
        if pin.carried_by is not None:
            out.append(f"carried_by = {_carried_toml(pin.carried_by)}\n")
    for claim in lock.claims:
        out.append("\n[[claims]]\n")
        for key in _CLAIM_KEYS:
            out.append(f"{key} = {_toml_str(getattr(claim, key))}\n")
    return "".join(out)


def _carried_toml(carried: CarriedBy) -> str:
    """carried_by as one inline table: {package = "...", releases = [["a", "b"]], except = []}."""
    windows = ", ".join(f"[{_toml_str(a)}, {_toml_str(b)}]" for a, b in carried.releases)
    out = f"{{package = {_toml_str(carried.package)}, releases = [{windows}]"
    if carried.excepted:
        out += f", except = [{', '.join(_toml_str(v) for v in carried.excepted)}]"
    return out + "}"


def write_lock(lock: Lock, path: Path | None = None) -> None:
    """Validate the new text, then replace the file atomically (temp file + os.replace)."""
    path = Path(path or lock.path)
    text = dump_lock(lock)
    parse_lock(text, path, display=lock.display)  # never write a lock that would not load
    write_output(path, text.encode("utf-8"))

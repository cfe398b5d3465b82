"""The lock's rules between values and entries (msgspec has checked each key's type first).

Each problem is an InputError naming the file, the entry and the fix: an author editing a lock
by hand needs "line range 70-60 is reversed (empty)" with "write the first line first: [60,
70]", which no schema library says.
"""

from __future__ import annotations

import re

from generator.sources.forges import ForgeError, check_repo, valid_name
from generator.sources.gitobjects import CommitProof, ProofError
from generator.sources.lockschema import (
    EVIDENCE_LEVELS,
    CarriedBy,
    Claim,
    FileId,
    Mirror,
    Pin,
    PinTable,
    Repo,
    RepoTable,
)
from generator.sources.ranges import Fail, Range, failing, parse_ranges

_HEX40 = re.compile(r"[0-9a-f]{40}")
_HEX64 = re.compile(r"[0-9a-f]{64}")
_EXCERPT_ID = re.compile(r"[a-z0-9][a-z0-9._-]*")
_SYMBOL = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")
CLAIM_ID = re.compile(r"[a-z0-9][a-z0-9._/-]*")
_VERSION = re.compile(r"[A-Za-z0-9][A-Za-z0-9.+!_-]*")
CARRIED_EXAMPLE = (
    'write carried_by = {package = "transformers", releases = [["5.6.2", "5.14.1"]]} (every'
    ' release from the first to the last has the lines; add except = ["5.10.0"] for those'
    " between that do not)"
)


def parse_repo(name: str, table: RepoTable, fail: Fail) -> Repo:
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


def check_file(found: FileId, repos: dict[str, Repo], fail: Fail) -> None:
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


def check_proof(proof: CommitProof, repos: dict[str, Repo], fail: Fail) -> None:
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


def check_file_in_commit(found: FileId, commits: tuple[CommitProof, ...], fail: Fail) -> None:
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


def check_mirror(mirror: Mirror, repos: dict[str, Repo], fail: Fail) -> None:
    entry = f"mirror {mirror.spec}"
    if mirror.repo not in repos:
        raise fail(entry, f"unknown repo {mirror.repo!r}", _known_repos_fix(repos))
    _check_commit(mirror.commit, entry, fail)
    _check_path(mirror.path, entry, fail)
    _check_path(mirror.member, entry, fail, key="member")
    _check_sha256(mirror.sha256, entry, fail, "the archive file")
    parse_ranges(mirror.lines, entry, fail)


def check_mirror_placements(mirrors: tuple[Mirror, ...], fail: Fail) -> None:
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
    _check_commit(commit, entry, failing(file))


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


def parse_pin(table: PinTable, repos: dict[str, Repo], fail: Fail) -> Pin:
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
        raise fail(entry, f"carried_by: {bad!r} is not a package or a release", CARRIED_EXAMPLE)


def check_claim(claim: Claim, excerpt_ids: set[str], fail: Fail) -> None:
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

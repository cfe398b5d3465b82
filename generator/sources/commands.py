"""`itm verify`, `itm pin`, `itm bump`: check the lock, add an excerpt, move a repo's pin.

Each works on any site's lock: `--lock PATH`, else the lock of the site in the current folder
(generator/sources/locate.py), with that site's settings. Nothing here depends on where the
package is installed.
"""

from __future__ import annotations

import argparse
import difflib
import sys
from dataclasses import replace
from pathlib import Path
from typing import Unpack

import msgspec

from generator.checked_io import write_output
from generator.errors import InputError
from generator.settings import Settings
from generator.sources.excerpt import cut, find_placement, fits, sha256_hex, split_lines
from generator.sources.forges import (
    FORGES,
    WEB_FORGES,
    ForgeError,
    check_repo,
    described,
    valid_name,
)
from generator.sources.locate import SiteLock, find_lock
from generator.sources.lock import load_lock
from generator.sources.lockrules import CLAIM_ID, check_commit
from generator.sources.lockschema import (
    EVIDENCE_LEVELS,
    MAX_TEXT_BYTES,
    Claim,
    FileId,
    Lock,
    Mirror,
    Pin,
    Repo,
    display_path,
)
from generator.sources.lockwrite import write_lock
from generator.sources.ranges import Range, format_ranges, parse_line_spec
from generator.sources.resolve import (
    GIT_DIRS_SETTING,
    SOURCES,
    FullFile,
    Resolver,
    SourceOptions,
    check_clones,
)
from generator.sources.selections import (
    Move,
    carried,
    line_map,
    mark_stale,
    page_files,
    read_page,
    rewrite,
    selections,
)
from generator.sources.swh import ArchiveError, archived, core
from generator.sources.symbols import SymbolError, symbol_range
from generator.store import read_regular


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    verify = subparsers.add_parser(
        "verify", help="check that every pinned excerpt resolves and matches its sha256"
    )
    _common(verify)
    where = verify.add_mutually_exclusive_group()
    where.add_argument("--offline", action="store_true", help="no network: cache and git only")
    where.add_argument(
        "--online",
        action="store_true",
        help="check every excerpt against its forge (GitHub, GitLab, Gitea) at its commit, and ask"
        " Software Heritage"
        " whether it has archived each whole file",
    )
    verify.add_argument("--id", action="append", default=[], help="only this excerpt (repeatable)")
    verify.add_argument(
        "--raise-evidence",
        action="store_true",
        help="with --online or --git: an excerpt read from GitHub, or from a clone, at its pinned "
        "commit becomes 'upstream' evidence in the lock, and each whole file read there gets its "
        "sha256 and git blob id recorded ([[files]]: its Software Heritage id); the lock is "
        "rewritten (the weekly workflow proposes it as a pull request)",
    )
    verify.set_defaults(func=run_verify)

    pin = subparsers.add_parser(
        "pin", help="add (or --replace) an excerpt from a trusted source and record its hash"
    )
    _common(pin)
    pin.add_argument("id", help='excerpt id, e.g. "gpt2.attn"')
    pin.add_argument("--repo", required=True, help='"OWNER/REPO"')
    pin.add_argument("--path", required=True, help="path in the repository")
    anchor = pin.add_mutually_exclusive_group(required=True)
    anchor.add_argument("--symbol", help='dotted Python name, e.g. "GPT2Attention.forward"')
    anchor.add_argument("--lines", help='"69-112" or "185-191,204-224"')
    pin.add_argument(
        "--trusted-file",
        type=Path,
        help="a file you declare to be PATH at the repo's commit (state --evidence and its level)",
    )
    pin.add_argument("--commit", help="for a repo new to the lock: its full commit")
    pin.add_argument("--license", help="for a repo new to the lock: its license")
    pin.add_argument(
        "--url",
        help="for a repo new to the lock: its address, a forge's page (https://gitlab.com/O/R,"
        " https://codeberg.org/O/R) or any git URL (default https://github.com/REPO)",
    )
    pin.add_argument(
        "--forge",
        choices=FORGES,
        help="for a repo new to the lock on a host of its own: which forge serves it (git: none,"
        " no web view)",
    )
    pin.add_argument("--evidence", help="how the text was confirmed")
    pin.add_argument("--evidence-level", choices=tuple(EVIDENCE_LEVELS))
    pin.add_argument("--replace", action="store_true", help="overwrite an existing id")
    pin.add_argument("--offline", action="store_true", help="do not try GitHub")
    pin.add_argument("--dry-run", action="store_true", help="print the entry, do not write")
    pin.set_defaults(func=run_pin)

    bump = subparsers.add_parser(
        "bump", help="re-resolve a repo's excerpts at a new commit and report what changed"
    )
    _common(bump)
    bump.add_argument("repo", help='"OWNER/REPO"')
    bump.add_argument("commit", help="the new full 40-hex commit")
    bump.add_argument(
        "--write",
        action="store_true",
        help="write the new lock (and carry the pages' lines) when all resolve and every changed"
        " excerpt is accepted",
    )
    bump.add_argument(
        "--accept",
        action="append",
        default=[],
        metavar="ID",
        help="take this excerpt's changed text (read its diff first; repeatable)",
    )
    bump.add_argument(
        "--accept-changes", action="store_true", help="take every excerpt's changed text"
    )
    bump.add_argument(
        "--pages",
        action="append",
        type=Path,
        default=[],
        metavar="DIR",
        help="a folder of pages whose excerpt blocks' lines: follow the pins, besides the"
        " site's docs_dir (repeatable)",
    )
    bump.add_argument("--offline", action="store_true", help="do not try GitHub")
    bump.set_defaults(func=run_bump)

    claim = subparsers.add_parser(
        "claim", help="approve claims (a page's `/// claim | ID`, a registry Source) about excerpts"
    )
    actions = claim.add_subparsers(dest="action", required=True)
    approve = actions.add_parser(
        "approve",
        help="record that each claim holds for its excerpt's text as pinned now (its sha256)",
    )
    approve.add_argument("ids", nargs="+", metavar="ID", help="claim ids")
    approve.add_argument(
        "--excerpt", help="the excerpt the claims are about (needed for a claim new to the lock)"
    )
    approve.add_argument(
        "--lock", type=Path, default=None, help="the lock file (default: the site's, as for pin)"
    )
    approve.set_defaults(func=run_claim_approve)


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--lock",
        type=Path,
        default=None,
        help="the lock file (default: the lock of the site whose mkdocs.yml is in this folder or"
        " above)",
    )
    parser.add_argument(
        "--cache-dir", type=Path, default=None, help="blob cache (default $ITM_CACHE_DIR or .cache)"
    )
    parser.add_argument(
        "--git",
        action="append",
        default=[],
        metavar="[REPO=]DIR",
        help="a local clone to read files from at the commit (repeatable)",
    )


def _git_dirs(values: list[str], default_repo: str | None, lock: Lock) -> dict[str, Path]:
    dirs: dict[str, Path] = {}
    for value in values:
        name, sep, directory = value.partition("=")
        if sep and valid_name(name):
            dirs[name] = Path(directory)
        elif default_repo is not None:
            dirs[default_repo] = Path(value)
        elif len(lock.repos) == 1:
            dirs[next(iter(lock.repos))] = Path(value)
        else:
            raise InputError(
                f"--git {value}: which repo is this a clone of?",
                file=lock.display,
                entry="--git",
                fix="write --git OWNER/REPO=DIR",
            )
    return dirs


def _say(message: str) -> None:
    print(message, file=sys.stderr)


def _site(args: argparse.Namespace) -> SiteLock:
    """The lock the command works on, and the site whose settings go with it."""
    return find_lock(args.lock, Path.cwd())


def _load(site: SiteLock) -> Lock:
    return load_lock(site.path, root=site.root if site.in_site else None)


def _settings(site: SiteLock) -> Settings:
    """The site's settings: its plugin's options, then ITM_* variables (generator.settings)."""
    return Settings.load(site.root, site.options)


def _resolver(
    args: argparse.Namespace,
    site: SiteLock,
    lock: Lock,
    default_repo: str | None,
    *,
    commits: dict[str, str] | None = None,
    **options: Unpack[SourceOptions],
) -> Resolver:
    """A resolver for the site's settings, the flags winning over them. Every clone given is
    checked first (a folder in a git repository holding the commit needed: the lock's, or the
    one in `commits`), so a command never answers from its cache for a clone it was told to
    read."""
    settings = _settings(site)
    given = _git_dirs(args.git, default_repo, lock)
    configured = {k: v for k, v in settings.git_dirs.items() if k not in given}
    check_clones(lock, configured, option=GIT_DIRS_SETTING, commits=commits)
    check_clones(lock, given, option="--git", commits=commits)
    return Resolver.for_settings(
        lock,
        settings,
        cache_dir=args.cache_dir or settings.cache_dir,
        offline=not getattr(args, "online", False) and (args.offline or settings.offline),
        git_dirs={**configured, **given},
        log=_say,
        **options,
    )


def file_entry(repo: Repo, path: str, file: FullFile, command: str) -> FileId:
    """A [[files]] entry for a whole file read at the repo's pinned commit."""
    where = (
        "a clone (`git show COMMIT:PATH`, whose object id is this blob id)"
        if (file.origin.startswith("git:"))
        else f"{described(repo)} (the raw file at the commit)"
    )
    return FileId(
        repo=repo.name,
        commit=repo.commit,
        path=path,
        sha256=file.sha256,
        sha1_git=file.sha1_git,
        evidence=f"Read whole at commit {repo.commit} from {where} by `{command}`.",
    )


# ---------------------------------------------------------------- verify


def run_verify(args: argparse.Namespace) -> int:
    site = _site(args)
    lock = _load(site)
    if site.note:
        print(f"note: {site.note}")
    # Raising evidence reads every file afresh at its commit: from GitHub, or from a clone (git's
    # object ids bind a commit to its bytes just as GitHub's permalinks do), never from a cache.
    from_clone = args.raise_evidence and not args.online
    sources = ("forge",) if args.online else ("git",) if from_clone else SOURCES
    resolver = _resolver(args, site, lock, None, sources=sources)
    pins = [lock.pin(i) for i in args.id] if args.id else list(lock.pins)
    if not pins:
        raise InputError(
            "the lock lists no excerpts: there is nothing to verify",
            file=lock.display,
            fix="pin one with `itm pin`, or pass --lock the project's sources/lock.toml",
        )
    if from_clone:
        if not resolver.git_dirs:
            raise InputError(
                "--raise-evidence needs the files at their pinned commits: GitHub or a clone",
                entry="itm verify",
                fix="run `itm verify --online --raise-evidence`, or pass --git REPO=DIR with a"
                " clone that holds the pinned commit",
            )
        skipped = [pin for pin in pins if pin.repo not in resolver.git_dirs]
        for pin in skipped:
            print(f"skip {pin.id:<32} no clone of {pin.repo} given")
        pins = [pin for pin in pins if pin.repo in resolver.git_dirs]
    failures = 0
    raised = lock
    for pin in pins:
        try:
            excerpt = resolver.resolve(pin)
        except InputError as error:
            failures += 1
            print(f"FAIL {pin.id}\n  {error}")
            continue
        print(
            f"ok   {pin.id:<32} {excerpt.label:<36} {pin.sha256[:12]}  from {excerpt.resolved_from}"
            f"  [{pin.evidence_level}]"
        )
        # Read at the pinned commit just now (not from a cache): the strongest level.
        from_git = excerpt.resolved_from.startswith("git:")
        fresh = excerpt.resolved_from in WEB_FORGES or from_git
        if args.raise_evidence and fresh and pin.evidence_level != "upstream":
            commit = lock.repos[pin.repo].commit
            where = "a clone of" if from_git else f"{described(lock.repos[pin.repo])}'s copy of"
            raised = raised.with_pin(
                replace(
                    pin,
                    evidence_level="upstream",
                    carried_by=None,  # read at the commit: no release window is the evidence
                    evidence=f"Read from {where} {pin.repo} at commit {commit}, whose id"
                    " names these bytes as the permalink's does"
                    f" (itm verify --{'git' if from_clone else 'online'} --raise-evidence)."
                    f" Before: {pin.evidence}",
                )
            )
            print(f"     {pin.id}: evidence {pin.evidence_level} -> upstream")
    print(f"{len(pins) - failures} of {len(pins)} excerpts verified against {lock.display}")
    command = f"itm verify --{'git' if from_clone else 'online'} --raise-evidence"
    for (repo_name, path), file in sorted(resolver.files_read.items()):
        known = lock.file_id(repo_name, path) is not None
        print(
            f"file {repo_name} {path}: sha1_git {file.sha1_git}"
            f" ({'as recorded' if known else 'not recorded yet'})"
        )
        if args.raise_evidence and not known:
            raised = raised.with_file(file_entry(lock.repos[repo_name], path, file, command))
            print(f"     recorded its ids in [[files]] (Software Heritage: {core(file.sha1_git)})")
    if args.raise_evidence:
        raised = _record_proofs(resolver, raised, {repo for repo, _ in resolver.files_read})
    if args.online:
        _ask_the_archive(resolver, raised)
    if raised is not lock:
        write_lock(raised)
        print(f"wrote {lock.display}")
    return 1 if failures else 0


def _record_proofs(resolver: Resolver, lock: Lock, repos: set[str]) -> Lock:
    """The lock with git's objects of each repo's commit down to every file it records there
    ([[commits]]), read from the repo's clone; a repo read only from GitHub gets none (its raw
    files carry no git objects), and says so."""
    for name in sorted(repos):
        repo = lock.repos[name]
        paths = [f.path for f in lock.files if f.repo == name and lock.vouches(f)]
        proof = resolver.commit_proof(repo, repo.commit, paths)
        if isinstance(proof, str):
            print(f"commit {name} {repo.short}: git's objects not recorded ({proof})")
        elif proof != lock.proof(name):
            lock = lock.with_proof(proof)
            print(
                f"commit {name} {repo.short}: recorded git's objects in [[commits]] (the commit"
                f" and {len(proof.trees)} tree(s): {len(paths)} file(s) checked offline)"
            )
    return lock


def _ask_the_archive(resolver: Resolver, lock: Lock) -> None:
    """Whether Software Heritage has archived each whole file the lock (or this run) knows;
    prints the ones it has not, to be saved (https://archive.softwareheritage.org/save/)."""
    ids = {(f.repo, f.path): f.sha1_git for f in lock.files}
    ids.update({key: file.sha1_git for key, file in resolver.files_read.items()})
    missing = 0
    for (repo_name, path), sha1_git in sorted(ids.items()):
        try:
            found = archived(resolver.http, resolver.swh_base, sha1_git)
        except ArchiveError as error:
            print(f"archive? {repo_name} {path}: could not ask Software Heritage ({error})")
            continue
        if found:
            print(f"archived {repo_name} {path}: {core(sha1_git)}")
        else:
            missing += 1
            print(
                f"NOT ARCHIVED {repo_name} {path}: Software Heritage does not hold"
                f" {core(sha1_git)}; ask it to save {lock.repos[repo_name].url}"
                " (https://archive.softwareheritage.org/save/)"
            )
    if missing:
        print(f"{missing} file(s) not archived by Software Heritage")


# ---------------------------------------------------------------- pin


def new_repo(args: argparse.Namespace, lock: Lock) -> Repo:
    """The repo `itm pin` adds to the lock (--repo, --url, --forge, --commit, --license)."""
    if not valid_name(args.repo):
        raise InputError(
            f"repo name {args.repo!r} is not OWNER/REPO",
            file=lock.display,
            entry="--repo",
            fix="name it as its forge does: --repo owner/name (GitLab: group/subgroup/name)",
        )
    try:
        url, forge = check_repo(
            args.repo, args.url or f"https://github.com/{args.repo}", args.forge
        )
    except ForgeError as error:
        raise InputError(error.problem, file=lock.display, entry="--url", fix=error.fix) from None
    return Repo(name=args.repo, url=url, commit=args.commit, license=args.license, forge=forge)


def run_pin(args: argparse.Namespace) -> int:
    # --lines checked first: a typo fails before any file is read or fetched
    asked: tuple[Range, ...] = () if args.symbol else parse_line_spec(args.lines, entry="--lines")
    site = _site(args)
    # the site's first pin starts its lock (a path that exists but is no lock is an error)
    exists = site.path.exists() or site.path.is_symlink()
    lock = _load(site) if exists else Lock(site.path, display=display_path(site.path, site.root))
    if args.id in {p.id for p in lock.pins} and not args.replace:
        raise InputError(
            "an excerpt with this id exists",
            file=lock.display,
            entry=args.id,
            fix="pass --replace to re-pin it, or choose another id",
        )
    repo = lock.repos.get(args.repo)
    if repo is None:
        if not (args.commit and args.license):
            raise InputError(
                f"unknown repo {args.repo!r}",
                file=lock.display,
                entry=args.id,
                fix="add it with --commit FULL_HASH --license NAME (or pin into a known repo)",
            )
        repo = new_repo(args, lock)
        lock = replace(lock, repos={**lock.repos, repo.name: repo})

    if args.trusted_file is not None:
        if not (args.evidence and args.evidence_level):
            raise InputError(
                "a trusted file's evidence is yours to state",
                file=lock.display,
                entry=args.id,
                fix='pass --evidence "how you know this file is PATH at the commit" and'
                " --evidence-level (never more than was checked)",
            )
        try:
            data = read_regular(args.trusted_file, max_bytes=MAX_TEXT_BYTES)
            file = FullFile.of(data, str(args.trusted_file), f"file:{args.trusted_file}")
        except (OSError, ValueError) as error:
            raise InputError(
                f"cannot use it as the file's text: {getattr(error, 'strerror', None) or error}",
                file=str(args.trusted_file),
                entry="--trusted-file",
                fix=f"pass the UTF-8 text of {args.path} at the pinned commit",
            ) from None
        default_evidence = args.evidence
        # a file someone vouches for is checked against the lock's ids, never recorded as read
        Resolver(lock, cache_dir=args.cache_dir or _settings(site).cache_dir).check_file(
            repo, args.path, file, entry=args.id
        )
    else:
        resolver = _resolver(args, site, lock, args.repo)
        file = resolver.file_at(repo, args.path, repo.commit, entry=args.id)
        resolver.check_file(repo, args.path, file, entry=args.id)
        how = (
            "`git show COMMIT:PATH` in a local clone"
            if file.origin.startswith("git:")
            else f"{described(repo)} (raw file at the commit)"
        )
        default_evidence = f"read from {how} by `itm pin`"

    if args.symbol:
        try:
            ranges: tuple[Range, ...] = (symbol_range(file.text, args.symbol),)
        except SymbolError as error:
            raise InputError(
                f"symbol {args.symbol!r} in {args.path}: {error}",
                file=lock.display,
                entry=args.id,
                fix="check the dotted name (Class.method), or pin --lines",
            ) from None
    else:
        ranges = asked
    if not fits(file.lines, ranges):
        raise InputError(
            f"lines {format_ranges(ranges)} run past the end of {args.path}"
            f" ({len(file.lines)} lines)",
            file=lock.display,
            entry=args.id,
            fix="check the line numbers",
        )
    text = "".join(cut(file.lines, ranges))  # the pinned lines, each ending in "\n"
    pin = Pin(
        id=args.id,
        repo=repo.name,
        path=args.path,
        symbol=args.symbol,
        ranges=ranges,
        sha256=sha256_hex(text),
        evidence_level=args.evidence_level or "upstream",
        evidence=args.evidence or default_evidence,
    )
    new_lock = lock.with_pin(pin)
    if file.read_at_pin and lock.file_id(repo.name, args.path) is None:
        new_lock = new_lock.with_file(file_entry(repo, args.path, file, "itm pin"))
        if file.origin.startswith("git:"):
            new_lock = _record_proofs(resolver, new_lock, {repo.name})
    print(
        f"{pin.id}: {repo.name} {args.path} {format_ranges(ranges)}"
        f"{f' (symbol {pin.symbol})' if pin.symbol else ''} sha256 {pin.sha256}"
        f" [{pin.evidence_level}] from {file.origin}"
    )
    if file.read_at_pin:
        print(f"  file sha1_git {file.sha1_git} (Software Heritage: {core(file.sha1_git)})")
    if args.dry_run:
        print("(dry run: nothing written)")
        return 0
    write_lock(new_lock)
    print(f"wrote {lock.display}")
    # the text just read and checked, kept where the next build or `itm verify` looks first: a
    # pin made from a clone verifies offline without that clone. A trusted file's text only when
    # it matched the ids of a file read upstream ([[files]]): else the cache, read first, would
    # vouch for text no clone or GitHub ever confirmed
    if file.read_at_pin or lock.file_id(repo.name, args.path) is not None:
        cache_dir = args.cache_dir or _settings(site).cache_dir
        Resolver(new_lock, cache_dir=cache_dir).remember(pin, text)
    return 0


# ---------------------------------------------------------------- bump


def run_bump(args: argparse.Namespace) -> int:
    site = _site(args)
    lock = _load(site)
    repo = lock.repos.get(args.repo)
    if repo is None:
        raise InputError(
            f"unknown repo {args.repo!r}",
            file=lock.display,
            entry=args.repo,
            fix=f"use one of: {', '.join(lock.repos)}",
        )
    check_commit(args.commit, file=lock.display, entry=args.repo)
    new_repo = replace(repo, commit=args.commit)
    resolver = _resolver(args, site, lock, args.repo, commits={repo.name: args.commit})
    pins = [p for p in lock.pins if p.repo == repo.name]
    print(f"bump {repo.name} {repo.short} -> {new_repo.short}: {len(pins)} excerpts")
    changes: list[tuple[Pin, Change]] = []
    files: dict[str, FullFile] = {}  # path -> the whole file at the new commit
    for pin in pins:
        file = resolver.file_at(new_repo, pin.path, new_repo.commit, entry=pin.id)
        files[pin.path] = file
        change = bump_pin(pin, file, new_repo)
        print(f"  {change.status:<10} {pin.id:<32} {change.detail}")
        if change.status == "changed":
            change.old_text = _show_diff(pin, change, file, resolver, new_repo)
        changes.append((pin, change))
    updated = [change.pin for _, change in changes if change.pin is not None]
    # a changed text whose old text cannot be read has no diff and no way to carry pages' lines
    blocked = [pin.id for pin, change in changes if change.pin is None or change.old_text is None]
    unaccepted = _unaccepted(args, lock, changes)
    pages, unsure = _carry_pages(args, site, changes, repo, new_repo)
    if blocked:
        print(
            f"{len(blocked)} excerpt(s) need a hand re-pin at {new_repo.short}:"
            f" {', '.join(blocked)}"
            f" (`itm pin ID --replace ...` after the bump, or anchor them to a symbol)"
        )
    refused = blocked or unaccepted or unsure
    if not args.write:
        print(f"(report only: pass --write to update {lock.display})")
        return 1 if refused else 0
    if refused:
        print("not written: every excerpt must re-resolve, each changed one be accepted, and the"
              " pages that select their lines be known")  # fmt: skip
        return 1
    # the repo's [[files]] ids were of the old commit: those of the files just read replace them;
    # its mirrors move to the new commit only where their lines are checked there
    kept = tuple(f for f in lock.files if f.repo != repo.name)
    mirrors = tuple(
        rebind_mirror(mirror, lock, new_repo, files, resolver)
        if mirror.repo == repo.name
        else mirror
        for mirror in lock.mirrors
    )
    new_lock = replace(
        lock,
        repos={**lock.repos, repo.name: new_repo},
        files=kept,
        mirrors=mirrors,
        commits=tuple(c for c in lock.commits if c.repo != repo.name),  # of the old commit
    )
    for pin in updated:
        new_lock = new_lock.with_pin(pin)
    for path, file in files.items():
        new_lock = new_lock.with_file(file_entry(new_repo, path, file, "itm bump"))
    new_lock = _record_proofs(resolver, new_lock, {repo.name})
    _write_with_pages(new_lock, pages)
    print(f"wrote {lock.display}")
    # as `itm pin` does: each excerpt's text, cut from the whole file read from git or GitHub at
    # the new commit and checked, kept where the next build or `itm verify` looks first
    cache = Resolver(new_lock, cache_dir=args.cache_dir or _settings(site).cache_dir)
    for pin in updated:
        file = files[pin.path]
        text = "".join(cut(file.lines, pin.ranges))
        if file.read_at_pin and sha256_hex(text) == pin.sha256:
            cache.remember(pin, text)
    return 0


def _show_diff(
    pin: Pin, change: Change, file: FullFile, resolver: Resolver, new_repo: Repo
) -> str | None:
    """Print the unified diff of an excerpt whose text changed, from its text at the old commit
    (read and checked against the lock) to the new; returns the old text, None if unreadable."""
    old_commit = resolver.lock.repos[pin.repo].short
    try:
        old_text = resolver.resolve(pin).text
    except InputError as error:
        print(f"    (its text at {old_commit} cannot be read to show the change: {error.problem})")
        return None
    new_ranges = change.pin.ranges if change.pin is not None else pin.ranges
    new_text = "".join(cut(file.lines, new_ranges)) if fits(file.lines, new_ranges) else ""
    filename = pin.path.rsplit("/", 1)[-1]
    diff = difflib.unified_diff(
        [line + "\n" for line in split_lines(old_text)],
        [line + "\n" for line in split_lines(new_text)],
        fromfile=f"{pin.id} at {old_commit} ({filename} {format_ranges(pin.ranges)})",
        tofile=f"{pin.id} at {new_repo.short} ({filename} {format_ranges(new_ranges)})",
    )
    print("".join("    " + line for line in diff), end="")
    return old_text


def _unaccepted(
    args: argparse.Namespace, lock: Lock, changes: list[tuple[Pin, Change]]
) -> list[str]:
    """The excerpts whose text changed that no --accept / --accept-changes took (each named);
    the claims about the accepted ones, which must be approved again, are listed."""
    changed = [pin.id for pin, change in changes if change.status == "changed" and change.pin]
    stray = sorted(set(args.accept) - set(changed))
    if stray:
        raise InputError(
            f"--accept {stray[0]}: no excerpt of this bump changed text under that id",
            file=lock.display,
            entry="--accept",
            fix=f"accept only excerpts whose text changed ({', '.join(changed) or 'none did'})",
        )
    unaccepted = [i for i in changed if not (args.accept_changes or i in args.accept)]
    for claim in (c for c in lock.claims if c.excerpt in changed):
        print(
            f"  claim      {claim.id:<32} about {claim.excerpt}, whose text changes: read the new"
            f" lines, then `itm claim approve {claim.id}` (builds stop on it until then)"
        )
    if unaccepted:
        print(
            f"{len(unaccepted)} excerpt(s) changed text: {', '.join(unaccepted)}. Read the diffs"
            " above and the prose that quotes them, then accept each with --accept ID (or all"
            " with --accept-changes)"
        )
    return unaccepted


def _carry_pages(
    args: argparse.Namespace,
    site: SiteLock,
    changes: list[tuple[Pin, Change]],
    repo: Repo,
    new_repo: Repo,
) -> tuple[dict[Path, list[str]], bool]:
    """Every page's `lines:` of an excerpt whose lines move or change, carried to the numbers
    the same code has at the new commit, or marked stale where it changed (selections.py):
    (page -> its new lines, whether some pages could not be checked)."""
    moves = {
        pin.id: Move(pin.ranges, change.old_text, change.pin.ranges, change.new_text)
        for pin, change in changes
        if change.pin is not None and change.old_text is not None and change.status != "unchanged"
    }
    if not moves:
        return {}, False
    # The site's own pages always (--pages alone left them quoting other code), and --pages too
    folders = [*([site.docs] if site.in_site and site.docs else []), *args.pages]
    if not folders:
        print(
            f"pages not checked: {', '.join(moves)} move or change, and no site says which pages"
            " quote their lines; pass --pages DIR (the folder of the pages that use this lock)"
        )
        return {}, True
    pages: dict[Path, list[str]] = {}
    for path in page_files(folders):
        display = display_path(path, site.root if site.in_site else None)
        lines = read_page(path, display)
        found = selections(lines, moves, display)
        for selection in reversed(found):  # bottom up: a stale mark adds a line
            move = moves[selection.excerpt]
            new = carried(selection.ranges, line_map(move))
            old = format_ranges(selection.ranges, dash="-")
            if new is not None:
                rewrite(lines, selection, new)
                print(f"  page       {display}: {selection.excerpt} lines {old} ->"
                      f" {format_ranges(new, dash='-')}")  # fmt: skip
            else:
                note = (
                    f"lines {old} were chosen at {repo.short}; at {new_repo.short} `itm bump`"
                    " found them changed: choose the lines again, then delete this option"
                )
                mark_stale(lines, selection, note)
                print(f"  page       {display}: {selection.excerpt} lines {old} changed: marked"
                      " stale (the build stops on it until they are chosen again)")  # fmt: skip
        if found:
            pages[path] = lines
    return pages, False


def _write_with_pages(lock: Lock, pages: dict[Path, list[str]]) -> None:
    """The pages with their carried lines, then the lock; a page already rewritten goes back as
    it was if a later write fails, so pages and lock never disagree."""
    written: list[tuple[Path, bytes]] = []
    try:
        for path, lines in pages.items():
            before = read_regular(path, max_bytes=MAX_TEXT_BYTES)
            write_output(path, "\n".join(lines).encode("utf-8"))
            written.append((path, before))
        write_lock(lock)
    except BaseException:
        for path, before in written:
            write_output(path, before)
        raise
    for path, _ in written:
        print(f"wrote {display_path(path)}")


def rebind_mirror(
    mirror: Mirror, lock: Lock, new_repo: Repo, files: dict[str, FullFile], resolver: Resolver
) -> Mirror:
    """The mirror at the new commit when its lines are the new file's (the whole file unchanged,
    or its windows compared line by line); else as it was, vouching for its old commit only."""
    label = f"  mirror {mirror.spec} {mirror.member}"
    if not lock.vouches(mirror):
        return mirror  # already of another commit: nothing here checks it
    file = files.get(mirror.path)
    if file is None:
        print(f"{label}: stays at {mirror.commit[:12]} (no excerpt of {mirror.path} was read)")
        return mirror
    moved = msgspec.structs.replace(mirror, commit=new_repo.commit)
    old = lock.file_id(mirror.repo, mirror.path)
    if old is not None and old.sha1_git == file.sha1_git:
        print(f"{label}: moves to {new_repo.short} ({mirror.path} is unchanged)")
        return moved
    lines = resolver.mirror_lines(mirror)
    windows = mirror.lines or ((1, len(file.lines)),)
    same = not isinstance(lines, str) and all(
        fits(lines, (w,), mirror.offset)
        and cut(lines, (w,), mirror.offset) == cut(file.lines, (w,))
        for w in windows
    )
    if mirror.lines == () and not isinstance(lines, str):
        same = same and len(lines) == len(file.lines)
    if same:
        print(f"{label}: moves to {new_repo.short} (its lines are the new file's)")
        return moved
    why = lines if isinstance(lines, str) else f"its lines differ from {mirror.path}'s there"
    print(
        f"{label}: stays at {mirror.commit[:12]}, vouching for nothing at {new_repo.short} ({why})"
    )
    return mirror


class Change:
    """What a bump found for one excerpt; `pin` is the re-pinned entry, None if it needs a hand."""

    def __init__(self, status: str, detail: str, pin: Pin | None, new_text: str = "") -> None:
        self.status = status  # unchanged | moved | changed | lost
        self.detail = detail
        self.pin = pin
        self.new_text = new_text  # the re-pinned lines' text at the new commit
        # the text at the old commit: the new one's when only its place moved, else read to
        # show the change (None: it could not be read)
        self.old_text: str | None = new_text if status in ("unchanged", "moved") else None


def bump_pin(pin: Pin, file: FullFile, new_repo: Repo) -> Change:
    """Re-resolve one excerpt in the whole file at the new commit."""
    filename = pin.path.rsplit("/", 1)[-1]
    old = format_ranges(pin.ranges) if pin.ranges else "?"
    source = "a git clone" if file.origin.startswith("git:") else described(new_repo)

    def repinned(ranges: tuple[Range, ...]) -> Pin:
        return replace(
            pin,
            ranges=ranges,
            sha256=sha256_hex("".join(cut(file.lines, ranges))),
            evidence_level="upstream",
            evidence=f"re-resolved at {new_repo.short} from {source} by `itm bump`",
            carried_by=None,
        )

    if pin.symbol is not None:
        try:
            ranges: tuple[Range, ...] = (symbol_range(file.text, pin.symbol),)
        except SymbolError as error:
            return Change("lost", f"symbol {pin.symbol!r}: {error}", None)
        new = repinned(ranges)
        now = format_ranges(ranges)
        text = "".join(cut(file.lines, ranges))
        if new.sha256 == pin.sha256:
            if ranges == pin.ranges:
                return Change("unchanged", f"{filename} {now}", new, text)
            return Change("moved", f"{filename} {old} -> {now} (same text)", new, text)
        return Change(
            "changed",
            f"{filename} {old} -> {now} (text differs: {pin.sha256[:12]}… -> {new.sha256[:12]}…)",
            new,
            text,
        )

    # Line-anchored: the same text at the same lines, or moved as a whole; else a hand re-pin.
    if fits(file.lines, pin.ranges) and sha256_hex("".join(cut(file.lines, pin.ranges))) == (
        pin.sha256
    ):
        text = "".join(cut(file.lines, pin.ranges))
        return Change("unchanged", f"{filename} {old}", repinned(pin.ranges), text)
    shift = find_placement(file.lines, pin.ranges, pin.sha256)
    if shift is not None:
        ranges = tuple((a + shift, b + shift) for a, b in pin.ranges)
        text = "".join(cut(file.lines, ranges))
        return Change(
            "moved",
            f"{filename} {old} -> {format_ranges(ranges)} (same text)",
            repinned(ranges),
            text,
        )
    return Change(
        "changed",
        f"{filename} {old}: the text differs and was not found elsewhere (line-anchored)",
        None,
    )


# ---------------------------------------------------------------- claim


def run_claim_approve(args: argparse.Namespace) -> int:
    """Approve each claim against its excerpt's text as pinned now: [[claims]] records the
    excerpt's sha256, and builds stop naming the claim once that text changes."""
    site = _site(args)
    lock = _load(site)
    for claim_id in args.ids:
        if not CLAIM_ID.fullmatch(claim_id):
            raise InputError(
                "a claim id is lowercase letters, digits, '.', '_', '-' or '/'",
                file=lock.display,
                entry=claim_id,
                fix="use the id after the bar of the page's `/// claim | ID` block",
            )
        known = next((c for c in lock.claims if c.id == claim_id), None)
        excerpt_id = args.excerpt or (known.excerpt if known else None)
        if excerpt_id is None:
            raise InputError(
                "the lock has no claim with this id yet",
                file=lock.display,
                entry=claim_id,
                fix=f"name the excerpt it is about: `itm claim approve {claim_id} --excerpt ID`",
            )
        pin = lock.pin(excerpt_id)
        lock = lock.with_claim(Claim(id=claim_id, excerpt=excerpt_id, sha256=pin.sha256))
        before = f" (approved before against {known.sha256[:12]}…)" if known else ""
        print(
            f"approved {claim_id}: about {excerpt_id}, {pin.path}"
            f" {format_ranges(pin.ranges) or pin.symbol} (sha256 {pin.sha256[:12]}…){before}"
        )
    write_lock(lock)
    print(f"wrote {lock.display}")
    return 0

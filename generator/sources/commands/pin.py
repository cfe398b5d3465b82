"""`itm pin`: add (or --replace) an excerpt from a trusted source and record its hash."""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

from generator.errors import InputError
from generator.sources.commands.context import (
    add_lock_options,
    lock_of,
    resolver_for,
    settings_of,
    site_of,
)
from generator.sources.commands.evidence import file_entry, record_proofs
from generator.sources.excerpt import cut, fits, sha256_hex
from generator.sources.forges import FORGES, ForgeError, check_repo, described, valid_name
from generator.sources.lockschema import (
    EVIDENCE_LEVELS,
    MAX_TEXT_BYTES,
    Lock,
    Pin,
    Repo,
    display_path,
)
from generator.sources.lockwrite import write_lock
from generator.sources.ranges import Range, format_ranges, parse_line_spec
from generator.sources.resolve import Resolver
from generator.sources.swh import core
from generator.sources.symbols import SymbolError, symbol_range
from generator.sources.wholefiles import FullFile
from generator.store import read_regular


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    pin = subparsers.add_parser(
        "pin", help="add (or --replace) an excerpt from a trusted source and record its hash"
    )
    add_lock_options(pin)
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
    site = site_of(args)
    # the site's first pin starts its lock (a path that exists but is no lock is an error)
    exists = site.path.exists() or site.path.is_symlink()
    lock = lock_of(site) if exists else Lock(site.path, display=display_path(site.path, site.root))
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
        Resolver(lock, cache_dir=args.cache_dir or settings_of(site).cache_dir).check_file(
            repo, args.path, file, entry=args.id
        )
    else:
        resolver = resolver_for(args, site, lock, args.repo)
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
            new_lock = record_proofs(resolver, new_lock, {repo.name})
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
        cache_dir = args.cache_dir or settings_of(site).cache_dir
        Resolver(new_lock, cache_dir=cache_dir).remember(pin, text)
    return 0

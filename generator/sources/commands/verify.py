"""`itm verify`: check that every pinned excerpt resolves and matches its sha256; with
--raise-evidence, record what was read at the pinned commit.
"""

from __future__ import annotations

import argparse
from dataclasses import replace

from generator.errors import InputError
from generator.sources.commands.context import (
    add_lock_options,
    chosen_pins,
    lock_of,
    resolver_for,
    site_of,
)
from generator.sources.commands.evidence import file_entry, record_proofs
from generator.sources.forges import WEB_FORGES, described
from generator.sources.lockschema import Lock
from generator.sources.lockwrite import write_lock
from generator.sources.resolve import SOURCES, Resolver
from generator.sources.swh import ArchiveError, archived, core


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    verify = subparsers.add_parser(
        "verify", help="check that every pinned excerpt resolves and matches its sha256"
    )
    add_lock_options(verify)
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


def run_verify(args: argparse.Namespace) -> int:
    site = site_of(args)
    lock = lock_of(site)
    if site.note:
        print(f"note: {site.note}")
    # Raising evidence reads every file afresh at its commit: from GitHub, or from a clone (git's
    # object ids bind a commit to its bytes just as GitHub's permalinks do), never from a cache.
    from_clone = args.raise_evidence and not args.online
    sources = ("forge",) if args.online else ("git",) if from_clone else SOURCES
    resolver = resolver_for(args, site, lock, None, sources=sources)
    pins = chosen_pins(
        lock,
        args.id,
        nothing="verify",
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
        for pin in (pin for pin in pins if pin.repo not in resolver.git_dirs):
            print(f"skip {pin.id:<32} no clone of {pin.repo} given")
        pins = [pin for pin in pins if pin.repo in resolver.git_dirs]
    command = f"itm verify --{'git' if from_clone else 'online'} --raise-evidence"
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
                    f" names these bytes as the permalink's does ({command})."
                    f" Before: {pin.evidence}",
                )
            )
            print(f"     {pin.id}: evidence {pin.evidence_level} -> upstream")
    print(f"{len(pins) - failures} of {len(pins)} excerpts verified against {lock.display}")
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
        raised = record_proofs(resolver, raised, {repo for repo, _ in resolver.files_read})
    if args.online:
        _ask_the_archive(resolver, raised)
    if raised is not lock:
        write_lock(raised)
        print(f"wrote {lock.display}")
    return 1 if failures else 0


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

"""`itm bump`: re-resolve a repo's excerpts at a new commit, report what changed, and move
the pin (its pages' `lines:` too) once every change is accepted.
"""

from __future__ import annotations

import argparse
import difflib
from dataclasses import replace
from pathlib import Path

import msgspec

from generator.errors import InputError
from generator.sources.commands.context import (
    add_lock_options,
    lock_of,
    resolver_for,
    settings_of,
    site_of,
)
from generator.sources.commands.evidence import file_entry, record_proofs
from generator.sources.commands.pages import carry_pages, write_with_pages
from generator.sources.commands.repin import Change, bump_pin
from generator.sources.excerpt import cut, fits, sha256_hex, split_lines
from generator.sources.lockrules import check_commit
from generator.sources.lockschema import Lock, Mirror, Pin, Repo
from generator.sources.ranges import format_ranges
from generator.sources.resolve import Resolver
from generator.sources.wholefiles import FullFile


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    bump = subparsers.add_parser(
        "bump", help="re-resolve a repo's excerpts at a new commit and report what changed"
    )
    add_lock_options(bump)
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


def run_bump(args: argparse.Namespace) -> int:
    site = site_of(args)
    lock = lock_of(site)
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
    resolver = resolver_for(args, site, lock, args.repo, commits={repo.name: args.commit})
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
    pages, unsure = carry_pages(args, site, changes, repo, new_repo)
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
    new_lock = record_proofs(resolver, new_lock, {repo.name})
    write_with_pages(new_lock, pages)
    print(f"wrote {lock.display}")
    # as `itm pin` does: each excerpt's text, cut from the whole file read from git or GitHub at
    # the new commit and checked, kept where the next build or `itm verify` looks first
    cache = Resolver(new_lock, cache_dir=args.cache_dir or settings_of(site).cache_dir)
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
    lines = resolver.registry.lines(mirror)
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

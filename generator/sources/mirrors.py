"""`itm mirror add PACKAGE==VERSION`: record a registry archive that carries pinned lines.

The release's archive comes through the PEP 691 index (its sha256 checked against the index's,
and recorded); the [[mirrors]] entries are one per member and offset, vouching for exactly the
upstream lines found there at the repo's pinned commit, and each is read back the way a build
reads it (offline, from the archive just cached) before anything is written.

    itm mirror add gpt-2-finetuning==1.0.14                  # every pin of the lock
    itm mirror add transformers==5.14.1 --id gpt2.attn       # only some pins
    itm mirror add transformers==5.14.1 --window 5.10.0..5.16.0
        # also report which releases in the window carry each pin's lines (nothing more written)
"""

from __future__ import annotations

import argparse
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

from packaging.version import InvalidVersion, Version

from generator.errors import InputError
from generator.settings import Settings
from generator.sources.clones import check_clones
from generator.sources.commands.context import (
    add_lock_options,
    chosen_pins,
    git_dirs,
    lock_of,
    say,
    settings_of,
    site_of,
)
from generator.sources.fetch import FetchError, Http, NetSettings
from generator.sources.lockschema import Lock, Mirror, Pin
from generator.sources.lockwrite import write_lock
from generator.sources.mirror_window import MAX_WINDOW, parse_window, scan_window
from generator.sources.placement import Placement, find_pins
from generator.sources.pypi import (
    MirrorError,
    Release,
    archive_names,
    download,
    index_files,
    project_url,
    releases,
)
from generator.sources.ranges import Range, format_ranges
from generator.sources.resolve import Resolver
from generator.store import Store

NOTE = "found by `itm mirror add`"
_SPEC = re.compile(r"(?P<package>[A-Za-z0-9][A-Za-z0-9._-]*)==(?P<version>[A-Za-z0-9.+!_-]+)")


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    mirror = subparsers.add_parser(
        "mirror", help="record registry archives that carry pinned lines ([[mirrors]])"
    )
    actions = mirror.add_subparsers(dest="action", required=True)
    add = actions.add_parser(
        "add",
        help="find each pin's lines in a release's archive on the package index and record where",
    )
    add_lock_options(add)
    add.add_argument("spec", metavar="PACKAGE==VERSION", help='e.g. "transformers==5.14.1"')
    add.add_argument("--filename", help="the release's archive to read (default: its sdist)")
    add.add_argument("--id", action="append", default=[], help="only this pin (repeatable)")
    add.add_argument(
        "--window",
        metavar="FIRST..LAST",
        help=f"also report which releases from FIRST to LAST (at most {MAX_WINDOW}) carry each"
        " pin's lines",
    )
    add.add_argument("--dry-run", action="store_true", help="report, do not write the lock")
    add.set_defaults(func=run_add)


def run_add(args: argparse.Namespace) -> int:
    package, version = parse_spec(args.spec)
    window = parse_window(args.window) if args.window else None
    site = site_of(args)
    lock = lock_of(site)
    settings = settings_of(site)
    pins = chosen_pins(
        lock,
        args.id,
        nothing="look for",
        fix="pin one first (`itm pin ... --trusted-file FILE` reads a file of the archive)",
    )
    if settings.offline:
        raise InputError(
            "`itm mirror add` reads the package index, and the site is set offline",
            entry="offline",
            fix="unset ITM_OFFLINE (or the plugin's offline option) for this command",
        )
    cache = Store(args.cache_dir or settings.cache_dir)
    http = Http(NetSettings(deadline=settings.download_deadline), log=say)
    base = settings.pypi_simple
    listed = _listing(http, base, package, lock)
    release = pick_archive(listed, package, version, args.filename, lock)
    archive = _fetch(http, cache, base, release, lock)
    print(
        f"mirror {release.package}=={release.version}: {release.filename} (sha256 {_sha(release)})"
    )
    texts = pin_texts(lock, settings, pins, cache_dir=args.cache_dir, git=args.git)
    found = find_pins(archive, release.filename, pins, texts)
    read = readable(with_mirrors(lock, release, mirror_entries(lock, release, found)), found,
                    args.cache_dir or settings.cache_dir)  # fmt: skip
    found = {pin_id: placed for pin_id, placed in found.items() if pin_id in read}
    new_lock = with_mirrors(lock, release, mirror_entries(lock, release, found))
    for pin in pins:
        _report(pin, found.get(pin.id))
    if window is not None:
        scan_window(http, cache, base, listed, release, window, pins, texts)
    if not found:
        print(f"{release.filename} carries none of these pins' lines: nothing written")
        return 1
    if args.dry_run:
        print("(dry run: nothing written)")
        return 0
    write_lock(new_lock)
    count = sum(1 for m in new_lock.mirrors if m.filename == release.filename)
    print(f"wrote {lock.display} ({count} [[mirrors]] entries for {release.filename})")
    return 0


def parse_spec(spec: str) -> tuple[str, str]:
    """ "transformers==5.14.1" -> ("transformers", "5.14.1")."""
    match = _SPEC.fullmatch(spec.strip())
    if match is None:
        raise InputError(
            f"cannot read {spec!r} as PACKAGE==VERSION",
            entry="itm mirror add",
            fix='name one release: "transformers==5.14.1"',
        )
    return match["package"], match["version"]


def pick_archive(
    listed: list[dict[str, Any]], package: str, version: str, filename: str | None, lock: Lock
) -> Release:
    """The release's archive to read: `filename`, else the first of `releases`' order."""
    try:
        archives = releases(listed, package).get(Version(version), [])
    except InvalidVersion:
        archives = []
    if filename is not None:
        archives = [r for r in archives if r.filename == filename]
    if not archives:
        known = sorted({str(v) for v in releases(listed, package)}, key=Version)[-5:]
        raise InputError(
            f"the index lists no {filename or 'archive'} of {package}=={version}",
            file=lock.display,
            entry="itm mirror add",
            fix=f"name a release it has (the latest: {', '.join(known) or 'none'})"
            + (" and one of its archives" if filename else ""),
        )
    return archives[0]


def pin_texts(
    lock: Lock, settings: Settings, pins: list[Pin], *, cache_dir: Path | None, git: list[str]
) -> dict[str, str]:
    """The pins whose verified text is at hand without the network: from the cache or a clone."""
    given = git_dirs(git, None, lock)
    check_clones(lock, given, option="--git")  # a clone named but not there is refused
    resolver = Resolver.for_settings(
        lock,
        settings,
        cache_dir=cache_dir or settings.cache_dir,
        offline=True,
        sources=("cache", "git"),
        git_dirs={**settings.git_dirs, **given},
    )
    texts: dict[str, str] = {}
    for pin in pins:
        try:
            texts[pin.id] = resolver.resolve(pin).text
        except InputError:
            continue  # placed by its hash alone
    return texts


def mirror_entries(lock: Lock, release: Release, found: dict[str, Placement]) -> list[Mirror]:
    """[[mirrors]] entries for what was found: one per file, member and offset, vouching for the
    pins' ranges placed there (merged where they touch), at each repo's pinned commit."""
    windows: dict[tuple[str, str, str, int], list[Range]] = {}
    for pin_id, (member, offsets) in found.items():
        pin = lock.pin(pin_id)
        for rng, offset in zip(pin.ranges, offsets, strict=True):
            windows.setdefault((pin.repo, pin.path, member, offset), []).append(rng)
    sha256 = str(release.entry["hashes"]["sha256"])
    return [
        Mirror(
            repo=repo,
            commit=lock.repos[repo].commit,
            path=path,
            package=release.package,
            version=release.version,
            filename=release.filename,
            sha256=sha256,
            member=member,
            note=NOTE,
            lines=merged(ranges),
            offset=offset,
        )
        for (repo, path, member, offset), ranges in sorted(windows.items())
    ]


def merged(ranges: list[Range]) -> tuple[Range, ...]:
    """Ranges sorted, those that overlap or touch joined (the lock's form of a window list)."""
    out: list[Range] = []
    for first, last in sorted(ranges):
        if out and first <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], last))
        else:
            out.append((first, last))
    return tuple(out)


def with_mirrors(lock: Lock, release: Release, entries: list[Mirror]) -> Lock:
    """The lock with `entries` in place of every entry of the same archive."""
    kept = tuple(m for m in lock.mirrors if m.filename != release.filename)
    return replace(lock, mirrors=(*kept, *entries))


def readable(lock: Lock, found: dict[str, Placement], cache_dir: Path) -> set[str]:
    """The found pins that read back as a build reads them: offline, from the archive in the
    cache, through the lock's new entries (hash, placement and symbol checked)."""
    resolver = Resolver(lock, cache_dir=cache_dir, offline=True, sources=("pypi",))
    read: set[str] = set()
    for pin_id in found:
        try:
            resolver.resolve(lock.pin(pin_id))
        except InputError:
            continue
        read.add(pin_id)
    return read


def _listing(http: Http, base: str, package: str, lock: Lock) -> list[dict[str, Any]]:
    try:
        return index_files(http, base, package)
    except (FetchError, MirrorError) as error:
        raise InputError(
            f"cannot list {package} on the index: {getattr(error, 'reason', error)}",
            file=lock.display,
            entry="itm mirror add",
            fix="check the package's name and that the index (ITM_PYPI_SIMPLE) is reachable",
        ) from None


def _fetch(http: Http, cache: Store, base: str, release: Release, lock: Lock) -> bytes:
    """The release's archive, downloaded and checked, and readable as an archive."""
    try:
        archive = download(http, cache, project_url(base, release.package), release.entry, None)
        archive_names(archive, release.filename)
        return archive
    except (FetchError, MirrorError) as error:
        raise InputError(
            f"cannot download {release.filename}: {getattr(error, 'reason', error)}",
            file=lock.display,
            entry="itm mirror add",
            fix="run it again where the index is reachable, or read another of the release's"
            " archives (--filename)",
        ) from None


def _sha(release: Release) -> str:
    return str((release.entry.get("hashes") or {}).get("sha256", "?"))[:12] + "…"


def _report(pin: Pin, placed: Placement | None) -> None:
    if placed is None:
        print(f"  not found {pin.id:<32} {pin.path} {format_ranges(pin.ranges)}")
        return
    member, offsets = placed
    at = ", ".join(
        f"{format_ranges((r,))} at {s:+d}" for r, s in zip(pin.ranges, offsets, strict=True)
    )
    print(f"  carried   {pin.id:<32} {member}: {at}")

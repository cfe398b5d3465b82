"""`itm mirror add --window FIRST..LAST`: which releases in a window carry each pin's lines.

A report only (nothing is written): each release of the window, an archive of the same kind as
the one chosen, is downloaded with its deadline, checked by its hash and searched for the pins'
lines, as `itm mirror add` (generator/sources/mirrors.py) searches the release it records.
"""

from __future__ import annotations

import contextlib
from typing import Any

from packaging.version import InvalidVersion, Version

from generator.errors import InputError
from generator.sources.fetch import FetchError, Http
from generator.sources.lockschema import Pin
from generator.sources.placement import find_pins
from generator.sources.pypi import MirrorError, Release, download, kind_rank, project_url, releases
from generator.store import Store

MAX_WINDOW = 40  # releases one --window may download


def parse_window(text: str) -> tuple[Version, Version]:
    """ "5.10.0..5.16.0" -> the two versions, first not after last."""
    first, sep, last = text.partition("..")
    bounds: tuple[Version, Version] | None = None
    with contextlib.suppress(InvalidVersion):
        bounds = (Version(first.strip()), Version(last.strip()))
    if not sep or bounds is None or bounds[0] > bounds[1]:
        raise InputError(
            f"cannot read the window {text!r}",
            entry="--window",
            fix="write two versions, the older first: --window 5.10.0..5.16.0",
        )
    return bounds


def scan_window(
    http: Http,
    cache: Store,
    base: str,
    listed: list[dict[str, Any]],
    chosen: Release,
    window: tuple[Version, Version],
    pins: list[Pin],
    texts: dict[str, str],
) -> None:
    """Report, for each pin, which releases of the window carry its lines (an archive of the
    same kind as the one chosen, each downloaded with its deadline and checked by its hash)."""
    low, high = window
    kind = kind_rank(chosen.filename)
    inside = sorted(v for v in releases(listed, chosen.package) if low <= v <= high)
    if len(inside) > MAX_WINDOW:
        raise InputError(
            f"the window {low}..{high} holds {len(inside)} releases, more than {MAX_WINDOW}",
            entry="--window",
            fix="narrow the window",
        )
    carried: dict[str, list[str]] = {pin.id: [] for pin in pins}
    unread: list[str] = []
    for version in inside:
        archives = releases(listed, chosen.package)[version]
        release = next((r for r in archives if kind_rank(r.filename) == kind), archives[0])
        try:
            archive = download(http, cache, project_url(base, release.package), release.entry, None)
            found = find_pins(archive, release.filename, pins, texts)
        except (FetchError, MirrorError) as error:
            unread.append(f"{version} ({getattr(error, 'reason', error)})")
            continue
        for pin_id in found:
            carried[pin_id].append(str(version))
    print(f"window {chosen.package} {low}..{high}: {len(inside)} releases")
    for pin in pins:
        have = carried[pin.id]
        missing = [str(v) for v in inside if str(v) not in have and not _unread(unread, v)]
        print(
            f"  {pin.id:<32} carried by {', '.join(have) or 'none'}"
            + (f"; not by {', '.join(missing)}" if missing else "")
        )
    for note in unread:
        print(f"  not read: {note}")


def _unread(unread: list[str], version: Version) -> bool:
    return any(note.startswith(f"{version} (") for note in unread)

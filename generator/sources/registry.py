"""Registry mirrors in one run: a pin's lines read from the package archives the lock lists
([[mirrors]]), each archive read (and hashed) once, and downloaded ahead when asked.

A mirror vouches only for the upstream lines it lists, at the commit it names, placed at its
offset; a member that does not match is skipped, never final (git and the forge are).
"""

from __future__ import annotations

import threading

from generator.sources.excerpt import cut, decode, fits, sha256_hex, split_lines
from generator.sources.fetch import FetchError, Http
from generator.sources.lockschema import Lock, Mirror, Pin, Repo
from generator.sources.pypi import MirrorError, archive_bytes, read_member
from generator.sources.ranges import Range, format_ranges
from generator.sources.symbols import SymbolError, symbol_range
from generator.sources.wholefiles import Log
from generator.store import Store

Found = tuple[str, tuple[Range, ...], str]  # excerpt text, its ranges, where it came from


class Registry:
    """The mirrors of a lock as one run reads them."""

    def __init__(
        self, lock: Lock, *, cache: Store, http: Http, pypi_base: str, offline: bool, log: Log
    ) -> None:
        self.lock = lock
        self.cache = cache
        self.http = http
        self.pypi_base = pypi_base
        self.offline = offline
        self.log = log
        self._lines: dict[Mirror, list[str] | str] = {}
        self._archives: dict[str, bytes] = {}  # sha256 -> an archive read (and hashed) once

    def find(self, pin: Pin, repo: Repo, tried: list[str]) -> Found | None:
        """The pin's lines from the first archive member that carries them all at the repo's
        commit and hashes to the pin; each one that does not says why in `tried`."""
        listed = self.lock.mirrors_for(repo.name, pin.path)
        if not listed:
            tried.append(f"pypi: no [[mirrors]] entry for {pin.path}")
            return None
        mirrors = tuple(m for m in listed if self.lock.vouches(m))
        for commit in sorted({m.commit for m in listed if not self.lock.vouches(m)}):
            tried.append(
                f"pypi: the [[mirrors]] of {pin.path} checked at {commit[:12]} do not vouch for"
                f" its lines at {repo.short}"
            )
        if not mirrors:
            return None
        if not pin.ranges:
            tried.append("pypi: the lock records no lines for this symbol (mirrors check lines)")
            return None
        for group in _by_member(mirrors):
            mirror = group[0]  # the entries of one archive member differ only in lines and offset
            # each range from the entry that vouches for it (one offset per range)
            placed = [next((m for m in group if m.carries((r,))), None) for r in pin.ranges]
            if None in placed:
                tried.append(
                    f"pypi:{mirror.spec}: carries upstream lines {_windows(group)},"
                    f" not {format_ranges(pin.ranges)}"
                )
                continue
            lines = self.lines(mirror)
            if isinstance(lines, str):
                tried.append(f"pypi:{mirror.spec}: {lines}")
                continue
            runs = [(r, m.offset) for r, m in zip(pin.ranges, placed, strict=True) if m]
            text = "".join(cut(lines, (r,), shift)[0] for r, shift in runs)
            inside = all(fits(lines, (r,), shift) for r, shift in runs)
            if not inside or sha256_hex(text) != pin.sha256:
                shifts = sorted({shift for _, shift in runs})
                at = f" (at {'/'.join(f'{s:+d}' for s in shifts)})" if shifts != [0] else ""
                tried.append(
                    f"pypi:{mirror.spec}: lines {format_ranges(pin.ranges)}{at} of {mirror.member}"
                    f" do not hash to {pin.sha256[:12]}…"
                )
                continue
            moved = _symbol_elsewhere(pin, lines, runs[0][1])
            if moved:
                tried.append(f"pypi:{mirror.spec}: {moved}")
                continue
            return text, pin.ranges, f"pypi:{mirror.spec}"
        return None

    def carriers(self, pin: Pin, ranges: tuple[Range, ...]) -> list[Mirror]:
        """The first entry of each archive member that vouches for the pin's commit and carries
        all of `ranges` (none for no lines: a mirror checks lines)."""
        listed = self.lock.mirrors_for(pin.repo, pin.path)
        groups = _by_member(tuple(m for m in listed if self.lock.vouches(m)))
        return [
            group[0]
            for group in groups
            if ranges and all(any(m.carries((r,)) for m in group) for r in ranges)
        ]

    def uncached_carrier(self, pin: Pin) -> Mirror | None:
        """The first archive member that vouches for the pin's commit, carries all of its lines
        and is not in the cache yet: the only kind worth fetching (one in the cache was read
        already, and PyPI would send the same bytes). None for a pin without lines (a mirror
        checks lines)."""
        for mirror in self.carriers(pin, pin.ranges):
            if not self.cache.path_for(mirror.sha256).is_file():
                return mirror
        return None

    def lines(self, mirror: Mirror) -> list[str] | str:
        """The lines of the mirror's member (cache, or the index when online), or why not."""
        if mirror not in self._lines:
            try:
                http = None if self.offline else self.http
                archive = self._archives.get(mirror.sha256) or archive_bytes(
                    mirror, http, self.cache, self.pypi_base
                )
                self._archives[mirror.sha256] = archive
                text = decode(read_member(archive, mirror), f"{mirror.filename}:{mirror.member}")
                self._lines[mirror] = split_lines(text)
            except FetchError as error:
                self._lines[mirror] = error.reason
            except (MirrorError, ValueError) as error:
                self._lines[mirror] = str(error)
        return self._lines[mirror]

    def prefetch(self, mirrors: list[Mirror]) -> None:
        """Download these archives at once, a thread each, with a client of their own: what
        fails is met again, and reported, when the lines are read (a host found offline is
        skipped then, as it would be anyway); what arrives is in the cache, checked against the
        lock's sha256 on every read."""
        http = Http(self.http.settings, log=self.log)
        threads = [
            threading.Thread(target=self._fetch, args=(m, http), name="prefetch", daemon=True)
            for m in mirrors
        ]  # daemons: Ctrl-C does not wait for a download (each has its deadline anyway)
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        for host, why in http.down.items():
            if why.startswith("offline"):  # DNS or a refused connection: down for this run too
                self.http.down.setdefault(host, why)

    def _fetch(self, mirror: Mirror, http: Http) -> None:
        try:
            archive_bytes(mirror, http, self.cache, self.pypi_base)
        except Exception:  # noqa: BLE001  (the resolution reads it again and reports why)
            return


def _symbol_elsewhere(pin: Pin, lines: list[str], shift: int) -> str | None:
    """Where a mirror's whole member parses, the symbol must stand at the pinned lines
    (shifted as the mirror is): the same text under another class does not vouch for it."""
    if pin.symbol is None or len(pin.ranges) != 1:
        return None
    try:
        first, last = symbol_range("\n".join(lines), pin.symbol)
    except SymbolError:
        return None  # a partial copy: the excerpt itself is checked in resolve()
    (a, b) = pin.ranges[0]
    if (first - shift, last - shift) == (a, b):
        return None
    return (
        f"{pin.symbol!r} stands at upstream lines {first - shift}–{last - shift} of its"
        f" member, not {format_ranges(pin.ranges)}"
    )


def _by_member(mirrors: tuple[Mirror, ...]) -> list[list[Mirror]]:
    """The mirrors grouped by archive member (one entry per offset), in lock order."""
    groups: dict[tuple[str, str, str], list[Mirror]] = {}
    for mirror in mirrors:
        groups.setdefault((mirror.filename, mirror.sha256, mirror.member), []).append(mirror)
    return list(groups.values())


def _windows(group: list[Mirror]) -> str:
    """ "3–24 (at -1), 44–65 (at -19)": the upstream lines a member's entries vouch for."""
    return ", ".join(
        format_ranges(m.lines) + (f" (at {m.offset:+d})" if m.offset else "") for m in group
    )

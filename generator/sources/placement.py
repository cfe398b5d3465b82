"""Where a pin's lines stand in a package archive: the member named like the pin's file, and the
offset of each of its ranges there (`itm mirror add` records what is found as [[mirrors]]).

A pin's lines are placed range by range when its text is at hand (cache or a clone: each run
may have moved by its own amount), else by its hash at one shift for all its runs.
"""

from __future__ import annotations

from generator.sources.excerpt import cut, decode, find_placement, sha256_hex, split_lines
from generator.sources.lockschema import Pin
from generator.sources.pypi import MirrorError, archive_file, archive_names
from generator.sources.wholefiles import LARGEST_SOURCE

Placement = tuple[str, tuple[int, ...]]  # member, the offset of each of the pin's ranges


def find_pins(
    archive: bytes, filename: str, pins: list[Pin], texts: dict[str, str]
) -> dict[str, Placement]:
    """For each pin that the archive carries: the member and the offset of each range. Members
    named like the pin's file are tried, those whose path ends most like it first."""
    names = archive_names(archive, filename)
    members: dict[str, list[str] | None] = {}
    found: dict[str, Placement] = {}
    for pin in pins:
        if not pin.ranges:
            continue
        for member in candidates(names, pin.path):
            if member not in members:
                members[member] = _member_lines(archive, filename, member)
            lines = members[member]
            offsets = None if lines is None else place(pin, texts.get(pin.id), lines)
            if offsets is not None:
                found[pin.id] = (member, offsets)
                break
    return found


def candidates(names: list[str], path: str) -> list[str]:
    """The archive's files named like `path`'s file, the longest common path ending first."""
    parts = path.split("/")

    def common(name: str) -> int:
        other = name.split("/")
        n = 0
        while n < min(len(parts), len(other)) and parts[-1 - n] == other[-1 - n]:
            n += 1
        return n

    named = [n for n in names if n.rsplit("/", 1)[-1] == parts[-1]]
    return sorted(named, key=lambda n: (-common(n), n))


def _member_lines(archive: bytes, filename: str, member: str) -> list[str] | None:
    try:
        data = archive_file(archive, filename, member, max_bytes=LARGEST_SOURCE)
        return split_lines(decode(data, f"{filename}:{member}"))
    except (MirrorError, ValueError):
        return None


def place(pin: Pin, text: str | None, lines: list[str]) -> tuple[int, ...] | None:
    """The offset (member line - upstream line) of each of the pin's ranges in `lines`, nearest
    to none first; None when the lines are not all there or do not hash to the pin. Without the
    text, the pin's hash finds one shift for all its ranges."""
    if text is None:
        shift = find_placement(lines, pin.ranges, pin.sha256)
        return None if shift is None else (shift,) * len(pin.ranges)
    wanted = split_lines(text)
    offsets: list[int] = []
    start = 0
    for first, last in pin.ranges:
        run = wanted[start : start + last - first + 1]
        start += len(run)
        hits = [i - (first - 1) for i, line in enumerate(lines) if line == run[0]]
        shifts = sorted(hits, key=lambda s: (abs(s), s < 0))
        shift = next((s for s in shifts if lines[first - 1 + s : last + s] == run), None)
        if shift is None:
            return None
        offsets.append(shift)
    runs = [cut(lines, (r,), s)[0] for r, s in zip(pin.ranges, offsets, strict=True)]
    return tuple(offsets) if sha256_hex("".join(runs)) == pin.sha256 else None

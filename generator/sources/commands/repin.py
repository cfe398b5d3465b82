"""One excerpt of `itm bump`, re-resolved in the whole file at the new commit: unchanged, moved
(the same text at other lines), changed, or lost (a hand re-pin)."""

from __future__ import annotations

from dataclasses import replace

from generator.sources.excerpt import cut, find_placement, fits, sha256_hex
from generator.sources.forges import described
from generator.sources.lockschema import Pin, Repo
from generator.sources.ranges import Range, format_ranges
from generator.sources.symbols import SymbolError, symbol_range
from generator.sources.wholefiles import FullFile


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

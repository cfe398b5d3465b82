"""Line ranges, as the lock, `itm pin --lines` and a page's `lines:` option write them: read,
checked (from line 1, in order, with gaps) and shown."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from generator.errors import InputError

Range = tuple[int, int]  # first and last line, 1-based, inclusive
# (entry, problem, fix) -> the error to raise, naming the lock's file (or a command's flag)
Fail = Callable[[str, str, str], InputError]


def failing(file: str | None) -> Fail:
    """The errors of one file (or of a command's flags, with no file): (entry, problem, fix)."""

    def fail(entry: str, problem: str, fix: str) -> InputError:
        return InputError(problem, file=file, entry=entry, fix=fix)

    return fail


def format_ranges(ranges: tuple[Range, ...], dash: str = "–") -> str:
    """(185, 191), (204, 224) -> "185–191, 204–224"; a one-line range is just its number."""
    return ", ".join(str(a) if a == b else f"{a}{dash}{b}" for a, b in ranges)


def parse_ranges(value: Sequence[Range], entry: str, fail: Fail) -> tuple[Range, ...]:
    """[[first, last], ...] checked: from line 1, each in order, ascending with gaps; `fail`
    makes the error (the lock's, naming its file, or `itm pin --lines`')."""
    for first, last in value:
        if first < 1:
            raise fail(
                entry, f"line range {first}-{last} starts before line 1", "lines count from 1"
            )
        if last < first:
            raise fail(
                entry,
                f"line range {first}-{last} is reversed (empty)",
                f"write the first line first: [{last}, {first}]",
            )
    for (a1, b1), (a2, b2) in zip(value, value[1:], strict=False):
        if a2 <= b1 + 1:
            raise fail(
                entry,
                f"line ranges {a1}-{b1} and {a2}-{b2} overlap, touch or are out of order",
                f"merge them into [{min(a1, a2)}, {max(b1, b2)}], or list ranges in ascending order"
                " with a gap",
            )
    return tuple(value)


def parse_line_spec(spec: object, *, entry: str, file: str | None = None) -> tuple[Range, ...]:
    """ "69-112" / "185-191, 204-224" / "126" / 126 -> ranges, checked as the lock checks them
    ("5-2" is reversed, "0-2" starts before line 1); en dashes count as hyphens. For `itm pin
    --lines` and a page's `lines:` option; the error names `entry` (and `file`)."""
    ranges = []
    for part in str(spec).replace("–", "-").split(","):
        first, _, last = part.strip().partition("-")
        try:
            ranges.append((int(first), int(last or first)))
        except ValueError:
            raise InputError(
                f"cannot read line range {part.strip()!r}",
                file=file,
                entry=entry,
                fix='write lines like "69-112" or "185-191, 204-224"',
            ) from None
    return parse_ranges(ranges, entry, failing(file))

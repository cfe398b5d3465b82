"""A page's `lines:` in an excerpt block, kept on the same code when `itm bump` moves the pin.

    /// excerpt | toy.f
        lines: 10-12            <- upstream line numbers at the pinned commit
    ///

A page names lines as upstream numbers them at the pinned commit: what its card, the permalink
and the file show, so a writer reads them off the card. Those numbers mean other code once a bump
moves the pin (two lines added above a function shift it by two), so `itm bump` carries every
selection of a pin it moves or changes: it matches the old pinned lines with the new (difflib),
rewrites `lines:` to the numbers the same lines have now, and where a selected line changed or
went, leaves `lines:` as it was and adds `stale: "..."`, which the build refuses, naming the page,
the excerpt and the fix. Lines relative to the pin would drift as well (a line added inside the
function moves the rest of it), and a build alone cannot tell a page written against the old pin
from one written against the new; the one moment both texts are known is the bump.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from generator.checked_io import utf8_text
from generator.errors import InputError
from generator.sources.excerpt import split_lines
from generator.sources.lockschema import MAX_TEXT_BYTES
from generator.sources.pageblocks import BlockError, PageBlock, find_blocks, unquoted
from generator.sources.ranges import Range, format_ranges, parse_line_spec
from generator.store import read_regular

EXCERPT = "excerpt"  # the excerpt block's name (generator.pinned_excerpts.markdown.NAME)
STALE = "stale"  # the option `itm bump` adds where it cannot carry a page's lines
_LINES_ROW = re.compile(r"^(?P<key>[ ]*lines[ ]*:[ ]*)(?P<value>.*?)(?P<end>\r?)$")


@dataclass(frozen=True)
class Move:
    """One pin before and after a bump: its lines and their text."""

    old: tuple[Range, ...]
    old_text: str
    new: tuple[Range, ...]
    new_text: str


@dataclass(frozen=True)
class Selection:
    """An excerpt block's `lines:` in a page."""

    excerpt: str
    row: int  # index of its `lines:` line
    ranges: tuple[Range, ...]
    block: PageBlock


def page_files(folders: list[Path]) -> list[Path]:
    """The Markdown pages under the folders, sorted; InputError for a folder that is not one."""
    found: set[Path] = set()
    for folder in folders:
        if not folder.is_dir():
            raise InputError(
                "not a folder of pages",
                file=str(folder),
                entry="--pages",
                fix="name the folder of the pages that quote this lock (the site's docs_dir)",
            )
        found.update(path for path in folder.rglob("*") if _is_page(path))
    return sorted(found)


def _is_page(path: Path) -> bool:
    """A file MkDocs builds as a page (its own test: .md, .markdown, .mdown, .mkdn, .mkd): only
    *.md were carried, and a notes.markdown kept numbers that then showed other code."""
    from mkdocs.utils import is_markdown_file

    return is_markdown_file(path.name) and path.is_file()


def read_page(path: Path, display: str) -> list[str]:
    """A page's lines (split on "\\n"; a "\\r" stays on its line), read bounded as UTF-8."""
    fix = "make it a UTF-8 text file, or leave it out of --pages"
    try:
        data = read_regular(path, max_bytes=MAX_TEXT_BYTES)
    except OSError as error:
        raise InputError(
            f"cannot read the page: {error.strerror or error}", file=display, fix=fix
        ) from None
    return utf8_text(data, file=display, fix=fix).split("\n")


def selections(
    lines: list[str], excerpt_ids: Mapping[str, object], display: str
) -> list[Selection]:
    """The `lines:` of the page's excerpt blocks that quote one of `excerpt_ids`."""
    found = []
    try:
        for block in find_blocks(lines, EXCERPT):
            if block.id not in excerpt_ids:
                continue
            options = block.options(lines, count=len(block.rows(lines)))
            if options.get("lines") is None or STALE in options:  # a stale one is refused
                continue
            found.append(_selection(block, lines, options["lines"], display))
    except BlockError as error:
        raise InputError(error.problem, file=display, entry=error.entry, fix=error.fix) from None
    return found


def _selection(block: PageBlock, lines: list[str], value: object, display: str) -> Selection:
    """The block's `lines:` and the one line that holds it (a bump rewrites that line)."""
    ranges = parse_line_spec(value, entry=block.id, file=display)
    for row in range(block.start + 1, block.end):
        found = _LINES_ROW.match(unquoted(lines[row])[1].removeprefix(block.inner))
        if (
            found
            and found.group("value").strip()
            and parse_line_spec(
                found.group("value").strip().strip("\"'"), entry=block.id, file=display
            )
            == ranges
        ):
            return Selection(block.id, row, ranges, block)
    raise InputError(
        "`itm bump` cannot rewrite this block's lines: they are not on one line",
        file=display,
        entry=block.id,
        fix="write them on one line, like `    lines: 10-12, 20-25`, then run the bump again",
    )


def line_map(move: Move) -> dict[int, int]:
    """Old upstream line number -> new, for every pinned line whose text is unchanged and in
    the same order (difflib's longest matching runs)."""
    old, new = _numbered(move.old, move.old_text), _numbered(move.new, move.new_text)
    matcher = difflib.SequenceMatcher(None, [t for _, t in old], [t for _, t in new], False)
    mapping = {}
    for a, b, size in matcher.get_matching_blocks():
        for k in range(size):
            mapping[old[a + k][0]] = new[b + k][0]
    return mapping


def _numbered(ranges: tuple[Range, ...], text: str) -> list[tuple[int, str]]:
    numbers = [n for first, last in ranges for n in range(first, last + 1)]
    return list(zip(numbers, split_lines(text), strict=True))


def carried(ranges: tuple[Range, ...], mapping: dict[int, int]) -> tuple[Range, ...] | None:
    """The same lines at their new numbers: each range still one unbroken run of unchanged
    lines (runs brought together by lines deleted between them merge), or None."""
    moved: list[Range] = []
    for first, last in ranges:
        if any(n not in mapping for n in range(first, last + 1)):
            return None  # a selected line changed or went
        new = [mapping[n] for n in range(first, last + 1)]
        if any(b != a + 1 for a, b in zip(new, new[1:], strict=False)):
            return None  # lines were added inside the run
        start, end = new[0], new[-1]
        if moved and start <= moved[-1][1] + 1:
            moved[-1] = (moved[-1][0], end)
        else:
            moved.append((start, end))
    return tuple(moved)


def rewrite(lines: list[str], selection: Selection, new: tuple[Range, ...]) -> None:
    """Put the new numbers in the selection's `lines:` line, in place, as written otherwise."""
    quote, content = unquoted(lines[selection.row])
    inner = selection.block.inner
    found = _LINES_ROW.match(content.removeprefix(inner))
    assert found is not None
    value = format_ranges(new, dash="-")
    lines[selection.row] = f"{quote}{inner}{found.group('key')}{value}{found.group('end')}"


def mark_stale(lines: list[str], selection: Selection, note: str) -> None:
    """Add `stale: "note"` below the selection's `lines:` (the build refuses the block)."""
    quote, _ = unquoted(lines[selection.row])
    end = "\r" if lines[selection.row].endswith("\r") else ""
    row = f"{quote}{selection.block.inner}{STALE}: {json.dumps(note, ensure_ascii=False)}{end}"
    lines.insert(selection.row + 1, row)

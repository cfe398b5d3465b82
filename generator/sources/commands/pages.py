"""The pages that quote the lines `itm bump` moves: each page's `lines:` carried to the new
commit's numbers, or marked stale where the code changed (generator/sources/selections.py), and
written with the lock so that pages and lock never disagree."""

from __future__ import annotations

import argparse
from pathlib import Path

from generator.checked_io import write_output
from generator.sources.commands.repin import Change
from generator.sources.locate import SiteLock
from generator.sources.lockschema import MAX_TEXT_BYTES, Lock, Pin, Repo, display_path
from generator.sources.lockwrite import write_lock
from generator.sources.ranges import format_ranges
from generator.sources.selections import (
    Move,
    carried,
    line_map,
    mark_stale,
    page_files,
    read_page,
    rewrite,
    selections,
)
from generator.store import read_regular


def carry_pages(
    args: argparse.Namespace,
    site: SiteLock,
    changes: list[tuple[Pin, Change]],
    repo: Repo,
    new_repo: Repo,
) -> tuple[dict[Path, list[str]], bool]:
    """Every page's `lines:` of an excerpt whose lines move or change, carried to the numbers
    the same code has at the new commit, or marked stale where it changed (selections.py):
    (page -> its new lines, whether some pages could not be checked)."""
    moves = {
        pin.id: Move(pin.ranges, change.old_text, change.pin.ranges, change.new_text)
        for pin, change in changes
        if change.pin is not None and change.old_text is not None and change.status != "unchanged"
    }
    if not moves:
        return {}, False
    # The site's own pages always (--pages alone left them quoting other code), and --pages too
    folders = [*([site.docs] if site.in_site and site.docs else []), *args.pages]
    if not folders:
        print(
            f"pages not checked: {', '.join(moves)} move or change, and no site says which pages"
            " quote their lines; pass --pages DIR (the folder of the pages that use this lock)"
        )
        return {}, True
    pages: dict[Path, list[str]] = {}
    for path in page_files(folders):
        display = display_path(path, site.root if site.in_site else None)
        lines = read_page(path, display)
        found = selections(lines, moves, display)
        for selection in reversed(found):  # bottom up: a stale mark adds a line
            move = moves[selection.excerpt]
            new = carried(selection.ranges, line_map(move))
            old = format_ranges(selection.ranges, dash="-")
            if new is not None:
                rewrite(lines, selection, new)
                print(f"  page       {display}: {selection.excerpt} lines {old} ->"
                      f" {format_ranges(new, dash='-')}")  # fmt: skip
            else:
                note = (
                    f"lines {old} were chosen at {repo.short}; at {new_repo.short} `itm bump`"
                    " found them changed: choose the lines again, then delete this option"
                )
                mark_stale(lines, selection, note)
                print(f"  page       {display}: {selection.excerpt} lines {old} changed: marked"
                      " stale (the build stops on it until they are chosen again)")  # fmt: skip
        if found:
            pages[path] = lines
    return pages, False


def write_with_pages(lock: Lock, pages: dict[Path, list[str]]) -> None:
    """The pages with their carried lines, then the lock; a page already rewritten goes back as
    it was if a later write fails, so pages and lock never disagree."""
    written: list[tuple[Path, bytes]] = []
    try:
        for path, lines in pages.items():
            before = read_regular(path, max_bytes=MAX_TEXT_BYTES)
            write_output(path, "\n".join(lines).encode("utf-8"))
            written.append((path, before))
        write_lock(lock)
    except BaseException:
        for path, before in written:
            write_output(path, before)
        raise
    for path, _ in written:
        print(f"wrote {display_path(path)}")

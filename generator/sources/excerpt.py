"""Excerpts: upstream lines cut from a file, the hash that pins them, and how a page cites them.

Text rules (what the sha256 covers): a file is split on "\\n" only (never str.splitlines, which
also splits on form feeds and Unicode separators and would renumber lines); each line of each
range is kept byte for byte and ends with "\\n"; the runs are concatenated.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from generator.sources.forges import permalink
from generator.sources.lockschema import CarriedBy, Claim, Repo
from generator.sources.ranges import Range, format_ranges
from generator.sources.swh import swhid
from generator.store import sha256_hex

__all__ = ["sha256_hex"]  # re-exported: the sources modules hash excerpt text with it


def split_lines(text: str) -> list[str]:
    """File text -> its lines without "\\n" (a missing final newline does not add a line)."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def decode(data: bytes, where: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ValueError(f"{where} is not UTF-8 text ({error})") from None


def cut(lines: list[str], ranges: tuple[Range, ...], shift: int = 0) -> list[str]:
    """The runs of `lines` at `ranges` (1-based, inclusive), each moved by `shift`."""
    runs = []
    for first, last in ranges:
        runs.append("".join(line + "\n" for line in lines[first - 1 + shift : last + shift]))
    return runs


def fits(lines: list[str], ranges: tuple[Range, ...], shift: int = 0) -> bool:
    return ranges[0][0] + shift >= 1 and ranges[-1][1] + shift <= len(lines)


def find_placement(lines: list[str], ranges: tuple[Range, ...], sha256: str) -> int | None:
    """The shift (0 first, then 1, -1, 2, -2, ...) at which `ranges` of `lines` hash to `sha256`.

    A mirror may carry the pinned lines elsewhere than upstream; the same shift for every range
    of an excerpt is enough for the copies we know. None when no placement matches.
    """
    lowest = 1 - ranges[0][0]
    highest = len(lines) - ranges[-1][1]
    shifts = sorted(range(lowest, highest + 1), key=lambda s: (abs(s), s < 0))
    for shift in shifts:
        if sha256_hex("".join(cut(lines, ranges, shift))) == sha256:
            return shift
    return None


@dataclass(frozen=True)
class Excerpt:
    """Verified upstream lines, ready for a page: the text matched the pinned sha256."""

    id: str
    repo: Repo
    path: str
    symbol: str | None
    ranges: tuple[Range, ...]  # upstream line numbers, inclusive
    blocks: tuple[tuple[int, str], ...]  # per range: (first line number, its text, "\n"-terminated)
    text: str  # what the sha256 covers: the runs concatenated
    sha256: str
    evidence: str
    evidence_level: str
    resolved_from: str  # "cache" | "git:/path" | "github" | "pypi:gpt-2-finetuning==1.0.14"
    sha1_git: str | None = None  # the whole file's git blob id at the commit, when known
    pinned: tuple[Range, ...] = ()  # the lines the lock pins, when a page shows fewer (select)
    carried_by: CarriedBy | None = None  # the releases that have these lines (mirror-window)
    copies: tuple[str, ...] = ()  # registry copies the lock lists for these lines: "pkg==1.0"
    claims: tuple[Claim, ...] = ()  # the lock's approved claims about this excerpt

    @property
    def filename(self) -> str:
        return self.path.rsplit("/", 1)[-1]

    @property
    def first_line(self) -> int:
        return self.ranges[0][0]

    @property
    def last_line(self) -> int:
        return self.ranges[-1][1]

    @property
    def permalink(self) -> str | None:
        """The forge's page of the lines at the commit, first shown to last (GitHub's, GitLab's,
        Gitea's); None when the repository has no web view (a plain git URL)."""
        return permalink(self.repo, self.path, self.first_line, self.last_line)

    @property
    def link(self) -> str:
        """Where a reader finds the lines: the permalink, else the repository's own address."""
        return self.permalink or self.repo.url

    @property
    def label(self) -> str:
        """ "model.py 69–112", or "modeling_gpt2.py 185–191, 204–224" (en dashes)."""
        return f"{self.filename} {format_ranges(self.ranges)}"

    @property
    def omissions(self) -> tuple[Range, ...]:
        """The upstream lines left out between ranges: the page marks "… lines a–b omitted …"."""
        pairs = zip(self.ranges, self.ranges[1:], strict=False)
        return tuple((b1 + 1, a2 - 1) for (_, b1), (a2, _) in pairs)

    @property
    def license(self) -> str:
        return self.repo.license

    @property
    def swhid(self) -> str | None:
        """The Software Heritage id of the file at the commit, qualified with the lines shown
        (first to last); None when the whole file's bytes at the pin have not been read."""
        if self.sha1_git is None:
            return None
        return swhid(
            self.sha1_git,
            url=self.repo.url,
            commit=self.repo.commit,
            path=self.path,
            lines=(self.first_line, self.last_line),
        )

    def select(self, ranges: tuple[Range, ...]) -> Excerpt:
        """The same verified excerpt showing only `ranges`, each inside one pinned range (the
        runs between them are marked omitted); ValueError naming the pinned lines otherwise."""
        lines = {first + i: line for first, code in self.blocks
                 for i, line in enumerate(split_lines(code))}  # fmt: skip
        for first, last in ranges:
            if not any(a <= first and last <= b for a, b in self.ranges):
                raise ValueError(
                    f"lines {format_ranges(((first, last),))} are not inside the pinned lines"
                    f" {format_ranges(self.ranges)}"
                )
        text = "".join(lines[n] + "\n" for first, last in ranges for n in range(first, last + 1))
        return replace(
            self,
            ranges=ranges,
            blocks=make_blocks(text, ranges),
            text=text,
            pinned=self.pinned or self.ranges,
        )


def omission_marker(gap: Range) -> str:
    """ "… lines 192–203 omitted …" (one line: "… line 192 omitted …")."""
    first, last = gap
    if first == last:
        return f"… line {first} omitted …"
    return f"… lines {first}–{last} omitted …"


def make_blocks(text: str, ranges: tuple[Range, ...]) -> tuple[tuple[int, str], ...]:
    """Split verified excerpt text back into one run per range."""
    lines = split_lines(text)
    blocks = []
    start = 0
    for first, last in ranges:
        count = last - first + 1
        blocks.append((first, "".join(line + "\n" for line in lines[start : start + count])))
        start += count
    if start != len(lines):
        shown = format_ranges(ranges)
        raise ValueError(f"text has {len(lines)} lines, ranges {shown} need {start}")
    return tuple(blocks)

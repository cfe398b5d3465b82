"""The `/// NAME | ID` blocks of a page (pymdown-extensions' generic-block style), read from its
lines: where each opens and closes, its options and its content.

    /// claim | gpt2.kv-cache          <- the opening line: NAME and the ID after the bar
        excerpt: gpt2.attn-present     <- options: YAML, indented four spaces past the block
    The paragraph the claim is.        <- content (a claim's; an excerpt block has none)
    ///                                <- the closing line, at the block's indent

A block may stand at any indent (a list item, an admonition, a tab) and inside a blockquote, each
of its lines after the same `>` markers. Blocks inside a fenced code block are not blocks: a page
can show the syntax. `itm bump` reads excerpt blocks here to carry their `lines:` to a new
commit, and claim blocks are read here by the Markdown extension and this site's pages.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import yaml

_FENCE = re.compile(r"^(?P<indent>[ ]*)(?P<mark>`{3,}|~{3,})")
# A line's blockquote markers: "> x", "> > x", "    > x" (a blockquote in a list item)
_QUOTE = re.compile(r"^[ ]*>(?:[ ]{0,4}>)*[ ]?")


class _OptionsLoader(yaml.SafeLoader):
    """yaml.SafeLoader that refuses a key given twice: YAML keeps the last one without a word,
    and a block with two `lines:` quoted other lines than its writer read first."""


def _mapping_once(loader: _OptionsLoader, node: yaml.MappingNode) -> dict[Any, Any]:
    seen: list[Any] = []
    for key_node, _ in node.value:
        key = loader.construct_object(key_node)
        if key in seen:
            raise yaml.constructor.ConstructorError(
                None, None, f"the option {key!r} is given twice", key_node.start_mark
            )
        seen.append(key)
    mapping: dict[Any, Any] = loader.construct_mapping(node)
    return mapping


_OptionsLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping_once)


def load_options(text: str) -> Any:
    """A block's options (its YAML, unindented): {} when blank. Raises ValueError with the problem
    in words when they are not YAML or give a key twice."""
    if not text.strip():
        return {}
    try:
        return yaml.load(text, Loader=_OptionsLoader)  # noqa: S506 (a SafeLoader)
    except yaml.YAMLError as error:
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        raise ValueError(f"its options are not YAML ({problem})") from None


class BlockError(Exception):
    """A malformed block: its id (or name), the problem and the fix."""

    def __init__(self, entry: str, problem: str, fix: str) -> None:
        super().__init__(problem)
        self.entry, self.problem, self.fix = entry, problem, fix


@dataclass(frozen=True)
class PageBlock:
    """One block of a page: line indexes of its opening and closing lines, and its layout."""

    name: str  # "excerpt", "claim"
    id: str  # what follows the bar, stripped ("" when nothing does)
    start: int  # index of the opening line
    end: int  # index of the closing line
    quote: str  # the blockquote markers before each of its lines ("" outside a blockquote)
    indent: str  # spaces before the opening slashes

    @property
    def inner(self) -> str:
        """What starts each option line: the block's indent and four spaces."""
        return self.indent + "    "

    def rows(self, lines: list[str]) -> list[str]:
        """The lines between the opening and closing lines, without the quote markers."""
        return [unquoted(line.rstrip("\r"))[1] for line in lines[self.start + 1 : self.end]]

    def option_rows(self, lines: list[str]) -> int:
        """How many lines after the opening line are options: those indented past the block."""
        count = 0
        for row in self.rows(lines):
            if not row.startswith(self.inner) or not row.strip():
                break
            count += 1
        return count

    def options(self, lines: list[str], count: int | None = None) -> dict[str, Any]:
        """The YAML of its first `count` rows (default: its option rows), as a mapping."""
        count = self.option_rows(lines) if count is None else count
        text = "\n".join(row[len(self.inner) :] for row in self.rows(lines)[:count])
        try:
            options = load_options(text)
        except ValueError as error:
            raise BlockError(
                self.id or self.name,
                str(error),
                "write options as `    key: value`, each once, indented four spaces past the block",
            ) from None
        if not isinstance(options, dict):
            raise BlockError(
                self.id or self.name,
                "its options are not key: value",
                "write options as `    key: value`, indented four spaces past the block",
            )
        return options


def unquoted(line: str) -> tuple[str, str]:
    """(the line's blockquote markers, the rest): ("> > ", "/// claim | a"); ("", line)."""
    quote = _QUOTE.match(line)
    return (quote.group(), line[quote.end() :]) if quote else ("", line)


def _same_quote(quote: str, line: str) -> bool:
    """Whether `line` stands in the blockquote that `quote` opens (an empty line does)."""
    markers, _ = unquoted(line)
    same = (markers.find(">"), markers.count(">")) == (quote.find(">"), quote.count(">"))
    return same or not line.strip()


def find_blocks(lines: list[str], name: str) -> Iterator[PageBlock]:
    """Every `/// NAME | ID` block of a page's lines, outside code fences, in the order they
    open (blocks inside another's content too). BlockError for a block that is never closed (at
    its indent, after its quote markers)."""
    start = re.compile(
        rf"^(?P<indent>[ ]*)(?P<slashes>/{{3,}})[ ]*{name}[ ]*(?:\|[ ]*(?P<id>.*?))?[ ]*$"
    )
    fence: tuple[str, int] | None = None  # (character, length) of the open code fence
    i = 0
    while i < len(lines):
        quote, content = unquoted(lines[i].rstrip("\r"))
        i += 1
        if fence is not None:
            closing = _FENCE.match(content)
            mark = closing.group("mark") if closing else ""
            rest = content[closing.end() :].strip() if closing else "x"
            if mark[:1] == fence[0] and len(mark) >= fence[1] and not rest:
                fence = None
            continue
        opening = _FENCE.match(content)
        if opening:
            fence = (opening.group("mark")[0], len(opening.group("mark")))
            continue
        found = start.match(content)
        if found is None:
            continue
        indent, slashes = found.group("indent"), found.group("slashes")
        block_id = (found.group("id") or "").strip()
        end = i
        while end < len(lines):
            line = lines[end].rstrip("\r")
            if not _same_quote(quote, line):
                end = len(lines)
                break
            if unquoted(line)[1].rstrip() == indent + slashes:
                break
            end += 1
        if end == len(lines):
            raise BlockError(
                block_id or name,
                f"the block opened by {content.strip()!r} is never closed",
                f"end it with a line of {slashes} (at the same indent, after the same quote"
                " markers)",
            )
        yield PageBlock(name, block_id, i - 1, end, quote, indent)  # and on inside it: a claim
        # may hold a list whose items hold blocks

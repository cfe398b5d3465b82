"""The page macros' own blocks (generator/pages/): the Sources page.

Data only; the markup is in generator/templates/ (see generator/blocks.py). Text from the lock
that lands in Markdown is passed as `Markup(literal(text))` (generator/render/code.py): HTML
escaping alone would leave Markdown's syntax characters live.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from generator.blocks import Block, Citation, Markup, PlainExcerpt


@dataclass(frozen=True)
class SourcesAccount:
    """How a group of a repository's excerpts was confirmed (said once, linked from each)."""

    anchor: str  # "ev-openai-gpt-2-1"
    level: str  # an evidence level: "upstream", ...
    text: Markup  # literal(): the account from the lock


@dataclass(frozen=True)
class SourcesEntry(Block):
    """One excerpt on the Sources page: file, lines, license, evidence, hash, the pages that
    quote it, its lines as plain text and how to cite it."""

    template: ClassVar[str] = "sources_entry.md"
    id: str  # "gpt2.attn"
    anchor: str  # "ex-gpt2-attn", what code tabs and evidence cards link to
    path: Markup  # literal()
    lines: str  # "lines 185–224"
    permalink: str
    license: Markup  # literal()
    account: SourcesAccount
    sha256: str
    cited_on: tuple[tuple[str, str], ...]  # (page title, Markdown link target)
    excerpt: PlainExcerpt
    citation: Citation


@dataclass(frozen=True)
class SourcesRepo(Block):
    """One pinned repository on the Sources page, then each of its excerpts."""

    template: ClassVar[str] = "sources_repo.md"
    name: str  # "openai/gpt-2"
    url: str
    short: str  # the commit abbreviated
    commit: str  # 40 hex digits
    license: Markup  # literal()
    accounts: tuple[SourcesAccount, ...]
    entries: tuple[SourcesEntry, ...]

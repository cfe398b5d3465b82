"""The renderers' page blocks: Code tabs and "Direct evidence" cards.

Data only; the markup is in generator/templates/ (see generator/blocks.py). These live beside the
renderers, not in generator/pages/, because renderers sit below pages: generator/pages/ imports
generator/render/, never the other way round.

Text from the lock or upstream that lands in Markdown is passed as `Markup(literal(text))`
(generator/render/code.py): HTML escaping alone would leave Markdown's syntax characters live.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from generator.blocks import Block, Markup


@dataclass(frozen=True)
class CodeTab(Block):
    """One Code tab: the excerpt's title, a caption (permalink, license, evidence), its runs."""

    template: ClassVar[str] = "code_tab.md"
    label: Markup  # literal(): "model.py 69–112"
    permalink: str
    repo: Markup  # literal(): "openai/gpt-2"
    path: Markup  # literal(): "src/model.py"
    license: Markup  # literal()
    level: Markup  # literal(): the evidence level, "" for none
    level_href: str | None  # the excerpt's entry on the Sources page (None: no such page)
    runs: Markup  # the fenced runs with omission markers, indented into the tab, no final "\n"


@dataclass(frozen=True)
class EvidenceCard(Block):
    """A "Direct evidence" card: the claim, where it stands, the pinned revision, the excerpt."""

    template: ClassVar[str] = "evidence_card.html"
    claim: str  # our prose (the component registry)
    owner: str  # "openai"
    repo: str  # "openai/gpt-2"
    path: str
    permalink: str
    commit: str  # 40 hex digits
    short: str  # the commit abbreviated
    lines: str  # "lines 185–224"
    license: str
    cite: str | None  # the excerpt's entry on the Sources page
    status: Markup  # literal(): how the excerpt was confirmed
    runs: Markup  # the fenced runs, indented into the "Read code excerpt" box, no final "\n"

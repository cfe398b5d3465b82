"""The renderers' page blocks: Code tabs, "Direct evidence" cards, the pinned-excerpts
extension's cards and the architecture map.

Data only; the markup is in generator/templates/ (see generator/blocks.py). These live beside the
renderers, not in generator/pages/, because renderers sit below pages: generator/pages/ imports
generator/render/, never the other way round.

Text from the lock or upstream that lands in Markdown is passed as `Markup(literal(text))`
(generator/render/code.py): HTML escaping alone would leave Markdown's syntax characters live.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import ClassVar

from generator.blocks import Block, Citation, Markup


@dataclass(frozen=True)
class CodeTab(Block):
    """One Code tab: the excerpt's title, a caption (permalink, license, evidence), its runs."""

    template: ClassVar[str] = "code_tab.md"
    label: Markup  # literal(): "model.py 69–112"
    permalink: str
    repo: Markup  # literal(): "openai/gpt-2"
    path: Markup  # literal(): "src/model.py"
    license: Markup  # literal()
    level: str  # how the excerpt was checked, in a reader's words ("read at the commit"), or ""
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
    status: str  # how the excerpt was checked and how a reader can check it, in plain words
    runs: Markup  # the fenced runs, indented into the "Read code excerpt" box, no final "\n"


@dataclass(frozen=True)
class ExcerptCard(Block):
    """An excerpt a page quotes through the pinned-excerpts extension: where it comes from (the
    permalink), its numbered runs with elisions, how it was confirmed, and how to cite it."""

    template: ClassVar[str] = "pinned_excerpt.html"
    repo: str  # "openai/gpt-2"
    path: str  # "src/model.py"
    lines: str  # "lines 69–112" (the span shown; omissions are marked inside)
    permalink: str | None  # the forge's page of the lines; None: the repository has no web view
    url: str  # the repository's address (its Software Heritage origin)
    commit: str  # 40 hex digits
    short: str  # the commit abbreviated
    license: str
    level: str  # how it was checked, in a reader's words ("read at the commit")
    evidence: str  # the same in a sentence (render.code.EVIDENCE_WORDS)
    swhid: str | None  # the file's SWHID with the lines; None when not known
    runs: Markup  # where the numbered runs go: a mark the extension replaces with their Markdown
    citation: Citation


Point = tuple[str, str]  # x, y in the drawing's user units, formatted ("240", "206")


@dataclass(frozen=True)
class MapBox:
    """One box of the map: an HTML link (a span without a page) placed over the drawing."""

    key: str  # the component; data-light=KEY matches \htmlData{light=KEY} in formulas
    label: str
    title: str
    href: str | None
    current: bool  # the page being shown
    kind: str  # "" | "frame" (the block's "Block × 12" label) | "add" (the embedding sum's +)
    left: str  # position and size in percent of the drawing: "42.614%"
    top: str
    width: str
    height: str

    @property
    def name(self) -> str:
        """The accessible name: the title, led by the visible label when the title's words do
        not hold the label's, in order ("wte: Token embedding", "Block × 12: Pre-norm
        transformer block"), so that a reader who says what they see names the link (WCAG
        2.5.3, axe's label-content-name-mismatch). As axe reads it, words in parentheses do not
        count ("Token embedding (wte)" does not hold "wte"); a parenthesis that only repeats the
        label is dropped. A label of symbols only (the sum's "+") says nothing the title does not."""
        label = words(self.label)
        if not label or contains(words(unbracketed(self.title)), label):
            return self.title
        title = self.title.replace(f" ({self.label})", "")
        return f"{self.label}: {title}"


def unbracketed(text: str) -> str:
    """`text` without its parenthesised parts, innermost first."""
    while (shorter := re.sub(r"\([^()]*\)", "", text)) != text:
        text = shorter
    return text


def words(text: str) -> list[str]:
    """The words of `text` as axe compares names: letters and digits, case folded."""
    return re.findall(r"[^\W_]+", unicodedata.normalize("NFKD", text).casefold())


def contains(whole: list[str], part: list[str]) -> bool:
    """Whether `part` is a run of consecutive words of `whole`."""
    return any(whole[i : i + len(part)] == part for i in range(len(whole) - len(part) + 1))


@dataclass(frozen=True)
class MapDiagram(Block):
    """The architecture map: its lines in SVG, every box a link placed over them."""

    template: ClassVar[str] = "map_diagram.html"
    uid: str  # namespaces the SVG's ids, so several maps can share a page
    n_layer: int
    width: str  # the drawing's size in user units (its viewBox)
    height: str
    frame: tuple[str, str, str, str]  # the block's frame: x, y, w, h
    stream: tuple[Point, Point]  # the residual stream: top, bottom
    stream_label: Point
    arrows: tuple[tuple[Point, ...], ...]  # each arrow's points: two a line, three an elbow
    adds: tuple[tuple[Point, Point], ...]  # each + on the stream: circle's centre, glyph's baseline
    add_radius: str
    inputs_label: Point  # "token ids", above the model
    outputs_label: Point  # "softmax → …", below it
    boxes: tuple[MapBox, ...]
    parts: str = (
        "GPT-2 architecture: embeddings, {n_layer} pre-norm blocks, final norm, unembedding"
    )

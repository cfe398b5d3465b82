"""The page macros' own blocks (generator/pages/): the Sources page and a component's numbers.

Data only; the markup is in generator/templates/ (see generator/blocks.py). Text from the lock
that lands in Markdown is passed as `Markup(literal(text))` (generator/render/code.py): HTML
escaping alone would leave Markdown's syntax characters live.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from generator.blocks import Block, Citation, Markup, PlainExcerpt
from generator.glossary import Term
from generator.models.papers import Paper


@dataclass(frozen=True)
class SourcesAccount:
    """How a group of a repository's excerpts was checked (said once, linked from each)."""

    anchor: str  # "ev-openai-gpt-2-1"
    level: str  # how the text was checked, its short name: "read at the commit", ...
    text: str  # the same in a sentence (render.code.EVIDENCE_WORDS)


@dataclass(frozen=True)
class SourcesEntry(Block):
    """One excerpt on the Sources page: file, lines, license, evidence, hash, the pages that
    quote it, its lines as plain text and how to cite it."""

    template: ClassVar[str] = "sources_entry.md"
    label: Markup  # literal(): "model.py 69–112", the file and lines, its heading
    anchor: str  # "ex-gpt2-attn", what code tabs and evidence cards link to
    path: Markup  # literal()
    lines: str  # "lines 185–224"
    permalink: str
    license: Markup  # literal()
    account: SourcesAccount
    sha256: str
    swhid: Markup | None  # literal(): the file's SWHID with the lines; None: file not read whole
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


Dim = tuple[tuple[str, str | None], ...]  # one dimension's words: (text, glossary link or None)


@dataclass(frozen=True)
class TensorShape:
    """A component's input or output: "in: $H$ [B batch, T positions, 768 d]"."""

    direction: str  # "in" | "out"
    symbol: Markup  # TeX for arithmatex: Markdown source, not HTML-escaped
    dims: tuple[Dim, ...]


@dataclass(frozen=True)
class ShapeList(Block):
    """One size's shapes on a component page: inputs, outputs, then its parameters."""

    template: ClassVar[str] = "component_shape_list.md"
    tensors: tuple[TensorShape, ...]
    per_instance: str  # parameters of one instance, formatted
    instances: int  # how many the model has (n_layer for a block's parts)
    together: tuple[str, ...]  # the components the page covers ("ln_1", "ln_2"), each as big
    total: str  # per_instance × len(together) × instances, formatted


@dataclass(frozen=True)
class Shapes(Block):
    """The shapes box of a component page: a ShapeList per GPT-2 size, in size tabs."""

    template: ClassVar[str] = "component_shapes.html"
    tabs: Markup  # size_tabs() of the ShapeLists (Markdown)


@dataclass(frozen=True)
class ParameterCount(Block):
    """One size's parameters of a component: per instance, the accounting table, the total."""

    template: ClassVar[str] = "component_parameters.md"
    per_instance: str  # formatted
    table: Markup  # the accounting rows (a Markdown table, calculations in TeX)
    instances: int
    together: tuple[str, ...]  # the components this page counts together ("ln_1", "ln_2")
    total: str  # all instances of `together`, formatted
    per_instance_tex: str  # tex_int()
    total_tex: str  # of this component's instances, tex_int()
    latex: tuple[tuple[str, str], ...]  # (component, link to its LaTeX table)


@dataclass(frozen=True)
class Chart(Block):
    """A generated chart: the narrow drawing on a phone, the wide one elsewhere (HTML)."""

    template: ClassVar[str] = "component_chart.html"
    wide: str  # URL of the wide SVG
    narrow: str  # URL of the narrow SVG
    phone_max: str  # "44.9375em": the widest screen that gets the narrow one
    alt: str


@dataclass(frozen=True)
class Count(Block):
    """A count beside a heading, as in "Sources 2" (inline HTML)."""

    template: ClassVar[str] = "count.html"
    n: int
    what: str  # "pinned excerpts": what is counted, said in words beside the figure


@dataclass(frozen=True)
class ModelCount(Block):
    """One size's count of a kind of part across the whole model: "ln_1 × 12, ln_2 × 12 and
    ln_f × 1: 25 LayerNorms, 38,400 parameters"."""

    template: ClassVar[str] = "component_model_count.md"
    model: str  # "GPT-2 small"
    parts: tuple[tuple[str, str], ...]  # (component, how many the model has), formatted
    count: str  # all of them, formatted
    what: str  # "LayerNorms"
    total: str  # their parameters, formatted


@dataclass(frozen=True)
class FlopCount(Block):
    """One size's forward FLOPs of a component per token, at the model's full context."""

    template: ClassVar[str] = "component_flops.md"
    n_ctx: str  # formatted
    table: Markup  # the accounting rows (a Markdown table, calculations in TeX)
    latex: str  # link to the LaTeX table (of the first kind of layer)
    heading: str = ""  # where layers differ: what the first table's layers are ("18 layers with …")
    others: tuple[tuple[str, Markup], ...] = ()  # the other kinds: (heading, table)


@dataclass(frozen=True)
class ChangeWhy(Block):
    """Why a change was made, in the words of the papers that give the reason, and the papers as
    references a reader can look up (What changed since GPT-2)."""

    template: ClassVar[str] = "change_why.html"
    why: str
    cite: tuple[Paper, ...]


@dataclass(frozen=True)
class GlossaryTerms(Block):
    """The Notation page's words of the trade: a heading and a definition each."""

    template: ClassVar[str] = "glossary_terms.html"
    terms: tuple[Term, ...]

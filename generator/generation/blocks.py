"""The Generation page's blocks: their data here, their markup in generator/templates/generation_*.

Texts (tokens, filter names) are plain strings that the templates escape; TeX and Markdown are the
generator's own and come as `Markup`; the walkthrough's token chip is nested as its own block.
Numbers arrive formatted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from generator.blocks import Block, Markup
from generator.walkthrough.blocks import TokenChip


# -- one distribution under each filter ----------------------------------------------------------
@dataclass(frozen=True)
class FilterRow:
    """One token: its probability under each filter ("removed" where the filter drops it)."""

    token: str  # as shown: ␣ for a space, ↵ for a newline
    probs: tuple[str, ...]  # one per filter, "18.5%"


@dataclass(frozen=True)
class Filters(Block):
    """The most likely tokens at the prompt's least sure position, a column per filter."""

    template: ClassVar[str] = "generation_filters.html"
    model: str  # "GPT-2" or "stand-in model"
    prefix: str  # the prompt up to that position, as shown
    filters: tuple[str, ...]  # column heads: "softmax", "temperature 0.7", ...
    rows: tuple[FilterRow, ...]
    kept: tuple[str, ...]  # tokens left under each filter, formatted


@dataclass(frozen=True)
class TopPNote(Block):
    """How many tokens each library's top-p rule keeps on the page's distribution (Markdown)."""

    template: ClassVar[str] = "generation_top_p_note.md"
    top_p: float  # the threshold, printed as Python prints it: 0.9
    transformers: int  # tokens kept by transformers' rule
    gpt2: int  # tokens kept by gpt-2's


# -- the model continuing the prompt -------------------------------------------------------------
@dataclass(frozen=True)
class ContinuationStep:
    """One generated token: where it stands, what was cached, what was drawn among what."""

    step: int  # from 1
    position: int  # the token's position in the sequence
    cached: int  # positions read from the cache
    token: str  # the token drawn, as shown
    prob: str  # its probability, "99.0%"
    candidates: tuple[tuple[str, str], ...]  # (token, probability) left after the filters


@dataclass(frozen=True)
class Continuation(Block):
    """The prompt, what the model added, how it drew, and every step's distribution."""

    template: ClassVar[str] = "generation_continuation.html"
    model: str  # "GPT-2" or "stand-in model"
    prompt: str  # as shown, without <|endoftext|>
    new: str  # the generated text, as shown
    temperature: float
    top_k: int | None  # None: no top-k filter (the page sets one)
    seed: int
    n_prompt: str  # prompt tokens the first step reads, <|endoftext|> included, formatted
    steps: tuple[ContinuationStep, ...]  # empty when the prompt fills the context
    n_ctx: str = ""  # the model's context, formatted (said when there is no room to continue)


# -- the toy decoding with a cache ---------------------------------------------------------------
@dataclass(frozen=True)
class KvRow:
    """One position's key or value: its token, whether this step added it, its cells."""

    chip: TokenChip  # the row's token, drawn as in the walkthrough
    state: str  # "new" (added by this step) or "cached"
    cells: tuple[tuple[str, str], ...]  # (background #rrggbb, value "−0.91") per column


@dataclass(frozen=True)
class KvGrid(Block):
    """One head's K or V after a step: a row per position [positions × d_head]."""

    template: ClassVar[str] = "generation_kv_grid.html"
    name: str  # "K" or "V"
    block: int  # the transformer block shown
    head: int
    n_cols: int  # d_head
    rows: tuple[KvRow, ...]


@dataclass(frozen=True)
class KeyScore:
    """One key as the step's last query sees it."""

    chip: TokenChip  # the key's token
    source: str  # "cached" or "new"
    score: str  # q·k / √d_head, "−∞" where masked
    weight: str  # the attention weight


@dataclass(frozen=True)
class RowPanel(Block):
    """The step's last new row of one head against every key: source, scaled score, weight."""

    template: ClassVar[str] = "generation_row_panel.html"
    row: int  # the query's position
    token: str
    head: int
    keys: tuple[KeyScore, ...]


@dataclass(frozen=True)
class ToyStep(Block):
    """One decoding step of the toy: what it reads, then its K, V and one row of scores."""

    template: ClassVar[str] = "generation_toy_step.html"
    step: int  # from 1
    read: str  # the tokens the step reads, joined by spaces
    n_cached: int  # positions that come from the cache (0 on the first step)
    k: KvGrid
    v: KvGrid
    row: RowPanel


@dataclass(frozen=True)
class Toy(Block):
    """The toy's decoding steps, one section each."""

    template: ClassVar[str] = "generation_toy.html"
    steps: tuple[ToyStep, ...]


# -- cost tables (Markdown, inside size tabs) ----------------------------------------------------
@dataclass(frozen=True)
class CostRow:
    """One accounting row: label, its calculation, its value (data-q names it for tests)."""

    key: str  # the row's stable key, "values"
    label: str
    tex: Markup  # the calculation, LaTeX in math mode
    value: str  # formatted, "18,432"


@dataclass(frozen=True)
class RowsTable(Block):
    """A Markdown table of separate quantities, no total line: label, calculation, value."""

    template: ClassVar[str] = "generation_rows_table.md"
    columns: tuple[str, str, str]  # the three column heads
    quantity: str  # data-q prefix: "kv", "dec", "train", "memory"
    rows: tuple[CostRow, ...]


@dataclass(frozen=True)
class CacheCost(Block):
    """One size's tab: what the cache holds, one decoding step with and without it."""

    template: ClassVar[str] = "generation_cache.md"
    holds: RowsTable  # values and bytes per token and at full context
    step: RowsTable  # the step at full context with the cache, then the whole prefix again
    with_cache: str  # FLOPs, formatted
    without: str
    ratio: str  # without / with_cache, "747"
    crossover: str  # t from which reading the cache costs more than the rest of the step
    inside: bool  # the crossover lies inside the context
    n_ctx: str
    sequences: str  # caches that hold more values than the model has parameters
    tex_file: str  # link to the size's LaTeX table


@dataclass(frozen=True)
class TrainingCost(Block):
    """One size's tab on the whole-model page: a training token's FLOPs beside 6N, and memory."""

    template: ClassVar[str] = "generation_training.md"
    flops: RowsTable  # per token, forward and backward
    total: str  # FLOPs per training token, formatted
    kaplan_n: Markup  # N (non-embedding parameters), TeX
    six_n: Markup  # 6N, TeX
    fewer: str  # how much smaller 6N is, percent of total: "13.5"
    memory: RowsTable  # bytes kept per parameter
    per_param: int  # bytes per parameter
    memory_total: str  # bytes in all, formatted
    tex_file: str  # link to the size's LaTeX table


# -- gpt-2's sampling loop -------------------------------------------------------------------------
@dataclass(frozen=True)
class LineLink:
    """Upstream lines linked, not quoted."""

    name: Markup  # Markdown: "`top_p_logits`"
    first: int
    last: int
    href: str  # the permalink with its #L anchor


@dataclass(frozen=True)
class SamplePy(Block):
    """gpt-2's sample.py: Code tabs of the lines a PyPI copy vouches for, links to the rest."""

    template: ClassVar[str] = "generation_sample_py.md"
    tabs: Markup  # the Code tabs (Markdown)
    links: tuple[LineLink, ...]


__all__ = [
    "CacheCost",
    "Continuation",
    "ContinuationStep",
    "CostRow",
    "FilterRow",
    "Filters",
    "KeyScore",
    "KvGrid",
    "KvRow",
    "LineLink",
    "RowPanel",
    "RowsTable",
    "SamplePy",
    "TopPNote",
    "Toy",
    "ToyStep",
    "TrainingCost",
]

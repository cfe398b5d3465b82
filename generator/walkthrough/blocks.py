"""The walkthrough's page blocks: data only; the markup is in generator/templates/walkthrough_*.html.

Walkthrough     the widget: Bar, Note, Legend, the Steps and their list, the row panel
Step            one step: text, formula, Grids, a Scale per GPT-2 size (ScalePicture), RealHeads
CodePanel       the engine's attention() beside the pinned upstream tabs
Header, PerModel, TokenChip: the title lines, one value per GPT-2 size, a token with its colour
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from markupsafe import Markup

from generator.blocks import Block


@dataclass(frozen=True)
class Header(Block):
    """Kicker, title, and the "block 0 · head 0" line that follows the head selector."""

    template: ClassVar[str] = "walkthrough_header.html"
    title: str  # "Attention"
    subtitle: str  # "causal self-attention"
    block: int  # the toy's block, from 0
    head: int  # the head shown without JavaScript
    trained: str  # the trained head, shown in its place when chosen: "stand-in · block 1 · head 0"
    # ("" for a walkthrough without one)


@dataclass(frozen=True)
class PerModel(Block):
    """A value for each GPT-2 size; walkthrough.js shows the reader's size (one value: as is)."""

    template: ClassVar[str] = "walkthrough_per_model.html"
    values: tuple[tuple[str, str], ...]  # (size name, text), in the size tabs' order
    default: str  # the size shown without JavaScript and to search


@dataclass(frozen=True)
class TokenChip(Block):
    """A token with the dot of its colour (the colour follows the token through every grid)."""

    template: ClassVar[str] = "walkthrough_token.html"
    text: str
    colour: str  # "#rrggbb"


@dataclass(frozen=True)
class Cell:
    text: str  # the value as printed ("−∞", "0" for a masked weight)
    label: str  # accessible name: "row The, key token cat: 0.12"
    colour: str | None  # background "#rrggbb"; None for a masked cell (j > i)
    value: str | None  # repr() of the float, read by walkthrough.js; None for −∞


@dataclass(frozen=True)
class GridRow:
    index: int  # the row's token position, from 0
    token: TokenChip
    cells: tuple[Cell, ...]
    blend: str | None  # the row's colour blend "#rrggbb" (the weighted sum only), else None


@dataclass(frozen=True)
class Grid(Block):
    """One matrix of the toy's trace as a table: token rows, cells coloured by sign and size."""

    template: ClassVar[str] = "walkthrough_grid.html"
    key: str  # the engine's trace key ("q", "weights", …)
    head: int
    symbol: str  # "Q"
    caption: str  # "Queries"
    where: str  # "head 0" or "all heads"
    shape: str  # "[5 × 4]"
    columns: tuple[tuple[str, str], ...]  # (text, accessible name) of each column header
    rows: tuple[GridRow, ...]


@dataclass(frozen=True)
class Legend(Block):
    """What the cell colours mean (the same for every grid)."""

    template: ClassVar[str] = "walkthrough_legend.html"
    swatches: tuple[tuple[str, str], ...]  # (colour "#rrggbb", meaning), negative to positive
    masked: bool = True  # some grid masks cells (j > i): say what their colour means


@dataclass(frozen=True)
class ScaleLabel:
    x: float  # px, left end
    lines: tuple[str, str]  # "toy [5 × 5]", "25 cells per head"


@dataclass(frozen=True)
class ScalePicture(Block):
    """SVG: the toy's grid enlarged, and where it sits inside GPT-2's grid, to scale. All sizes
    are in px, computed by grids.scale_picture()."""

    template: ClassVar[str] = "walkthrough_scale.html"
    name: str  # the accessible name: both sizes in words
    width: float  # viewBox
    height: float
    toy_lines: tuple[tuple[int, int, int, int], ...]  # (x1, y1, x2, y2): the toy grid's lines
    toy_width: int  # the toy grid's right edge, where the lead line starts
    lead_y: float  # the lead line from the toy grid to GPT-2's
    big_x: int  # GPT-2's grid and the dot in its corner start here, at y 0
    big: tuple[float, float]  # (width, height) of GPT-2's grid
    dot: tuple[float, float]  # (width, height) of the toy's grid inside it
    text_y: float  # the labels' first line
    line_gap: int  # their second line, below the first
    labels: tuple[ScaleLabel, ...]  # the toy's, GPT-2's


@dataclass(frozen=True)
class Scale:
    """One GPT-2 size's side of a step."""

    name: str  # "gpt2-medium"
    model: str  # "GPT-2 medium"
    hidden: bool  # not the size shown without JavaScript
    line: str  # the one-line GPT-2 figure
    toy_line: str  # what it says of the toy first, hidden with the toy ("" for none)
    facts: tuple[tuple[str, str], ...]
    picture: ScalePicture


@dataclass(frozen=True)
class HeadLink:
    anchor: str  # the head's id on the forward-pass page
    kind: str  # "induction"
    label: str  # "5.1"
    score: str  # "0.87"


@dataclass(frozen=True)
class RealHeads(Block):
    """The seed's promise: a link to trained heads on the forward-pass page, naming the strongest
    head of each kind the analysis found there."""

    template: ClassVar[str] = "walkthrough_real_heads.html"
    page: str  # the forward-pass page's URL
    found: tuple[HeadLink, ...]  # none when no head reaches its kind's threshold


@dataclass(frozen=True)
class ShiftDemo(Block):
    """The rotary step's proof by numbers: one query and one key, rotated at several pairs of
    positions by the engine; the score is the same wherever the gap is the same."""

    template: ClassVar[str] = "walkthrough_shift.html"
    head: int
    query: str  # the query's token
    key: str  # the key's token
    rows: tuple[tuple[str, str, str, str, bool], ...]  # t, s, s − t, score (formatted); moved apart


@dataclass(frozen=True)
class Step(Block):
    """One step: explanation and formula, the toy's grids, GPT-2's figures, the code link."""

    template: ClassVar[str] = "walkthrough_step.html"
    index: int  # from 1
    key: str  # the engine's step name
    title: str
    text: Markup  # Markdown with TeX
    formula: Markup  # TeX
    scales: tuple[Scale, ...]  # GPT-2's figures, one per size
    grids: tuple[Grid, ...]  # the toy's value grids
    code_id: str
    first: int  # the step's lines in the engine's file
    last: int
    engine_file: str
    real_heads: RealHeads | None = None  # the softmax step's link to trained heads
    trained: Markup = Markup("")  # Markdown: what this step shows of the trained head
    demo: Block | None = None  # shown below the formula, with the toy (the rotary step's ShiftDemo)


@dataclass(frozen=True)
class Dim:
    """One size of the toy beside GPT-2's."""

    name: str  # "d"
    sub: str  # its subscript ("model"), or ""
    toy: str  # formatted
    gpt2: PerModel  # "GPT-2 small 768", one per size
    trained: str = ""  # the trained head's model's, formatted ("" for a walkthrough without one)


@dataclass(frozen=True)
class Bar(Block):
    """The widget's controls and the toy's sizes beside GPT-2's."""

    template: ClassVar[str] = "walkthrough_bar.html"
    models: tuple[tuple[str, str], ...]  # (name, label) of each GPT-2 size: the size selector
    trained: str  # the trained head's option: "trained head: stand-in 1.0" ("" for none)
    default: str  # the size shown without JavaScript
    n_head: int  # the head selector's options
    dims: tuple[Dim, ...]
    family: str = "GPT-2"  # whose sizes: "GPT-2 size", "GPT-2 scale"


@dataclass(frozen=True)
class Note(Block):
    """What the toy is: its sentence, its sizes, its weights, where in the engine it runs."""

    template: ClassVar[str] = "walkthrough_note.html"
    n_tokens: str  # formatted, like the sizes below
    sentence: str  # the tokens, joined by spaces
    d_model: str
    n_head: str
    d_head: str
    block: int
    after: str = "ln_1"  # the norm whose output the layer reads


@dataclass(frozen=True)
class TrainedNote(Block):
    """What the trained head is: which model and head, the phrase, how wide its rows are."""

    template: ClassVar[str] = "walkthrough_trained_note.html"
    model: str  # "stand-in"
    is_gpt2: bool
    block: int
    head: int
    label: str  # "1.0"
    named: str  # the paper naming the head, or ""
    phrase: str  # the phrase, as the model's tokens joined
    n_tokens: str  # formatted
    d_head: str  # formatted
    shown: int  # columns each grid prints
    forward: str  # the head on the forward-pass page: URL#anchor
    tokens: tuple[TokenChip, ...] = ()  # the phrase's tokens, each in its colour; walkthrough.js
    # draws the trained grids' rows with these chips (so a site's override of the chip reaches them)


@dataclass(frozen=True)
class Walkthrough(Block):
    """The widget: controls and sizes, the toy, the legend, the steps with their list and
    buttons, and the row panel walkthrough.js fills."""

    template: ClassVar[str] = "walkthrough_widget.html"
    src: str  # the URL of the widget's JSON
    trained_src: str | None  # the URL of the trained head's JSON (same shape), if there is one
    bar: Bar
    note: Note
    trained_note: TrainedNote | None
    legend: Legend
    steps: tuple[Step, ...]


@dataclass(frozen=True)
class CodeStep:
    key: str  # the engine's step name
    title: str
    first: int  # its lines in the engine's file
    last: int


@dataclass(frozen=True)
class CodePanel(Block):
    """The engine's attention() (its lines tied to the steps) beside the pinned upstream tabs."""

    template: ClassVar[str] = "walkthrough_code.html"
    block_id: str  # the fence's id: its lines are #__codelineno-<block_id>-<line>
    path: str  # "generator/engine/attention.py"
    first_line: int
    last_line: int
    steps: tuple[CodeStep, ...]
    fence: Markup  # Markdown: the engine's lines, numbered as in its file
    tabs: Markup  # Markdown: the upstream excerpts as content tabs

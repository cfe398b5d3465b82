"""The forward-pass page's blocks as data; each names its template in generator/templates/.

generator/forward/render.py fills them from a ForwardPass; numbers arrive formatted (strings),
token texts as the page shows them (render.show). A site overrides a block's markup with a
template of the same name in overrides/itm/.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from generator.blocks import Block


# -- which model ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Promise(Block):
    """What another page may promise of the forward-pass page: GPT-2's heads, or the stand-in's."""

    template: ClassVar[str] = "forward_promise.html"
    model: str  # "GPT-2 small", or "" when the page shows the stand-in
    n_heads: str  # every head the page shows, formatted


@dataclass(frozen=True)
class SourceNote(Block):
    """Which model the page shows. GPT-2: repo/revision/origin set; the stand-in: its record."""

    template: ClassVar[str] = "forward_source.html"
    model: str
    weights_file: str
    sha256: str
    repo: str = ""  # GPT-2's hub repo ("" for the stand-in)
    revision: str = ""
    origin: str = ""  # where the build found GPT-2's files
    n_layer: int = 0  # the stand-in's shape and training
    n_head: int = 0
    d_model: int = 0
    vocab: str = ""
    steps: str = ""
    final_loss: float = 0.0


# -- tokens --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Tokens(Block):
    """The prompt and its tokens, the repeated ones marked."""

    template: ClassVar[str] = "forward_tokens.html"
    prompt: str
    tokens: tuple[tuple[str, bool], ...]  # (shown text, its token appeared before)
    count: str  # how many, formatted ("1,024")
    n_repeat: str  # how many are marked, formatted
    first_repeat: int | None
    tokenizer: str
    scroll: bool = False  # a long prompt: the list scrolls in a box of its own (render.summarised)
    page_prompt: bool = False  # the page's own prompt (a phrase, then its start again)


# -- residual stream -------------------------------------------------------------------------------
@dataclass(frozen=True)
class ResidualCell:
    background: str  # "#rrggbb": the norm's colour, on a log scale over the whole table
    colour: str  # "#000" or "#fff", whichever reads better on the background
    title: str  # where it is and the norm to two decimals: "after block 3, position 7: 12.34"
    short: str  # the norm in at most four characters (the cell's text)


@dataclass(frozen=True)
class ResidualRow:
    label: str  # "embedding", "after block 0", ...
    cells: tuple[ResidualCell, ...]  # one per column


@dataclass(frozen=True)
class ResidualStream(Block):
    """‖x‖ of the residual stream entering block 0 and after each block: at every position, or
    for a long prompt at position 0 and the smallest, median and largest over the others, with
    every value in a CSV file."""

    template: ClassVar[str] = "forward_residual.html"
    columns: tuple[tuple[str, str], ...]  # (column head, its title): a token and its position
    rows: tuple[ResidualRow, ...]  # n_layer + 1 rows
    median_growth: str  # last row / first row at the median position (after the first), "3.1"
    first_growth: str  # the same at position 0
    summary_of: str = ""  # how many positions the summary columns cover ("1,023"); "": none
    csv: str = ""  # link to every value (with summary_of)


# -- heads -----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class HeadLink:
    anchor: str  # the head's anchor in the gallery
    label: str  # "5.1"
    score: str  # its score of the kind listed, formatted


@dataclass(frozen=True)
class FoundKind:
    """One head type: what it does, its threshold, and the strongest heads that reach it."""

    kind: str  # a key of analysis.KINDS
    name: str  # "previous-token heads"
    what: str  # what such a head does ("" when the name says it)
    badge: str  # the gallery's badge for it, "P"
    threshold: str
    chance: str | None  # what even attention would score; None: the prompt cannot test it
    heads: tuple[HeadLink, ...]  # strongest first, at most six
    more: int  # how many more reach the threshold


@dataclass(frozen=True)
class LiteratureHead:
    """A head published work names, and what this prompt's scores say about it."""

    label: str
    anchor: str
    agrees: bool  # the page's classifier marks it as that kind too
    kind: str
    source: str  # the paper
    verdict: str  # one sentence (literature.verdict)


@dataclass(frozen=True)
class Literature(Block):
    """For GPT-2's own weights: the heads the papers name, next to this page's scores."""

    template: ClassVar[str] = "forward_literature.html"
    heads: tuple[LiteratureHead, ...]


@dataclass(frozen=True)
class FoundHeads(Block):
    """The head types the scores point out, strongest heads first, with their scores."""

    template: ClassVar[str] = "forward_found.html"
    kinds: tuple[FoundKind, ...]  # in analysis.KINDS order
    literature: Literature | None  # None for the stand-in


@dataclass(frozen=True)
class GalleryHead:
    layer: int
    head: int
    anchor: str
    label: str  # "5.1"
    view: str  # link to the large labelled view (SVG)
    thumbnail: str  # link to the thumbnail (PNG, one pixel per query and key)
    previous_token: str  # the three scores, formatted ("–" for none)
    induction: str
    first_token: str
    kinds: tuple[tuple[str, str], ...]  # (kind, badge) for each kind the page points it out as


@dataclass(frozen=True)
class GalleryRow:
    layer: int
    heads: tuple[GalleryHead, ...]  # n_head, in order


@dataclass(frozen=True)
class Gallery(Block):
    """layers × heads thumbnails, each linking to its large view; the viewer forward.js fills."""

    template: ClassVar[str] = "forward_gallery.html"
    n_layer: int
    n_head: int
    size: int  # a thumbnail's width and height in pixels (T up to head_images.THUMBNAIL_MAX)
    rows: tuple[GalleryRow, ...]  # n_layer
    badges: tuple[tuple[str, str], ...]  # (badge, kind) for the legend
    positions: str = ""  # T, formatted ("1,024")
    pooled: int = 1  # cells a side one thumbnail pixel covers (head_images.pool_factor)
    every: int = 0  # a pixel view's interval between axis labels; 0: labelled views


@dataclass(frozen=True)
class ScoreRow:
    anchor: str  # the head's anchor in the gallery
    label: str  # "5.1"
    scores: tuple[str, str, str]  # previous-token, induction, first-token (formatted)
    kinds: str  # what the page points it out as, "–" for nothing


@dataclass(frozen=True)
class ScoresTable(Block):
    """Every head's three scores, and what evenly spread attention would score."""

    template: ClassVar[str] = "forward_scores.html"
    chance: tuple[str, str, str]
    rows: tuple[ScoreRow, ...]


# -- predictions -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Predictions(Block):
    """The most likely next tokens after the prompt, and the top guess at every position."""

    template: ClassVar[str] = "forward_predictions.html"
    last: str  # the prompt's last token, shown
    top: tuple[tuple[int, str, str, str], ...]  # (rank, token, bar width %, probability)
    steps: tuple[tuple[int, str, str, str], ...]  # (position, token, top guess, actual next)
    guessed: str  # positions with a next token to guess (T - 1), formatted
    hits: str  # positions whose top guess is the actual next token, formatted
    hits_repeat: str  # of those, inside the repeated phrase
    scroll: bool = False  # a long prompt: the table of every position scrolls in its own box


# -- removing heads --------------------------------------------------------------------------------
@dataclass(frozen=True)
class RemovalRow:
    anchor: str  # the removed head's anchor; "" for the intact model
    label: str
    kinds: str
    right: str  # mean probability of the right answers, formatted
    hits: str  # repeat positions where the right answer is the top guess, formatted
    top: str  # the top guess after the last token, shown
    top_prob: str


@dataclass(frozen=True)
class Removals(Block):
    """The prompt's predictions with each pointed-out head removed; the intact model first."""

    template: ClassVar[str] = "forward_removals.html"
    n_repeat: str  # positions where copying gives the right answer, formatted
    last: str  # the prompt's last token, shown
    rows: tuple[RemovalRow, ...]


# -- the stand-in's training -----------------------------------------------------------------------
@dataclass(frozen=True)
class Probe:
    step: str  # the training step, formatted
    score: str  # the best head's score there


@dataclass(frozen=True)
class Reached:
    """When the best head's score of one kind first reached the page's threshold in training."""

    kind: str
    threshold: str  # as the page states it, "0.3"
    at: Probe | None  # the first probe at or above it; None: never
    before: Probe | None  # the probe before that, for contrast (None at the first probe)


@dataclass(frozen=True)
class Training(Block):
    """For the stand-in: how its heads formed during training, and the training figure."""

    template: ClassVar[str] = "forward_training.md"
    probe_every: str  # steps between probes, formatted
    previous_token: Reached
    induction: Reached
    figure: str  # link to the figure (SVG)
    width: int  # px the page shows the figure at
    height: int
    first_loss: str  # the training loss at the first and the last probe
    last_loss: str
    last_step: str
    first_induction: str  # the best head's induction score at the first and the last probe
    last_induction: str


# -- how to get GPT-2's heads ------------------------------------------------------------------------
@dataclass(frozen=True)
class Howto(Block):
    """The pinned GPT-2 files a build needs to show GPT-2's own heads, and whether it had them
    (how to build with them is the README's business: readers get what they can check)."""

    template: ClassVar[str] = "forward_howto.html"
    found: str  # where this build found them, in a reader's words; "" if it did not
    repo: str
    revision: str
    files: tuple[tuple[str, str, str], ...]  # (name, bytes formatted, sha256)

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
    n_repeat: int
    first_repeat: int | None
    tokenizer: str


# -- heads -----------------------------------------------------------------------------------------
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
    hits: int  # positions whose top guess is the actual next token
    hits_repeat: int  # of those, inside the repeated phrase


# -- removing heads --------------------------------------------------------------------------------
@dataclass(frozen=True)
class RemovalRow:
    anchor: str  # the removed head's anchor; "" for the intact model
    label: str
    kinds: str
    right: str  # mean probability of the right answers, formatted
    hits: int  # repeat positions where the right answer is the top guess
    top: str  # the top guess after the last token, shown
    top_prob: str


@dataclass(frozen=True)
class Removals(Block):
    """The prompt's predictions with each pointed-out head removed; the intact model first."""

    template: ClassVar[str] = "forward_removals.html"
    n_repeat: int  # positions where copying gives the right answer
    last: str  # the prompt's last token, shown
    rows: tuple[RemovalRow, ...]


# -- how to get GPT-2's heads ------------------------------------------------------------------------
@dataclass(frozen=True)
class Howto(Block):
    """The pinned GPT-2 files and where the build looks for them."""

    template: ClassVar[str] = "forward_howto.html"
    found: str  # where this build found them, "" if it did not
    repo: str
    revision: str
    pins_file: str
    files: tuple[tuple[str, str, str], ...]  # (name, bytes formatted, sha256)
    weights_variable: str  # the pin's variable, e.g. ITM_GPT2_WEIGHTS
    weights_file: str
    prompt_variable: str

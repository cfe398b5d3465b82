"""The forward-pass page: GPT-2's real heads from a pinned checkpoint, or a learned stand-in.

Public API (cheap to import: nothing heavy until used; torch only ever trains the stand-in, never
in a build):
    current(settings) -> ForwardPass           the build's forward pass, computed once per process
    head_scores(settings) -> list[HeadScore]   per head: previous-token, induction, first-token
    head_anchor(layer, head) -> str        "head-5-1": the head's anchor on the page PAGE
    PAGE                                   "forward-pass.md", the docs path to link to
Another page links a head as `url_for(PAGE) + "#" + score.anchor`.

The names from generator.forward.analysis are imported on first use (PEP 562), so a module of
this package that needs no numpy loads without it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from generator import per_build
from generator.settings import Settings

if TYPE_CHECKING:
    from generator.forward.analysis import KINDS, THRESHOLDS, HeadScore, head_anchor, strongest
    from generator.forward.pipeline import ForwardPass

PAGE = "forward-pass.md"
T = TypeVar("T")
_RUNS: dict[tuple, ForwardPass] = {}
per_build(_RUNS.clear)  # the weights found, the stand-in's file: inputs a next build may change
_FROM_ANALYSIS = ("KINDS", "THRESHOLDS", "HeadScore", "head_anchor", "strongest")


def __getattr__(name: str) -> Any:
    if name in _FROM_ANALYSIS:
        from generator.forward import analysis

        return getattr(analysis, name)
    if name == "ForwardPass":
        from generator.forward.pipeline import ForwardPass

        return ForwardPass
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def current(settings: Settings) -> ForwardPass:
    """The forward pass for these settings; computed on first use, then reused."""
    from generator.forward.pipeline import run

    return once_per_model(_RUNS, run, settings)


def once_per_model(runs: dict[tuple, T], compute: Callable[[Settings], T], s: Settings) -> T:
    """compute(s), kept in `runs` per root, cache and model settings: what a forward pass reads."""
    key = (s.root, s.cache_dir, s.hub_cache, s.forward_prompt, s.gpt2_weights, s.may_download)
    if key not in runs:
        runs[key] = compute(s)
    return runs[key]


def head_scores(settings: Settings) -> list[HeadScore]:
    """Every head's scores on the page's prompt, layer by layer, heads in order."""
    return current(settings).heads


__all__ = [
    "KINDS",
    "PAGE",
    "THRESHOLDS",
    "ForwardPass",
    "HeadScore",
    "current",
    "head_anchor",
    "head_scores",
    "strongest",
]

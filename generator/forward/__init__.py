"""The forward-pass page: GPT-2's real heads from a pinned checkpoint, or a learned stand-in.

Public API (cheap to import: numpy only; torch is imported only when the stand-in must be trained):
    current(root) -> ForwardPass           the build's forward pass, computed once per process
    head_scores(root) -> list[HeadScore]   per head: previous-token, induction, first-token scores
    head_anchor(layer, head) -> str        "head-5-1": the head's anchor on the page PAGE
    PAGE                                   "forward-pass.md", the docs path to link to
Another page links a head as `url_for(PAGE) + "#" + score.anchor`.
"""

from __future__ import annotations

import os
from pathlib import Path

from generator.forward.analysis import KINDS, THRESHOLDS, HeadScore, head_anchor, strongest
from generator.forward.pipeline import ForwardPass

PAGE = "forward-pass.md"
_ENV_KEYS = (
    "ITM_FORWARD_PROMPT",
    "ITM_GPT2_WEIGHTS",
    "ITM_DOWNLOAD_WEIGHTS",
    "ITM_OFFLINE",
    "ITM_CACHE_DIR",
    "HF_HUB_CACHE",
    "HF_HOME",
    "XDG_CACHE_HOME",
)
_RUNS: dict[tuple, ForwardPass] = {}


def current(root: Path, *, log=None) -> ForwardPass:
    """The forward pass for this site root and environment; computed on first use, then reused."""
    from generator.forward.pipeline import run
    from generator.site import cache_dir_for

    root = Path(root).resolve()
    key = (str(root), *(os.environ.get(name, "") for name in _ENV_KEYS))
    if key not in _RUNS:
        _RUNS[key] = run(root, cache_dir_for(root), log=log)
    return _RUNS[key]


def head_scores(root: Path) -> list[HeadScore]:
    """Every head's scores on the page's prompt, layer by layer, heads in order."""
    return current(root).heads


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

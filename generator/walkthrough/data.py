"""The JSON file the walkthrough widget reads: the engine's toy trace, rounded, plus the steps.

Deterministic bytes: keys sorted, every float rounded to DECIMALS places (−0 becomes 0), −∞
written as null (JSON has no infinity). The page's static grids print the same rounded values.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence

import numpy as np

from generator.config import ModelConfig
from generator.walkthrough.steps import MATRICES, STEPS, symbol
from generator.walkthrough.toy import TOKEN_COLOURS, Toy

DECIMALS = 6
Nested = list  # nested lists of float | None, the shape of the array


def rounded(array: np.ndarray) -> Nested:
    """The array as nested lists of floats rounded to DECIMALS places; −∞ becomes None."""

    def value(v: float) -> float | None:
        if v == -math.inf:
            return None
        if not math.isfinite(v):
            raise ValueError(f"the toy trace holds {v}: only finite values and −∞ are expected")
        return round(v, DECIMALS) + 0.0  # + 0.0 turns −0.0 into 0.0

    def walk(a: np.ndarray) -> Nested:
        if a.ndim == 1:
            return [value(float(v)) for v in a]
        return [walk(sub) for sub in a]

    return walk(np.asarray(array, dtype=np.float64))


def shared_data(
    block: int,
    cfg: ModelConfig,
    tokens: Sequence[str],
    token_ids: np.ndarray,
    trace: dict[str, np.ndarray],
    steps: Iterable,
    lines: dict[str, tuple[int, int]],
    code_block: str,
    n_head: int | None = None,
) -> dict:
    """What every widget's data holds alike (walkthrough.js draws any of them): the layer
    (`block`, from 0 as on every page), sizes, tokens, trace, and `steps` with their `lines`
    {step: (first, last)} in the code block `code_block`; n_head when it holds fewer heads
    than cfg has."""
    return {
        "block": block,
        "config": {
            "d_head": cfg.d_head,
            "d_model": cfg.d_model,
            "n_head": cfg.n_head if n_head is None else n_head,
            "n_tokens": len(tokens),
        },
        "tokens": list(tokens),
        "token_ids": [int(i) for i in token_ids],
        "trace": {key: rounded(value) for key, value in sorted(trace.items())},
        "per_head": sorted(key for key, value in trace.items() if value.ndim == 3),
        "steps": [
            {"key": s.key, "title": s.title, "show": list(s.matrices), "lines": list(lines[s.key])}
            for s in steps
        ],
        "code_block": code_block,
    }


def widget_data(toy: Toy, lines: dict[str, tuple[int, int]], code_block: str) -> dict:
    """Everything the widget draws. lines: {step: (first, last)} in the engine's file."""
    cfg = toy.cfg
    return {
        **shared_data(
            toy.block, cfg, toy.tokens, toy.token_ids, toy.trace, STEPS, lines, code_block
        ),
        "colours": list(TOKEN_COLOURS),
        "x": rounded(toy.x),
        "matrices": {
            key: {
                "symbol": symbol(key, cfg),
                "caption": m.caption,
                "columns": m.columns,
                "masked": m.masked,
            }
            for key, m in MATRICES.items()
        },
    }


def widget_json(data: dict) -> bytes:
    """Compact, sorted, UTF-8 JSON ending in a newline."""
    text = json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return (text + "\n").encode("utf-8")


def trained_data(head, lines: dict[str, tuple[int, int]], code_block: str) -> dict:
    """The trained head's trace in the toy's shape (walkthrough.js draws either): its per-head
    arrays cut to the one head, d_model-wide rows cut to the `shown` columns the grids print
    (q, k, v and the head's output stay whole: the row panel sums over them), `full` the width
    of each before the cut. head: a trained.TrainedHead."""
    from generator.walkthrough.trained import SHOWN, colours, reading, word

    cfg = head.cfg
    shown = min(SHOWN, cfg.d_head)
    cut = {"merged", "projected"}
    trace = {key: value[:, :shown] if key in cut else value for key, value in head.trace.items()}
    full = {key: int(value.shape[-1]) for key, value in head.trace.items()}
    tokens = [word(t) for t in head.tokens]
    return {
        **shared_data(head.layer, cfg, tokens, head.token_ids, trace, STEPS, lines, code_block, 1),
        "head": head.head,
        "label": head.label,
        "model": head.model,
        "shown": shown,
        # the key column the steps' words name (the word after the last word's earlier copy):
        # the script keeps it in view when a grid is wider than the screen
        "focus": found.target if (found := reading(head)) is not None else None,
        "full": {**full, "x": int(head.x.shape[-1])},
        "colours": colours(head.tokens),
        "x": rounded(head.x[:, :shown]),
        "matrices": {
            key: {
                "symbol": "[O₀ ‖ … ‖ Oₕ₋₁]" if key == "merged" else m.symbol,
                "caption": m.caption,
                "columns": "dims" if m.columns == "head-dims" else m.columns,
                "masked": m.masked,
            }
            for key, m in MATRICES.items()
        },
    }

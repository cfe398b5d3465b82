"""The walkthroughs' steps, in the engine's order: what each does, its formula, what it shows.

The words are data (steps.toml beside this file): GPT-2's seven attention steps and the Llama
family's rotary ones. Explanations are Markdown for a reader who knows matrix multiplication.
Sizes in them are [[placeholders]] filled from the configs (fill()), so no number is typed there
either; words about the toy only, GPT-2's sizes only or the trained head only are spans of the
classes the page's views show and hide (steps.toml says which).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

import msgspec

from generator.config import ModelConfig
from generator.data_file import keyed, one_of, read_data
from generator.engine import STEPS as ENGINE_STEPS
from generator.errors import InputError
from generator.render.numbers import fmt_int
from generator.walkthrough.gpt2_scale import in_words, root

STEPS_FILE = Path(__file__).with_name("steps.toml")
FIX = "write it as StepsFile in generator/walkthrough/steps.py says, or restore it from git"


class Step(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    key: str  # the engine's step name: its `# step: NAME` marker (rotary: which lines of ops.py)
    title: str
    text: str  # Markdown with [[placeholders]]
    formula: str  # TeX
    matrices: tuple[str, ...]  # engine trace keys the grid shows


class Matrix(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """How the grid shows one array of the engine's trace."""

    key: str  # the trace's key: "q"
    symbol: str  # "Q"
    caption: str  # "Queries"
    # one per key token; 1..n; head.dim; i and i' of each pair; one per pair
    columns: Literal["tokens", "dims", "head-dims", "pair-dims", "pairs"]
    masked: bool = False  # shows the causal mask: cells with j > i are −∞ or 0


class Walkthrough(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    matrices: tuple[Matrix, ...]
    steps: tuple[Step, ...]


class StepsFile(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    attention: Walkthrough  # GPT-2's
    rotary: Walkthrough  # the Llama family's (rotary.py)


def read_steps(path: Path = STEPS_FILE) -> StepsFile:
    """steps.toml, each matrix once and each step's matrices among them (an InputError
    otherwise)."""
    data = read_data(path, StepsFile, fix=FIX)
    for name in ("attention", "rotary"):
        walkthrough: Walkthrough = getattr(data, name)
        entry = f"{name}.matrices"
        known = keyed(walkthrough.matrices, lambda m: m.key, path=path, entry=entry, fix=FIX)
        for index, step in enumerate(walkthrough.steps):
            where = f"{name}.steps[{index}].matrices"
            one_of(step.matrices, known, what=f"a matrix of {entry}", path=path, entry=where)
    return data


WALKTHROUGHS = read_steps()
STEPS = WALKTHROUGHS.attention.steps
MATRICES = {matrix.key: matrix for matrix in WALKTHROUGHS.attention.matrices}


SUBSCRIPTS = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")


def symbol(key: str, cfg: ModelConfig) -> str:
    """The matrix's symbol; the merged heads are written out when there are few of them."""
    if key == "merged" and cfg.n_head <= 4:
        parts = [f"O{str(i).translate(SUBSCRIPTS)}" for i in range(cfg.n_head)]  # heads from 0
        return "[" + " ‖ ".join(parts) + "]"
    return MATRICES[key].symbol


def check_steps() -> None:
    """The page's steps must be the engine's steps, in the engine's order."""
    ours = tuple(step.key for step in STEPS)
    if ours != tuple(ENGINE_STEPS):
        raise InputError(
            f"the walkthrough's steps {ours} differ from the engine's {tuple(ENGINE_STEPS)}",
            file=str(STEPS_FILE),
            entry="attention.steps",
            fix="give each `# step:` marker of generator/engine/attention.py one step, in order",
        )


def text_fields(toy: ModelConfig, n_tokens: int, gpt2: ModelConfig) -> dict[str, str]:
    """The values of the [[placeholders]]: lower case for the toy, upper case for GPT-2."""
    N = gpt2.n_ctx
    return {
        "T": fmt_int(n_tokens),
        "d": fmt_int(toy.d_model),
        "h": fmt_int(toy.n_head),
        "dh": fmt_int(toy.d_head),
        "root": root(toy.d_head),
        "cells": fmt_int(n_tokens * n_tokens),
        "gpt2": gpt2.label,
        "D": fmt_int(gpt2.d_model),
        "H": fmt_int(gpt2.n_head),
        "DH": fmt_int(gpt2.d_head),
        "N": fmt_int(N),
        "gpt2_root": root(gpt2.d_head),
        "gpt2_cells": fmt_int(N * N),
        "gpt2_cells_words": in_words(N * N),
    }


def fill(text: str, fields: dict[str, str], entry: str) -> str:
    """Replace each [[name]] with fields[name]; an unknown name is an error naming `entry` (the
    step's text in steps.toml), not a blank."""

    def value(match: re.Match) -> str:
        name = match.group(1)
        if name not in fields:
            raise InputError(
                f"unknown placeholder [[{name}]]",
                file=str(STEPS_FILE),
                entry=entry,
                fix="use one of: " + ", ".join(sorted(fields)),
            )
        return fields[name]

    return re.sub(r"\[\[(\w+)\]\]", value, text)

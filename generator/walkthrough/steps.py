"""The seven steps of seed 000, in the engine's order: what each does, its formula, what it shows.

Explanations are Markdown for a reader who knows matrix multiplication. Sizes in them are
[[placeholders]] filled from the configs (fill()), so no number is typed here either. What is
said of the toy only is wrapped in toy() and hidden when the reader picks another view; big()
holds the words that stand in for it when GPT-2's sizes are shown, trained() those that stand in
for it when the trained head is shown (its fields, [[t_…]], come from the build's trained head).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from generator.config import ModelConfig
from generator.engine import STEPS as ENGINE_STEPS
from generator.errors import InputError
from generator.render.numbers import fmt_int
from generator.walkthrough.gpt2_scale import in_words, root


def toy(text: str) -> str:
    """Words about the toy, hidden when the page shows GPT-2's sizes (no math inside)."""
    return f'<span class="itm-wt-toy-only">{text}</span>'


def big(text: str) -> str:
    """Words shown only when the page shows GPT-2's sizes, in place of toy() words."""
    return f'<span class="itm-wt-big-only">{text}</span>'


def trained(text: str) -> str:
    """Words shown only when the page shows the trained head, in place of toy() words."""
    return f'<span class="itm-wt-trained-only">{text}</span>'


@dataclass(frozen=True)
class Step:
    key: str  # the engine's step name: its `# step: NAME` marker
    title: str
    text: str  # Markdown with [[placeholders]]
    formula: str  # TeX
    matrices: tuple[str, ...]  # engine trace keys the grid shows


@dataclass(frozen=True)
class Matrix:
    """How the grid shows one array of the engine's trace."""

    symbol: str  # "Q"
    caption: str  # "Queries"
    columns: str  # "tokens" (one per key token), "dims" (1..n), "head-dims" (head.dim)
    masked: bool = False  # shows the causal mask: cells with j > i are −∞ or 0


MATRICES: dict[str, Matrix] = {
    "q": Matrix("Q", "Queries", "dims"),
    "k": Matrix("K", "Keys", "dims"),
    "v": Matrix("V", "Values", "dims"),
    "scores": Matrix("S", "Scores Q·Kᵀ", "tokens"),
    "scaled": Matrix("S′", "Scaled scores S ÷ √d_head", "tokens"),
    "masked": Matrix("M", "Masked scores", "tokens", masked=True),
    "weights": Matrix("A", "Attention weights", "tokens", masked=True),
    "heads": Matrix("O", "Head output A·V", "dims"),
    "merged": Matrix("[O₀ ‖ … ‖ Oₕ₋₁]", "Heads side by side", "head-dims"),
    "projected": Matrix("Y", "Output projection", "dims"),
}

STEPS: tuple[Step, ...] = (
    Step(
        key="projections",
        title="Projections",
        text=(
            "$X$, the output of ln_1 with one row per token, is multiplied by three matrices, "
            "$W_Q$, $W_K$ and $W_V$. A query is what a token looks for. A key is what it offers. "
            "A value is what it hands over when another token picks it. GPT-2 does all three "
            "in one GEMM (one general matrix multiply), $X \\cdot W_{qkv}$, and adds a bias"
            + toy("; the toy has no biases")
            + ". Each result is cut into "
            + toy("[[h]] heads of [[dh]] columns ([[H]] heads of [[DH]] in [[gpt2]])")
            + big("[[H]] heads of [[DH]] columns in [[gpt2]]")
            + trained(
                "[[t_heads]] of [[t_dh]] columns per layer in the trained [[t_model]]; the grids "
                "follow one of them, head [[t_label]], through its [[t_tokens]] tokens"
            )
            + "."
        ),
        formula=r"Q = X W_Q,\;\; K = X W_K,\;\; V = X W_V",
        matrices=("q", "k", "v"),
    ),
    Step(
        key="scores",
        title="Scores",
        text=(
            "Multiply $Q$ by $K^\\top$, one head at a time. Row $i$, column $j$ is the dot "
            "product of token $i$'s query with token $j$'s key: how much $i$ should attend to "
            "$j$. Each head works in its own slice of $d_\\text{model} / \\text{heads}$ numbers "
            "("
            + toy("[[dh]] here, ")
            + "[[DH]] in [[gpt2]]). The grid is $T \\times T$: "
            + toy("[[cells]] cells here, ")
            + "[[gpt2_cells_words]] per head at [[N]] tokens ([[gpt2_cells]]). Doubling the "
            "context quadruples this step."
        ),
        formula=r"S = Q K^\top,\qquad S_{ij} = q_i \cdot k_j",
        matrices=("scores",),
    ),
    Step(
        key="scale",
        title="Scale",
        text=(
            "Divide every score by $\\sqrt{d_\\text{head}}$: "
            + toy("by [[root]] here, ")
            + "by [[gpt2_root]] in [[gpt2]]. "
            "A dot product of $d_\\text{head}$ terms grows with $d_\\text{head}$. "
            "Scaling keeps the scores of wide heads in a range where softmax is not saturated "
            "from the start, so gradients can flow."
        ),
        formula=r"S' = \frac{S}{\sqrt{d_\text{head}}}",
        matrices=("scaled",),
    ),
    Step(
        key="causal-mask",
        title="Causal mask",
        text=(
            "Position $i$ predicts the token after it, so it may only look at positions "
            "$j \\le i$. Every cell above the diagonal ($j > i$) is set to $-\\infty$. In "
            "training every position is predicted at once; without the mask, each could just "
            "read the word it is asked to predict."
        ),
        formula=(r"M_{ij} = \begin{cases} S'_{ij} & j \le i \\ -\infty & j > i \end{cases}"),
        matrices=("masked",),
    ),
    Step(
        key="softmax",
        title="Softmax",
        text=(
            "Softmax each row: exponentiate every entry, then divide by the row's sum. The "
            "weights of a row are positive and add up to one, and $e^{-\\infty} = 0$, so masked "
            "cells get no weight. Each row is one token's attention distribution over the "
            "tokens it can see. "
            + toy("These toy weights are random, so the pattern means nothing; a trained model")
            + big("A trained model")
            + trained("A trained model")
            + " learns which tokens to look at."
        ),
        formula=r"A = \operatorname{softmax}\!\left(\frac{S}{\sqrt{d_\text{head}}} + \text{mask}\right)",
        matrices=("weights",),
    ),
    Step(
        key="weighted-sum",
        title="Weighted sum",
        text=(
            "Weight the rows of $V$ by attention and sum them. Output row $i$ blends the values "
            "of every token $i$ can see, in the proportions of row $i$ of $A$. Each token has a "
            "colour; an output row's colour is the same blend of those colours. "
            '<span class="itm-wt-toy-only itm-js-only">The panel beside the grid breaks down '
            "the selected row.</span>"
        ),
        formula=r"O = A V,\qquad o_i = \sum_j A_{ij}\, v_j",
        matrices=("heads",),
    ),
    Step(
        key="output-projection",
        title="Output projection",
        text=(
            "Put the heads' outputs side by side ("
            + toy("[[h]] × [[dh]] = [[d]] columns here, ")
            + "[[H]] × [[DH]] = [[D]] in [[gpt2]]) and multiply by $W_O$, which mixes the heads. "
            "The result is added back to the residual stream. Several small heads can each "
            "follow a different relation for the cost of one big one. In code: "
            "(B, T, [[D]]) is split into (B, [[H]], T, [[DH]]) for attention and merged back "
            "here."
        ),
        formula=r"Y = \left[\,O_1 \;\|\; \cdots \;\|\; O_h\,\right] W_O",
        matrices=("merged", "projected"),
    ),
)


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
            file="generator/walkthrough/steps.py",
            entry="STEPS",
            fix="give each `# step:` marker of generator/engine/attention.py one Step, in order",
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


def fill(text: str, fields: dict[str, str]) -> str:
    """Replace each [[name]] with fields[name]; an unknown name is an error, not a blank."""

    def value(match: re.Match) -> str:
        name = match.group(1)
        if name not in fields:
            raise InputError(
                f"unknown placeholder [[{name}]]",
                file="generator/walkthrough/steps.py",
                entry=name,
                fix="use one of: " + ", ".join(sorted(fields)),
            )
        return fields[name]

    return re.sub(r"\[\[(\w+)\]\]", value, text)

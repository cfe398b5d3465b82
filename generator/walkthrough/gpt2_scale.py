"""GPT-2's side of each step: GEMM shapes, the ÷√d_head divisor, FLOPs per token, grid sizes.

Every figure is computed from generator.config and generator.accounting, so the walkthrough
changes with the config like every other page. N is the sequence length; the costs are given at
the model's full context (n_ctx tokens), as on the component pages.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from generator import accounting
from generator.config import ModelConfig
from generator.render.numbers import fmt_flops, fmt_int

# Walkthrough step -> key of its attention FLOP row in generator.accounting.
FLOP_ROWS = {"qkv": "c_attn", "scores": "scores", "weighted": "weighted_sum", "out": "c_proj"}
ELEMENTWISE = ("FLOPs", "elementwise: not counted (only matrix products are)")
WORDS = ((10**9, "a billion"), (10**6, "a million"), (10**3, "a thousand"))


@dataclass(frozen=True)
class Figure:
    """GPT-2's size for one step, next to the toy's."""

    gpt2_line: str  # the one-line figure under the explanation
    facts: tuple[tuple[str, str], ...]  # (what, value) rows of the GPT-2 view
    grid: tuple[int, int]  # rows, columns of the step's matrix at GPT-2 scale (per head)
    toy_grid: tuple[int, int]  # the same at toy scale
    per_head: bool = True  # the grid is one head's (else the whole layer's)
    toy_line: str = ""  # what the line says of the toy first ("toy ÷ 2 · "), hidden with it

    @property
    def line(self) -> str:
        return self.toy_line + self.gpt2_line


def dims(rows: int | str, cols: int | str) -> str:
    """ "[1,024 × 64]" for prose (thousands separated)."""
    show = [fmt_int(n) if isinstance(n, int) else n for n in (rows, cols)]
    return f"[{show[0]} × {show[1]}]"


def gemm(rows: int | str, inner: int | str, cols: int | str) -> str:
    """ "[T×768]·[768×2304]": a GEMM's operand shapes, T tokens (the Notation page's T)."""
    return f"[{rows}×{inner}]·[{inner}×{cols}]"


def root(n: int) -> str:
    """√n as the page prints it: "8" for 64, two decimals when it is not a whole number."""
    value = math.sqrt(n)
    return str(int(value)) if value.is_integer() else f"{value:.2f}"


def in_words(n: int) -> str:
    """ "over a million" for 1,048,576; the plain number below a thousand."""
    for scale, word in WORDS:
        if n > scale:
            return f"over {word}"
    return fmt_int(n)


def flop_values(cfg: ModelConfig, n_ctx: int) -> dict[str, int]:
    """Forward FLOPs per token of each attention matmul of one block, at context n_ctx."""
    value = {row.key: row.value for row in accounting.flop_rows(cfg, "attention", n_ctx)}
    return {step: value[key] for step, key in FLOP_ROWS.items()}


def step_figures(toy: ModelConfig, n_tokens: int, gpt2: ModelConfig) -> dict[str, Figure]:
    """{engine step name: Figure} for the toy with n_tokens tokens and GPT-2 model `gpt2`."""
    N = gpt2.n_ctx
    d, h, dh = gpt2.d_model, gpt2.n_head, gpt2.d_head
    flops = flop_values(gpt2, N)
    bias = " + b" if gpt2.bias else ""
    at_n = f"at T = {fmt_int(N)}"
    cells = N * N
    masked = N * (N - 1) // 2

    def costs(value: int) -> tuple[tuple[str, str], ...]:
        """The FLOPs facts: per token, and for a whole context."""
        per_token = ("FLOPs per token", f"{fmt_flops(value)} ({fmt_int(value)})")
        return per_token, (f"FLOPs for {fmt_int(N)} tokens", fmt_flops(value * N))

    heads_of = f"{h} heads × {dims(N, dh)}"
    grid_cells = (f"Cells per head at {fmt_int(N)} tokens", f"{fmt_int(cells)} ({in_words(cells)})")
    return {
        "projections": Figure(
            gpt2_line=f"{gemm('T', d, 3 * d)}{bias} · {fmt_flops(flops['qkv'])} / token",
            facts=(
                ("GEMM", f"X {dims(N, d)} · W_qkv {dims(d, 3 * d)}{bias}"),
                ("Q, K, V", f"each {dims(N, d)}, split into {heads_of}"),
                *costs(flops["qkv"]),
            ),
            grid=(N, dh),
            toy_grid=(n_tokens, toy.d_head),
        ),
        "scores": Figure(
            gpt2_line=f"{h} × {gemm('T', dh, 'T')} · {fmt_flops(flops['scores'])} / token {at_n}",
            facts=(
                ("GEMM", f"{h} heads × Q {dims(N, dh)} · Kᵀ {dims(dh, N)}"),
                grid_cells,
                *costs(flops["scores"]),
            ),
            grid=(N, N),
            toy_grid=(n_tokens, n_tokens),
        ),
        "scale": Figure(
            toy_line=f"toy ÷ {root(toy.d_head)} · ",
            gpt2_line=f"{gpt2.label} ÷ {root(dh)}",
            facts=(
                ("Divisor", f"√{dh} = {root(dh)}"),
                grid_cells,
                ELEMENTWISE,
            ),
            grid=(N, N),
            toy_grid=(n_tokens, n_tokens),
        ),
        "causal-mask": Figure(
            gpt2_line=f"causal: j > i → −∞ · {fmt_int(masked)} of {fmt_int(cells)} cells per head {at_n}",
            facts=(
                ("Masked cells per head", f"{fmt_int(masked)} of {fmt_int(cells)} (j > i)"),
                ("Masked cells, all heads", fmt_int(h * masked)),
                ("FLOPs", "none: the product QKᵀ still fills every cell"),
            ),
            grid=(N, N),
            toy_grid=(n_tokens, n_tokens),
        ),
        "softmax": Figure(
            gpt2_line=f"{h} heads × {fmt_int(N)} rows, each summing to 1, {at_n}",
            facts=(
                ("Rows", f"{h} heads × {fmt_int(N)} rows of {fmt_int(N)} weights"),
                grid_cells,
                ELEMENTWISE,
            ),
            grid=(N, N),
            toy_grid=(n_tokens, n_tokens),
        ),
        "weighted-sum": Figure(
            gpt2_line=f"{h} × {gemm('T', 'T', dh)} · {fmt_flops(flops['weighted'])} / token {at_n}",
            facts=(
                ("GEMM", f"{h} heads × A {dims(N, N)} · V {dims(N, dh)}"),
                ("Output", heads_of),
                *costs(flops["weighted"]),
            ),
            grid=(N, dh),
            toy_grid=(n_tokens, toy.d_head),
        ),
        "output-projection": Figure(
            gpt2_line=f"{gemm('T', d, d)}{bias} · {fmt_flops(flops['out'])} / token",
            facts=(
                ("Merge", f"{heads_of} → {dims(N, d)}"),
                ("GEMM", f"{dims(N, d)} · W_O {dims(d, d)}{bias}"),
                *costs(flops["out"]),
            ),
            grid=(N, d),
            toy_grid=(n_tokens, toy.d_model),
            per_head=False,
        ),
    }

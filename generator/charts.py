"""Figures a reader would rather look at than read: deterministic matplotlib SVGs per model size.

Every value plotted comes from generator.accounting. SVGs are byte-identical across builds:
a fixed hash salt, no date, text kept as text (small files, selectable labels). Each chart is
drawn twice: wide for a desktop column, and narrow (NARROW: taller, legend under the axes) for a
phone, where the wide one's text would shrink to 5 px. The background is transparent, so the
page's own colour shows through (site.css turns the drawing's black into white in dark mode).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from generator import accounting, decode_costs
from generator.chart_style import (
    NARROW,
    WIDE,
    Layout,
    crossing,
    finished,
    legend,
    log_axes,
    pyplot,
    stop_under,
    title,
)
from generator.config import CONFIGS, SIZES, ModelConfig
from generator.drawing import Drawing, Figure
from generator.render.numbers import fmt_int
from generator.store import key_of

FIGURES = ("params", "flops-context", "decode-flops")


def figure_path(name: str, cfg: ModelConfig, layout: Layout = WIDE) -> str:
    suffix = "-narrow" if layout == NARROW else ""
    return f"figures/{name}-{cfg.name}{suffix}.svg"


def param_breakdown(cfg: ModelConfig) -> list[tuple[str, int]]:
    """Where the whole model's parameters live: (label, count), largest groups first."""
    ln = sum(accounting.params_total(cfg, key) for key in ("ln1", "ln2", "lnf"))
    parts = [
        ("Token embedding wte", accounting.params_total(cfg, "wte")),
        ("Position embedding wpe", accounting.params_total(cfg, "wpe")),
        (f"Attention × {cfg.n_layer}", accounting.params_total(cfg, "attention")),
        (f"MLP × {cfg.n_layer}", accounting.params_total(cfg, "mlp")),
        ("LayerNorms (ln_1, ln_2, ln_f)", ln),
    ]
    assert sum(v for _, v in parts) == accounting.params_total(cfg, "model")
    return parts


def percent(part: int, whole: int) -> str:
    share = 100 * part / whole
    return f"{share:.1f}%" if share >= 1 else f"{share:.2f}%"


def params_figure(cfg: ModelConfig, layout: Layout = WIDE) -> bytes:
    return finished(draw_params(cfg, layout))


def draw_params(cfg: ModelConfig, layout: Layout = WIDE):
    plt = pyplot()
    parts = param_breakdown(cfg)
    total = accounting.params_total(cfg, "model")
    fig, ax = plt.subplots(figsize=(layout.width, layout.bar_height), layout="constrained")
    labels = [label for label, _ in parts][::-1]
    values = [value for _, value in parts][::-1]
    bars = ax.barh(labels, values, color="#3f51b5")
    for bar, value in zip(bars, values, strict=True):
        ax.text(
            bar.get_width(),
            bar.get_y() + bar.get_height() / 2,
            f"  {fmt_int(value)} ({percent(value, total)})",
            va="center",
            fontsize=layout.small if layout == NARROW else None,
        )
    ax.set_xlabel("parameters")
    # Centred on the figure, not the axes: the labels on the left push the axes right, and a
    # title centred over them ran past the canvas's right edge.
    fig.suptitle(
        title(f"{cfg.label}: {fmt_int(total)} parameters (wte shared with the unembedding)", layout)
    )
    ax.set_xlim(0, max(values) * (1.45 if layout == WIDE else 2.3))
    ax.xaxis.set_major_formatter(lambda x, _: f"{x / 1e6:g}M")
    if layout == NARROW:
        from matplotlib.ticker import MaxNLocator

        ax.xaxis.set_major_locator(MaxNLocator(4))  # 4 ticks fit a phone's width
    return fig


def attention_crossover(cfg: ModelConfig) -> int:
    """The smallest context T at which attention's T×T work (scores and weighted sum) costs more
    per token than its four projections; found by search over the accounting rows."""

    wide = dataclasses.replace(cfg, n_ctx=1 << 20)  # a hypothetical, longer wpe

    def grid_and_projections(T: int) -> tuple[int, int]:
        rows = accounting.flop_rows(wide, "attention", T)
        grid = sum(r.value for r in rows if r.key in accounting.ATTENTION_GRID)
        return grid, sum(r.value for r in rows) - grid

    lo, hi = 1, 1
    while grid_and_projections(hi)[0] <= grid_and_projections(hi)[1]:
        hi *= 2
    while lo < hi:  # first T with grid > projections
        mid = (lo + hi) // 2
        grid, proj = grid_and_projections(mid)
        lo, hi = (mid + 1, hi) if grid <= proj else (lo, mid)
    return lo


def flops_context_figure(cfg: ModelConfig, layout: Layout = WIDE) -> bytes:
    return finished(draw_flops_context(cfg, layout))


def draw_flops_context(cfg: ModelConfig, layout: Layout = WIDE):
    plt = pyplot()
    contexts = [2**k for k in range(6, 16)]  # 64 … 32,768 tokens
    series: dict[str, list[int]] = {
        "Q, K, V and output projections": [],
        "MLP": [],
        "Scores and weighted sum (T×T)": [],
    }
    wide = dataclasses.replace(cfg, n_ctx=contexts[-1])  # past n_ctx: as if wpe had more rows
    for T in contexts:
        rows = accounting.flop_rows(wide, "attention", T)
        grid = sum(r.value for r in rows if r.key in accounting.ATTENTION_GRID)
        series["Q, K, V and output projections"].append(sum(r.value for r in rows) - grid)
        series["Scores and weighted sum (T×T)"].append(grid)
        series["MLP"].append(accounting.flops_per_token(wide, "mlp", T))
    crossover = attention_crossover(cfg)
    fig, ax = plt.subplots(figsize=(layout.width, layout.line_height), layout="constrained")
    for (label, values), style in zip(series.items(), ("-o", "-s", "-^"), strict=True):
        ax.plot(contexts, values, style, label=label, markersize=4)
    ax.axvspan(cfg.n_ctx, contexts[-1], color="#000", alpha=0.05, linewidth=0)
    log_axes(ax, contexts[::2] if layout == WIDE else contexts[::3])
    note = beyond_context(ax, cfg, layout)
    line = crossing(ax, crossover, label=f"T = {fmt_int(crossover)}: T×T work passes projections")
    ax.set_xlabel("context length T (tokens)")
    ax.set_ylabel("forward FLOPs per token, one block")
    ax.set_title(title(f"{cfg.label}: what one block costs per token as the context grows", layout))
    legend(ax, fig, layout, fontsize=9, loc="upper left")
    stop_under(line, note)
    return fig


def beyond_context(ax, cfg: ModelConfig, layout: Layout):
    """The note at the top of the shaded part past n_ctx; returned, so lines can stop under it."""
    return ax.text(
        cfg.n_ctx,
        ax.get_ylim()[1],
        f" beyond n_ctx = {fmt_int(cfg.n_ctx)}:\n as if wpe had more rows",
        va="top",
        color="#555",
        fontsize=layout.small,
    )


def decode_flops_figure(cfg: ModelConfig, layout: Layout = WIDE) -> bytes:
    return finished(draw_decode_flops(cfg, layout))


def draw_decode_flops(cfg: ModelConfig, layout: Layout = WIDE):
    """FLOPs of the step that reads token number t, with the KV cache and recomputing the prefix."""
    plt = pyplot()
    last = 1 << 14
    wide = dataclasses.replace(cfg, n_ctx=last)  # past n_ctx: as if wpe had more rows
    positions = [2**k for k in range(15)]  # 1 … 16,384
    cached = [decode_costs.decode_flops(wide, t, cached=True) for t in positions]
    recompute = [decode_costs.decode_flops(wide, t, cached=False) for t in positions]
    fixed = decode_costs.decode_flops(wide, 1, cached=True) - decode_costs.cache_crossover_slope(
        wide
    )
    growing = [c - fixed for c in cached]
    crossover = decode_costs.cache_crossover(cfg)
    assert crossover is not None, "GPT-2's sizes have no window: the cache's cost always grows"
    fig, ax = plt.subplots(figsize=(layout.width, layout.line_height), layout="constrained")
    ax.plot(positions, recompute, "-o", markersize=4, label="no cache: run all t tokens again")
    ax.plot(positions, cached, "-s", markersize=4, label="with the KV cache: one token")
    ax.plot(
        positions, growing, ":", color="#555", label="   of which reading the cache (grows with t)"
    )
    ax.axhline(
        fixed, color="#555", linestyle="--", linewidth=1, label="   of which the rest (fixed)"
    )
    ax.axvspan(cfg.n_ctx, last, color="#000", alpha=0.05, linewidth=0)
    log_axes(ax, positions[::2] if layout == WIDE else positions[::4])
    ratio = decode_costs.decode_flops(cfg, cfg.n_ctx, cached=False) / decode_costs.decode_flops(
        cfg, cfg.n_ctx, cached=True
    )
    note = beyond_context(ax, cfg, layout)
    line = crossing(ax, crossover)
    ax.text(
        crossover / 1.15,  # a gap before the line (log axis)
        ax.get_ylim()[0],
        f"reading the cache passes\nthe rest at t = {fmt_int(crossover)}",
        va="bottom",
        ha="right",
        color="#c62828",
        fontsize=layout.small,
    )
    ax.set_xlabel("t: the token the step reads (the cache holds t − 1)")
    ax.set_ylabel("forward FLOPs of the step")
    ax.set_title(
        title(
            f"{cfg.label}: one generated token; at t = {fmt_int(cfg.n_ctx)} no cache costs "
            f"{ratio:,.0f}× more",
            layout,
        )
    )
    legend(ax, fig, layout, fontsize=max(8, layout.small), loc="upper left")
    stop_under(line, note)
    return fig


DRAW = {
    "params": draw_params,
    "flops-context": draw_flops_context,
    "decode-flops": draw_decode_flops,
}
LAYOUTS = (WIDE, NARROW)


def render_chart(figure: str, size: str, narrow: bool = False) -> bytes:
    """One figure ("params", "flops-context" or "decode-flops") for one size, wide or narrow."""
    return finished(DRAW[figure](CONFIGS[size], NARROW if narrow else WIDE))


def chart_figures() -> list[Figure]:
    """Every chart of the component pages, for every size, wide and narrow, as figures to draw
    (or read back)."""
    inputs = inputs_key()
    return [
        Figure(
            path, f"{__name__}:render_chart", (figure, size, layout == NARROW), key_of(inputs, path)
        )
        for size in SIZES
        for figure in FIGURES
        for layout in LAYOUTS
        for path in [figure_path(figure, CONFIGS[size], layout)]
    ]


def render_all(workers: int | None = None) -> dict[str, bytes]:
    """All charts by site path, drawn now (`workers`: see generator.drawing; 0 = this process)."""
    return Drawing(chart_figures(), workers=workers).files()


def inputs_key() -> str:
    """A hash of everything the figures depend on: the generator's code (this module, the
    accounting, the configs, the number formats: any module a drawing imports), the Python
    version and the installed packages (matplotlib). Same key, same bytes."""
    from generator.digests import code_fingerprint

    return code_fingerprint()


def figure_files(cache_dir: Path | None = None) -> dict[str, bytes]:
    """The charts, from the cache when their inputs have not changed, else drawn and cached."""
    return Drawing(chart_figures(), cache_dir).files()

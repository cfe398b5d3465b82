"""The Generation page as a site feature: {{ generation_*() }} blocks and its LaTeX tables, plus
the training-cost block of the whole-model page. Every number is read from the engine's run or
the accounting; nothing is typed.
"""

from __future__ import annotations

import html
from collections.abc import Callable

import numpy as np

from generator import accounting as acc
from generator.config import CONFIGS, SIZES, ModelConfig
from generator.generation import data
from generator.render import code as code_render
from generator.render.numbers import fmt_int, tex_int
from generator.walkthrough.grids import cell_colour, fmt_value, token_chip
from generator.walkthrough.toy import BLOCK, TOKEN_COLOURS

HEAD = 0  # the head shown (numbered from 0, as on the walkthrough and the forward pass)

PAGE = "generation.md"
TITLE = "Generation"
CODE = (
    "gpt2.attn-present",
    "gpt2.model-past",
    "gpt2.positions-for",
    "gpt2.past-shape",
    "gpt2.attention-mask",
)
HF_CODE = ("hf.gpt2-cache-update",)
# gpt-2's src/sample.py at the pinned commit. Two PyPI packages copied it, so the lines either
# copy kept unchanged are quoted (see [[mirrors]] in sources/lock.toml); the lines no copy has
# unchanged cannot be checked by a build without GitHub, so the page links to them instead.
SAMPLE_CODE = ("gpt2.top-k-logits", "gpt2.sample-sequence")
CITES = (*CODE, *HF_CODE, *SAMPLE_CODE)  # every pinned excerpt the page quotes
SAMPLE_LINKS = (
    ("`top_p_logits`", 25, 40),
    ("`sample_sequence`'s signature", 43, 43),
    ("its call of `top_p_logits`", 66, 66),
)


def rows_table(rows: list[acc.Row], head: tuple[str, str, str], quantity: str) -> str:
    """A Markdown table of separate quantities (no total line): label, calculation, value."""
    lines = [f"| {head[0]} | {head[1]} | {head[2]} |", "| :-- | :-- | --: |"]
    lines += [
        f'| {r.label} | ${r.tex()}$ | <span data-q="{quantity}.{r.key}">{fmt_int(r.value)}</span> |'
        for r in rows
    ]
    return "\n".join(lines) + "\n"


def tex_tables() -> dict[str, bytes]:
    """The cache and training tables of `itm numbers --format tex`, per size, at full context."""
    from generator.accounting_cli import generation, render_tex, training

    files = {}
    for name in SIZES:
        cfg = CONFIGS[name]
        for kind, table in (("generation", generation), ("training", training)):
            text = render_tex(table(cfg, cfg.n_ctx)) + "\n"
            files[f"tables/{kind}-{cfg.name}.tex"] = text.encode()
    return files


def files(site) -> dict[str, bytes]:
    return tex_tables()


# -- blocks ----------------------------------------------------------------------------------------
def show(text: str) -> str:
    return html.escape(text.replace(" ", "␣").replace("\n", "↵"))


def pct(p: float) -> str:
    """A probability as a percentage; the extremes say so rather than round to 0% or 100%."""
    if 0 < p < 0.0005:
        return "&lt;0.1%"
    if 0.9995 <= p < 1:
        return "&gt;99.9%"
    return f"{100 * p:.1f}%"


def _model(c: data.Continuation) -> str:
    return "GPT-2" if c.is_gpt2 else "stand-in model"


def filters_block(settings) -> str:
    """One distribution under each filter: the most likely tokens, a probability per column."""
    c = data.continuation(settings)
    base = c.filters[0][1]
    order = [int(i) for i in np.argsort(-base, kind="stable")[: data.N_SHOWN]]
    head = "".join(f'<th scope="col">{html.escape(name)}</th>' for name, _ in c.filters)
    body = []
    for i in order:
        cells = "".join(
            f'<td class="itm-num">{pct(float(p[i])) if p[i] > 0 else "removed"}</td>'
            for _, p in c.filters
        )
        body.append(f'<tr><th scope="row"><code>{show(c.texts[i])}</code></th>{cells}</tr>')
    kept = "".join(
        f'<td class="itm-num">{fmt_int(int(np.count_nonzero(p)))}</td>' for _, p in c.filters
    )
    context = "".join(c.prompt[1 : c.unsure + 1])
    return (
        f"<p>The {_model(c)} after <code>{show(context)}</code>, the prompt position whose next "
        "token it is least sure of (highest entropy):</p>\n"
        '<div class="itm-scroll" role="region" aria-label="Probabilities under each filter" '
        'tabindex="0"><table data-gen="filters">'
        f'<thead><tr><th scope="col">token</th>{head}</tr></thead><tbody>{"".join(body)}'
        f'<tr class="itm-gen-kept"><th scope="row">tokens left</th>{kept}</tr></tbody>'
        "</table></div>\n"
    )


def top_p_note(settings) -> str:
    """How many tokens each library's top-p rule keeps on the page's distribution."""
    c = data.continuation(settings)
    p, ours, gpt2 = c.top_p
    return (
        f"On the distribution shown at the top of this page, top-p {p} keeps {ours} tokens by "
        f"transformers' rule and {gpt2} by gpt-2's.\n"
    )


def continuation_block(settings) -> str:
    """The model continuing the forward-pass prompt, with the distribution of every choice."""
    c = data.continuation(settings)
    s = data.SAMPLING
    rows = []
    for n, ch in enumerate(c.chosen, start=1):
        options = ", ".join(
            f"<code>{show(c.texts[i])}</code> {pct(p)}" for i, p in ch.candidates if p > 0
        )
        rows.append(
            f'<tr data-step="{n}"><td class="itm-num">{n}</td>'
            f'<td class="itm-num">{ch.position}</td><td class="itm-num">{ch.cached}</td>'
            f"<td><code>{show(c.texts[ch.token])}</code></td>"
            f'<td class="itm-num">{pct(ch.prob)}</td><td>{options}</td></tr>'
        )
    text = "".join(c.prompt[1:])
    new = "".join(c.texts[ch.token] for ch in c.chosen)
    return (
        f"<p>Prompt: <code>{show(text)}</code><br>Continued by the {_model(c)}: "
        f'<code class="itm-gen-new">{show(new)}</code></p>\n'
        f"<p>Each token is drawn with temperature {s.temperature} and top-k {s.top_k} by a numpy "
        f"generator seeded with {data.SEED_GENERATE}. The first step reads all "
        f"{len(c.prompt)} prompt tokens; every later step reads one token and the cache.</p>\n"
        '<div class="itm-scroll" role="region" aria-label="Each generated token" tabindex="0">'
        '<table data-gen="continuation"><thead><tr>'
        '<th scope="col">step</th><th scope="col">position</th>'
        '<th scope="col">positions cached</th><th scope="col">chosen</th>'
        '<th scope="col">its probability</th>'
        '<th scope="col">the most likely, after the filters</th>'
        f"</tr></thead><tbody>{''.join(rows)}</tbody></table></div>\n"
    )


def _kv_grid(name: str, matrix: np.ndarray, step: data.ToyStep, tokens: tuple[str, ...]) -> str:
    """One head's K or V after a step: a row per position, new rows marked, cells coloured."""
    scale = float(np.abs(matrix).max())
    cols = "".join(f'<th scope="col">{j + 1}</th>' for j in range(matrix.shape[1]))
    body = []
    for i, row in enumerate(matrix):
        state = "new" if i in step.new else "cached"
        cells = "".join(
            f'<td style="background:{cell_colour(float(v), scale)}">{fmt_value(float(v))}</td>'
            for v in row
        )
        body.append(
            f'<tr class="is-{state}" data-state="{state}"><th scope="row">'
            f'{token_chip(tokens[i], TOKEN_COLOURS[i])} <span class="itm-gen-state">{state}'
            f"</span></th>{cells}</tr>"
        )
    return (
        f'<table class="itm-wt-grid itm-gen-kv" data-matrix="{name}">'
        f"<caption>{name} · block {BLOCK}, head {HEAD} · "
        f"[{matrix.shape[0]} × {matrix.shape[1]}]</caption>"
        f'<thead><tr><td class="itm-wt-grid__corner"></td>{cols}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table>"
    )


def _row_panel(step: data.ToyStep, tokens: tuple[str, ...]) -> str:
    """The last new row of the head shown against every key: where each key came from, its scaled score,
    and its attention weight (the walkthrough's row panel, for one decoding step)."""
    last = step.new[-1]
    cells = []
    for j, (score, weight) in enumerate(
        zip(step.scores[HEAD, -1], step.weights[HEAD, -1], strict=True)
    ):
        source = "cached" if j in step.cached else "new"
        masked = not np.isfinite(score)
        cells.append(
            f'<tr data-state="{source}"><th scope="row">{token_chip(tokens[j], TOKEN_COLOURS[j])}'
            f"</th><td>{source}</td><td>{fmt_value(None if masked else float(score))}</td>"
            f"<td>{fmt_value(float(weight))}</td></tr>"
        )
    return (
        f'<table class="itm-wt-grid itm-gen-row" data-row="{last}"><caption>Row '
        f"<strong>{html.escape(tokens[last])}</strong>, head {HEAD}: its query against each key"
        '</caption><thead><tr><th scope="col">key</th><th scope="col">from</th>'
        '<th scope="col">q·k / √d_head</th><th scope="col">weight</th></tr></thead>'
        f"<tbody>{''.join(cells)}</tbody></table>"
    )


def toy_block() -> str:
    """The toy decoding its five tokens with a cache: what each step adds to K and V."""
    tokens = data.toy_tokens()
    parts = []
    for n, step in enumerate(data.toy_steps(), start=1):
        read = " ".join(tokens[i] for i in step.new)
        kind = (
            f"reads the prompt <strong>{html.escape(read)}</strong> with an empty cache"
            if not step.cached
            else f"reads <strong>{html.escape(read)}</strong>; {len(step.cached)} positions "
            "come from the cache"
        )
        parts.append(
            f'<section class="itm-gen-step" data-step="{n}"><p><strong>Step {n}</strong>: '
            f'{kind}</p><div class="itm-gen-grids" role="region" tabindex="0" '
            f'aria-label="Step {n}: keys, values and one row">{_kv_grid("K", step.k[HEAD], step, tokens)}'
            f"{_kv_grid('V', step.v[HEAD], step, tokens)}{_row_panel(step, tokens)}</div>"
            "</section>"
        )
    return "\n".join(parts) + "\n"


def cache_block(doc: Callable[[str], str]) -> str:
    """Per size: what the cache holds, and one step with and without it at full context."""
    from generator.pages import size_tabs

    def render(cfg: ModelConfig) -> str:
        t = cfg.n_ctx
        with_cache = acc.decode_flops(cfg, t, cached=True)
        without = acc.decode_flops(cfg, t, cached=False)
        crossover = acc.cache_crossover(cfg)
        where = (
            "inside its context"
            if crossover <= cfg.n_ctx
            else f"past its context of {fmt_int(cfg.n_ctx)}"
        )
        steps = acc.decode_flop_rows(cfg, t, cached=True)
        steps += acc.decode_flop_rows(cfg, t, cached=False)[:1]
        return (
            rows_table(acc.kv_cache_rows(cfg), ("Quantity", "Calculation", "Value"), "kv")
            + "\n"
            + rows_table(steps, (f"Reading token t = {fmt_int(t)}", "Calculation", "FLOPs"), "dec")
            + f"\nWith the cache the step costs {fmt_int(with_cache)} FLOPs; without it, "
            f"{fmt_int(without)}: {without / with_cache:,.0f} times as many. Reading the cache "
            f"costs more than the rest of the step from t = {fmt_int(crossover)}, {where}. "
            f"At full context, the caches of {fmt_int(acc.cache_outweighs_weights(cfg))} "
            "sequences hold more values than the model has parameters. "
            f"[LaTeX source of these numbers]({doc(f'tables/generation-{cfg.name}.tex')})\n"
        )

    return size_tabs(render) + f"\n{acc.DECODE_NOTE}\n"


def training_block(doc: Callable[[str], str]) -> str:
    """The whole-model page: a training step's FLOPs per token beside 6N, and Adam's memory."""
    from generator.pages import size_tabs

    def render(cfg: ModelConfig) -> str:
        total = acc.train_flops_per_token(cfg)
        six = acc.six_n(cfg)
        memory = acc.train_memory_rows(cfg)
        per_param = sum(r.value for r in memory) // acc.params_total(cfg, "model")
        head = (f"Per token at T = {fmt_int(cfg.n_ctx)}", "Calculation", "FLOPs")
        return (
            rows_table(acc.train_flop_rows(cfg), head, "train")
            + f'\nA training token costs <span data-q="train.total">{fmt_int(total)}</span> '
            f"FLOPs. The rule of thumb 6N gives $6 \\times {tex_int(acc.kaplan_n(cfg))} "
            f"= {tex_int(six)}$, {100 * (total - six) / total:.1f}% fewer at this context.\n\n"
            + rows_table(memory, ("Kept for each parameter", "Calculation", "Bytes"), "memory")
            + f"\n{per_param} bytes per parameter, "
            f"{fmt_int(sum(r.value for r in memory))} bytes in all before activations. "
            f"[LaTeX source]({doc(f'tables/training-{cfg.name}.tex')})\n"
        )

    return size_tabs(render) + f"\n{acc.TRAIN_NOTE}\n"


def sample_py_block(excerpts: list, sources: str) -> str:
    """gpt-2's loop: the lines a PyPI copy vouches for, quoted in Code tabs; the rest linked."""
    base = f"https://github.com/openai/gpt-2/blob/{excerpts[0].repo.commit}/src/sample.py"

    def link(name: str, a: int, b: int) -> str:
        lines, anchor = (f"line {a}", f"L{a}") if a == b else (f"lines {a}–{b}", f"L{a}-L{b}")
        return f"[{name}, {lines}]({base}#{anchor})"

    links = [link(*item) for item in SAMPLE_LINKS]
    return (
        code_render.code_tabs(excerpts, prefix="gen-sample", sources=sources)
        + "\n\nLinked, not quoted: "
        + ", ".join(links[:-1])
        + f" and {links[-1]}. Neither copy of this file on PyPI has those lines as they are "
        "upstream (gpt-2-finetuning 1.0.14 rewrote them, gpt2-client 2.1.5 dropped top-p), so a "
        "build without GitHub has nothing to check them against, and this site quotes only code "
        "it has checked.\n"
    )


def macros(page) -> dict[str, Callable[..., str]]:
    def settings():
        return page.site.settings

    def code(ids: tuple[str, ...], prefix: str) -> str:
        excerpts = [page._excerpt(i) for i in ids]
        return code_render.code_tabs(excerpts, prefix=prefix, sources=page.url_for("sources.md"))

    return {
        "generation_filters": lambda: filters_block(settings()),
        "generation_continuation": lambda: continuation_block(settings()),
        "generation_toy": toy_block,
        "generation_top_p_note": lambda: top_p_note(settings()),
        "generation_cache": lambda: cache_block(page._doc),
        "generation_code": lambda: code(CODE, "gen"),
        "generation_hf_code": lambda: code(HF_CODE, "gen-hf"),
        "generation_sample_py": lambda: sample_py_block(
            [page._excerpt(i) for i in SAMPLE_CODE], page.url_for("sources.md")
        ),
        "training_cost": lambda: training_block(page._doc),
    }

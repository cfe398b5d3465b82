"""The Generation page as a site feature: {{ generation_*() }} blocks and its LaTeX tables, plus
the training-cost block of the whole-model page. Every number is read from the engine's run or
the accounting; nothing is typed.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from generator import accounting as acc
from generator.blocks import Markup
from generator.config import CONFIGS, SIZES, ModelConfig
from generator.generation import blocks, data
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
    """Text as the page prints it: spaces visible as ␣, newlines as ↵ (the template escapes)."""
    return text.replace(" ", "␣").replace("\n", "↵")


def pct(p: float) -> str:
    """A probability as a percentage; the extremes say so rather than round to 0% or 100%."""
    if 0 < p < 0.0005:
        return "<0.1%"
    if 0.9995 <= p < 1:
        return ">99.9%"
    return f"{100 * p:.1f}%"


def _model(c: data.Continuation) -> str:
    return "GPT-2" if c.is_gpt2 else "stand-in model"


def filters_block(settings) -> blocks.Filters:
    """One distribution under each filter: the most likely tokens, a probability per column."""
    c = data.continuation(settings)
    base = c.filters[0][1]
    order = [int(i) for i in np.argsort(-base, kind="stable")[: data.N_SHOWN]]
    return blocks.Filters(
        model=_model(c),
        prefix=show("".join(c.prompt[1 : c.unsure + 1])),
        filters=tuple(name for name, _ in c.filters),
        rows=tuple(
            blocks.FilterRow(
                token=show(c.texts[i]),
                probs=tuple(pct(float(p[i])) if p[i] > 0 else "removed" for _, p in c.filters),
            )
            for i in order
        ),
        kept=tuple(fmt_int(int(np.count_nonzero(p))) for _, p in c.filters),
    )


def top_p_note(settings) -> str:
    """How many tokens each library's top-p rule keeps on the page's distribution."""
    c = data.continuation(settings)
    p, ours, gpt2 = c.top_p
    return (
        f"On the distribution shown at the top of this page, top-p {p} keeps {ours} tokens by "
        f"transformers' rule and {gpt2} by gpt-2's.\n"
    )


def continuation_block(settings) -> blocks.Continuation:
    """The model continuing the forward-pass prompt, with the distribution of every choice."""
    c = data.continuation(settings)
    return blocks.Continuation(
        model=_model(c),
        prompt=show("".join(c.prompt[1:])),
        new=show("".join(c.texts[ch.token] for ch in c.chosen)),
        temperature=data.SAMPLING.temperature,
        top_k=data.SAMPLING.top_k,
        seed=data.SEED_GENERATE,
        n_prompt=len(c.prompt),
        steps=tuple(
            blocks.ContinuationStep(
                step=n,
                position=ch.position,
                cached=ch.cached,
                token=show(c.texts[ch.token]),
                prob=pct(ch.prob),
                candidates=tuple((show(c.texts[i]), pct(p)) for i, p in ch.candidates if p > 0),
            )
            for n, ch in enumerate(c.chosen, start=1)
        ),
    )


def _chip(tokens: tuple[str, ...], i: int) -> Markup:
    return Markup(token_chip(tokens[i], TOKEN_COLOURS[i]))  # the walkthrough's own markup


def _kv_grid(
    name: str, matrix: np.ndarray, step: data.ToyStep, tokens: tuple[str, ...]
) -> blocks.KvGrid:
    """One head's K or V after a step: a row per position, new rows marked, cells coloured."""
    scale = float(np.abs(matrix).max())
    return blocks.KvGrid(
        name=name,
        block=BLOCK,
        head=HEAD,
        n_cols=matrix.shape[1],
        rows=tuple(
            blocks.KvRow(
                chip=_chip(tokens, i),
                state="new" if i in step.new else "cached",
                cells=tuple((cell_colour(float(v), scale), fmt_value(float(v))) for v in row),
            )
            for i, row in enumerate(matrix)
        ),
    )


def _row_panel(step: data.ToyStep, tokens: tuple[str, ...]) -> blocks.RowPanel:
    """The last new row of the head shown against every key: where each key came from, its scaled
    score, and its attention weight (the walkthrough's row panel, for one decoding step)."""
    last = step.new[-1]
    scores = zip(step.scores[HEAD, -1], step.weights[HEAD, -1], strict=True)
    return blocks.RowPanel(
        row=last,
        token=tokens[last],
        head=HEAD,
        keys=tuple(
            blocks.KeyScore(
                chip=_chip(tokens, j),
                source="cached" if j in step.cached else "new",
                score=fmt_value(float(score) if np.isfinite(score) else None),
                weight=fmt_value(float(weight)),
            )
            for j, (score, weight) in enumerate(scores)
        ),
    )


def toy_block() -> blocks.Toy:
    """The toy decoding its five tokens with a cache: what each step adds to K and V."""
    tokens = data.toy_tokens()
    return blocks.Toy(
        steps=tuple(
            blocks.ToyStep(
                step=n,
                read=" ".join(tokens[i] for i in step.new),
                n_cached=len(step.cached),
                k=_kv_grid("K", step.k[HEAD], step, tokens),
                v=_kv_grid("V", step.v[HEAD], step, tokens),
                row=_row_panel(step, tokens),
            )
            for n, step in enumerate(data.toy_steps(), start=1)
        )
    )


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
        "generation_filters": lambda: page.render_block(filters_block(settings())),
        "generation_continuation": lambda: page.render_block(continuation_block(settings())),
        "generation_toy": lambda: page.render_block(toy_block()),
        "generation_top_p_note": lambda: top_p_note(settings()),
        "generation_cache": lambda: cache_block(page._doc),
        "generation_code": lambda: code(CODE, "gen"),
        "generation_hf_code": lambda: code(HF_CODE, "gen-hf"),
        "generation_sample_py": lambda: sample_py_block(
            [page._excerpt(i) for i in SAMPLE_CODE], page.url_for("sources.md")
        ),
        "training_cost": lambda: training_block(page._doc),
    }

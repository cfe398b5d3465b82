"""The Generation page as a site feature: {{ generation_*() }} blocks and its LaTeX tables, plus
the training-cost block of the whole-model page. Every number is read from the engine's run or
the accounting; nothing is typed."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from generator import accounting as acc
from generator import decode_costs as costs
from generator import scaling
from generator.blocks import Block, Markup
from generator.config import CONFIGS, SIZES, ModelConfig
from generator.generation import blocks, data
from generator.render import code as code_render
from generator.render.numbers import fmt_int, row_label, row_tex, tex_int
from generator.walkthrough.blocks import TokenChip
from generator.walkthrough.grids import cell_colour, fmt_value
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
# gpt-2's src/sample.py at the pinned commit: the lines one of its two PyPI copies kept unchanged
# are quoted ([[mirrors]] in sources/lock.toml); the rest (gpt-2-finetuning 1.0.14 rewrote them,
# gpt2-client 2.1.5 dropped top-p) a build without GitHub cannot check, so the page links them.
SAMPLE_CODE = ("gpt2.top-k-logits", "gpt2.sample-sequence")
CITES = (*CODE, *HF_CODE, *SAMPLE_CODE)  # every pinned excerpt the page quotes
SAMPLE_LINKS = (
    ("`top_p_logits`", 25, 40),
    ("`sample_sequence`'s signature", 43, 43),
    ("its call of `top_p_logits`", 66, 66),
)


def files(site) -> dict[str, bytes]:
    """The cache and training tables of `itm numbers --format tex`, per size, at full context."""
    from generator.render.number_tables import generation, render_tex, training

    kinds = (("generation", generation), ("training", training))
    return {
        f"tables/{kind}-{cfg.name}.tex": (render_tex(table(cfg, cfg.n_ctx)) + "\n").encode()
        for cfg in (CONFIGS[name] for name in SIZES)
        for kind, table in kinds
    }


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


def top_p_note(settings) -> blocks.TopPNote:
    """How many tokens each library's top-p rule keeps on the page's distribution."""
    p, ours, gpt2 = data.continuation(settings).top_p
    return blocks.TopPNote(top_p=p, transformers=ours, gpt2=gpt2)


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
        n_prompt=fmt_int(len(c.prompt)),
        n_ctx=fmt_int(c.cfg.n_ctx),
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


def _chip(tokens: tuple[str, ...], i: int) -> TokenChip:
    """The walkthrough's token chip (nested, so a site's override of it applies here too)."""
    return TokenChip(text=tokens[i], colour=TOKEN_COLOURS[i])


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


def rows_table(
    rows: list[acc.Row], columns: tuple[str, str, str], quantity: str
) -> blocks.RowsTable:
    """Separate quantities (no total line): label, calculation, value; data-q `quantity.key`."""
    return blocks.RowsTable(
        columns=columns,
        quantity=quantity,
        rows=tuple(
            blocks.CostRow(r.key, row_label(r), Markup(row_tex(r)), fmt_int(r.value)) for r in rows
        ),
    )


def cache_cost(cfg: ModelConfig, doc: Callable[[str], str]) -> blocks.CacheCost:
    """What the cache holds for one size, and one step with and without it at full context."""
    t = cfg.n_ctx
    with_cache = costs.decode_flops(cfg, t, cached=True)
    without = costs.decode_flops(cfg, t, cached=False)
    crossover = costs.cache_crossover(cfg)
    assert crossover is not None, "GPT-2's sizes have no window: the cache's cost always grows"
    steps = costs.decode_flop_rows(cfg, t, cached=True)
    steps += costs.decode_flop_rows(cfg, t, cached=False)[:1]
    return blocks.CacheCost(
        holds=rows_table(costs.kv_cache_rows(cfg), ("Quantity", "Calculation", "Value"), "kv"),
        step=rows_table(steps, (f"Reading token t = {fmt_int(t)}", "Calculation", "FLOPs"), "dec"),
        with_cache=fmt_int(with_cache),
        without=fmt_int(without),
        ratio=f"{without / with_cache:,.0f}",
        crossover=fmt_int(crossover),
        inside=crossover <= cfg.n_ctx,
        n_ctx=fmt_int(cfg.n_ctx),
        sequences=fmt_int(costs.cache_outweighs_weights(cfg)),
        tex_file=doc(f"tables/generation-{cfg.name}.tex"),
    )


def training_cost(cfg: ModelConfig, doc: Callable[[str], str]) -> blocks.TrainingCost:
    """The whole-model page, one size: a training token's FLOPs beside 6N, and Adam's memory."""
    total = scaling.train_flops_per_token(cfg)
    six = scaling.six_n(cfg)
    memory = scaling.train_memory_rows(cfg)
    memory_total = sum(r.value for r in memory)
    flops_head = (f"Per token at T = {fmt_int(cfg.n_ctx)}", "Calculation", "FLOPs")
    return blocks.TrainingCost(
        flops=rows_table(scaling.train_flop_rows(cfg), flops_head, "train"),
        total=fmt_int(total),
        kaplan_n=Markup(tex_int(acc.kaplan_n(cfg))),
        six_n=Markup(tex_int(six)),
        fewer=f"{100 * (total - six) / total:.1f}",
        memory=rows_table(memory, ("Kept for each parameter", "Calculation", "Bytes"), "memory"),
        per_param=memory_total // acc.params_total(cfg, "model"),
        memory_total=fmt_int(memory_total),
        tex_file=doc(f"tables/training-{cfg.name}.tex"),
    )


def sample_py_block(
    excerpts: list, sources: str, render: Callable[[Block], str]
) -> blocks.SamplePy:
    """gpt-2's loop: the lines a PyPI copy vouches for, quoted in Code tabs (each rendered by
    `render`, the page's block renderer); the rest linked."""
    base = f"https://github.com/openai/gpt-2/blob/{excerpts[0].repo.commit}/src/sample.py"
    return blocks.SamplePy(
        tabs=Markup(
            code_render.code_tabs(excerpts, prefix="gen-sample", sources=sources, render=render)
        ),
        links=tuple(
            blocks.LineLink(Markup(name), a, b, f"{base}#L{a}" if a == b else f"{base}#L{a}-L{b}")
            for name, a, b in SAMPLE_LINKS
        ),
    )


def macros(page) -> dict[str, Callable[..., str]]:
    from generator.pages import size_tabs

    def settings():
        return page.site.settings

    def code(ids: tuple[str, ...], prefix: str) -> str:
        excerpts = [page._excerpt(i) for i in ids]
        return code_render.code_tabs(
            excerpts, prefix=prefix, sources=page.url_for("sources.md"), render=page.render_block
        )

    def tabs(block: Callable[[ModelConfig, Callable[[str], str]], Block], note: str) -> str:
        """One block per GPT-2 size in Material's tabs, then the note (Markdown) they share."""
        return size_tabs(lambda cfg: page.render_block(block(cfg, page._doc))) + f"\n{note}\n"

    return {
        "generation_filters": lambda: page.render_block(filters_block(settings())),
        "generation_continuation": lambda: page.render_block(continuation_block(settings())),
        "generation_toy": lambda: page.render_block(toy_block()),
        "generation_top_p_note": lambda: page.render_block(top_p_note(settings())),
        "generation_cache": lambda: tabs(cache_cost, costs.DECODE_NOTE),
        "generation_code": lambda: code(CODE, "gen"),
        "generation_hf_code": lambda: code(HF_CODE, "gen-hf"),
        "generation_sample_py": lambda: page.render_block(
            sample_py_block(
                [page._excerpt(i) for i in SAMPLE_CODE],
                page.url_for("sources.md"),
                page.render_block,
            )
        ),
        "training_cost": lambda: tabs(training_cost, scaling.TRAIN_NOTE),
    }

"""The attention walkthrough as a site feature (see generator/features.py).

files(site)   the widget's JSON, from the engine's toy trace
macros(page)  walkthrough_header(), walkthrough(), walkthrough_code() for docs/walkthrough/
"""

from __future__ import annotations

import html
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

from generator import blocks
from generator.config import CONFIGS, SIZES, ModelConfig
from generator.errors import InputError
from generator.render.numbers import fmt_int
from generator.walkthrough import grids
from generator.walkthrough.code import UPSTREAM, code_panel, engine_excerpt
from generator.walkthrough.data import widget_data, widget_json
from generator.walkthrough.gpt2_scale import Figure, step_figures
from generator.walkthrough.steps import STEPS, check_steps, fill, text_fields
from generator.walkthrough.toy import Toy, toy_attention

PAGE = "walkthrough/attention.md"
TITLE = "Walkthrough: attention"
CITES = UPSTREAM  # the pinned excerpts its Code panel quotes
DATA_PATH = "assets/walkthrough/attention.json"  # site path of the widget's data
BESIDE_TOY = "gpt2"  # GPT-2 small: shown next to the toy until the reader picks another size


def gpt2_config() -> ModelConfig:
    return CONFIGS[BESIDE_TOY]


def gpt2_configs() -> tuple[ModelConfig, ...]:
    """Every GPT-2 size, in the order of the other pages' size tabs (the default first shown)."""
    return tuple(CONFIGS[name] for name in SIZES)


def per_model(values: dict[str, str], tag: str = "span") -> str:
    """One element per GPT-2 size, each holding that size's (HTML) value; walkthrough.js shows
    the reader's size. Without JavaScript, and for search, only BESIDE_TOY's is there: the others
    are hidden and left out of the search index. One value for every size is printed as it is."""
    if len(set(values.values())) == 1:
        return next(iter(values.values()))
    return "".join(
        f'<{tag} class="itm-wt-m" data-wt-model="{name}"'
        + ("" if name == BESIDE_TOY else ' hidden data-search-exclude=""')
        + f">{value}</{tag}>"
        for name, value in values.items()
    )


def build_data(site) -> dict:
    """The widget's data: the toy trace, the steps and their lines in the engine's file."""
    check_steps()
    engine = engine_excerpt(site.root)
    return widget_data(toy_attention(), engine.steps, engine.block_id)


def files(site) -> dict[str, bytes]:
    return {DATA_PATH: widget_json(build_data(site))}


class WalkthroughMacros:
    """The page's macros; `page` is generator.pages.PageMacros."""

    def __init__(self, page) -> None:
        self.page = page
        self.toy: Toy = toy_attention()
        self.gpt2 = gpt2_config()
        self.models = gpt2_configs()
        self.figures: dict[str, dict[str, Figure]] = {
            cfg.name: step_figures(self.toy.cfg, self.toy.n_tokens, cfg) for cfg in self.models
        }
        self.fields = self._fields()
        self.engine_file = engine_excerpt(page.site.root).path.rsplit("/", 1)[-1]

    def _url(self, docs_path: str) -> str:
        url = self.page.url_for(docs_path)
        if url is None:
            raise InputError(
                f"links to {docs_path}, which is not part of the site",
                file=f"docs/{self.page.src_path}",
                entry=docs_path,
                fix="keep docs/assets/walkthrough.js and .css; the JSON comes from files()",
            )
        return url

    def _real_heads(self) -> str:
        """The seed's promise: a link to trained heads on the forward-pass page, naming the
        strongest head of each kind the analysis found there."""
        from generator.forward import KINDS, PAGE, THRESHOLDS, current, strongest

        run = current(self.page.site.settings)
        page = self._url(PAGE)
        found = []
        for kind in KINDS:
            best = strongest(run.heads, kind, 1)
            score = best[0].score(kind) if best else None
            if score is not None and score >= THRESHOLDS[kind]:
                head = best[0]
                found.append(
                    f'<a href="{page}#{head.anchor}">{kind} head {head.label} '
                    f"({head.score(kind):.2f})</a>"
                )
        heads = f": {', '.join(found)}" if found else ""
        return (
            f'<p class="itm-wt__real">Trained heads are not random: see them in '
            f'<a href="{page}">the forward pass</a>{heads}.</p>\n\n'
        )

    # -- macros ------------------------------------------------------------------------------
    def header(self, title: str = "Attention", subtitle: str = "causal self-attention") -> str:
        """Kicker, title, and the "block 0 · head 0" line that follows the head selector."""
        return (
            f'<p class="itm-kicker">Inside the model · {html.escape(title)}</p>\n\n'
            f"# {title}\n\n"
            f'<p class="itm-wt-sub">'
            f"{html.escape(subtitle)} · block "
            f"<span data-wt-block>{self.toy.block}</span> · head "
            f'<span data-wt-head-label aria-live="polite">0</span></p>\n'
        )

    def walkthrough(self) -> str:
        """Settings, dims, legend, the seven steps with their grids, and the row panel."""
        data = build_data(self.page.site)
        engine_lines = data["steps"]
        return (
            f'<div class="itm-wt" data-src="{self._url(DATA_PATH)}" markdown>\n'
            f"{self._bar()}\n"
            f"{self._note()}\n"
            f"{grids.legend()}\n"
            '<div class="itm-wt__layout" markdown>\n'
            f"{self._steps_nav()}\n"
            '<div class="itm-wt__nav" data-wt-nav hidden>'
            '<button type="button" data-wt-go="-1">← Previous</button>'
            '<span class="itm-wt__where" aria-live="polite"></span>'
            '<button type="button" data-wt-go="1">Next →</button></div>\n\n'
            + "\n".join(
                self._step(index, step, data, engine_lines[index - 1]["lines"])
                for index, step in enumerate(STEPS, start=1)
            )
            + '\n<div class="itm-wt__panel" data-wt-panel role="region" aria-label="Row breakdown" '
            "hidden></div>\n"
            "</div>\n"
            "</div>\n"
        )

    def code(self) -> str:
        """The engine's attention() beside the pinned upstream excerpts."""
        site = self.page.site
        used_by = f"docs/{self.page.src_path}"
        upstream = [site.excerpt(excerpt_id, used_by=used_by) for excerpt_id in UPSTREAM]
        titles = {step.key: step.title for step in STEPS}
        sources = self.page.url_for("sources.md")
        return code_panel(engine_excerpt(site.root), upstream, titles, sources=sources)

    # -- parts -------------------------------------------------------------------------------
    def _each(self, value: Callable[[ModelConfig], str], tag: str = "span") -> blocks.Markup:
        """per_model() of value(cfg), escaped, for every GPT-2 size."""
        values = {cfg.name: html.escape(value(cfg)) for cfg in self.models}
        return blocks.Markup(per_model(values, tag))

    def _labelled(self, value: Callable[[ModelConfig], str]) -> blocks.Markup:
        """ "GPT-2 XL 1,600": value(cfg) after the size's label, for every size."""
        return self._each(lambda cfg: f"{cfg.label} {value(cfg)}")

    def _fields(self) -> dict[str, str]:
        """The steps' [[placeholders]]; GPT-2's differ by size and are given for each."""
        each = {cfg.name: text_fields(self.toy.cfg, self.toy.n_tokens, cfg) for cfg in self.models}
        return {
            key: per_model({name: html.escape(fields[key]) for name, fields in each.items()})
            for key in each[BESIDE_TOY]
        }

    def _bar(self) -> str:
        toy = self.toy.cfg
        sub = blocks.Markup  # the dims' names carry <sub>
        dims: tuple[tuple[str, str, Callable[[ModelConfig], str]], ...] = (
            ("tokens", fmt_int(self.toy.n_tokens), lambda c: f"up to {fmt_int(c.n_ctx)}"),
            (sub("d<sub>model</sub>"), fmt_int(toy.d_model), lambda c: fmt_int(c.d_model)),
            (sub("d<sub>head</sub>"), fmt_int(toy.d_head), lambda c: fmt_int(c.d_head)),
            ("heads", fmt_int(toy.n_head), lambda c: fmt_int(c.n_head)),
        )
        return self.page.render_block(
            Bar(
                models=tuple((cfg.name, cfg.label) for cfg in self.models),
                default=BESIDE_TOY,
                n_head=toy.n_head,
                dims=tuple((name, ours, self._labelled(theirs)) for name, ours, theirs in dims),
            )
        )

    def _note(self) -> str:
        toy = self.toy.cfg
        sentence = " ".join(self.toy.tokens)
        return (
            '<p class="itm-wt-note">The toy: '
            f"{fmt_int(self.toy.n_tokens)} tokens (“{html.escape(sentence)}”), "
            f"d<sub>model</sub> {fmt_int(toy.d_model)}, {fmt_int(toy.n_head)} heads of "
            f"d<sub>head</sub> {fmt_int(toy.d_head)}, seeded random weights and no biases. "
            "The embeddings are random too, so the words only label the positions. It is one "
            f"layer of the site's own engine: block {self.toy.block}, after ln_1.</p>"
        )

    def _steps_nav(self) -> str:
        items = "".join(
            f'<li><a href="#step-{i}" data-wt-step="{i}">{html.escape(step.title)}</a></li>'
            for i, step in enumerate(STEPS, start=1)
        )
        return (
            '<nav class="itm-wt__steps" aria-labelledby="itm-wt-all-steps">'
            f'<h2 id="itm-wt-all-steps">All steps</h2><ol>{items}</ol></nav>'
        )

    def _step(self, index: int, step, data: dict, lines: list[int]) -> str:
        first, last = lines
        return self.page.render_block(
            Step(
                index=index,
                key=step.key,
                title=step.title,
                text=blocks.Markup(fill(step.text, self.fields)),  # Markdown with TeX, ours
                formula=blocks.Markup(step.formula),
                scales=tuple(
                    Scale(
                        name=cfg.name,
                        model=cfg.label,
                        hidden=cfg.name != BESIDE_TOY,
                        line=self.figures[cfg.name][step.key].line,
                        facts=self.figures[cfg.name][step.key].facts,
                        picture=blocks.Markup(
                            grids.scale_picture(self.figures[cfg.name][step.key], cfg.label)
                        ),
                    )
                    for cfg in self.models
                ),
                grids=blocks.Markup(
                    "".join(grids.grid_table(data, key, 0) for key in step.matrices)
                ),
                real_heads=blocks.Markup(self._real_heads() if step.key == "softmax" else ""),
                code_id=data["code_block"],
                first=first,
                last=last,
                engine_file=self.engine_file,
            )
        )


@dataclass(frozen=True)
class Bar(blocks.Block):
    """The widget's controls and the toy's sizes beside GPT-2's."""

    template: ClassVar[str] = "walkthrough_bar.html"
    models: tuple[tuple[str, str], ...]  # (name, label) of each GPT-2 size: the size selector
    default: str  # the size shown without JavaScript
    n_head: int  # the head selector's options
    dims: tuple[tuple[str, str, blocks.Markup], ...]  # (name, toy's, GPT-2's per size)


@dataclass(frozen=True)
class Scale:
    """One GPT-2 size's side of a step."""

    name: str  # "gpt2-medium"
    model: str  # "GPT-2 medium"
    hidden: bool  # not the size shown without JavaScript
    line: str  # the one-line GPT-2 figure
    facts: tuple[tuple[str, str], ...]
    picture: blocks.Markup  # SVG: the toy's grid inside GPT-2's


@dataclass(frozen=True)
class Step(blocks.Block):
    """One step: explanation and formula, the toy's grids, GPT-2's figures, the code link."""

    template: ClassVar[str] = "walkthrough_step.html"
    index: int
    key: str  # the engine's step name
    title: str
    text: blocks.Markup  # Markdown with TeX
    formula: blocks.Markup  # TeX
    scales: tuple[Scale, ...]  # GPT-2's figures, one per size
    grids: blocks.Markup  # the toy's value grids (HTML)
    real_heads: blocks.Markup  # the softmax step's link to trained heads, else ""
    code_id: str
    first: int
    last: int
    engine_file: str


def macros(page) -> dict[str, Callable[..., str]]:
    made: dict[str, WalkthroughMacros] = {}

    def get() -> WalkthroughMacros:  # built on first use: other pages never pay for it
        if "it" not in made:
            made["it"] = WalkthroughMacros(page)
        return made["it"]

    return {
        "walkthrough_header": lambda *a, **k: get().header(*a, **k),
        "walkthrough": lambda: get().walkthrough(),
        "walkthrough_code": lambda: get().code(),
    }

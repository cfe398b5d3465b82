"""Macros of a component page: header, shapes, parameters, FLOPs, code, evidence, differences."""

from __future__ import annotations

from generator import accounting, blocks
from generator.config import ModelConfig
from generator.models import FAMILIES
from generator.models.component import Component
from generator.pages.blocks import (
    Chart,
    Count,
    Dim,
    FlopCount,
    ModelCount,
    ParameterCount,
    ShapeList,
    Shapes,
    TensorShape,
)
from generator.pages.context import PageContext, family_sizes, size_tabs
from generator.render import code as code_render
from generator.render.code import excerpt_anchor
from generator.render.diagram import architecture_map
from generator.render.numbers import fmt_int, tex_int
from generator.render.tables import latex_tabular, markdown_table

PARAM_HEAD = ("Component", "Calculation", "Parameters")


FLOP_HEAD = ("Operation", "Calculation", "FLOPs per token")


def dims(
    tensor_dims: tuple[str, ...], cfg: ModelConfig, glossary: str | None = None
) -> tuple[Dim, ...]:
    """ "B batch", "{d_model} d" -> the words of each dimension, sizes from the config, each
    symbol with its glossary link (none without a glossary page)."""
    fields = {
        "d_model": fmt_int(cfg.d_model),
        "d_mlp": fmt_int(cfg.d_mlp),
        "vocab_size": fmt_int(cfg.vocab_size),
        "n_ctx": fmt_int(cfg.n_ctx),
        "n_head": fmt_int(cfg.n_head),
        "n_kv_head": fmt_int(cfg.n_kv_head),
        "d_head": fmt_int(cfg.d_head),
    }
    from generator.glossary import SYMBOLS

    def word(w: str) -> tuple[str, str | None]:
        if glossary and w in SYMBOLS:
            return w, f"{glossary}#sym-{SYMBOLS[w].anchor}"
        return w, None

    return tuple(tuple(word(w) for w in d.format(**fields).split(" ")) for d in tensor_dims)


class ComponentMacros(PageContext):
    """{{ header() }}, {{ parameters() }}, ...: each reads the page's `component:` entry."""

    COMPONENT_MACROS: tuple[str, ...] = (
        "header",
        "shapes",
        "parameters",
        "flops",
        "code",
        "sources",
        "differences",
        "go_deeper",
        "figure",
        "rope_table",
        "model_count",
        "sources_count",
    )

    def header(self) -> str:
        """Kicker, title, call site with its learned/fixed tag, one-line role, formula, diagram."""
        c = self._component()
        call = None
        if c.call_site:
            ex = self._excerpt(c.call_site)
            ((line_no, line_text),) = ex.blocks
            call = blocks.CallSite(
                learned=c.learned,
                code=code_render.visible(line_text.strip(" \t\n")),
                permalink=ex.link,
                filename=ex.filename,
                line=line_no,
            )
        diagram = architecture_map(
            self.link,
            current=c.key,
            n_layer=family_sizes(self.family.name)[0].n_layer,
            uid=f"map-{c.key}",
            family=self.family.name,
        )
        return self.render_block(
            blocks.ComponentHeader(
                kicker=c.kicker,
                title=c.title,
                callsite=call,
                role=c.role,
                formula=blocks.Markup(c.formula),
                shapes=blocks.Markup(self.shapes()),
                diagram=diagram,
                map_caption=self.family.map.caption,
            )
        )

    def _together(self, c: Component, cfg: ModelConfig) -> list[Component]:
        """The components this page counts as one group with `c`: those on its page with as
        many instances (GPT-2's ln_1 and ln_2; Llama's two per-layer RMSNorms, not its final
        norm, which model_count() adds)."""
        count = accounting.instances(cfg, c.key)
        return [
            other
            for other in self.registry
            if other.page == c.page and accounting.instances(cfg, other.key) == count
        ]

    def shapes(self) -> str:
        """In/out shapes and the parameter summary, for each size."""
        c = self._component()

        def render(cfg: ModelConfig) -> str:
            glossary = self.url_for("glossary.md")
            tensors = tuple(
                TensorShape(direction, blocks.Markup(t.symbol), dims(t.dims, cfg, glossary))
                for direction, group in (("in", c.inputs), ("out", c.outputs))
                for t in group
            )
            per = accounting.params_per_instance(cfg, c.key)
            count = accounting.instances(cfg, c.key)
            together = self._together(c, cfg)
            shapes = ShapeList(
                tensors=tensors,
                per_instance=fmt_int(per),
                instances=count,
                together=tuple(other.name for other in together),
                total=fmt_int(sum(accounting.params_total(cfg, other.key) for other in together)),
            )
            return self.render_block(shapes)

        return self.render_block(Shapes(tabs=blocks.Markup(self.size_tabs(render))))

    def parameters(self) -> str:
        """Per-instance accounting table per size, and the total across blocks."""
        c = self._component()

        def render(cfg: ModelConfig) -> str:
            rows = accounting.param_rows(cfg, c.key)
            if not rows:
                why = self.family.no_params.get(c.key, "No parameters of its own.")
                untied = accounting.param_rows(cfg, c.key, tied=False)
                if not untied:
                    return f"{why}\n"
                table = markdown_table(
                    untied, head=PARAM_HEAD, total_label="Untied total", quantity="params.untied"
                )
                return f"{why}\n\n{table}"
            per = sum(r.value for r in rows)
            count = accounting.instances(cfg, c.key)
            table = markdown_table(
                rows,
                head=PARAM_HEAD,
                total_label="Per-instance total",
                quantity="params.table_total",
            )
            together = self._together(c, cfg)
            on_page = [
                other
                for other in self.registry  # every component on the page, Llama's final norm too
                if other.page == c.page and accounting.param_rows(cfg, other.key)
            ]
            latex = tuple(  # several: their module names; one: its short name ("8 experts")
                (
                    other.name if len(on_page) > 1 else other.short,
                    self._tex_link(other.key, "params", cfg),
                )
                for other in on_page
            )
            count_block = ParameterCount(
                per_instance=fmt_int(per),
                table=blocks.Markup(table),
                instances=count,
                together=tuple(other.name for other in together),
                total=fmt_int(sum(accounting.params_total(cfg, other.key) for other in together)),
                per_instance_tex=tex_int(per),
                total_tex=tex_int(per * count),
                latex=latex,
            )
            return self.render_block(count_block)

        return self.size_tabs(render)

    def model_count(self, keys: list[str], what: str) -> str:
        """How many of these components the whole model holds and their parameters, per size:
        {{ model_count(["ln1", "ln2", "lnf"], "LayerNorms") }}."""
        unknown = [key for key in keys if key not in self.by_key]
        if unknown:
            from generator.errors import InputError

            raise InputError(
                f"model_count() names {', '.join(unknown)}, which is no component",
                file=f"docs/{self.src_path}",
                entry="model_count",
                fix=f"use keys of the {self.family.name} registry: " + ", ".join(self.by_key),
            )
        parts = [self.by_key[key] for key in keys]

        def render(cfg: ModelConfig) -> str:
            counts = [accounting.instances(cfg, c.key) for c in parts]
            count = ModelCount(
                model=cfg.label,
                parts=tuple((c.name, fmt_int(n)) for c, n in zip(parts, counts, strict=True)),
                count=fmt_int(sum(counts)),
                what=what,
                total=fmt_int(sum(accounting.params_total(cfg, c.key) for c in parts)),
            )
            return self.render_block(count)

        return self.size_tabs(render)

    def flops(self) -> str:
        """Forward FLOPs per token per size, at the model's full context."""
        c = self._component()

        def render(cfg: ModelConfig) -> str:
            if not accounting.flop_rows(cfg, c.key, cfg.n_ctx):
                return (
                    "No matrix multiplications: a lookup or an elementwise step, so it counts "
                    "0 FLOPs under the convention below.\n"
                )
            kinds = accounting.layer_kinds(cfg, c.key, cfg.n_ctx)  # one, unless layers differ
            tables = [
                (
                    f"The {fmt_int(len(layers))} layers with {phrase}" if phrase else "",
                    blocks.Markup(
                        markdown_table(
                            accounting.flop_rows(cfg, c.key, cfg.n_ctx, layers[0]),
                            head=FLOP_HEAD,
                            total_label="Per-instance total",
                            quantity="flops.per_token" if index == 0 else f"flops.kind{index}",
                        )
                    ),
                )
                for index, (phrase, layers) in enumerate(kinds)
            ]
            flops = FlopCount(
                n_ctx=fmt_int(cfg.n_ctx),
                table=tables[0][1],
                latex=self._tex_link(c.key, "flops", cfg),
                heading=tables[0][0],
                others=tuple(tables[1:]),
            )
            return self.render_block(flops)

        convention = f"{self._doc('glossary.md')}#flop-convention"
        windowed = any(cfg.sliding_window for cfg in family_sizes(self.family.name))
        keys = "the keys each query sees" if windowed else "the full T × T grid"
        return self.size_tabs(render) + (
            f"\nCounted as everywhere on this site: [forward, per token, matrix multiplications"
            f" only, over {keys}]({convention}).\n"
        )

    def code(self) -> str:
        """Code tabs: the pinned excerpts, with upstream line numbers."""
        c = self._component()
        sources = self.url_for("sources.md")
        excerpts = [self._excerpt(i) for i in c.code]
        return code_render.code_tabs(excerpts, sources=sources, render=self.render_block)

    def sources(self) -> str:
        """ "Direct evidence" cards: a claim, where it stands, the pinned revision, the excerpt."""
        c = self._component()
        sources_page = self.url_for("sources.md")
        cards = []
        for s in c.sources:
            cite = f"{sources_page}#{excerpt_anchor(s.excerpt)}" if sources_page else None
            card = code_render.evidence_card(self._excerpt(s.excerpt), s.claim, sources_url=cite)
            cards.append(self.render_block(card))
        return "\n".join(cards)

    def sources_count(self) -> str:
        """The number of evidence cards, for the Sources heading: "## Sources {{ sources_count() }}"."""
        n = len(self._component().sources)
        return self.render_block(Count(n=n, what="pinned excerpts" if n != 1 else "pinned excerpt"))

    def rope_table(self) -> str:
        """Per size: the head's pairs of dimensions, the base, and how fast the fastest and the
        slowest pair turn (radians per position, and positions per full turn)."""
        import math

        def render(cfg: ModelConfig) -> str:
            pairs = cfg.d_head // 2
            slowest = cfg.rope_theta ** (-(2 * (pairs - 1)) / cfg.d_head)  # θ_i, i = pairs - 1
            rows = [
                ("Dimensions per head, d_head", fmt_int(cfg.d_head), "rope.d_head"),
                ("Pairs rotated, d_head / 2", fmt_int(pairs), "rope.pairs"),
                ("Base θ (rope_theta)", fmt_int(round(cfg.rope_theta)), "rope.theta"),
                ("Fastest pair (i = 0): radians per position", "1", "rope.fastest"),
                ("… positions per full turn, 2π", f"{2 * math.pi:.2f}", "rope.fastest_turn"),
                (
                    f"Slowest pair (i = {fmt_int(pairs - 1)}): radians per position",
                    f"{slowest:.3g}",
                    "rope.slowest",
                ),
                (
                    "… positions per full turn",
                    fmt_int(round(2 * math.pi / slowest)),
                    "rope.slowest_turn",
                ),
                (
                    "Context (the config's max_position_embeddings)",
                    fmt_int(cfg.n_ctx),
                    "rope.n_ctx",
                ),
            ]
            lines = ["| Quantity | Value |", "| :-- | --: |"]
            lines += [f'| {label} | <span data-q="{q}">{v}</span> |' for label, v, q in rows]
            return "\n".join(lines) + "\n"

        return self.size_tabs(render)

    def _tex_link(self, key: str, kind: str, cfg: ModelConfig) -> str:
        return self._doc(table_path(key, kind, cfg))

    def differences(self) -> str:
        """Where openai/gpt-2 and transformers differ, for this component, with both excerpts."""
        from generator.differences import for_page

        c = self._component()
        blocks = []
        for diff in for_page(c.key) if self.family.name == "gpt2" else []:
            text = diff.markdown()
            code = code_render.code_tabs(
                [self._excerpt(i) for i in diff.excerpts],
                prefix=f"diff-{diff.key}",
                sources=self.url_for("sources.md"),
                render=self.render_block,
            )
            blocks.append(f"### {diff.title} {{ #diff-{diff.key} }}\n\n{text}\n\n{code}\n")
        return "\n".join(blocks)

    def go_deeper(self) -> str:
        """The walkthrough, the forward pass, the cited sources, the notation, the map.

        The previous and next component are Material's footer links (navigation.footer): the
        nav lists the components in forward order, so they are not repeated here.
        """
        c = self._component()
        items = []
        if c.walkthrough and self.url_for(c.walkthrough):
            short = c.short if c.short[1:] != c.short[1:].lower() else c.short.lower()  # RoPE
            walkthrough = (f"the {short} walkthrough", self._doc(c.walkthrough))
            items.append(blocks.LinkItem("Step through it at toy scale", (walkthrough,)))
        if c.key == "attention" and self.family.name == "gpt2" and self.url_for("forward-pass.md"):
            forward = ("the forward pass", self._doc("forward-pass.md"))
            items.append(blocks.LinkItem("See trained heads at work", (forward,)))
        from generator.differences import for_page

        differing = for_page(c.key) if self.family.name == "gpt2" else []
        quoted = [i for diff in differing for i in diff.excerpts]  # "Where they differ"
        call = [c.call_site] if c.call_site else []
        cited = dict.fromkeys([*call, *c.code, *(s.excerpt for s in c.sources), *quoted])
        sources = self._doc("sources.md")
        # Each by what a reader sees of it (its file and lines), never by its id in the lock.
        links = tuple(
            (
                f"{self._excerpt(i).label} ({self._excerpt(i).repo.name})",
                f"{sources}#{excerpt_anchor(i)}",
            )
            for i in cited
        )
        items.append(blocks.LinkItem("The pinned sources this page cites", links))
        items.append(
            blocks.LinkItem("Notation", (("glossary of symbols", self._doc("glossary.md")),))
        )
        home = (("architecture map", self._doc("index.md")),)
        items.append(blocks.LinkItem("Back to the", home, sep=" "))
        return self.render_block(blocks.LinkList(tuple(items)))

    def figure(self, name: str, alt: str) -> str:
        """A generated chart per size (Material tabs), from generator/charts.py: the narrow
        drawing on a phone, the wide one elsewhere."""
        from generator.charts import NARROW, PHONE_MAX, WIDE, figure_path

        def render(cfg: ModelConfig) -> str:
            chart = Chart(
                wide=self._url(figure_path(name, cfg, WIDE)),
                narrow=self._url(figure_path(name, cfg, NARROW)),
                phone_max=PHONE_MAX,
                alt=f"{alt} ({cfg.label})",
            )
            return self.render_block(chart) + "\n"

        return size_tabs(render)

    def _url(self, site_path: str) -> str:
        """A generated file's address from this page (raw HTML: MkDocs rewrites no link there)."""
        return self.required_url(site_path, fix="name a figure of generator/charts.py FIGURES")


def table_path(key: str, kind: str, cfg: ModelConfig) -> str:
    return f"tables/{key}-{kind}-{cfg.name}.tex"


def latex_tables() -> dict[str, bytes]:
    """Every component's parameter and FLOP tables for every size of every family, as LaTeX
    files for the site."""
    tables = {}
    for family in FAMILIES.values():
        for c in (c for c in family.registry if c.tables):
            for cfg in family_sizes(family.name):
                rows = accounting.param_rows(cfg, c.key)
                if rows:
                    tables[table_path(c.key, "params", cfg)] = latex_tabular(
                        rows,
                        head=PARAM_HEAD,
                        total_label="Per-instance total",
                        caption=f"{cfg.label}: parameters of one instance of {c.title}",
                    ).encode()
                flops = accounting.flop_rows(cfg, c.key, cfg.n_ctx)
                if flops:
                    tables[table_path(c.key, "flops", cfg)] = latex_tabular(
                        flops,
                        head=FLOP_HEAD,
                        total_label="Per-instance total",
                        caption=f"{cfg.label}: forward FLOPs per token of one instance of"
                        f" {c.title} at a context of {fmt_int(cfg.n_ctx)} tokens",
                    ).encode()
    return tables

"""Page macros: the generated blocks a docs page calls as {{ name() }}.

A page in docs/ is Markdown with front matter; its Jinja calls are filled here from the registry,
the accounting and the pinned excerpts. Every number is computed, none is typed.
"""

from __future__ import annotations

import html
import textwrap
from collections.abc import Callable

import jinja2

from generator import accounting
from generator.components import BY_KEY, COMPONENTS, Component
from generator.config import CONFIGS, SIZES, ModelConfig
from generator.render import code as code_render
from generator.render.diagram import architecture_svg
from generator.render.numbers import fmt_int, tex_int
from generator.render.tables import latex_tabular, markdown_table
from generator.site import Site

PARAM_HEAD = ("Component", "Calculation", "Parameters")
FLOP_HEAD = ("Operation", "Calculation", "FLOPs per token")


def size_tabs(render: Callable[[ModelConfig], str]) -> str:
    """Material content tabs, one per GPT-2 size. Linked tabs keep the reader's choice site-wide."""
    tabs = []
    for name in SIZES:
        cfg = CONFIGS[name]
        tabs.append(f'=== "{cfg.label}"\n\n{textwrap.indent(render(cfg), "    ")}\n')
    return "\n".join(tabs)


def dims(tensor_dims: tuple[str, ...], cfg: ModelConfig) -> str:
    fields = {
        "d_model": fmt_int(cfg.d_model),
        "d_mlp": fmt_int(cfg.d_mlp),
        "vocab_size": fmt_int(cfg.vocab_size),
        "n_ctx": fmt_int(cfg.n_ctx),
        "n_head": fmt_int(cfg.n_head),
        "d_head": fmt_int(cfg.d_head),
    }
    return "[" + ", ".join(d.format(**fields) for d in tensor_dims) + "]"


class PageMacros:
    """Macros for one page. `url_for(docs_path)` gives a relative link from this page, or None."""

    def __init__(
        self, site: Site, *, src_path: str, meta: dict, url_for: Callable[[str], str | None]
    ) -> None:
        self.site = site
        self.src_path = src_path
        self.meta = meta
        self.url_for = url_for
        self.component: Component | None = BY_KEY.get(meta.get("component", ""))

    # -- helpers -------------------------------------------------------------------------------
    def _component(self) -> Component:
        if self.component is None:
            from generator.errors import InputError

            raise InputError(
                "a component macro is used but the page names no component",
                file=f"docs/{self.src_path}",
                entry="component",
                fix="add `component: <key>` to the front matter; keys: "
                + ", ".join(c.key for c in COMPONENTS),
            )
        return self.component

    def _excerpt(self, excerpt_id: str):
        return self.site.excerpt(excerpt_id, used_by=f"docs/{self.src_path}")

    def link(self, key: str) -> str | None:
        page = BY_KEY[key].page
        return self.url_for(page) if page else None

    # -- macros --------------------------------------------------------------------------------
    def header(self) -> str:
        """Kicker, title, call site with its learned/fixed tag, one-line role, formula, diagram."""
        c = self._component()
        call = ""
        if c.call_site:
            ex = self._excerpt(c.call_site)
            ((line_no, line_text),) = ex.blocks
            tag = "learned" if c.learned else "fixed"
            call = (
                f'<p class="itm-callsite"><span class="itm-tag itm-tag--{tag}">{tag}</span>'
                f"<code>{html.escape(line_text.strip())}</code> "
                f'<a class="itm-callsite__ref" href="{html.escape(ex.permalink)}">'
                f"{html.escape(ex.filename)} {line_no}</a></p>"
            )
        formula = f"$$\n{c.formula}\n$$\n" if c.formula else ""
        diagram = architecture_svg(
            self.link, current=c.key, n_layer=CONFIGS["gpt2"].n_layer, uid=f"map-{c.key}"
        )
        return (
            '<div class="itm-hero" markdown>\n'
            '<div class="itm-hero__text" markdown>\n'
            f'<p class="itm-kicker">{html.escape(c.kicker)}</p>\n\n'
            f"# {c.title}\n\n"
            f"{call}\n"
            f'<p class="itm-role">{html.escape(c.role)}</p>\n\n'
            f"{formula}\n"
            f"{self.shapes()}\n"
            "</div>\n"
            f'<figure class="itm-hero__map">{diagram}'
            "<figcaption>GPT-2 pre-normalized transformer block</figcaption></figure>\n"
            "</div>\n"
        )

    def shapes(self) -> str:
        """In/out shapes and the parameter summary, for each size."""
        c = self._component()

        def render(cfg: ModelConfig) -> str:
            lines = [f"- in: ${t.symbol}$ {dims(t.dims, cfg)}" for t in c.inputs]
            lines += [f"- out: ${t.symbol}$ {dims(t.dims, cfg)}" for t in c.outputs]
            per = accounting.params_per_instance(cfg, c.key)
            count = accounting.instances(cfg, c.key)
            params = f'- parameters: <span data-q="params.per_instance">{fmt_int(per)}</span>'
            if count > 1:
                params += (
                    f' · × {count} blocks = <span data-q="params.total">'
                    f"{fmt_int(per * count)}</span>"
                )
            return "\n".join([*lines, params]) + "\n"

        return '<div class="itm-shapes" markdown>\n\n' + size_tabs(render) + "\n</div>\n"

    def parameters(self) -> str:
        """Per-instance accounting table per size, and the total across blocks."""
        c = self._component()

        def render(cfg: ModelConfig) -> str:
            rows = accounting.param_rows(cfg, c.key)
            per = sum(r.value for r in rows)
            count = accounting.instances(cfg, c.key)
            table = markdown_table(
                rows,
                head=PARAM_HEAD,
                total_label="Per-instance total",
                quantity="params.table_total",
            )
            parts = [
                f"{fmt_int(per)} parameters per instance, across its learned components.\n",
                "Exact per-instance accounting\n",
                table,
            ]
            if count > 1:
                parts.append(
                    f"Across {count} independent blocks: "
                    f"${tex_int(per)} \\times {count} = {tex_int(per * count)}$ parameters.\n"
                )
            parts.append(f"[LaTeX source of this table]({self._tex_link(c.key, 'params', cfg)})\n")
            return "\n".join(parts)

        return size_tabs(render)

    def flops(self) -> str:
        """Forward FLOPs per token per size, at the model's full context."""
        c = self._component()

        def render(cfg: ModelConfig) -> str:
            rows = accounting.flop_rows(cfg, c.key, cfg.n_ctx)
            table = markdown_table(
                rows, head=FLOP_HEAD, total_label="Per-instance total", quantity="flops.per_token"
            )
            return (
                f"At a context of {fmt_int(cfg.n_ctx)} tokens, per token, one instance:\n\n{table}"
            )

        return size_tabs(render) + f"\n{accounting.FLOP_CONVENTION}\n"

    def code(self) -> str:
        """Code tabs: the pinned excerpts, with upstream line numbers."""
        c = self._component()
        return code_render.code_tabs([self._excerpt(i) for i in c.code])

    def sources(self) -> str:
        """ "Direct evidence" cards: a claim, where it stands, the pinned revision, the excerpt."""
        c = self._component()
        return "\n".join(
            code_render.evidence_card(self._excerpt(s.excerpt), s.claim) for s in c.sources
        )

    def _tex_link(self, key: str, kind: str, cfg: ModelConfig) -> str:
        return "../" * self.src_path.count("/") + table_path(key, kind, cfg)

    def architecture_map(self) -> str:
        """The whole-model diagram, every box a link to its component page."""
        svg = architecture_svg(self.link, n_layer=CONFIGS["gpt2"].n_layer, uid="map-home")
        return (
            f'<figure class="itm-map-figure">{svg}<figcaption>GPT-2: embeddings, '
            f"{CONFIGS['gpt2'].n_layer} pre-norm blocks, final norm, unembedding. Hover or focus "
            "a box to see what it is; select it to open its page.</figcaption></figure>\n"
        )

    def namespace(self) -> dict[str, Callable[..., str]]:
        from generator.features import load_features

        names = ("header", "shapes", "parameters", "flops", "code", "sources", "architecture_map")
        found: dict[str, Callable[..., str]] = {name: getattr(self, name) for name in names}
        for feature in load_features():
            if hasattr(feature, "macros"):
                found.update(feature.macros(self))
        return found


def table_path(key: str, kind: str, cfg: ModelConfig) -> str:
    return f"tables/{key}-{kind}-{cfg.name}.tex"


def latex_tables() -> dict[str, bytes]:
    """Every component's parameter table for every size, as LaTeX files for the site."""
    tables = {}
    for c in COMPONENTS:
        for name in SIZES:
            cfg = CONFIGS[name]
            rows = accounting.param_rows(cfg, c.key)
            if rows:
                tables[table_path(c.key, "params", cfg)] = latex_tabular(
                    rows,
                    head=PARAM_HEAD,
                    total_label="Per-instance total",
                    caption=f"{cfg.label}: parameters of one instance of {c.title}",
                ).encode()
    return tables


def render_page(markdown: str, macros: PageMacros) -> str:
    """Fill a page's {{ macro() }} calls. Jinja comments are `{## ##}` so `{#id}` stays Markdown."""
    env = jinja2.Environment(
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        comment_start_string="{##",
        comment_end_string="##}",
        keep_trailing_newline=True,
    )
    return env.from_string(markdown).render(**macros.namespace())

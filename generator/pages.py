"""Page macros: the generated blocks a docs page calls as {{ name() }}.

A page in docs/ is Markdown with front matter; its Jinja calls are filled here from the registry,
the accounting and the pinned excerpts. Every number is computed, none is typed.
"""

from __future__ import annotations

import html
from collections.abc import Callable

import jinja2
from markupsafe import escape

from generator import accounting, blocks
from generator.components import BY_KEY, COMPONENTS, Component
from generator.config import CONFIGS, SIZES, ModelConfig
from generator.render import code as code_render
from generator.render.diagram import architecture_svg
from generator.render.numbers import fmt_int, tex_int
from generator.render.tables import latex_tabular, markdown_table
from generator.site import Site

NO_PARAMS = {
    "embed": "No parameters of its own: it adds two vectors that the embeddings already hold.",
    "unembed": (
        "No new parameters: GPT-2 ties the unembedding to the token embedding, so the logits "
        "are computed with wte itself, transposed. Untied, the same matrix would cost as much "
        "again as wte (see the table below)."
    ),
}
PARAM_HEAD = ("Component", "Calculation", "Parameters")
FLOP_HEAD = ("Operation", "Calculation", "FLOPs per token")


def size_tabs(render: Callable[[ModelConfig], str]) -> str:
    """Material content tabs, one per GPT-2 size. Linked tabs keep the reader's choice site-wide."""
    tabs = []
    for name in SIZES:
        cfg = CONFIGS[name]
        tabs.append(f'=== "{cfg.label}"\n\n{code_render.indent(render(cfg))}\n')
    return "\n".join(tabs)


def dims(tensor_dims: tuple[str, ...], cfg: ModelConfig, glossary: str | None = None) -> str:
    """ "[B batch, T positions, 768 d]": sizes from the config, symbols linked to the glossary."""
    fields = {
        "d_model": fmt_int(cfg.d_model),
        "d_mlp": fmt_int(cfg.d_mlp),
        "vocab_size": fmt_int(cfg.vocab_size),
        "n_ctx": fmt_int(cfg.n_ctx),
        "n_head": fmt_int(cfg.n_head),
        "d_head": fmt_int(cfg.d_head),
    }
    from generator.glossary import SYMBOLS

    def word(w: str) -> str:
        if glossary and w in SYMBOLS:
            return f'<a class="itm-sym" href="{glossary}#sym-{SYMBOLS[w].anchor}">{w}</a>'
        return w

    parts = [" ".join(word(w) for w in d.format(**fields).split(" ")) for d in tensor_dims]
    return "[" + ", ".join(parts) + "]"


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

            named = self.meta.get("component")
            raise InputError(
                f"the page's front matter names component {named!r}, which does not exist"
                if named
                else "a component macro is used but the page names no component",
                file=f"docs/{self.src_path}",
                entry="component",
                fix="add `component: <key>` to the front matter; keys: "
                + ", ".join(c.key for c in COMPONENTS),
            )
        return self.component

    def _excerpt(self, excerpt_id: str):
        return self.site.excerpt(excerpt_id, used_by=f"docs/{self.src_path}")

    def link(self, key: str) -> str | None:
        return self.url_for(BY_KEY[key].page)

    # -- macros --------------------------------------------------------------------------------
    def render_block(self, block: blocks.Block) -> str:
        """A block through its template (the site's override first); for features too."""
        return blocks.render(block, self.site.settings.custom_dir)

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
                permalink=ex.permalink,
                filename=ex.filename,
                line=line_no,
            )
        diagram = architecture_svg(
            self.link, current=c.key, n_layer=CONFIGS["gpt2"].n_layer, uid=f"map-{c.key}"
        )
        return self.render_block(
            blocks.ComponentHeader(
                kicker=c.kicker,
                title=c.title,
                callsite=call,
                role=c.role,
                formula=blocks.Markup(c.formula),
                shapes=blocks.Markup(self.shapes()),
                diagram=blocks.Markup(diagram),
            )
        )

    def shapes(self) -> str:
        """In/out shapes and the parameter summary, for each size."""
        c = self._component()

        def render(cfg: ModelConfig) -> str:
            glossary = self.url_for("glossary.md")
            lines = [f"- in: ${t.symbol}$ {dims(t.dims, cfg, glossary)}" for t in c.inputs]
            lines += [f"- out: ${t.symbol}$ {dims(t.dims, cfg, glossary)}" for t in c.outputs]
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
            if not rows:
                return f"{NO_PARAMS.get(c.key, 'No parameters of its own.')}\n"
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
            if not rows:
                return (
                    "No matrix multiplications: a lookup or an elementwise step, so it counts "
                    "0 FLOPs under the convention below.\n"
                )
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
        sources_page = self.url_for("sources.md")
        return "\n".join(
            code_render.evidence_card(
                self._excerpt(s.excerpt),
                s.claim,
                sources_url=f"{sources_page}#{excerpt_anchor(s.excerpt)}" if sources_page else None,
            )
            for s in c.sources
        )

    def _tex_link(self, key: str, kind: str, cfg: ModelConfig) -> str:
        return self._doc(table_path(key, kind, cfg))

    def differences(self) -> str:
        """Where openai/gpt-2 and transformers differ, for this component, with both excerpts."""
        from generator.differences import for_page, gelu_gap

        c = self._component()
        blocks = []
        for diff in for_page(c.key):
            text = (
                diff.text.replace("{gelu_gap}", gelu_gap())
                if "{gelu_gap}" in diff.text
                else diff.text
            )
            code = code_render.code_tabs(
                [self._excerpt(i) for i in diff.excerpts], prefix=f"diff-{diff.key}"
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
            walkthrough = (f"the {c.short.lower()} walkthrough", self._doc(c.walkthrough))
            items.append(blocks.LinkItem("Step through it at toy scale", (walkthrough,)))
        if c.key == "attention" and self.url_for("forward-pass.md"):
            forward = ("the forward pass", self._doc("forward-pass.md"))
            items.append(blocks.LinkItem("See trained heads at work", (forward,)))
        cited = dict.fromkeys([*c.code, *(s.excerpt for s in c.sources)])
        sources = self._doc("sources.md")
        links = tuple((i, f"{sources}#{excerpt_anchor(i)}") for i in cited)
        items.append(blocks.LinkItem("The pinned sources this page cites", links))
        items.append(
            blocks.LinkItem("Notation", (("glossary of symbols", self._doc("glossary.md")),))
        )
        home = (("architecture map", self._doc("index.md")),)
        items.append(blocks.LinkItem("Back to the", home, sep=" "))
        return self.render_block(blocks.LinkList(tuple(items)))

    def figure(self, name: str, alt: str) -> str:
        """A generated figure per size (Material tabs), from generator/charts.py."""
        from generator.charts import figure_path

        return size_tabs(
            # lazy: the figures in hidden size tabs load only when their tab is shown
            lambda cfg: (
                f"![{alt} ({cfg.label})]({self._doc(figure_path(name, cfg))}){{ loading=lazy }}\n"
            )
        )

    def _doc(self, docs_path: str) -> str:
        """A Markdown link target from this page to another docs path (validated by MkDocs)."""
        return "../" * self.src_path.count("/") + docs_path

    def glossary(self) -> str:
        """The notation table: symbol, meaning, and its value in each GPT-2 size."""
        from generator.glossary import SYMBOLS

        sizes = [CONFIGS[name] for name in SIZES]
        rows = tuple(
            blocks.GlossaryRow(
                anchor=sym.anchor,
                tex=sym.tex,
                meaning=sym.meaning,
                values=tuple(fmt_int(sym.value(cfg)) if sym.value else "—" for cfg in sizes),
            )
            for sym in SYMBOLS.values()
        )
        return self.render_block(blocks.Glossary(sizes=tuple(c.label for c in sizes), rows=rows))

    def model_numbers(self) -> str:
        """The whole model's headline numbers per size, next to Kaplan et al.'s approximations."""

        def render(cfg: ModelConfig) -> str:
            m = accounting.model_summary(cfg)
            rows = [
                (
                    "Parameters (GPT-2 ties wte and the unembedding)",
                    m["params_tied"],
                    "params.model",
                ),
                ("Parameters if the unembedding were untied", m["params_untied"], "params.untied"),
                ("Embedding parameters (wte + wpe)", m["embedding_params"], "params.embedding"),
                (
                    "Non-embedding parameters, exact",
                    m["non_embedding_params"],
                    "params.non_embedding",
                ),
                (
                    "Kaplan et al.'s N = 12·L·d² (block weights only)",
                    m["kaplan_n"],
                    "params.kaplan_n",
                ),
                (
                    f"Forward FLOPs per token at T = {fmt_int(cfg.n_ctx)}, exact",
                    m["flops_per_token"],
                    "flops.model",
                ),
                (
                    "Kaplan et al.'s C_forward ≈ 2N + 2·L·n_ctx·d",
                    m["kaplan_c_forward"],
                    "flops.kaplan",
                ),
            ]
            lines = ["| Quantity | Value |", "| :-- | --: |"]
            lines += [
                f'| {label} | <span data-q="{q}">{fmt_int(v)}</span> |' for label, v, q in rows
            ]
            return "\n".join(lines) + "\n"

        return size_tabs(render) + f"\n{accounting.KAPLAN_NOTE}\n"

    def sources_index(self) -> str:
        """Every pinned repo and excerpt: revision, license, lines, permalink, evidence, citation.

        How a group of excerpts was confirmed is said once per repository (most share one
        account); each excerpt links to its account, and its text is plain escaped lines."""
        by_repo: dict[str, list] = {}
        for excerpt in sorted(
            self.site.excerpts.values(), key=lambda e: (e.repo.name, e.first_line, e.id)
        ):
            by_repo.setdefault(excerpt.repo.name, []).append(excerpt)
        used = pages_citing()
        parts = []
        for repo_name, excerpts in by_repo.items():
            repo = excerpts[0].repo
            accounts = list(dict.fromkeys((ex.evidence_level, ex.evidence) for ex in excerpts))
            slug = "".join(ch if ch.isalnum() else "-" for ch in repo_name)
            anchors = {account: f"ev-{slug}-{n}" for n, account in enumerate(accounts, 1)}
            parts.append(
                f"## {repo_name}\n\n"
                f"- Repository: <{repo.url}>\n"
                f"- Pinned revision: `{repo.short}` (full: `{repo.commit}`)\n"
                f"- License: {code_render.literal(repo.license)}\n"
                f"- Excerpts: {len(excerpts)}\n\n"
                "How these excerpts were confirmed:\n\n"
                + "".join(
                    f'- <span id="{anchors[a]}"></span>**{escape(a[0])}**: {code_render.literal(a[1])}\n'
                    for a in accounts
                )
            )
            for ex in excerpts:
                pages = (
                    ", ".join(
                        f"[{BY_KEY[key].title}]({self._doc(BY_KEY[key].page)})"
                        for key in used.get(ex.id, [])
                    )
                    or "not cited by a component page"
                )
                account = (ex.evidence_level, ex.evidence)
                parts.append(
                    f"### `{ex.id}` {{ #{excerpt_anchor(ex.id)} }}\n\n"
                    f"<code>{code_render.literal(ex.path)}</code> · {code_render.span_label(ex)} · "
                    f'<a href="{html.escape(ex.permalink)}">permalink</a> · '
                    f"{code_render.literal(ex.repo.license)}\n\n"
                    f"- Evidence: [{ex.evidence_level}](#{anchors[account]})\n"
                    f"- sha256 of the excerpt text: `{ex.sha256}`\n"
                    f"- Cited on: {pages}\n\n"
                    f'<details class="quote"><summary>Excerpt</summary>'
                    f"{self.render_block(plain_excerpt(ex))}</details>\n\n"
                    f'<details class="note"><summary>Cite this excerpt</summary>'
                    f"{self.render_block(citation(ex))}</details>\n"
                )
        return "\n".join(parts)

    def flop_convention(self) -> str:
        return accounting.FLOP_CONVENTION

    def evidence_levels(self) -> str:
        from generator.sources import EVIDENCE_LEVELS

        return "\n".join(f"- **{level}**: {text}" for level, text in EVIDENCE_LEVELS.items()) + "\n"

    def architecture_map(self) -> str:
        """The whole-model diagram, every box a link to its component page."""
        n_layer = CONFIGS["gpt2"].n_layer
        svg = architecture_svg(self.link, n_layer=n_layer, uid="map-home")
        return self.render_block(
            blocks.ArchitectureMap(diagram=blocks.Markup(svg), n_layer=n_layer)
        )

    def namespace(self) -> dict[str, Callable[..., str]]:
        from generator.features import load_features

        names = (
            "header",
            "shapes",
            "parameters",
            "flops",
            "code",
            "sources",
            "differences",
            "go_deeper",
            "figure",
            "architecture_map",
            "sources_index",
            "glossary",
            "model_numbers",
            "flop_convention",
            "evidence_levels",
        )
        found: dict[str, Callable[..., str]] = {name: getattr(self, name) for name in names}
        for feature in load_features():
            if hasattr(feature, "macros"):
                found.update(feature.macros(self))
        return found


def pages_citing() -> dict[str, list[str]]:
    """excerpt id -> component keys whose page cites it (code tabs, evidence, differences)."""
    from generator.components import pages_in_order
    from generator.differences import for_page

    used: dict[str, list[str]] = {}
    for c in pages_in_order():
        ids = [*c.code, *(s.excerpt for s in c.sources)]
        ids += [i for d in for_page(c.key) for i in d.excerpts]
        if c.call_site:
            ids.append(c.call_site)
        for excerpt_id in dict.fromkeys(ids):
            used.setdefault(excerpt_id, []).append(c.key)
    return used


def plain_excerpt(ex) -> blocks.PlainExcerpt:
    """An excerpt's lines as plain escaped text with upstream line numbers (Sources page)."""
    runs = tuple(blocks.PlainRun(*run) for run in code_render.plain_runs(ex))
    return blocks.PlainExcerpt(label=f"{ex.path} {code_render.span_label(ex)}", runs=runs)


def citation(ex) -> blocks.Citation:
    """Plain-text and BibTeX citations of one pinned excerpt."""
    lines = code_render.span_label(ex)
    owner, name = ex.repo.name.split("/")
    key = f"{name}-{ex.repo.short[:7]}-{ex.id}".replace(".", "-")
    plain = (
        f"{ex.repo.name}, {ex.path}, {lines}, at commit {ex.repo.commit}. "
        f"{ex.permalink} (excerpt sha256 {ex.sha256[:16]}…)"
    )
    bibtex = "\n".join(
        [
            f"@misc{{{key},",
            f"  author = {{{owner}}},",
            f"  title = {{{{{ex.repo.name}}}: {ex.path}, {lines}}},",
            f"  howpublished = {{\\url{{{ex.permalink}}}}},",
            f"  note = {{Commit {ex.repo.commit}; excerpt sha256 {ex.sha256}}},",
            "}",
        ]
    )
    return blocks.Citation(plain=plain, bibtex=bibtex)


def excerpt_anchor(excerpt_id: str) -> str:
    """The stable anchor of an excerpt on the Sources page: "gpt2.attn" -> "ex-gpt2-attn"."""
    return "ex-" + "".join(ch if ch.isalnum() else "-" for ch in excerpt_id)


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

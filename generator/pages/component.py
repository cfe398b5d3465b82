"""Macros of a component page: header, code, evidence, differences, links, charts (its numbers:
component_numbers.py)."""

from __future__ import annotations

from generator import blocks
from generator.config import ModelConfig
from generator.pages.blocks import Chart, Count
from generator.pages.component_numbers import ComponentNumbers
from generator.pages.context import family_sizes, size_tabs
from generator.render import code as code_render
from generator.render.code import excerpt_anchor
from generator.render.diagram import architecture_map


class ComponentMacros(ComponentNumbers):
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
        from generator.chart_style import NARROW, PHONE_MAX, WIDE
        from generator.charts import figure_path

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

"""Page macros: the generated blocks a docs page calls as {{ name() }}.

A page in docs/ is Markdown with front matter; its Jinja calls are filled here from the registry,
the accounting and the pinned excerpts. Every number is computed, none is typed. By concern:

    context.py     PageContext: the page, its links, its component, render_block(); size_tabs()
    component.py   ComponentMacros: header, code, sources, differences, go_deeper, figure, ...
      and component_numbers.py's (ComponentNumbers: shapes, parameters, flops, LaTeX tables)
    site_index.py  SiteMacros: architecture_map, glossary, model_numbers, ...; and the macros of
      sources_page.py (SourcesMacros: sources_index, evidence_levels) and changes_page.py
      (ChangeMacros: what_changed, change_chain, families_side_by_side)
    features       each feature module's macros(page) (generator/features.py)
    sandbox.py     render_page: the page's Jinja, sandboxed and bounded in size and time
    page_sizes.py  how much a value the page's Jinja makes holds (held, made_length)
    page_clock.py  the timer on the page's own Jinja, paused while a macro runs
"""

from __future__ import annotations

from collections.abc import Callable

from generator.pages.component import ComponentMacros
from generator.pages.component_numbers import latex_tables, table_path
from generator.pages.context import PageContext, size_tabs
from generator.pages.sandbox import render_page
from generator.pages.site_index import SiteMacros
from generator.pages.sources_page import citation, pages_citing, plain_excerpt
from generator.render.code import excerpt_anchor


class PageMacros(ComponentMacros, SiteMacros):
    """Every macro a page can call: the component's, the site-wide ones, and the features'."""

    def namespace(self) -> dict[str, Callable[..., str]]:
        from generator.features import load_features

        names = (*self.COMPONENT_MACROS, *self.SITE_MACROS)
        found: dict[str, Callable[..., str]] = {name: getattr(self, name) for name in names}
        for feature in load_features():
            if hasattr(feature, "macros"):
                found.update(feature.macros(self))
        return found


__all__ = [
    "ComponentMacros",
    "PageContext",
    "PageMacros",
    "SiteMacros",
    "citation",
    "excerpt_anchor",
    "latex_tables",
    "pages_citing",
    "plain_excerpt",
    "render_page",
    "size_tabs",
    "table_path",
]

"""Page macros: the generated blocks a docs page calls as {{ name() }}.

A page in docs/ is Markdown with front matter; its Jinja calls are filled here from the registry,
the accounting and the pinned excerpts. Every number is computed, none is typed. By concern:

    context.py     PageContext: the page, its links, its component, render_block(); size_tabs()
    component.py   ComponentMacros: header, shapes, parameters, flops, code, sources, ...
    site_index.py  SiteMacros: architecture_map, glossary, model_numbers, sources_index, ...
    features       each feature module's macros(page) (generator/features.py)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jinja2
from jinja2.sandbox import ImmutableSandboxedEnvironment, SecurityError

from generator.pages.component import ComponentMacros, latex_tables, table_path
from generator.pages.context import PageContext, size_tabs
from generator.pages.site_index import SiteMacros, citation, pages_citing, plain_excerpt
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


LONGEST_TEXT = 1 << 20  # characters (or items) a page's own arithmetic may make: 1 MiB
LARGEST_POWER = 4096  # bits of an integer power a page may compute


class PageSandbox(ImmutableSandboxedEnvironment):
    """Jinja for pages: sandboxed (no attribute of Python's internals, no mutation of what a
    macro returns, `range` capped at 100,000 items), and `*` and `**` refuse results past
    LONGEST_TEXT characters or LARGEST_POWER bits. `{{ range(10**9)|list }}` took 24 GB.
    Pages are still the site's own code: a page can spend time (loops in loops), not memory."""

    intercepted_binops = frozenset({"*", "**"})

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        if operator == "**" and _bits_of_power(left, right) > LARGEST_POWER:
            raise SecurityError(f"{left} ** {right} is too large for a page")
        if operator == "*" and _length_of_product(left, right) > LONGEST_TEXT:
            raise SecurityError(f"a text or list {left!r:.40} × {right!r:.40} is too long")
        return super().call_binop(context, operator, left, right)


def _bits_of_power(base: Any, exponent: Any) -> int:
    """About how many bits base ** exponent has (0 when it is not a positive integer power)."""
    if not (isinstance(base, int) and isinstance(exponent, int) and exponent > 0):
        return 0
    return max(1, abs(base).bit_length()) * exponent


def _length_of_product(left: Any, right: Any) -> int:
    """The length of a text or list repeated by an integer (0 for any other product)."""
    for sized, times in ((left, right), (right, left)):
        if isinstance(sized, str | list | tuple) and isinstance(times, int):
            return len(sized) * times
    return 0


def render_page(markdown: str, macros: PageMacros) -> str:
    """Fill a page's {{ macro() }} calls. Jinja comments are `{## ##}` so `{#id}` stays Markdown."""
    env = PageSandbox(
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        comment_start_string="{##",
        comment_end_string="##}",
        keep_trailing_newline=True,
    )
    return env.from_string(markdown).render(**macros.namespace())


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

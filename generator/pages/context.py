"""What every page's macros share: the page, its links, its component, and block rendering."""

from __future__ import annotations

from collections.abc import Callable

from generator import blocks
from generator.config import ModelConfig
from generator.errors import InputError
from generator.inputs import BuildInputs
from generator.models import get_family
from generator.models.component import Component
from generator.models.family import Family
from generator.render import code as code_render


def size_tabs(
    render: Callable[[ModelConfig], str], family: str = "gpt2", only_with: str | None = None
) -> str:
    """Material content tabs, one per size of the family (those that set the field `only_with`,
    when given). Linked tabs keep the reader's choice site-wide."""
    sizes = [cfg for cfg in family_sizes(family) if only_with is None or getattr(cfg, only_with)]
    tabs = []
    for cfg in sizes:
        tabs.append(f'=== "{cfg.label}"\n\n{code_render.indent(render(cfg))}\n')
    return "\n".join(tabs)


def family_sizes(family: str) -> list[ModelConfig]:
    """The sizes a family's pages show, in order: all it has (GPT-2: its four)."""
    return list(get_family(family).sizes.values())


def _named(meta: dict, key: str, src_path: str) -> str | None:
    """The name front matter `key` gives (None when none), or an InputError: a list there was an
    unhashable TypeError traceback (`component: [x]`), and printing a YAML alias bomb there
    would run out of memory: only its type is named."""
    value = meta.get(key)
    if value is None or isinstance(value, str):
        return value
    raise InputError(
        f"front matter {key} must be a name (text), not {type(value).__name__}",
        file=f"docs/{src_path}",
        entry=key,
        fix=f"write it as `{key}: name`",
    )


class PageContext:
    """One page being filled. `url_for(docs_path)` gives a relative link from it, or None."""

    def __init__(
        self, site: BuildInputs, *, src_path: str, meta: dict, url_for: Callable[[str], str | None]
    ) -> None:
        self.site = site
        self.src_path = src_path
        self.meta = meta
        self.url_for = url_for
        family = _named(meta, "family", src_path)
        self.family = self._family("gpt2" if family is None else family)
        self.registry = self.family.registry
        self.by_key = self.family.by_key
        component = _named(meta, "component", src_path)
        self.component: Component | None = self.by_key.get(component) if component else None

    def _family(self, name: str) -> Family:
        """The family front matter `family:` names (GPT-2's when none), or an InputError."""
        try:
            return get_family(name)
        except InputError as error:
            raise InputError(
                error.problem, file=f"docs/{self.src_path}", entry="family", fix=error.fix
            ) from None

    def _component(self) -> Component:
        if self.component is None:
            named = self.meta.get("component")
            raise InputError(
                f"the page's front matter names component {named!r}, which does not exist"
                if named
                else "a component macro is used but the page names no component",
                file=f"docs/{self.src_path}",
                entry="component",
                fix="add `component: <key>` to the front matter; keys: "
                + ", ".join(c.key for c in self.registry),
            )
        return self.component

    def required_url(self, docs_path: str, fix: str) -> str:
        """url_for(docs_path), or an InputError naming this page, the path and `fix`."""
        url = self.url_for(docs_path)
        if url is None:
            raise InputError(
                f"links to {docs_path}, which is not part of the site",
                file=f"docs/{self.src_path}",
                entry=docs_path,
                fix=fix,
            )
        return url

    def _excerpt(self, excerpt_id: str):
        return self.site.excerpt(excerpt_id, used_by=f"docs/{self.src_path}")

    def link(self, key: str) -> str | None:
        return self.url_for(self.by_key[key].page)

    def size_tabs(self, render: Callable[[ModelConfig], str]) -> str:
        """size_tabs over this page's family."""
        return size_tabs(render, self.family.name)

    def render_block(self, block: blocks.Block) -> str:
        """A block through its template (the site's override first); for features too."""
        settings = self.site.settings
        return blocks.render(block, settings.custom_dir, settings.cache_dir)

    def _doc(self, docs_path: str) -> str:
        """A Markdown link target from this page to another docs path (validated by MkDocs)."""
        return "../" * self.src_path.count("/") + docs_path

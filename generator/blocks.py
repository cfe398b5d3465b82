"""Page blocks: small data objects rendered by autoescaped Jinja templates a site can override.

A macro gathers the numbers and texts of one block into a dataclass and calls `render(block)`;
the markup lives in generator/templates/<block.template>. A site overrides a block by putting a
template of the same name in its theme's custom_dir under itm/ (overrides/itm/ here), which is
looked up first. Text is escaped by Jinja; only markup the generator made itself (an SVG, a
Markdown fragment of another block) is passed in as `Markup`; a block inside a block is
rendered by its own template with `{{ field | block }}`.
"""

from __future__ import annotations

import functools
import traceback
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, ClassVar

import jinja2
from markupsafe import Markup

from generator.errors import InputError
from generator.store import Store, key_of

TEMPLATES = Path(__file__).resolve().parent / "templates"
OVERRIDES = "itm"  # the folder under the theme's custom_dir that overrides TEMPLATES


OPTIONS: dict[str, Any] = {
    "autoescape": True,
    "undefined": jinja2.StrictUndefined,
    "keep_trailing_newline": True,
    "trim_blocks": True,
    "lstrip_blocks": True,
}


class SignedBytecodeCache(jinja2.BytecodeCache):
    """Compiled templates kept in the build's store, so a warm build does not compile them again.

    Jinja's own FileSystemBytecodeCache loads whatever file it finds, and loading bytecode runs
    it: here an entry is loaded only if the store's signature (HMAC under the key beside the
    cache) vouches for it, so a planted or copied entry is discarded and compiled afresh. The
    key covers the template's path and source (Jinja's bucket), Jinja's version and the options
    above, so an edit or an upgrade never meets stale code."""

    KIND = "jinja"

    def __init__(self, cache_dir: Path) -> None:
        self.store = Store(cache_dir)
        self.salt = (jinja2.__version__, repr(sorted(OPTIONS.items())))

    def _key(self, bucket: jinja2.bccache.Bucket) -> str:
        return key_of(*self.salt, bucket.key, bucket.checksum)

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        data = self.store.get_entry(self.KIND, self._key(bucket))
        if data is not None:
            bucket.bytecode_from_string(data)  # checks Jinja's magic and the source checksum too

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        self.store.put_entry(self.KIND, self._key(bucket), bucket.bytecode_to_string())


@functools.cache
def environment(
    custom_dir: Path | None = None, cache_dir: Path | None = None, overrides: str = OVERRIDES
) -> jinja2.Environment:
    """Templates from custom_dir/<overrides> (itm/ for this site, pinned_excerpts/ for the
    extension's cards on any site) first, then the generator's own; escaping always on;
    compiled templates kept in the store under cache_dir (if given)."""
    search = [str(custom_dir / overrides)] if custom_dir else []
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader([*search, str(TEMPLATES)]),
        bytecode_cache=SignedBytecodeCache(cache_dir) if cache_dir else None,
        **OPTIONS,
    )
    env.filters["block"] = lambda block: Markup(
        render(block, custom_dir, cache_dir, overrides)
    )  # {{ x | block }}
    return env


@dataclass(frozen=True)
class Block:
    """A block's data; subclasses name their template."""

    template: ClassVar[str]

    def context(self) -> dict[str, Any]:
        # shallow: nested blocks stay objects (asdict would copy them into dicts, and is slow)
        return {f.name: getattr(self, f.name) for f in fields(self)}


def render(
    block: Block,
    custom_dir: Path | None = None,
    cache_dir: Path | None = None,
    overrides: str = OVERRIDES,
) -> str:
    """The block through its template; an InputError naming the template's file, the line and
    the fix when it cannot be read, compiled or rendered (a site's override with a syntax error,
    an undefined variable or bytes that are not UTF-8 was a traceback)."""
    env = environment(custom_dir, cache_dir, overrides)
    try:
        return env.get_template(block.template).render(block.context())
    except InputError:  # a block inside this one, told already
        raise
    except Exception as error:
        raise _template_error(env, block, error) from None


def _template_error(env: jinja2.Environment, block: Block, error: Exception) -> InputError:
    """What went wrong in which template file, at which line, and how to fix it."""
    searched = [Path(folder) for folder in getattr(env.loader, "searchpath", [])]
    file, line = _where(error, searched)
    if file is None:  # not read yet: the file the loader looks at first
        file = next((f / block.template for f in searched if (f / block.template).is_file()), None)
    if isinstance(error, jinja2.TemplateSyntaxError):
        problem = error.message or "a syntax error"
    elif isinstance(error, UnicodeDecodeError):
        problem = f"not UTF-8 text (byte 0x{error.object[error.start]:02X})"
        line = error.object.count(b"\n", 0, error.start) + 1
    else:
        problem = f"{type(error).__name__}: {error}"
    if file is None or file.is_relative_to(TEMPLATES):
        fix = "restore the generator's template from git (generator/templates/)"
    elif isinstance(error, UnicodeDecodeError):
        fix = "save the site's template as UTF-8, or delete it to use the generator's own"
    else:
        fix = (
            f"correct the site's template (its variables: {', '.join(block.context())}), or"
            " delete it to use the generator's own"
        )
    return InputError(
        f"line {line}: {problem}" if line else problem,
        file=str(file or block.template),
        fix=fix,
    )


def _where(error: Exception, searched: list[Path]) -> tuple[Path | None, int | None]:
    """The template file and line an error comes from: a syntax error says; a runtime error's
    traceback has the template's lines as frames (Jinja rewrites them so)."""
    if isinstance(error, jinja2.TemplateSyntaxError) and error.filename:
        return Path(error.filename), error.lineno
    for frame in reversed(traceback.extract_tb(error.__traceback__)):
        path = Path(frame.filename)
        if any(path.is_relative_to(folder) for folder in searched):
            return path, frame.lineno
    return None, None


@dataclass(frozen=True)
class CallSite(Block):
    """The line of model.py that calls a component, with its learned/fixed tag and permalink."""

    template: ClassVar[str] = "callsite.html"
    learned: bool
    code: str  # the line, stripped
    permalink: str
    filename: str
    line: int


@dataclass(frozen=True)
class ComponentHeader(Block):
    """A component page's top: kicker, title, call site, role, formula, shapes, and the map."""

    template: ClassVar[str] = "component_header.html"
    kicker: str
    title: str
    callsite: CallSite | None
    role: str
    formula: Markup  # TeX for arithmatex ("" for none): Markdown source, not HTML-escaped
    shapes: Markup  # the shapes block (Markdown with size tabs)
    diagram: Block  # the architecture map (render.blocks.MapDiagram), this component highlighted
    map_caption: str = "GPT-2 pre-normalized transformer block"


@dataclass(frozen=True)
class ArchitectureMap(Block):
    """The home page's whole-model diagram, every box a link."""

    template: ClassVar[str] = "architecture_map.html"
    diagram: Block  # the map (render.blocks.MapDiagram), every box a link
    caption: str  # what the map shows, in words: its family's MapLayout.figure


@dataclass(frozen=True)
class GlossaryRow:
    anchor: str  # "d-model": the row's id is sym-<anchor>
    tex: str
    meaning: str
    values: tuple[str, ...]  # per size, formatted; "—" when the symbol has no size


@dataclass(frozen=True)
class Glossary(Block):
    """The notation table: symbol, meaning, and its value in each GPT-2 size."""

    template: ClassVar[str] = "glossary.html"
    sizes: tuple[str, ...]  # column heads: "GPT-2 small", ...
    rows: tuple[GlossaryRow, ...]
    label: str = "Symbols and their values per size"  # the table's accessible name

    family: str = ""  # the first word every column head shares ("GPT-2"): a phone shows the
    # heads without it (it stays in the text), so the four sizes fit beside the meanings


@dataclass(frozen=True)
class LinkItem:
    """A list item: a lead, then links; `sep` between them (": " or " ")."""

    lead: str
    links: tuple[tuple[str, str], ...]  # (text, Markdown link target)
    sep: str = ": "


@dataclass(frozen=True)
class LinkList(Block):
    """A Markdown list of links (MkDocs validates each target): a page's "Go deeper"."""

    template: ClassVar[str] = "link_list.md"
    items: tuple[LinkItem, ...]


@dataclass(frozen=True)
class PlainRun:
    """One run of an excerpt's lines, with the omission marker that precedes it ("" for none)."""

    omitted_before: str
    numbers: str  # the upstream line numbers, one per line
    code: str  # the lines, joined with "\n"


@dataclass(frozen=True)
class PlainExcerpt(Block):
    """An excerpt as escaped plain text with its line numbers (the Sources page)."""

    template: ClassVar[str] = "plain_excerpt.html"
    label: str  # "src/model.py 69–112", for screen readers
    runs: tuple[PlainRun, ...]


@dataclass(frozen=True)
class Citation(Block):
    """How to cite one excerpt: a plain-text line, a BibTeX entry and a CSL-JSON item."""

    template: ClassVar[str] = "citation.html"
    plain: str
    bibtex: str
    csl_json: Markup  # a JSON array of one CSL item (what reference managers import), escaped


__all__ = [
    "Citation",
    "PlainExcerpt",
    "PlainRun",
    "LinkItem",
    "LinkList",
    "ArchitectureMap",
    "Block",
    "CallSite",
    "ComponentHeader",
    "Glossary",
    "GlossaryRow",
    "Markup",
    "render",
]

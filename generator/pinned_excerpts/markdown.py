"""The pinned-excerpts Markdown syntax: a block in pymdown-extensions' generic-block style.

    /// excerpt | gpt2.attn
        lines: 69-75, 104-112
    ///

ID (after the bar) names an excerpt of the lock. `lines` (optional, indented YAML as in
pymdownx.blocks) shows only those lines, each range inside the pinned lines; the lines between
are marked omitted. Each block becomes a card (templates/pinned_excerpt.html, which a site
overrides in its theme's custom_dir under pinned_excerpts/): the file and permalink, the lines
numbered as upstream, the evidence, the Software Heritage id and the citations.

The blocks are expanded by a preprocessor that runs after whitespace is normalized and before
fences are read: the card's HTML goes into Python-Markdown's stash (as fenced code does) and its
runs stay in the page as fences, which pymdownx.superfences and pymdownx.highlight convert like
any other, wherever the block stands (top level, a list, an admonition, a tab, a details block,
a blockquote: `> /// excerpt | ID` ... `> ///`, each line after the same `>` markers, and the
card's lines after them too). Blocks inside a fenced code block are left as they are (a page can
show the syntax). A block that names an unknown id, asks for lines outside the pin, or is
malformed stops the build with the page, the id and the fix. Last, after every postprocessor, the
page's HTML is read once more: an opening line still there as text, outside code (a block that
something hid from the preprocessor), stops the build too, so no block reaches readers unrendered.

Two routes, the same pages. With MkDocs (or ProperDocs) the `pinned-excerpts` plugin resolves
and verifies every pin before any page and gives this extension its excerpts. Listed under
`markdown_extensions` (`- pinned_excerpts:` with the plugin's options), the extension does it
alone, on the first page that quotes one: that is the route of an engine that ignores MkDocs
plugins but runs Python-Markdown extensions (Zensical), where it also puts the cards' small
stylesheet in each page that shows one (no plugin adds the file).
"""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Mapping
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from markdown import Extension, Markdown
from markdown.postprocessors import Postprocessor
from markdown.preprocessors import Preprocessor
from mkdocs.exceptions import PluginError

from generator.pinned_excerpts.excerpts import DEFAULT_LOCK, Render, load_excerpts
from generator.sources.pageblocks import load_options

NAME = "excerpt"  # the block's name: /// excerpt | ID
OPTIONS = ("lines", "stale")  # stale: `itm bump` could not carry the lines (sources.selections)
PRIORITY = 29  # after normalize_whitespace (30), before fenced_code_block (25) and html_block (20)
LAST = 5  # the page's HTML is checked after every postprocessor (raw_html 30, amp_substitute 20)

_START = re.compile(
    rf"^(?P<indent>[ ]*)(?P<slashes>/{{3,}})[ ]*{NAME}[ ]*(?:\|[ ]*(?P<id>.*?))?[ ]*$"
)
_FENCE = re.compile(r"^(?P<indent>[ ]*)(?P<mark>`{3,}|~{3,})")
# Where a page's HTML shows text as it was written: code, scripts, comments
_VERBATIM = re.compile(r"<(pre|code|script|style|textarea)\b.*?</\1\s*>|<!--.*?-->", re.S | re.I)
# A block's opening line left as text: at a line's start, after tags, quote markers
_LEFT_AS_TEXT = re.compile(
    r"^(?:[ \t>]|&gt;|<[^>\n]*>)*/{3,}[ ]*(?P<name>[\w-]+)[ ]*(?:\|[ ]*(?P<id>[^<\n]*?))?[ ]*(?:<|$)",
    re.M,
)
BLOCKS = (NAME, "claim")  # the blocks this package expands: a name close to one is a typo
# A line's blockquote markers: "> x", "> > x", "    > x" (a blockquote in a list item)
_QUOTE = re.compile(r"^[ ]*>(?:[ ]{0,4}>)*[ ]?")


def _unquoted(line: str) -> tuple[str, str]:
    """(the line's blockquote markers, the rest): ("> > ", "/// excerpt | a"); ("", line)."""
    quote = _QUOTE.match(line)
    return (quote.group(), line[quote.end() :]) if quote else ("", line)


def _inside(quote: str, line: str) -> str | None:
    """The line's text inside the blockquote that `quote` opens ("" for an empty line), or None
    when the line stands in another (a line Python-Markdown would not read as the block's)."""
    markers, text = _unquoted(line)
    if (markers.find(">"), markers.count(">")) == (quote.find(">"), quote.count(">")):
        return text
    return "" if not line.strip() else None


# What a card is made of: its code is fences numbered from a line (pymdownx.superfences) and the
# omission marker carries a class (attr_list); processor name -> the module that must own it.
NEEDED = {"fenced_code_block": "pymdownx.superfences", "attr_list": "markdown.extensions.attr_list"}
_LOADED: dict[tuple[str, ...], tuple[dict[str, Any], Render, str]] = {}  # see _excerpts
_LOADED_AT_MOST = 8


@functools.cache
def stylesheet() -> str:
    """The cards' stylesheet, as the package ships it."""
    return (Path(__file__).parent / "pinned-excerpts.css").read_text(encoding="utf-8")


class ExcerptBlocks(Preprocessor):
    """Replaces every `/// excerpt | ID` block of a page with its card."""

    def __init__(self, md: Markdown, extension: PinnedExcerptsExtension) -> None:
        super().__init__(md)
        self.extension = extension

    def run(self, lines: list[str]) -> list[str]:
        with self.extension.guarded():
            return self._expand(lines)

    def _expand(self, lines: list[str]) -> list[str]:
        out: list[str] = []
        styled = not self.extension.getConfig("stylesheet")  # the plugin ships it as a file
        fence: tuple[str, int] | None = None  # (character, length) of the open code fence
        quoted: dict[str, int] = {}  # excerpt id -> how many times this page quoted it
        i = 0
        while i < len(lines):
            line = lines[i]
            i += 1
            quote, content = _unquoted(line)
            if fence is not None:
                closing = _FENCE.match(content)
                mark = closing.group("mark") if closing else ""
                rest = content[closing.end() :].strip() if closing else "x"
                if mark[:1] == fence[0] and len(mark) >= fence[1] and not rest:
                    fence = None
                out.append(line)
                continue
            opening = _FENCE.match(content)
            if opening:
                mark = opening.group("mark")
                fence = (mark[0], len(mark))
                out.append(line)
                continue
            start = _START.match(content)
            if start is None:
                out.append(line)
                continue
            indent, slashes = start.group("indent"), start.group("slashes")
            excerpt_id = (start.group("id") or "").strip()
            body: list[str | None] = []  # each line's text inside the quote (None: outside it)
            while i < len(lines):
                inner = _inside(quote, lines[i])
                if inner is not None and inner.rstrip() == indent + slashes:
                    break
                body.append(inner)
                i += 1
            if i == len(lines):
                raise self.extension.error(
                    excerpt_id or NAME,
                    f"the block opened by {line.strip()!r} is never closed",
                    f"end it with a line of {slashes} (at the same indent, after the same"
                    " quote markers)",
                )
            i += 1  # the closing line
            options = self._options(excerpt_id, body, indent)
            self._check_extensions(excerpt_id)
            count = quoted[excerpt_id] = quoted.get(excerpt_id, 0) + 1
            prefix = "excerpt" if count == 1 else f"excerpt{count}"
            card = self.extension.card(excerpt_id, options, prefix)
            # the card's HTML is kept aside (as fenced code is) and its runs stay Markdown, so a
            # card works wherever a fence does: in a list, an admonition, a tab, a blockquote
            style = "" if styled else f"<style>{stylesheet()}</style>\n"
            styled = True
            rows = [self._stash(style + card.html[0])]
            for html in card.html[1:]:
                rows += ["", *card.runs.split("\n"), "", self._stash(html)]
            lead = quote + indent  # each row stands where the block stood: an empty one too,
            blank = lead.rstrip()  # inside its blockquote (">"), so the card is one block
            out += ["", *(lead + row if row else blank for row in rows), ""]
        return out

    def _check_extensions(self, excerpt_id: str) -> None:
        """The extensions a card is made of must be there (the plugin adds them; listed alone,
        the extension needs them listed too), or its code would show as raw fences."""
        registries = (self.md.preprocessors, self.md.treeprocessors)
        missing = [
            module
            for name, module in NEEDED.items()
            if not any(name in r and type(r[name]).__module__ == module for r in registries)
        ]
        if missing:
            names = ", ".join(m.removeprefix("markdown.extensions.") for m in missing)
            raise self.extension.error(
                excerpt_id,
                f"a card needs the Markdown extensions {names}, which this site does not use",
                "list them under markdown_extensions in mkdocs.yml (with pymdownx.highlight for"
                " its line numbers): - attr_list, - pymdownx.highlight, - pymdownx.superfences",
            )

    def _stash(self, html: str) -> str:
        """A placeholder for raw HTML that Python-Markdown puts back in the page as it is."""
        return self.md.htmlStash.store(html.strip()) if html.strip() else ""

    def _options(self, excerpt_id: str, body: list[str | None], indent: str) -> dict[str, Any]:
        """The block's YAML options: lines indented four spaces past the block's own (and inside
        the same blockquotes)."""
        if not excerpt_id:
            raise self.extension.error(
                NAME,
                "the block names no excerpt",
                f"write `/// {NAME} | ID` with the id of an excerpt in the lock",
            )
        inner = indent + "    "
        if any(row is None or (row.strip() and not row.startswith(inner)) for row in body):
            raise self.extension.error(
                excerpt_id,
                "an excerpt block holds only its options, indented four spaces",
                f"write `/// {NAME} | {excerpt_id}`, then `    lines: 10-20` (optional), then"
                " `///`; put prose outside the block",
            )
        text = "\n".join(row[len(inner) :] for row in body if row is not None)
        try:
            options = load_options(text)
        except ValueError as error:
            raise self.extension.error(
                excerpt_id, str(error), "write options as `    lines: 10-20`, each once"
            ) from None
        if not isinstance(options, dict) or set(options) - set(OPTIONS):
            unknown = sorted(set(options) - set(OPTIONS)) if isinstance(options, dict) else []
            raise self.extension.error(
                excerpt_id,
                f"unknown option {unknown[0]!r}" if unknown else "its options are not key: value",
                f"the options are: {', '.join(OPTIONS)} (e.g. `    lines: 10-20, 30-35`)",
            )
        return options


# The problem and the fix when an excerpt block would reach a page as raw text
UNRENDERED = (
    "this excerpt block would be published as raw text: it stands where no card can be made",
    "start the block on a line of its own, at the top level or in a list item, admonition, tab,"
    " details block or blockquote, with its options and closing `///` at the same indent after"
    " the same `>` markers, and no code fence left open above it; to show the syntax itself, put"
    " it in a code fence or inline code",
)


def unrendered_block(html: str) -> tuple[str, str] | None:
    """(the name it was written with, its id or that name) of an excerpt or claim block left in
    a page's HTML as raw text, outside code, or None: the last check that no block reaches a
    reader unrendered, whatever hid it. A name close to one of BLOCKS (`/// Excerpt`, `/// exerpt`,
    `/// Claim`) counts: such a typo was published as text, its claim never checked."""
    if "///" not in html:
        return None
    for left in _LEFT_AS_TEXT.finditer(_VERBATIM.sub("", html)):
        name = left.group("name")
        if name in BLOCKS or difflib.get_close_matches(name.lower(), BLOCKS, n=1, cutoff=0.7):
            return name, (left.group("id") or "").strip() or name
    return None


def unrendered_problem(name: str) -> tuple[str, str]:
    """The problem and the fix for a block `unrendered_block` found written as `name`."""
    if name in BLOCKS:
        return UNRENDERED
    meant = difflib.get_close_matches(name.lower(), BLOCKS, n=1, cutoff=0.7)[0]
    return (
        f"`/// {name}` is no block, so it would be published as raw text",
        f"write `/// {meant} | ID` (lower case, as the block is named)",
    )


class UnrenderedBlocks(Postprocessor):
    """Stops the build when the page's HTML still shows an excerpt block as text."""

    def __init__(self, md: Markdown, extension: PinnedExcerptsExtension) -> None:
        super().__init__(md)
        self.extension = extension

    def run(self, text: str) -> str:
        left = unrendered_block(text)
        if left is not None:
            raise self.extension.error(left[1], *unrendered_problem(left[0]))
        return text


class PinnedExcerptsExtension(Extension):
    """Expands `/// excerpt | ID` blocks into cards of verified excerpts.

    The pinned-excerpts MkDocs plugin makes one with the excerpts it resolved and the card
    renderer (generator.pinned_excerpts.plugin); `page` names the page being converted in
    errors. Used with Python-Markdown alone, pass `lock` (a lock file): its excerpts are
    resolved and verified on first use, with settings from the environment (ITM_* variables).
    """

    def __init__(self, **kwargs: Any) -> None:
        self.config = {
            "lock": [DEFAULT_LOCK, "the lock file, from the folder the site is built in"],
            "custom_dir": ["", "a folder whose pinned_excerpts/ overrides the card's templates"],
            "stylesheet": [True, "put the cards' stylesheet in each page that shows one"],
            # the plugin's settings, for a site without it (generator.settings.SETTINGS)
            "cache_dir": ["", "fetched sources and registry archives (ITM_CACHE_DIR)"],
            "offline": [False, "the cache and local clones only (ITM_OFFLINE)"],
            "git_dirs": [{}, "local clones to read pinned files from (ITM_GIT_DIRS)"],
            "pypi_simple": ["", "the package index for registry mirrors (ITM_PYPI_SIMPLE)"],
            "github_raw": ["", "the raw-file host for GitHub files (ITM_GITHUB_RAW)"],
        }
        self.excerpts: Mapping[str, Any] | None = kwargs.pop("excerpts", None)
        self.render: Render | None = kwargs.pop("render", None)
        self.lock_file: str = kwargs.pop("lock_file", "")
        self.page = ""  # the page being converted, as errors name it ("docs/index.md")
        super().__init__(**kwargs)

    def extendMarkdown(self, md: Markdown) -> None:  # noqa: N802 (Python-Markdown's name)
        md.preprocessors.register(ClaimBlocks(md, self), "pinned_excerpts_claims", PRIORITY + 0.5)
        md.preprocessors.register(ExcerptBlocks(md, self), "pinned_excerpts", PRIORITY)
        md.postprocessors.register(UnrenderedBlocks(md, self), "pinned_excerpts_left", LAST)

    def guarded(self) -> AbstractContextManager[None]:
        """Where the extension converts a page: a bug there is one line naming the page and
        asking for a report (generator.last_resort), under MkDocs, Zensical or Python-Markdown."""
        from generator.last_resort import last_resort

        def plugin_error(line: str) -> PluginError:
            return PluginError(f"Pinned excerpts: {line}")

        what = "the pinned_excerpts Markdown extension"
        return last_resort(what, self.page or None, raise_as=plugin_error, expected=(PluginError,))

    def error(self, entry: str, problem: str, fix: str) -> PluginError:
        from generator.errors import InputError

        error = InputError(problem, file=self.page or None, entry=entry, fix=fix)
        return PluginError(f"Pinned excerpts: {error}")

    def card(self, excerpt_id: str, options: dict[str, Any], prefix: str) -> Any:
        """The card (render.card.CardParts) for one block of the page."""
        from generator.errors import InputError
        from generator.sources.lock import format_ranges, parse_line_spec

        excerpts = self._excerpts()
        excerpt = excerpts.get(excerpt_id)
        if excerpt is None:
            known = ", ".join(sorted(excerpts)) or "none: the lock has no excerpts yet"
            raise self.error(
                excerpt_id,
                f"no excerpt with this id in {self.lock_file or 'the lock'}",
                f"use one of: {known}; or pin it (`itm pin {excerpt_id} --repo OWNER/REPO --path"
                " PATH --lines A-B --git DIR`)",
            )
        if "stale" in options:
            raise self.error(
                excerpt_id,
                f"`itm bump` left its lines stale: {options['stale']}",
                f"read the excerpt as pinned now ({excerpt.label}, {excerpt.permalink}), write the"
                " lines the prose around it describes in `lines:`, and delete the `stale:` option",
            )
        if options.get("lines") is not None:
            try:
                ranges = parse_line_spec(options["lines"], entry=excerpt_id, file=self.page)
                excerpt = excerpt.select(ranges)
            except InputError as error:
                raise self.error(excerpt_id, f"lines: {error.problem}", error.fix or "") from None
            except ValueError as error:
                pinned = format_ranges(excerpt.ranges)
                raise self.error(
                    excerpt_id,
                    str(error),
                    f"ask for lines inside {pinned}, or pin more lines (`itm pin {excerpt_id}"
                    f" --replace --repo {excerpt.repo.name} --path {excerpt.path} --lines ...`)",
                ) from None
        assert self.render is not None
        try:
            return self.render(excerpt, prefix)
        except InputError as error:  # the site's card template: its file, line and fix
            raise PluginError(f"Pinned excerpts: {error}") from None

    def _excerpts(self) -> Mapping[str, Any]:
        """The plugin's excerpts, or (the extension alone) those of the `lock` option, resolved
        and verified once a lock text and settings: an engine that makes a Markdown instance per
        page (Zensical) does not resolve the lock again for each."""
        if self.excerpts is None:
            from generator.errors import InputError
            from generator.sources.lock import MAX_TEXT_BYTES
            from generator.store import read_regular, sha256_hex

            settings = {k: v for k, v in self.getConfigs().items() if k not in ("stylesheet",)}
            lock = str(settings.pop("lock"))
            options = {k: v for k, v in settings.items() if v not in ("", None, {})}
            try:  # the lock's bytes (a regular file, bounded) and the settings key what it gives
                path = Path(lock).expanduser().absolute()
                digest = sha256_hex(read_regular(path, max_bytes=MAX_TEXT_BYTES))
            except (OSError, ValueError):
                digest = ""  # load_excerpts says what is wrong with it
            key = (str(path) if digest else lock, digest, repr(sorted(options.items())))
            try:
                if key not in _LOADED or not digest:
                    loaded = load_excerpts(lock, root=Path.cwd(), options=options)
                    while len(_LOADED) >= _LOADED_AT_MOST:
                        _LOADED.pop(next(iter(_LOADED)))
                    _LOADED[key] = loaded
            except InputError as error:
                raise PluginError(f"Pinned excerpts: {error}") from None
            self.excerpts, self.render, self.lock_file = _LOADED[key]
        return self.excerpts


class ClaimBlocks(Preprocessor):
    """Checks every `/// claim | ID` block of a page against the lock's approvals (a claim whose
    excerpt's text changed since it was approved stops the build) and leaves its content as
    written (generator.sources.claims)."""

    def __init__(self, md: Markdown, extension: PinnedExcerptsExtension) -> None:
        super().__init__(md)
        self.extension = extension

    def run(self, lines: list[str]) -> list[str]:
        from generator.sources.claims import NAME as CLAIM
        from generator.sources.claims import expand_claims

        if not any(CLAIM in line and "///" in line for line in lines):
            return lines
        return expand_claims(lines, self.extension._excerpts(), self.extension.error)


def makeExtension(**kwargs: Any) -> PinnedExcerptsExtension:  # noqa: N802 (Python-Markdown's name)
    return PinnedExcerptsExtension(**kwargs)

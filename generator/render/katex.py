"""Math typeset at build time: the pinned KaTeX bundle, run in an embedded V8 (mini-racer).

`Typesetter.page(html)` takes a page's HTML as pymdownx.arithmatex (generic mode) leaves it,
`<span class="arithmatex">\\(…\\)</span>` and `<div class="arithmatex">\\[…\\]</div>`, and returns
it with KaTeX's HTML in place of the TeX: readers see typeset math with JavaScript off, search
snippets hold the formula's text, and no math script runs on page load. `\\htmlData{light=…}`
becomes `data-light` attributes, which site.js ties to the diagram boxes as before.

A page's result is kept in the project's store under a key of the KaTeX bundle, the options and
the page's HTML, so a warm build starts no JavaScript engine at all; so is each formula's, so a
page whose prose changed (an edit under `mkdocs serve`) is typeset from the store too.

A formula KaTeX cannot parse, or one using a command the site does not trust (`\\href`, `\\url`,
`\\includegraphics`, `\\htmlId`, …, which KaTeX would print as red text), stops the build naming
where the formula is written: a template put a data file's text on the page (steps.toml,
glossary.toml, a family.toml), so the error names that file and entry
(`attention.steps[2].formula`, found by data_file.written_in) and the page only as where it
shows; a formula no data file holds is named on its page.

`page_later` typesets on a thread of its own: V8 runs outside Python's lock, so the build
converts the next pages' Markdown meanwhile.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from generator.data_file import written_in
from generator.errors import InputError
from generator.store import Store, key_of, sha256_hex

VERSION = 8  # bump when the markup this module writes changes (invalidates cached pages)
# \htmlData is the only command that needs trust: it tags symbols with data-light keys.
# maxSize caps every size a formula states (\rule{100000em}{100000em}, \kern, \hspace) at that
# many ems, wider than any page's text; KaTeX leaves it unbounded by default. Its maxExpand
# (macro expansions, default 1000) is bounded already.
MAX_SIZE_EM = 20
OPTIONS = {"throwOnError": True, "output": "htmlAndMathml", "maxSize": MAX_SIZE_EM}
# KaTeX's time grows faster than a formula's length (20,000 characters: 1 s; 100,000: 16 s; 2 MB
# ran past minutes), so a longer one is refused before V8 sees it. The site's longest is 381.
LONGEST_TEX = 10_000
MATH = re.compile(r'<(span|div) class="arithmatex">(.*?)</\1>', re.DOTALL)
HEADING = re.compile(r"<h[1-6]\b[^>]*>(.*?)</h[1-6]>", re.DOTALL)
TAG = re.compile(r"<[^>]*>")
DELIMITERS = {"span": ("\\(", "\\)"), "div": ("\\[", "\\]")}

RENDER_ALL = """
function itmRenderAll(items) {
  return JSON.stringify(items.map(function (item) {
    var refused = [];
    try {
      var html = katex.renderToString(item[0], Object.assign({displayMode: item[1],
        trust: function (c) {
          if (c.command === "\\\\htmlData") return true;
          refused.push(c.command);
          return false;
        },
        strict: function (code) { return code === "htmlExtension" ? "ignore" : "error"; }
      }, OPTIONS));
      if (refused.length) {
        return {error: refused.join(", ") + " is not allowed here: KaTeX would print it as"
          + " red text (this site trusts only \\\\htmlData)"};
      }
      return {html: html};
    } catch (e) { return {error: String(e.message || e)}; }
  }));
}
"""


def formulas(page_html: str) -> list[tuple[str, bool]]:
    """(TeX, display?) of every arithmatex element, TeX unescaped and without its delimiters."""
    found = []
    for tag, body in MATH.findall(page_html):
        opening, closing = DELIMITERS[tag]
        tex = html.unescape(body).strip()
        if tex.startswith(opening) and tex.endswith(closing):
            tex = tex[len(opening) : -len(closing)]
        found.append((tex.strip(), tag == "div"))
    return found


# MathML's invisible operators (function application after softmax, an invisible separator
# from \!): search would index them as characters stuck to the words beside them.
INVISIBLE = re.compile(r"<(mo|mtext)>([\s\u2061-\u2064]*[\u2061-\u2064][\s\u2061-\u2064]*)</\1>")


def mark_mathml(rendered: str) -> str:
    """Index a formula by its MathML, in reading order, never by its TeX annotation or its
    invisible operators (the HTML drawing is left out by render/drawings.py). A symbol that
    lights a diagram box is no tab stop: it sits in KaTeX's drawing, which is hidden from screen
    readers (aria-hidden), and a focusable element there is announced as nothing (axe:
    aria-hidden-focus); the keyboard lights the same pair from the map's box, a link."""
    rendered = INVISIBLE.sub(r"<\1 data-search-exclude>\2</\1>", rendered)
    return rendered.replace(
        '<annotation encoding="application/x-tex">',
        '<annotation encoding="application/x-tex" data-search-exclude>',
    )


def typeset_attributes(tag: str, names: Callable[[int], str], at: int) -> str:
    """A typeset formula's attributes. A display formula wider than its column scrolls sideways:
    it is a tab stop, and to be one a region (named, as no two regions of a page may share a
    name), so that a reader without JavaScript can scroll it from the keyboard (axe:
    scrollable-region-focusable, focus-order-semantics, landmark-unique). site.js, which can
    measure, takes the three back from a formula that fits."""
    if tag == "span":
        return 'class="arithmatex" data-typeset="1"'
    name = html.escape(names(at), quote=True)
    return f'class="arithmatex" data-typeset="1" tabindex="0" role="region" aria-label="{name}"'


def region_names(page_html: str) -> Callable[[int], str]:
    """For a formula at an offset of the page, a name no other formula of the page has:
    "formula under “Scores”", then "formula under “Scores”, 2" (the nearest heading above)."""
    headings = [
        (found.start(), html.unescape(TAG.sub("", found[1])).replace("¶", "").strip())
        for found in HEADING.finditer(page_html)
    ]
    given: dict[str, int] = {}

    def name(at: int) -> str:
        above = [text for start, text in headings if start < at and text]
        base = f"formula under “{above[-1]}”" if above else "formula"
        given[base] = given.get(base, 0) + 1
        return base if given[base] == 1 else f"{base}, {given[base]}"

    return name


def refusal(problem: str, tex: str, page: str, *, fix: str) -> InputError:
    """The error for a formula `page` shows, naming where it is written: the data file and
    entry that hold it (a template put it on the page), else the page and the formula."""
    written = written_in(tex)
    if written is None:
        return InputError(problem, file=page, entry=tex[:60], fix=fix)
    file, entry = written
    return InputError(f"{problem} (shown on {page})", file=file, entry=entry, fix=fix)


class Typesetter:
    """One V8 context with KaTeX loaded, started on first need; close() ends it (a live context
    keeps the Python process from exiting)."""

    def __init__(self, katex_js: bytes, store: Store | None = None) -> None:
        self.katex_js = katex_js
        self.store = store
        self.bundle = sha256_hex(katex_js)
        self._ctx: Any = None
        self._thread: ThreadPoolExecutor | None = None  # page_later's one thread (one V8 context)
        self._queued: list[Future[str]] = []  # page_later's pages, for close() to cancel
        self.typeset = 0  # pages typeset (not read from the store): new entries in it

    def _context(self) -> Any:
        if self._ctx is None:
            from py_mini_racer import MiniRacer

            ctx = MiniRacer()
            ctx.eval(self.katex_js.decode("utf-8"))
            ctx.eval(f"var OPTIONS = {json.dumps(OPTIONS)};{RENDER_ALL}")
            self._ctx = ctx
        return self._ctx

    def render(self, items: list[tuple[str, bool]], *, page: str = "a page") -> list[str]:
        """KaTeX's HTML for each (TeX, display?), in order."""
        for tex, _ in items:
            if len(tex) > LONGEST_TEX:
                raise refusal(
                    f"a formula of {len(tex):,} characters is longer than the {LONGEST_TEX:,} KaTeX"
                    " typesets in reasonable time",
                    tex,
                    page,
                    fix="split the formula, or show such data as a table or a generated file",
                )
        out = json.loads(self._context().call("itmRenderAll", [list(i) for i in items]))
        for (tex, _), result in zip(items, out, strict=True):
            if "error" in result:
                raise refusal(
                    f"KaTeX cannot typeset {tex!r}: {result['error']}",
                    tex,
                    page,
                    fix="correct the TeX (KaTeX's supported functions: katex.org/docs/supported)",
                )
        return [mark_mathml(result["html"]) for result in out]

    def _key(self, page_html: str) -> str:
        return key_of("katex-page", VERSION, self.bundle, OPTIONS, page_html)

    def _cached(self, page_html: str) -> str | None:
        """The page as typeset before (or as it is, with no math), else None."""
        if not MATH.search(page_html):
            return page_html
        if self.store is None:
            return None
        key = self._key(page_html)
        cached = self.store.get_entry("katex", key)
        if cached is not None:
            try:
                return cached.decode("utf-8")
            except UnicodeDecodeError:
                self.store.discard(self.store.entry_path("katex", key), "it is not UTF-8")
        return None

    def page_later(self, page_html: str, *, page: str = "a page") -> Future[str]:
        """`page()` on this typesetter's own thread; done at once when the store has the page."""
        cached = self._cached(page_html)
        if cached is not None:
            done: Future[str] = Future()
            done.set_result(cached)
            return done
        if self._thread is None:
            self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="katex")
        future = self._thread.submit(self.page, page_html, page=page)
        self._queued = [f for f in self._queued if not f.done()] + [future]
        return future

    def _typeset(self, items: list[tuple[str, bool]], *, page: str) -> list[str]:
        """Each formula's markup: from the store, else rendered (all missing ones in one call)."""
        keys = [key_of("katex-formula", VERSION, self.bundle, OPTIONS, tex, d) for tex, d in items]
        found: list[str | None] = [None] * len(items)
        if self.store is not None:
            for index, key in enumerate(keys):
                cached = self.store.get_entry("katex_formula", key)
                try:
                    found[index] = cached.decode("utf-8") if cached is not None else None
                except UnicodeDecodeError:
                    self.store.discard(self.store.entry_path("katex_formula", key), "not UTF-8")
        missing = [index for index, markup in enumerate(found) if markup is None]
        if missing:
            fresh = self.render([items[index] for index in missing], page=page)
            for index, markup in zip(missing, fresh, strict=True):
                found[index] = markup
                if self.store is not None:
                    self.store.put_entry("katex_formula", keys[index], markup.encode("utf-8"))
        return [markup for markup in found if markup is not None]

    def page(self, page_html: str, *, page: str = "a page") -> str:
        """The page with every arithmatex element typeset (marked data-typeset)."""
        cached = self._cached(page_html)
        if cached is not None:
            return cached
        items = formulas(page_html)
        key = self._key(page_html)
        rendered = iter(self._typeset(items, page=page))
        names = region_names(page_html)
        result = MATH.sub(
            lambda m: (
                f"<{m[1]} {typeset_attributes(m[1], names, m.start())}>{next(rendered)}</{m[1]}>"
            ),
            page_html,
        )
        if self.store is not None:
            self.store.put_entry("katex", key, result.encode("utf-8"))
        self.typeset += 1
        return result

    def close(self) -> None:
        """End the context on the thread that made it: V8 freed from another thread can crash
        the process (mini-racer 0.14 segfaults in mr_free_context)."""
        thread, self._thread = self._thread, None
        queued, self._queued = self._queued, []
        for future in queued:
            future.cancel()  # pages not started yet (a failed or interrupted build)
        if thread is not None:
            thread.submit(self._close_context)
            thread.shutdown()
        self._close_context()  # a context made on this thread (page() called directly)

    def _close_context(self) -> None:
        ctx, self._ctx = self._ctx, None
        if ctx is not None:
            ctx.close()

"""KaTeX's fonts cut down to the characters the site's formulas draw.

The math is typeset during the build, so every glyph a formula shows is in the built pages'
`.katex-html` spans, and no script typesets more later. A math page's first visit loaded about
55 KiB of KaTeX fonts (KaTeX_Main-Regular alone 26 KiB) for the hundred or so characters the
site's formulas use; cut to those characters, without hinting, they weigh about 22 KiB.
fontTools' subsetter does the cutting (woff2 through brotli); this module only gathers the
characters and keeps the result in the store, keyed by the font's bytes and the characters, so
a warm build cuts nothing.

A family no drawing uses (KaTeX_Fraktur when no formula writes \\mathfrak) is left whole, never
loaded by a browser: katex.css gives each family to a few classes, and a drawing that carries
none of them cannot use it. Cutting those too cost a cold build 0.5 s of CPU for nothing. Left
whole or cut, a font keeps every character drawn, so a class this reading misses costs bytes,
never a glyph.

The expanded tree (generator/expand.py) typesets in the browser and keeps the whole fonts.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterable
from html import unescape
from pathlib import Path

from generator.log import log
from generator.render.drawings import drawing_spans
from generator.store import Store, key_of, read_regular, sha256_hex

FONTS = "assets/katex/fonts"
CSS = "assets/katex/katex.min.css"  # the shipped stylesheet: which class draws in which family
MAX_FONT_BYTES = 1 << 20  # KaTeX's largest woff2 is 29 KB
MAX_PAGE_BYTES = 64 << 20  # a built page (the largest here: 270 KB)
TAG = re.compile(r"<[^>]*>")
CLASSES = re.compile(r'class="([^"]*)"')
RULE = re.compile(r"([^{}]*)\{([^{}]*)\}")  # a CSS rule: its selectors, its declarations
FAMILY = re.compile(r"font-family:\s*(KaTeX_\w+)")
MAX_CSS_BYTES = 1 << 20  # katex.min.css is 23 KB


def drawn(html: str) -> tuple[set[str], set[str]] | None:
    """The characters and the classes of the page's KaTeX drawings; None when one never ends
    (broken markup: what it draws is unknown)."""
    spans = drawing_spans(html)
    if spans is None:
        return None
    characters: set[str] = set()
    classes: set[str] = set()
    for at, end in spans:
        drawing = html[at:end]
        characters |= set(unescape(TAG.sub("", drawing)))
        classes.update(word for found in CLASSES.findall(drawing) for word in found.split())
    return characters, classes


def families_in_use(css: str, classes: set[str]) -> set[str]:
    """KaTeX_Main (every formula's own font), and each family that katex.css gives to one of
    `classes` (the classes the drawings carry)."""
    used = {"KaTeX_Main"}
    for selectors, declarations in RULE.findall(css):
        family = FAMILY.search(declarations)
        if family and classes & (set(re.findall(r"\.([\w-]+)", selectors)) - {"katex"}):
            used.add(family[1])
    return used


def subset_font(font: bytes, characters: Iterable[str]) -> bytes:
    """`font` (woff2) with only the glyphs of `characters` (and .notdef), as woff2."""
    from fontTools import subset
    from fontTools.ttLib import TTFont

    options = subset.Options()  # names 0-6 kept (the copyright among them)
    options.flavor = "woff2"
    options.layout_features = ["*"]
    options.notdef_outline = True
    options.hinting = False  # as Google Fonts serves all but old Windows: 10 KiB a math page
    cut = TTFont(io.BytesIO(font), recalcTimestamp=False)  # the same bytes on any day
    subsetter = subset.Subsetter(options)
    subsetter.populate(unicodes=sorted(ord(c) for c in characters))
    subsetter.subset(cut)
    out = io.BytesIO()
    cut.flavor = "woff2"
    cut.save(out)
    return out.getvalue()


def subset_site_fonts(site: Path, store: Store | None) -> None:
    """Cut every KaTeX font under site/assets/katex/fonts/ to what site's pages draw."""
    from fontTools import version

    subsetter = f"fontTools {version}, woff2, all layout features, no hinting"
    fonts = sorted((site / FONTS).glob("*.woff2"))
    if not fonts:
        return
    characters: set[str] = set()
    classes: set[str] = set()
    for page in sorted(site.rglob("*.html")):
        found = drawn(read_regular(page, MAX_PAGE_BYTES).decode("utf-8"))
        if found is None:
            log.warning(
                "Inside the Model: %s holds a KaTeX drawing that never ends; every KaTeX font is"
                " left whole (what it draws is unknown)",
                page.relative_to(site).as_posix(),
            )
            return
        characters |= found[0]
        classes |= found[1]
    every = "".join(sorted(characters))  # the key's part: all the characters drawn
    css = read_regular(site / CSS, MAX_CSS_BYTES).decode("utf-8")
    used = families_in_use(css, classes)
    for path in [font for font in fonts if font.name.split("-")[0] in used]:
        font = read_regular(path, MAX_FONT_BYTES)
        key = key_of("katex-font-subset", subsetter, sha256_hex(font), every)
        cut = store.get_entry("font", key) if store is not None else None
        if cut is None:
            cut = subset_font(font, characters)
            if store is not None:
                store.put_entry("font", key, cut)
        path.write_bytes(cut)

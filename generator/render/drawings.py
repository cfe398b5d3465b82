"""KaTeX's drawings in a built page: where each one is, and the page with them set aside.

A drawing is KaTeX's HTML rendering of a formula, `<span class="katex-html" aria-hidden="true">`
and all it holds: spans (and SVG) only, so counting spans finds its end. Search reads a formula
by its MathML with the drawings set aside (render/katex.py typesets them), and the fonts are cut
to the characters the drawings hold (render/katex_fonts.py).
"""

from __future__ import annotations

import re

DRAWING = '<span class="katex-html" aria-hidden="true">'
SPAN_TAG = re.compile(r"<span\b|</span>")
DRAWING_SET_ASIDE = "<!--itm-drawing-{}-->"  # a comment: search skips it


def drawing_spans(page_html: str) -> list[tuple[int, int]] | None:
    """(start, end) of each drawing of the page, in order; None when one never ends (not
    KaTeX's markup after all)."""
    found: list[tuple[int, int]] = []
    start = 0
    while (at := page_html.find(DRAWING, start)) >= 0:
        depth = 0
        for tag in SPAN_TAG.finditer(page_html, at):
            depth += -1 if tag[0] == "</span>" else 1
            if depth == 0:
                break
        else:
            return None
        found.append((at, tag.end()))
        start = tag.end()
    return found


def set_drawings_aside(page_html: str) -> tuple[str, list[str]]:
    """The page as search should read it, each formula's HTML drawing replaced by a comment
    (`put_drawings_back` restores them); its MathML stays, so search reads the formula.

    The drawing stacks a fraction's denominator before its numerator and pads with zero-width
    spaces, so its text reads out of order. `data-search-exclude` cannot drop it: Material's
    search parser compares elements by tag name, so an excluded <span> ends at the first inner
    </span>."""
    spans = drawing_spans(page_html)
    if not spans:
        return page_html, []  # none, or not KaTeX's markup after all: the page as it is
    out: list[str] = []
    start = 0
    for number, (at, end) in enumerate(spans):
        out += [page_html[start:at], DRAWING_SET_ASIDE.format(number)]
        start = end
    out.append(page_html[start:])
    return "".join(out), [page_html[at:end] for at, end in spans]


def put_drawings_back(page_html: str, drawings: list[str]) -> str:
    for number, drawing in enumerate(drawings):
        page_html = page_html.replace(DRAWING_SET_ASIDE.format(number), drawing, 1)
    return page_html

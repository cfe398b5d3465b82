"""KaTeX's fonts on the site are cut to the glyphs its formulas draw (generator/render/katex_fonts.py):
each font, read back by fontTools, keeps every character of the pinned font that some page's
drawing uses (as BeautifulSoup reads the built pages), and nothing the pinned font lacked; the
subsetter also keeps the characters of the parts composite glyphs are built from."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from generator.assets import katex_files, load_asset_pins
from generator.render.katex_fonts import FONTS, drawn_characters

ROOT = Path(__file__).resolve().parent.parent


def characters(font: bytes) -> set[int]:
    from fontTools.ttLib import TTFont

    return set(TTFont(io.BytesIO(font)).getBestCmap())


def drawn_on(html: str) -> set[str]:
    soup = BeautifulSoup(html, "html.parser")
    return {c for span in soup.select(".katex-html") for c in span.get_text()}


@pytest.mark.slow
def test_each_font_keeps_every_character_the_pages_draw(built_site: Path) -> None:
    pages = [p.read_text(encoding="utf-8") for p in built_site.rglob("*.html")]
    drawn = {ord(c) for html in pages for c in drawn_on(html)}
    cache = Path(os.environ.get("ITM_CACHE_DIR", ROOT / ".cache"))
    _, pinned = katex_files(load_asset_pins(ROOT)["katex"], cache, offline=True)
    fonts = sorted((built_site / FONTS).glob("*.woff2"))
    assert len(fonts) == len([p for p in pinned if p.endswith(".woff2")]) > 10
    for path in fonts:
        whole = pinned[f"{FONTS}/{path.name}"]
        kept, pinned_characters = characters(path.read_bytes()), characters(whole)
        assert pinned_characters & drawn <= kept <= pinned_characters, path.name
    main = built_site / FONTS / "KaTeX_Main-Regular.woff2"
    assert main.stat().st_size < len(pinned[f"{FONTS}/KaTeX_Main-Regular.woff2"]) / 2


def test_drawn_characters_read_each_drawing_whole_and_nothing_around_it() -> None:
    html = (
        '<p>prose ∑</p><span class="katex"><span class="katex-mathml">mathml μ</span>'
        '<span class="katex-html" aria-hidden="true"><span class="base"><span>x</span>'
        '<span class="mord">&amp;</span></span><span>σ</span></span></span><p>after ω</p>'
    )
    assert drawn_characters(html) == drawn_on(html) == {"x", "&", "σ"}

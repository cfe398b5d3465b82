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
from generator.render.katex_fonts import FONTS, drawn, families_in_use

ROOT = Path(__file__).resolve().parent.parent
CACHE = Path(os.environ.get("ITM_CACHE_DIR", ROOT / ".cache"))


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
    _, pinned = katex_files(load_asset_pins(ROOT)["katex"], CACHE, offline=True)
    fonts = sorted((built_site / FONTS).glob("*.woff2"))
    assert len(fonts) == len([p for p in pinned if p.endswith(".woff2")]) > 10
    for path in fonts:
        whole = pinned[f"{FONTS}/{path.name}"]
        kept, pinned_characters = characters(path.read_bytes()), characters(whole)
        assert pinned_characters & drawn <= kept <= pinned_characters, path.name
    main = built_site / FONTS / "KaTeX_Main-Regular.woff2"
    assert main.stat().st_size < len(pinned[f"{FONTS}/KaTeX_Main-Regular.woff2"]) / 2
    # a family some drawing uses is cut; one none uses is left as pinned (no browser loads it)
    soup = BeautifulSoup("".join(pages), "html.parser")
    classes = {
        c
        for span in soup.select(".katex-html")
        for e in span.find_all()
        for c in e.get("class", [])
    }
    used = families_in_use(pinned["assets/katex/katex.min.css"].decode(), classes)
    assert {"KaTeX_Main", "KaTeX_Math", "KaTeX_Size1"} <= used
    for path in fonts:
        cut = path.read_bytes() != pinned[f"{FONTS}/{path.name}"]
        assert cut == (path.name.split("-")[0] in used), path.name


def test_a_family_is_in_use_when_a_drawing_carries_a_class_katex_css_gives_it() -> None:
    _, pinned = katex_files(load_asset_pins(ROOT)["katex"], CACHE, offline=True)
    css = pinned["assets/katex/katex.min.css"].decode()
    assert families_in_use(css, set()) == {"KaTeX_Main"}
    assert families_in_use(css, {"mord", "mathnormal"}) == {"KaTeX_Main", "KaTeX_Math"}
    assert families_in_use(css, {"mathfrak"}) == {"KaTeX_Main", "KaTeX_Fraktur"}
    assert "KaTeX_Size3" in families_in_use(css, {"delimsizing", "size3"})
    assert families_in_use(css, {"katex"}) == {"KaTeX_Main"}  # the formula's own span


def test_drawn_characters_read_each_drawing_whole_and_nothing_around_it() -> None:
    html = (
        '<p>prose ∑</p><span class="katex"><span class="katex-mathml">mathml μ</span>'
        '<span class="katex-html" aria-hidden="true"><span class="base"><span>x</span>'
        '<span class="mord">&amp;</span></span><span>σ</span></span></span><p>after ω</p>'
    )
    found = drawn(html)
    assert found is not None and found[0] == drawn_on(html) == {"x", "&", "σ"}


@pytest.mark.parametrize("closed", [True, False])
def test_a_drawing_that_never_ends_leaves_every_font_whole(
    tmp_path: Path, closed: bool, caplog: pytest.LogCaptureFixture
) -> None:
    from generator.render.katex_fonts import CSS, subset_site_fonts

    _, pinned = katex_files(load_asset_pins(ROOT)["katex"], CACHE, offline=True)
    name = f"{FONTS}/KaTeX_Main-Regular.woff2"
    for path in (name, CSS):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_bytes(pinned[path])
    drawing = '<span class="katex-html" aria-hidden="true"><span class="mord">x</span>'
    (tmp_path / "index.html").write_text(drawing + ("</span>" if closed else ""))
    subset_site_fonts(tmp_path, None)
    cut = (tmp_path / name).read_bytes() != pinned[name]
    assert cut == closed  # cut to "x" when the drawing is whole; else left as pinned
    said = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert said == (
        []
        if closed
        else [
            "Inside the Model: index.html holds a KaTeX drawing that"
            " never ends; every KaTeX font is left whole (what it draws is unknown)"
        ]
    )

"""Math typeset at build time (generator/render/katex.py): KaTeX's own output from the pinned
bundle, \\htmlData kept as data-light, a bad formula named, and a warm page served from the store."""

from __future__ import annotations

import pytest

from generator.errors import InputError
from generator.render.drawings import put_drawings_back, set_drawings_aside
from generator.render.katex import Typesetter, formulas
from generator.settings import Settings
from generator.store import Store
from tests.site_helpers import ROOT

PAGE = (
    '<p>Inline <span class="arithmatex">\\(a &lt; b\\)</span> and</p>\n'
    '<div class="arithmatex">\\[\n\\htmlData{light=mlp}{\\mathrm{MLP}}(x)\n\\]</div>\n'
)


@pytest.fixture(scope="module")
def katex_js() -> bytes:
    from generator.assets import load_asset_pins, package_files

    settings = Settings.load(ROOT)
    files = package_files(load_asset_pins(ROOT)["katex"], settings.cache_dir, offline=True)
    return files["katex.min.js"]


def test_formulas_are_unescaped_and_stripped_of_delimiters() -> None:
    assert formulas(PAGE) == [("a < b", False), ("\\htmlData{light=mlp}{\\mathrm{MLP}}(x)", True)]


def test_page_is_typeset_with_data_light_and_cached(tmp_path, katex_js) -> None:
    store = Store(tmp_path)
    typesetter = Typesetter(katex_js, store)
    try:
        out = typesetter.page(PAGE, page="docs/x.md")
    finally:
        typesetter.close()
    assert out.count('data-typeset="1"') == 2
    assert 'class="katex-display"' in out and 'data-light="mlp"' in out
    assert "\\(" not in out.replace("application/x-tex", "")  # only inside the MathML annotation
    assert 'x-tex" data-search-exclude' in out  # search never reads the TeX annotation
    # Search reads the page with each drawing set aside (its MathML reads in order); the page
    # gets every drawing back, byte for byte.
    searched, drawings = set_drawings_aside(out)
    assert len(drawings) == 2 and "katex-html" not in searched and "<math" in searched
    assert put_drawings_back(searched, drawings) == out
    # A second typesetter finds the page in the store and never starts an engine.
    again = Typesetter(katex_js, store)
    again._context = lambda: pytest.fail("the engine was started for a cached page")  # type: ignore[method-assign]
    assert again.page(PAGE, page="docs/x.md") == out


def test_a_page_whose_prose_changed_is_typeset_from_the_formulas_in_the_store(
    tmp_path, katex_js
) -> None:
    """An edit to a page's words (under `mkdocs serve`) changes its HTML but not its formulas:
    they come from the store, and no engine starts; a new formula is rendered on its own."""
    store = Store(tmp_path)
    first = Typesetter(katex_js, store)
    try:
        out = first.page(PAGE, page="docs/x.md")
    finally:
        first.close()
    edited = PAGE.replace("Inline", "Edited inline")
    again = Typesetter(katex_js, store)
    again._context = lambda: pytest.fail("the engine was started for known formulas")  # type: ignore[method-assign]
    assert again.page(edited, page="docs/x.md") == out.replace("Inline", "Edited inline")

    extended = edited + '<p><span class="arithmatex">\\(c^2\\)</span></p>\n'
    rendered: list[list[tuple[str, bool]]] = []
    third = Typesetter(katex_js, store)
    real_render = third.render

    def counting(items, *, page="a page"):
        rendered.append(items)
        return real_render(items, page=page)

    third.render = counting  # type: ignore[method-assign]
    try:
        assert third.page(extended, page="docs/x.md").count('data-typeset="1"') == 3
    finally:
        third.close()
    assert rendered == [[("c^2", False)]]


def test_a_formula_katex_cannot_parse_names_the_page(katex_js) -> None:
    typesetter = Typesetter(katex_js)
    try:
        with pytest.raises(InputError) as caught:
            typesetter.page('<span class="arithmatex">\\(\\frac{1}\\)</span>', page="docs/bad.md")
    finally:
        typesetter.close()
    assert caught.value.file == "docs/bad.md" and "KaTeX" in caught.value.problem


def as_page(markdown_text: str) -> str:
    """The HTML MkDocs makes of Markdown with math (arithmatex in generic mode, as mkdocs.yml)."""
    import markdown

    config = {"pymdownx.arithmatex": {"generic": True}}
    return markdown.markdown(
        markdown_text, extensions=["pymdownx.arithmatex"], extension_configs=config
    )


@pytest.mark.parametrize(
    ("name", "entry", "shown"),
    [
        ("steps", "attention.steps[2].formula", "$$\n{tex}\n$$"),  # walkthrough_step.html
        ("steps", "rotary.steps[1].text", "Pair $i$ turns, ${tex}$, fast."),  # in the step's words
        ("glossary", "notation.gpt2.symbols[3].tex", "\\({tex}\\)"),  # glossary.html
    ],
)
def test_a_formula_written_in_a_data_file_is_named_in_it(
    tmp_path, monkeypatch, katex_js, name: str, entry: str, shown: str
) -> None:
    """A bad formula of steps.toml or glossary.toml was named on the page that shows it
    (docs/walkthrough/attention.md), so a writer searched the wrong file for it."""
    import tomllib

    import tomli_w

    from generator import data_file, glossary
    from generator.walkthrough import steps

    monkeypatch.setattr(data_file, "_TEXTS", dict(data_file._TEXTS))  # this test's reads only
    source, read = {
        "steps": (steps.STEPS_FILE, steps.read_steps),
        "glossary": (glossary.GLOSSARY_FILE, glossary.read_glossary),
    }[name]
    tex = "\\frac{d_\\text{head}}"  # one argument short
    data = tomllib.loads(source.read_text("utf-8"))
    table: dict = data
    *path, field = entry.replace("[", ".").replace("]", "").split(".")
    for key in path:
        table = table[int(key)] if key.isdigit() else table[key]  # type: ignore[index]
    table[field] = shown.format(tex=tex)
    copy = tmp_path / source.name
    copy.write_text(tomli_w.dumps(data), "utf-8")
    read(copy)
    typesetter = Typesetter(katex_js)
    try:
        with pytest.raises(InputError) as caught:
            typesetter.page(as_page(shown.format(tex=tex)), page="docs/walkthrough/attention.md")
    finally:
        typesetter.close()
    error = caught.value
    assert (error.file, error.entry) == (str(copy), entry)
    assert "(shown on docs/walkthrough/attention.md)" in error.problem and "KaTeX" in error.fix


def test_a_formula_too_long_to_typeset_is_refused_before_katex_runs(katex_js) -> None:
    """A 2 MB formula kept KaTeX busy past the 2-minute limit (its time grows faster than the
    length); the build must refuse it at once, naming the page and the formula."""
    tex = "x+" * 10_000 + "x"  # 20,001 characters: about 1 s in KaTeX here, 2 MB ran for minutes
    typesetter = Typesetter(katex_js)
    typesetter._ctx = object()  # V8 must not be reached: any call on this fails
    with pytest.raises(InputError) as caught:
        typesetter.page(f'<div class="arithmatex">\\[{tex}\\]</div>', page="docs/long.md")
    assert caught.value.file == "docs/long.md" and caught.value.entry == tex[:60]
    assert f"{len(tex):,} characters" in caught.value.problem


@pytest.mark.parametrize(
    "tex",
    [
        "\\href{https://example.com}{x}",
        "\\url{https://example.com}",
        "\\includegraphics{a.png}",
        "\\htmlId{here}{x}",
        "\\htmlClass{c}{x}",
        "\\htmlStyle{color: red}{x}",
    ],
)
def test_a_command_the_site_does_not_trust_stops_the_build(katex_js, tex: str) -> None:
    """KaTeX prints an untrusted command as red text and throws nothing: such a page was
    published with exit 0. The build must stop, naming the page and the formula."""
    typesetter = Typesetter(katex_js)
    try:
        with pytest.raises(InputError) as caught:
            typesetter.page(f'<span class="arithmatex">\\({tex}\\)</span>', page="docs/x.md")
        # the trusted command still typesets beside them
        typesetter.page('<span class="arithmatex">\\(\\htmlData{light=a}{x}\\)</span>')
    finally:
        typesetter.close()
    command = tex.split("{")[0]
    assert caught.value.file == "docs/x.md" and caught.value.entry == tex[:60]
    assert f"{command} is not allowed" in caught.value.problem


@pytest.mark.parametrize(
    "tex",
    ["\\rule{100000em}{100000em}", "x\\kern{5000em}y", "x\\hspace{300cm}y", "\\rule{1em}{99999pt}"],
)
def test_a_size_a_formula_states_is_capped(katex_js, tex: str) -> None:
    """KaTeX leaves stated sizes unbounded by default: \\rule{100000em}{100000em} drew a box
    100,000 ems wide over the page. Every size in the markup stays within maxSize ems."""
    import re

    from generator.render.katex import MAX_SIZE_EM

    typesetter = Typesetter(katex_js)
    try:
        out = typesetter.page(f'<span class="arithmatex">\\({tex}\\)</span>', page="docs/x.md")
    finally:
        typesetter.close()
    drawn = " ".join(re.findall(r'style="([^"]*)"', out))  # what the browser lays out
    sizes = [float(n) for n in re.findall(r"(-?[0-9.]+)em", drawn)]
    assert sizes and max(abs(n) for n in sizes) <= MAX_SIZE_EM
    assert f":{MAX_SIZE_EM}em" in drawn  # the stated size was cut to the cap, not dropped


CLOSED_ON_ANOTHER_THREAD = """
import sys
from pathlib import Path
from generator.render.katex import Typesetter

typesetter = Typesetter(Path(sys.argv[1]).read_bytes(), None)
page = sys.argv[2]
for number in range(3):  # typeset on the typesetter's thread, as a build does
    typesetter.page_later(page + f"<p>{number}</p>").result()
typesetter.close()  # from the build's thread
print("closed")
"""


def test_a_typesetter_closed_by_the_build_thread_ends_cleanly(tmp_path, katex_js) -> None:
    """The V8 context lives on the typesetter's thread: freeing it from the build's thread made
    mini-racer segfault, so every cold build died at its end (exit -11)."""
    import subprocess
    import sys

    bundle = tmp_path / "katex.min.js"
    bundle.write_bytes(katex_js)
    done = subprocess.run(
        [sys.executable, "-c", CLOSED_ON_ANOTHER_THREAD, str(bundle), PAGE],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert (done.returncode, done.stdout) == (0, "closed\n"), done.stderr[-2000:]

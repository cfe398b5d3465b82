"""A careful reader in a real Chromium: search, keyboard, colour schemes, typeset math."""

from __future__ import annotations

import re

import pytest

from tests.browser_helpers import open_page

pytestmark = pytest.mark.browser


def search(page, query: str) -> list[str]:
    """Type `query` into Material's search as a reader does ("/" focuses it); the results' hrefs."""
    page.keyboard.press("/")
    page.keyboard.press("Control+A")
    page.keyboard.type(query, delay=20)
    page.wait_for_function(
        "(() => { const m = document.querySelector('.md-search-result__meta'); "
        "return m && /matching|No matching/.test(m.textContent); })()"
    )
    return page.eval_on_selector_all(
        ".md-search-result__item > a", "els => els.map(e => e.getAttribute('href'))"
    )


def test_search_works_with_only_the_files_the_site_ships(browser, site_url: str) -> None:
    page, _ = open_page(browser, site_url)
    failed: list[str] = []
    page.on("response", lambda r: r.status >= 400 and failed.append(f"{r.status} {r.url}"))
    hits = search(page, "LayerNorm")
    assert any("components/layernorm/" in h for h in hits), hits
    assert failed == []
    page.context.close()


def test_search_loads_only_when_the_reader_reaches_for_it(browser, site_url: str) -> None:
    """A first visit fetches neither the search index (the largest file of a visit) nor the
    search worker; "/" then typing at once finds pages, once they have loaded."""
    page, record = open_page(browser, site_url + "components/attention/")
    page.wait_for_load_state("networkidle")
    searched = [u for u in record["requests"] if "/search/" in u or "/workers/search." in u]
    assert searched == []
    hits = search(page, "LayerNorm")
    assert any("components/layernorm/" in h for h in hits), hits
    assert any(u.endswith("/search/search_index.json") for u in record["requests"])
    assert record["errors"] == []
    page.context.close()


def test_search_loads_after_an_instant_navigation_to_a_deeper_page(browser, site_url: str) -> None:
    """Search first reached for after an instant navigation from the home page to a page two
    folders down still starts its worker (its URL was resolved against the new address: 404)."""
    page, record = open_page(browser, site_url)
    failed: list[str] = []
    page.on("response", lambda r: r.status >= 400 and failed.append(f"{r.status} {r.url}"))
    page.evaluate("window.notReloaded = true")
    page.locator("a[href$='components/attention/']").filter(visible=True).first.click()
    page.wait_for_url("**/components/attention/")
    assert page.evaluate("window.notReloaded === true")  # an instant navigation, not a load
    hits = search(page, "LayerNorm")
    assert any("components/layernorm/" in h for h in hits), hits
    assert failed == [] and record["errors"] == []
    page.context.close()


def test_math_is_typeset_in_the_html_and_no_math_script_runs(browser, site_url: str) -> None:
    """With JavaScript off the attention page shows KaTeX's output, not TeX; with it on, no
    KaTeX script is requested, and hovering a formula symbol still lights its diagram box."""
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.goto(site_url + "components/attention/")
    article = page.locator("article")
    assert article.locator(".katex").count() >= 3
    text = article.inner_text()
    assert "\\htmlData" not in text and "\\(" not in text and "\\[" not in text
    context.close()

    page, record = open_page(browser, site_url + "components/block/")
    assert not [u for u in record["requests"] if u.endswith(".js") and "katex" in u]
    # A symbol on a formula's second line (MLP, after ln_2) lights its box in the diagram.
    symbol = page.locator('.arithmatex [data-light="mlp"]').first
    symbol.hover()
    lit = page.eval_on_selector_all(".is-lit", "els => els.map(e => e.dataset.light)")
    assert lit and set(lit) == {"mlp"}, lit
    page.context.close()


def test_search_snippets_hold_text_not_tex(built_site) -> None:
    import json

    index = json.loads((built_site / "search" / "search_index.json").read_text(encoding="utf-8"))
    texts = " ".join(doc["text"] for doc in index["docs"])
    for tex in ("\\htmlData", "\\(", "\\[", "\\frac", "\\mathrm"):
        assert tex not in texts, tex
    # The map's labels and the size tabs' labels are not run together.
    assert "stream++token" not in texts
    assert "GPT-2 smallGPT-2" not in texts
    # A formula reads once, in order (KaTeX's drawing put a fraction's denominator first and
    # padded with zero-width spaces): S' = S / sqrt(d_head) on the walkthrough's step 3.
    step3 = next(
        d["text"]
        for d in index["docs"]
        if d["location"].endswith("walkthrough/attention/#step-3-title")  # GPT-2's, not RoPE's
    )
    assert "S′=Sdhead" in step3 and step3.count("S′=") == 1, step3
    assert "\u200b" not in texts
    assert not any(c in texts for c in "\u2061\u2062\u2063\u2064"), "invisible operators"
    # The call site's learned/fixed tag does not run into the code beside it.
    assert "learned<code>" not in texts and "fixed<code>" not in texts


def test_search_finds_the_abbreviations_readers_type(browser, site_url: str) -> None:
    """GQA, MoE, SWA, KV cache, GEMM, SiLU, BPE: each typed into search finds its definition on
    the Notation page (GQA found one section, MoE none: neither page spelled them out)."""
    from generator.glossary import TERMS

    page, _ = open_page(browser, site_url)
    for query in ("GQA", "MoE", "SWA", "KV cache", "GEMM", "SiLU", "BPE", "MQA"):
        term = next(t for t in TERMS if re.search(t.pattern, query) or query in t.name)
        hits = search(page, query)
        assert any(h.endswith(f"glossary/#term-{term.anchor}") for h in hits[:3]), (query, hits)
    page.context.close()


def test_search_finds_numbers_without_commas_and_code_names(browser, site_url: str) -> None:
    """GPT-2 small's attention parameters, typed without separators, find the attention page;
    c_attn finds the walkthrough and the quoted code, not only the attention page."""
    from generator import accounting
    from generator.config import CONFIGS

    params = accounting.params_per_instance(CONFIGS["gpt2"], "attention")
    page, _ = open_page(browser, site_url)
    hits = search(page, str(params))
    assert any("components/attention/" in h for h in hits), (params, hits)
    hits = search(page, "c_attn")
    assert any("walkthrough/attention/" in h for h in hits), hits
    assert any("sources/" in h for h in hits), hits
    page.context.close()


def test_a_number_typed_as_printed_finds_the_pages_that_print_it(
    browser, site_url: str, built_site
) -> None:
    """GPT-2 small's attention parameters typed with their commas ("2,362,368", as the page
    prints them) rank first a page that prints them, and every result prints them: the commas
    once split the query into "2", "362" and "368", and pages holding only 362 and 368 (with a
    "Missing: 362 368" note) came first, the attention page tenth."""
    from generator import accounting
    from generator.config import CONFIGS
    from generator.render.numbers import fmt_int

    printed = fmt_int(accounting.params_per_instance(CONFIGS["gpt2"], "attention"))
    assert "," in printed
    page, _ = open_page(browser, site_url)
    hits = search(page, printed)
    assert hits, printed
    assert "components/attention/" in hits[0], hits
    for href in hits:
        path = href.split("#")[0].removeprefix(site_url).lstrip("./").removesuffix("/")
        html = built_site / path / "index.html" if path else built_site / "index.html"
        assert printed in html.read_text(encoding="utf-8"), (href, hits)
    page.context.close()


WALKTHROUGH = "walkthrough/attention/"
READY = '.itm-wt[data-wt-ready="ready"]'


def walkthrough(browser, site_url: str, fragment: str = ""):
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    from tests.browser_helpers import recorded

    return recorded(context, site_url + WALKTHROUGH + fragment, wait=READY)


def test_a_step_titles_link_opens_that_step(browser, site_url: str) -> None:
    """#step-5-title (the heading's ¶ link, the phone TOC, search results) shows step 5."""
    page, _ = walkthrough(browser, site_url, "#step-5-title")
    current = page.locator(".itm-wt__step.is-current")
    assert current.get_attribute("data-step") == "5"
    box = current.locator(".itm-wt__title").bounding_box()
    assert box is not None and 0 <= box["y"] < 800
    page.context.close()


def test_next_brings_the_grids_into_view_and_keeps_focus(browser, site_url: str) -> None:
    """At 1280×800 each Next shows the new step's first grid on screen; Enter on Next through
    to the last step never drops focus to <body>."""
    page, _ = walkthrough(browser, site_url)
    page.locator('[data-wt-go="1"]').focus()
    for step in range(2, 8):
        page.keyboard.press("Enter")
        current = page.locator(".itm-wt__step.is-current")
        assert current.get_attribute("data-step") == str(step)
        grid = current.locator("table.itm-wt-grid").first.bounding_box()
        assert grid is not None and 0 <= grid["y"] < 800, (step, grid)
        assert page.evaluate("document.activeElement !== document.body"), step
    page.context.close()


def test_code_line_numbers_are_not_tab_stops(browser, site_url: str) -> None:
    page, _ = walkthrough(browser, site_url)
    stops = page.eval_on_selector_all(
        ".linenodiv a, .linenos a", "els => els.filter(e => e.tabIndex >= 0).length"
    )
    assert page.locator(".linenodiv a").count() > 50 and stops == 0
    page.context.close()


# (width, the scheme the system prefers, JavaScript on): every page once in each. Without
# JavaScript the page shows Material's light scheme whatever the system prefers, so one setup a
# width covers both schemes (the second asks for dark and checks the page is light).
SETUPS = [
    (1280, "light", True),
    (1280, "dark", True),
    (375, "light", True),
    (375, "dark", True),
    (1280, "light", False),
    (375, "dark", False),
]


@pytest.mark.parametrize(
    ("width", "scheme", "scripts"),
    SETUPS,
    ids=[f"{w}-{s}{'' if js else '-nojs'}" for w, s, js in SETUPS],
)
def test_every_page_is_clean_accessible_and_fits_at_both_widths_in_both_schemes(
    browser_args: list[str], site_url: str, width: int, scheme: str, scripts: bool
) -> None:
    """Every page (the whole page: header, search, footer), at a desktop width and on a 375 px
    phone, light and dark (the scheme the system prefers, with a toggle back), with JavaScript
    on and off: no console error, no request off the site, no KaTeX error, nothing wider than
    the viewport, and no violation of the pinned axe-core (tests/axe_helpers.py: the newest
    4.x), of any impact, its experimental rules included (label-content-name-mismatch: a map
    box's name holds its visible text, parentheses aside; landmark-unique;
    scrollable-region-focusable: each sideways scroller can be focused, without JavaScript
    too; aria-hidden-focus: nothing in KaTeX's hidden drawing is a tab stop;
    focus-order-semantics)."""
    from tests.page_sweep import sweep
    from tests.test_site_pages import nav_pages

    pages = nav_pages()
    assert len(pages) > 20
    found = sweep(site_url, pages, width=width, scheme=scheme, args=browser_args, scripts=scripts)
    assert found == []


def test_every_custom_colour_comes_from_a_css_variable() -> None:
    """Colours are written once, as variables with a light and a dark value (site.css)."""
    import re

    from tests.site_helpers import ROOT

    literal = re.compile(r"#[0-9a-fA-F]{3,8}\b|rgba?\(")
    found = []
    for css in sorted((ROOT / "docs" / "assets").glob("*.css")):
        for number, line in enumerate(css.read_text(encoding="utf-8").splitlines(), 1):
            declarations = [d for d in line.split(";") if literal.search(d)]
            found += [
                f"{css.name}:{number}: {d.strip()}"
                for d in declarations
                if not d.strip().startswith("--")
                and "--md-code-hl-" not in d
                and not re.search(r"\{\s*--", d)
            ]
    assert found == []


TAB_SETS = """() => [...document.querySelectorAll('article .tabbed-set')]
  .filter(set => set.offsetParent !== null)
  .map(set => {
    const strip = set.querySelector(':scope > .tabbed-labels');
    const labels = [...strip.querySelectorAll(':scope > label')];
    const checked = labels[[...set.querySelectorAll(':scope > input')]
      .indexOf(set.querySelector(':scope > input:checked'))];
    const style = getComputedStyle(strip);
    return {texts: labels.map(l => l.textContent.trim()),
            rows: new Set(labels.map(l => l.offsetTop)).size,
            overflows: strip.scrollWidth > strip.clientWidth + 1,
            // Material's sliding underline: where it is drawn, and the checked label's box
            bar: [parseFloat(style.getPropertyValue('--md-indicator-x')),
                  parseFloat(style.getPropertyValue('--md-indicator-width'))],
            label: [checked.offsetLeft, checked.offsetWidth]};
  })"""

SIZES = ["GPT-2 small", "GPT-2 medium", "GPT-2 large", "GPT-2 XL"]


def test_tab_labels_keep_one_row_and_the_size_tabs_fit_beside_the_map_and_on_a_phone(
    browser, site_url: str
) -> None:
    """At 1280 px (the header's size tabs sit beside the map) and on a 375 px phone, every tab set
    keeps its labels on one row, the four size labels fit without scrolling, and Material's
    underline sits under the chosen label (it slid under the wrong one once labels wrapped)."""
    for width, pick in ((1280, "GPT-2 medium"), (375, "GPT-2 XL")):
        context = browser.new_context(viewport={"width": width, "height": 800})
        page = context.new_page()
        for path in ("components/attention/", "components/layernorm/", "generation/"):
            page.goto(site_url + path, wait_until="networkidle")
            page.locator("article .tabbed-labels > label", has_text=pick).first.click()
            page.wait_for_timeout(400)  # the underline's 225 ms slide
            sets = page.evaluate(TAB_SETS)
            assert any(s["texts"] == SIZES for s in sets), (width, path)
            for tab_set in sets:
                assert tab_set["rows"] == 1, (width, path, tab_set)
                if tab_set["texts"] == SIZES:
                    assert not tab_set["overflows"], (width, path, tab_set)
                    assert tab_set["bar"] == pytest.approx(tab_set["label"], abs=1), tab_set
        context.close()


def test_a_tab_set_too_wide_for_a_phone_scrolls_and_the_keyboard_brings_its_labels_into_view(
    browser, site_url: str
) -> None:
    """The generation page's five model.py excerpts cannot fit 375 px: their labels scroll on one
    row with Material's arrow, and arrow keys on the focused tab bring the chosen label into view."""
    context = browser.new_context(viewport={"width": 375, "height": 800})
    page = context.new_page()
    page.goto(site_url + "generation/", wait_until="networkidle")
    widest = page.evaluate(
        """() => [...document.querySelectorAll('article .tabbed-set')].findIndex(set =>
             set.querySelector('.tabbed-labels').scrollWidth >
             set.querySelector('.tabbed-labels').clientWidth + 1)"""
    )
    assert widest >= 0, "no tab set overflows at 375 px: the case this test is about"
    tab_set = page.locator("article .tabbed-set").nth(widest)
    assert tab_set.locator(".tabbed-control--next").is_visible()
    tab_set.locator("> input").first.focus()
    count = tab_set.locator("> input").count()
    for _ in range(count - 1):
        page.keyboard.press("ArrowRight")
    page.wait_for_timeout(600)  # Material scrolls the strip smoothly
    assert tab_set.locator("> input").nth(count - 1).is_checked()
    inside = tab_set.evaluate(
        """set => { const strip = set.querySelector('.tabbed-labels').getBoundingClientRect();
                    const last = set.querySelector('.tabbed-labels > label:last-child')
                      .getBoundingClientRect();
                    return last.left >= strip.left - 1 && last.right <= strip.right + 1; }"""
    )
    assert inside
    context.close()


def test_gpt2_sizes_mode_leaves_nothing_of_the_toy_on_screen(browser, site_url: str) -> None:
    page, _ = walkthrough(browser, site_url, "#step-6")
    page.locator('input[name="itm-wt-scale"][value="big"]').check()
    for selector in (".itm-wt-head", ".itm-wt-note", ".itm-wt-legend", "[data-wt-panel]"):
        assert not page.locator(selector).first.is_visible(), selector
    text = page.locator(".itm-wt").inner_text()
    assert "side panel" not in text
    dims = page.locator(".itm-wt-dims dd").first.inner_text()
    assert dims.startswith("GPT-2"), dims  # the toy's 5 tokens are hidden with the toy
    # No step's words speak of the toy ("4 here", "the toy has no biases", "2 heads of 4
    # columns"), and the title line drops the toy's "block 0 · head 0".
    import re

    toy_words = re.compile(r"\btoy\b|\bhere,|\b2 heads\b")  # "4 here, 64 in GPT-2"
    for step in range(1, 8):
        page.locator(f'[data-wt-step="{step}"]').click()
        current = page.locator(".itm-wt__step.is-current")
        words = current.locator(".itm-wt__text").inner_text()
        words += "\n" + current.locator(".itm-wt__fig").evaluate_all(
            "els => els.filter(e => e.checkVisibility()).map(e => e.innerText).join(' ')"
        )
        assert not toy_words.search(words), (step, words)
    sub = page.locator(".itm-wt-sub").inner_text()
    assert "block" not in sub and "head" not in sub, sub
    page.locator('input[name="itm-wt-scale"][value="toy"]').check()
    assert "block 0 · head 0" in page.locator(".itm-wt-sub").inner_text()
    page.context.close()


def test_the_keyboard_lights_formula_symbols_from_the_map_and_never_tabs_into_hidden_math(
    browser, site_url: str
) -> None:
    """Tab onto a map box and the formula's symbols of the same component light with it. The
    symbols themselves are no tab stops: they sit in KaTeX's drawing, hidden from screen
    readers, where a focused element is announced as nothing (axe: aria-hidden-focus)."""
    page, _ = open_page(browser, site_url + "components/block/")
    hidden_stops = page.eval_on_selector_all(
        "[aria-hidden='true'] [tabindex]", "els => els.filter(e => e.tabIndex >= 0).length"
    )
    assert hidden_stops == 0
    page.locator("h1").first.click()
    for _ in range(200):  # Tab from the title until a box with a symbol in a formula has focus
        page.keyboard.press("Tab")
        key = page.evaluate("document.activeElement.dataset.light || ''")
        if key and page.locator(f'.arithmatex [data-light="{key}"]').count():
            break
    assert key, "no map box of a component the formula names is reached by Tab"
    assert page.evaluate("document.activeElement.matches('a.itm-map__box')")
    lit = page.eval_on_selector_all(".is-lit", "els => els.map(e => e.dataset.light)")
    assert set(lit) == {key}, (key, lit)
    assert page.locator(f'.arithmatex .is-lit[data-light="{key}"]').count() >= 1
    page.context.close()


FITS = """() => [...document.querySelectorAll('.itm-map__box:not(.itm-map__box--frame):not(.itm-map__box--add)')]
  .filter(b => b.offsetParent !== null)
  .filter(b => { const s = b.querySelector('span'); const r = s.getBoundingClientRect();
                 const box = b.getBoundingClientRect();
                 return r.width > box.width + 1 || r.height > box.height + 1; })
  .map(b => b.textContent)"""


def test_map_labels_fit_their_boxes_in_the_header_and_in_print(browser, site_url: str) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    for path in ("components/model/", "components/unembedding/", ""):
        page.goto(site_url + path, wait_until="networkidle")
        assert page.evaluate(FITS) == [], path
        page.emulate_media(media="print")
        assert page.evaluate(FITS) == [], f"print {path}"
        page.emulate_media(media="screen")
    context.close()


def test_choosing_a_file_in_one_code_tab_set_chooses_it_in_every_set(
    browser, site_url: str
) -> None:
    page, _ = open_page(browser, site_url + "components/attention/")
    page.locator("article .tabbed-labels > label", has_text="modeling_gpt2.py").first.click()
    chosen = page.evaluate(
        """[...document.querySelectorAll('article .tabbed-set')].map(set => {
             const input = set.querySelector(':scope > input:checked');
             const label = set.querySelector(`:scope > .tabbed-labels > label[for="${input.id}"]`);
             const files = [...set.querySelectorAll(':scope > .tabbed-labels > label')]
               .map(l => l.textContent.trim());
             return [label.textContent.trim(), files.some(f => f.startsWith('modeling_gpt2.py'))];
           })"""
    )
    assert sum(1 for _, has_file in chosen if has_file) >= 2, chosen
    for label, has_file in chosen:
        if has_file:
            assert label.startswith("modeling_gpt2.py"), chosen
    page.context.close()


def test_a_map_box_focused_from_the_keyboard_shows_what_it_is(browser, site_url: str) -> None:
    """The box's description was a mouse-only tooltip; Tab onto a box and it shows under the map."""
    page, _ = open_page(browser, site_url)
    boxes = page.locator("article .itm-map a.itm-map__box")
    assert boxes.count() > 5
    desc = page.locator("article .itm-map__desc")
    for _ in range(200):  # Tab as a reader does until focus lands on a map box
        page.keyboard.press("Tab")
        if page.evaluate("!!document.activeElement.closest('article .itm-map__box')"):
            break
    title = page.evaluate("document.activeElement.getAttribute('title')")
    assert title and desc.inner_text() == title and desc.is_visible()
    page.keyboard.press("Tab")
    after = page.evaluate("document.activeElement.getAttribute('title')")
    assert desc.inner_text() == (after or "")
    page.context.close()


MAP_TEXT = """() => {
  const map = document.querySelector('.itm-hero__map .itm-map');
  const svg = map.querySelector('svg');
  const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
  const sizes = [];
  map.querySelectorAll('svg text').forEach(t =>
    sizes.push([t.textContent, parseFloat(getComputedStyle(t).fontSize) * scale]));
  map.querySelectorAll('.itm-map__box > span').forEach(s =>
    sizes.push([s.textContent, parseFloat(getComputedStyle(s).fontSize)]));
  return sizes;
}"""


@pytest.mark.parametrize("width", [1280, 375])
def test_the_header_map_holds_still_under_the_pointer_and_its_words_are_readable(
    browser, site_url: str, width: int
) -> None:
    """Resting the pointer on a box (ln_2's description is the longest) leaves every box where
    it was: the description widened the map, which moved the box from under the pointer, which
    cleared the description, and so on, 18 px back and forth. Every word of the header's map,
    the drawing's own labels included, is drawn at 10 px or more (they were about 6 px)."""
    context = browser.new_context(viewport={"width": width, "height": 800})
    page = context.new_page()
    page.goto(site_url + "components/attention/", wait_until="networkidle")
    small = [(text, round(px, 1)) for text, px in page.evaluate(MAP_TEXT) if px < 10]
    assert small == [], small
    box = page.locator(".itm-hero__map .itm-map__box[data-light='ln2']")
    box.scroll_into_view_if_needed()
    before = box.bounding_box()
    assert before is not None
    page.mouse.move(before["x"] + before["width"] / 2, before["y"] + before["height"] / 2)
    page.wait_for_function(
        "document.querySelector('.itm-hero__map .itm-map__desc').textContent !== ''"
    )
    seen = set()
    for _ in range(10):  # a shaking map moved every frame; a still one never does
        page.evaluate("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
        now = box.bounding_box()
        assert now is not None
        seen.add((round(now["x"]), round(now["y"]), round(now["width"])))
    assert seen == {(round(before["x"]), round(before["y"]), round(before["width"]))}, seen
    desc = page.locator(".itm-hero__map .itm-map__desc").inner_text()
    assert desc == box.get_attribute("title")
    context.close()


def header_bottom(page) -> float:
    return page.evaluate("document.querySelector('.md-header').getBoundingClientRect().bottom")


def test_first_screens_show_the_first_grid_and_the_ways_into_the_site(browser, site_url) -> None:
    """At 1280×800, without scrolling: the walkthrough's first grid, whole, below the sticky
    header; the home page's ways into the site (every link of its list) and the map's top."""
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    page.goto(site_url + WALKTHROUGH, wait_until="networkidle")
    page.wait_for_selector(READY, state="attached")
    grid = page.locator(".itm-wt__step.is-current table.itm-wt-grid").first.bounding_box()
    assert grid is not None
    assert header_bottom(page) <= grid["y"] and grid["y"] + grid["height"] <= 800, grid
    page.goto(site_url, wait_until="networkidle")
    ways = page.locator(".itm-home__ways li a")
    assert ways.count() >= 5
    for i in range(ways.count()):
        box = ways.nth(i).bounding_box()
        assert box is not None and box["y"] + box["height"] <= 800, (ways.nth(i).inner_text(), box)
    top_box = page.locator("article .itm-map a.itm-map__box").first.bounding_box()
    assert top_box is not None and top_box["y"] + top_box["height"] <= 800
    context.close()


def test_after_a_step_change_the_step_list_is_wholly_in_view_or_wholly_above(
    browser, site_url: str
) -> None:
    """The "All steps" list was left half under the sticky header after Next or a step's link."""
    for width in (1280, 375):
        context = browser.new_context(viewport={"width": width, "height": 800})
        page = context.new_page()
        page.goto(site_url + WALKTHROUGH, wait_until="networkidle")
        page.wait_for_selector(READY, state="attached")
        for action in ('[data-wt-go="1"]', '[data-wt-step="5"]', '[data-wt-go="-1"]'):
            page.locator(action).click()
            top = header_bottom(page)
            box = page.locator(".itm-wt__steps").bounding_box()
            assert box is not None
            inside = box["y"] >= top - 0.5
            above = box["y"] + box["height"] <= top + 0.5
            assert inside or above, (width, action, top, box)
        context.close()


def test_arrow_keys_inside_a_code_block_that_scrolls_sideways_scroll_it(
    browser, site_url: str
) -> None:
    """← and → step the walkthrough, except inside something that scrolls sideways: there they
    scroll it, and the step stays."""
    context = browser.new_context(viewport={"width": 375, "height": 800})
    page = context.new_page()
    page.goto(site_url + WALKTHROUGH, wait_until="networkidle")
    page.wait_for_selector(READY, state="attached")
    code = page.locator(".itm-wt-code__ours pre > code").first
    code.scroll_into_view_if_needed()
    assert code.evaluate("el => el.scrollWidth > el.clientWidth"), "the engine's code fits 375 px"
    code.focus()
    step = page.locator(".itm-wt__step.is-current").get_attribute("data-step")
    for _ in range(3):
        page.keyboard.press("ArrowRight")
    page.wait_for_function("document.querySelector('.itm-wt-code__ours pre > code').scrollLeft > 0")
    assert page.locator(".itm-wt__step.is-current").get_attribute("data-step") == step
    # Outside it, the arrow keys still step.
    page.locator("h1").first.click()
    page.keyboard.press("ArrowRight")
    assert page.locator(".itm-wt__step.is-current").get_attribute("data-step") == str(int(step) + 1)
    context.close()


def test_with_javascript_off_no_words_describe_what_only_the_scripts_make(
    browser, site_url: str
) -> None:
    """Without JavaScript there are no step buttons, no toy/GPT-2 toggle, no row panel and no
    description under the map: the page's words do not send a reader looking for them."""
    import re

    scripted = re.compile(
        r"buttons?\b|toggle|\bpanel\b|← →|arrow keys|GPT-2 scale\W+swaps|hover or focus", re.I
    )
    context = browser.new_context(
        java_script_enabled=False, viewport={"width": 1280, "height": 800}
    )
    page = context.new_page()
    for path in ("", WALKTHROUGH, "forward-pass/"):
        page.goto(site_url + path)
        text = page.locator("article").inner_text()
        assert not scripted.findall(text), (path, scripted.findall(text))
    page.goto(site_url)
    assert "Select a box to open its page" in page.locator("article").inner_text()
    context.close()
    page, _ = open_page(browser, site_url + WALKTHROUGH)
    page.wait_for_selector(READY, state="attached")
    text = page.locator("article").inner_text()
    assert "the buttons" in text and "broken down beside it" in text
    page.context.close()


CHART_TEXT = """async img => {
  const svg = await (await fetch(img.currentSrc)).text();
  const width = parseFloat(/<svg[^>]*width="([\\d.]+)pt"/.exec(svg)[1]);
  const sizes = [...svg.matchAll(/font-size: ([\\d.]+)px/g)].map(m => parseFloat(m[1]));
  return {src: img.currentSrc, smallest: Math.min(...sizes) * img.clientWidth / width};
}"""


# How far each shown element matching a selector scrolls past its box (0: it fits).
PAST_THE_EDGE = """sel => [...document.querySelectorAll(sel)].filter(e => e.offsetParent !== null)
  .map(e => e.scrollWidth - e.clientWidth)"""


def test_charts_are_readable_on_a_phone_and_dark_in_dark_mode(browser, site_url: str) -> None:
    """On a 375 px phone a chart's smallest words are 9 px or more (the desktop drawing, shrunk,
    set them at about 5 px); in dark mode a chart is no bright white block."""
    import io

    from PIL import Image, ImageStat

    context = browser.new_context(viewport={"width": 375, "height": 740})
    page = context.new_page()
    seen = 0
    for path in ("components/model/", "components/attention/"):
        page.goto(site_url + path, wait_until="networkidle")
        for img in page.locator(".itm-chart img").all():
            if not img.evaluate("i => i.offsetParent !== null"):
                continue  # a hidden size tab's (a lazy image has no size until it loads)
            img.scroll_into_view_if_needed()
            page.wait_for_function(
                "img => img.complete && img.naturalWidth > 0", arg=img.element_handle()
            )
            found = img.evaluate(CHART_TEXT)
            assert found["smallest"] >= 9, found
            seen += 1
    assert seen >= 3
    context.close()
    context = browser.new_context(viewport={"width": 1280, "height": 800}, color_scheme="dark")
    page = context.new_page()
    page.goto(site_url + "components/model/", wait_until="networkidle")
    img = page.locator(".itm-chart img").first
    img.scroll_into_view_if_needed()
    page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=img.element_handle())
    grey = Image.open(io.BytesIO(img.screenshot())).convert("L")
    assert ImageStat.Stat(grey).mean[0] < 100, ImageStat.Stat(grey).mean  # 0 black, 255 white
    context.close()


def test_the_notation_table_reads_in_lines_not_words_on_a_phone(browser, site_url: str) -> None:
    """At 375 px every meaning in the Notation table runs several words to a line (it was set
    one word per line); the size columns scroll sideways in their focusable region, and the
    symbol tables fit the screen (the large and XL columns started off-screen)."""
    context = browser.new_context(viewport={"width": 375, "height": 740})
    page = context.new_page()
    page.goto(site_url + "glossary/", wait_until="networkidle")
    cells = page.evaluate(
        """() => [...document.querySelectorAll('.itm-glossary tbody td:nth-child(2)')].map(td => {
             const lines = Math.round(td.clientHeight / parseFloat(getComputedStyle(td).lineHeight));
             return [td.textContent.trim(), td.textContent.trim().split(/\\s+/).length, lines];
           })"""
    )
    assert len(cells) > 5
    squeezed = [text for text, words, lines in cells if words >= 4 and lines > words / 2]
    assert squeezed == [], squeezed
    scrollers = page.locator(".itm-scroll:has(.itm-glossary)").all()  # one table per family
    assert len(scrollers) >= 2
    assert [s.get_attribute("tabindex") for s in scrollers] == ["0"] * len(scrollers)
    # and they need no swipe: the large and XL columns started off-screen
    over = page.evaluate(PAST_THE_EDGE, "article .itm-scroll:has(.itm-glossary)")
    assert len(over) >= 2 and max(over) <= 1, over
    context.close()


def test_a_trained_head_runs_through_the_seven_steps(browser, site_url: str, built_site) -> None:
    """The walkthrough opens on the build's trained head (the stand-in's induction head here),
    drawn in every step from its own JSON: the sizes row and step 1 describe that head (its
    tokens, its model's widths), not GPT-2 small's; in the softmax step the last word's row
    weighs most the word after its earlier copy, as the step's words say, and links the head on
    the forward pass; the row panel names the same position the words do; the toy and GPT-2's
    sizes are one click away."""
    import json

    data = json.loads((built_site / "assets/walkthrough/trained.json").read_text(encoding="utf-8"))
    page, record = walkthrough(browser, site_url)
    assert (
        page.locator(".itm-wt").get_attribute("data-scale") == "trained"
    )  # no click: the first view
    assert page.locator('input[name="itm-wt-scale"][value="trained"]').is_checked()
    label = data["label"]
    assert (
        f"block {data['block']} · head {data['head']}" in page.locator(".itm-wt-sub").inner_text()
    )
    # The sizes row: the head's tokens and its model's widths, nothing of GPT-2 small's.
    dims = page.locator(".itm-wt-dims").inner_text()
    assert "GPT-2" not in dims and "1,024" not in dims, dims
    values = [v.strip() for v in page.locator(".itm-wt-dims dd").all_inner_texts()]
    widths = [len(data["tokens"]), data["config"]["d_model"], data["config"]["d_head"]]
    assert values[:3] == [f"{w:,}" for w in widths], values
    step1 = page.locator(".itm-wt__step.is-current .itm-wt__text").inner_text()
    assert f"head {label}" in step1 and f"{len(data['tokens'])} tokens" in step1, step1
    assert "GPT-2 small" not in step1 and "12 heads" not in step1, step1
    assert not page.locator(".itm-wt__step.is-current .itm-wt__fig").first.is_visible()
    for step in range(1, 8):
        page.locator(f'[data-wt-step="{step}"]').click()
        captions = page.locator(
            ".itm-wt__step.is-current table.itm-wt-grid caption"
        ).all_inner_texts()
        assert captions, step
        rows = page.locator(".itm-wt__step.is-current table.itm-wt-grid").first.locator("tbody tr")
        assert rows.count() == len(data["tokens"]), step
        if step in (1, 2, 5, 6):
            assert any(f"head {label}" in c for c in captions), (step, captions)
    page.locator('[data-wt-step="5"]').click()
    current = page.locator(".itm-wt__step.is-current")
    last = current.locator("table.itm-wt-grid tbody tr").last
    values = [
        float(v)
        for v in last.locator("td[data-v]").evaluate_all("els => els.map(e => e.dataset.v)")
    ]
    weights = data["trace"]["weights"][0][-1]
    assert values == pytest.approx(weights[: len(values)], abs=1e-9)
    top = max(range(len(weights)), key=lambda j: weights[j])
    words = current.locator(".itm-wt__trained").inner_text()
    assert f"“{data['tokens'][top]}” (position {top})" in words, words
    # The row panel names the row the words do: position 9 (from 0), not "Row 10".
    last_row = len(data["tokens"]) - 1
    assert f"“{data['tokens'][last_row]}” (position {last_row})" in words, words
    panel_title = page.locator("[data-wt-panel] h3").inner_text()
    assert panel_title.split(":")[0] == f"Position {last_row}", panel_title
    link = current.locator(".itm-wt__trained a:not(.itm-term)")  # not a term's definition
    assert link.get_attribute("href").endswith(f"forward-pass/#head-{data['block']}-{data['head']}")
    assert current.locator(".itm-wt__trained").is_visible()
    assert not page.locator(".itm-wt-head").is_visible()  # one head: no head menu
    page.locator('input[name="itm-wt-scale"][value="toy"]').check()
    page.wait_for_selector('.itm-wt[data-wt-scale-ready="toy"]', state="attached")
    rows = current.locator("table.itm-wt-grid tbody tr")
    assert rows.count() == 5 and not current.locator(".itm-wt__trained").is_visible()
    page.locator('input[name="itm-wt-scale"][value="big"]').check()
    assert current.locator(".itm-wt__big").is_visible()
    assert record["errors"] == []
    page.context.close()


WHY_SECTIONS = """() => [...document.querySelectorAll('article h2[id]')].map(h => {
  const parts = [];
  for (let el = h.nextElementSibling; el && el.tagName !== 'H2'; el = el.nextElementSibling)
    parts.push(el);
  const why = parts.find(el => el.matches('.itm-why'));
  const costs = parts.findIndex(el => el.querySelector('table') || el.matches('.tabbed-set'));
  return {id: h.id, why: why ? why.querySelector('p').innerText : null,
          refs: why ? [...why.querySelectorAll('.itm-refs li')].map(li => li.innerText) : [],
          links: why ? why.querySelectorAll('a:not(.itm-term)').length : 0,
          whyFirst: why ? parts.indexOf(why) < costs : false};
})"""


def test_each_change_since_gpt2_says_why_with_papers_a_reader_can_look_up(
    browser, site_url: str
) -> None:
    """What changed since GPT-2 said what differs and what it costs, not why. Each change's
    section now gives the reason its paper gives, before the costs, and the papers as references
    (authors, year, title, arXiv id) in text: no link to a host the site would load. On a
    375 px phone its cost tables (every size's tab) fit the screen."""
    import re

    from generator.models.llama.changes import CHANGES

    context = browser.new_context(viewport={"width": 375, "height": 740})
    page = context.new_page()
    page.goto(site_url + "what-changed/", wait_until="networkidle")
    sections = {s["id"]: s for s in page.evaluate(WHY_SECTIONS)}
    for change in CHANGES:
        found = sections[change.key]
        assert found["whyFirst"] and found["links"] == 0, found
        assert len(found["refs"]) == len(change.cite) >= 1, found
        for ref, paper in zip(found["refs"], change.cite, strict=True):
            assert re.fullmatch(rf".+ \(\d{{4}}\), .+, arXiv:{re.escape(paper.arxiv)}", ref), ref
            assert ref.startswith(f"{paper.authors} ({paper.year})"), ref
        assert found["why"] == f"Why. {change.why}", found  # the change's own, from its data
    # every size's cost table fits the phone (the Change column started off-screen)
    for tab in page.locator("article .itm-costs .tabbed-labels > label").all():
        tab.click()
        over = page.evaluate(PAST_THE_EDGE, "article .itm-costs .md-typeset__scrollwrap")
        assert over and max(over) <= 1, (tab.inner_text(), over)
    context.close()


def test_the_walkthrough_keeps_the_readers_view_and_step_and_back_returns_a_step(
    browser, built_site
) -> None:
    """Served at an address other than its site_url (a copy of the built site on another port):
    the view radios show a focus ring; → on a focused row button moves a step and keeps focus on
    a row button (it fell to the page); a link inside the page (a step's code lines) made
    Material draw the page again, and the walkthrough came back on its first view and step 1,
    with the toy's words ("block 0 · head 0") under a reader who had chosen GPT-2's scale; Back
    left the page instead of returning a step."""
    from tests.site_helpers import free_port, serve

    port = free_port()
    with serve(built_site, port) as elsewhere:
        context = browser.new_context(viewport={"width": 1280, "height": 800})
        page = context.new_page()
        page.goto(elsewhere + WALKTHROUGH, wait_until="networkidle")
        page.wait_for_selector(READY, state="attached")
        page.locator('input[name="itm-wt-scale"][value="trained"]').focus()
        page.keyboard.press("ArrowRight")  # the next view, as a keyboard moves in radios
        ring = page.evaluate(
            """() => { const e = document.activeElement, c = getComputedStyle(e);
                       return [e.value, e.matches(':focus-visible'), c.outlineStyle,
                               parseFloat(c.outlineWidth)]; }"""
        )
        assert ring[0] == "toy" and ring[1] and ring[2] != "none" and ring[3] >= 1, ring
        page.wait_for_selector('.itm-wt[data-wt-scale-ready="toy"]', state="attached")
        page.locator('.itm-wt__step.is-current tr[data-row="2"] .itm-wt-rowbtn').first.focus()
        page.keyboard.press("ArrowRight")
        current = page.locator(".itm-wt__step.is-current")
        assert current.get_attribute("data-step") == "2"
        focused = page.evaluate(
            "(document.activeElement.closest('.itm-wt__step.is-current tr') || {}).dataset"
        )
        assert focused and focused["row"] == "2", focused  # the same row, in the new step
        page.locator('input[name="itm-wt-scale"][value="big"]').check()
        page.locator('[data-wt-go="1"]').click()
        assert current.get_attribute("data-step") == "3"
        page.locator(".itm-wt__step.is-current .itm-wt__codelink a").click()
        page.wait_for_function("location.hash.startsWith('#__codelineno')")
        page.wait_for_selector('.itm-wt[data-wt-ready="ready"][data-wt-scale-ready="big"]')
        assert page.locator(".itm-wt__step.is-current").get_attribute("data-step") == "3"
        assert "block 0 · head 0" not in page.locator(".itm-wt-sub").inner_text()
        words = page.locator(".itm-wt__step.is-current .itm-wt__text").inner_text()
        assert not re.search(r"\btoy\b|\bhere,|\b2 heads\b", words), words
        page.go_back()  # to step 3, then to step 2, on the same page
        page.wait_for_function("location.hash === '#step-3'")
        page.go_back()
        page.wait_for_function("location.hash === '#step-2'")
        page.wait_for_selector('.itm-wt__step.is-current[data-step="2"]')
        assert page.url.startswith(elsewhere + WALKTHROUGH)
        context.close()


def test_on_a_phone_the_trained_grid_needs_no_swipe_to_its_point(
    browser, site_url: str, built_site
) -> None:
    """At 375 px the trained head's softmax grid, wider than a phone, shows the key column its
    words name beside the row labels (it started off-screen). What changed's cost tables and
    the Notation page's symbol tables are checked at this width where those pages are loaded:
    test_each_change_since_gpt2_says_why_with_papers_a_reader_can_look_up and
    test_the_notation_table_reads_in_lines_not_words_on_a_phone."""
    import json

    context = browser.new_context(viewport={"width": 375, "height": 740})
    page = context.new_page()
    page.goto(site_url + WALKTHROUGH + "#step-5", wait_until="networkidle")
    page.wait_for_selector(READY, state="attached")
    data = json.loads((built_site / "assets/walkthrough/trained.json").read_text(encoding="utf-8"))
    grid = page.locator(".itm-wt__step.is-current table.itm-wt-grid").first
    grid.scroll_into_view_if_needed()
    key = grid.locator("thead th").nth(data["focus"]).bounding_box()
    label = grid.locator("tbody th").first.bounding_box()
    assert key is not None and label is not None
    assert label["x"] >= 0 and label["x"] + label["width"] <= key["x"], (label, key)
    assert key["x"] + key["width"] <= 375, key
    context.close()

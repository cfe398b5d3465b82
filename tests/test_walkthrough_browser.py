"""The attention walkthrough in a real headless Chromium: stepping, #step-N links, the row panel,
the head selector, instant navigation, arrow keys, JavaScript off, and axe-core's audit."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from tests import browser_helpers
from tests.axe_helpers import run_axe, serious
from tests.browser_helpers import off_site
from tests.test_walkthrough_data import page_json

pytestmark = pytest.mark.browser

PATH = "walkthrough/attention/"
READY = '.itm-wt[data-wt-ready="ready"]'
TOLERANCE = 0.005 + 1e-9  # cells print two decimals

CURRENT_TABLES = """() => Array.from(
  document.querySelectorAll('.itm-wt__step.is-current .itm-wt__toy table.itm-wt-grid'))
  .filter(t => t.offsetParent !== null)
  .map(t => ({matrix: t.dataset.matrix, head: Number(t.dataset.head),
    rows: Array.from(t.querySelectorAll('tbody tr')).map(r =>
      Array.from(r.querySelectorAll('td:not(.itm-wt-blend)')).map(td =>
        [td.textContent, td.classList.contains('is-masked')]))}))"""


@pytest.fixture(scope="module")
def data(built_site: Path) -> dict:
    return page_json(built_site)


def recorded(context, url: str, *, wait: str | None = READY, scripts: bool = True):
    """The shared recorder, waiting for the walkthrough to be ready unless told otherwise."""
    return browser_helpers.recorded(context, url, wait=wait, scripts=scripts)


def open_walkthrough(browser, site_url: str, fragment: str = "", scale: str = "toy"):
    """The walkthrough, switched from the trained head it opens on to `scale` (the toy: the
    JSON these tests check the grids against)."""
    page, record = recorded(browser.new_context(), site_url + PATH + fragment)
    show(page, scale)
    return page, record


def show(page, scale: str) -> None:
    """Pick a view in the widget's "shown" radios and wait until it is drawn."""
    page.check(f'input[name="itm-wt-scale"][value="{scale}"]')
    page.wait_for_selector(f'.itm-wt[data-wt-scale-ready="{scale}"]', state="attached")
    page.evaluate("document.activeElement.blur()")  # arrow keys go to the page, not the radio


def value(text: str) -> float:
    return float(text.replace("−", "-"))


def expected(data: dict, key: str, head: int) -> list[list[float | None]]:
    return data["trace"][key][head] if key in data["per_head"] else data["trace"][key]


def check_grids(page, data: dict, step: int, head: int) -> None:
    """The visible grids are the step's matrices for `head`, cell by cell against the JSON."""
    tables = page.evaluate(CURRENT_TABLES)
    shown = data["steps"][step - 1]["show"]
    assert [t["matrix"] for t in tables] == shown
    for table in tables:
        key, want = table["matrix"], expected(data, table["matrix"], head)
        assert table["head"] == head
        for i, row in enumerate(table["rows"]):
            assert len(row) == len(want[i])
            for j, (text, masked) in enumerate(row):
                v = want[i][j]
                if key == "masked" and j > i:
                    assert (text, masked, v) == ("−∞", True, None), (key, i, j)
                elif key == "weights" and j > i:
                    assert (text, masked, v) == ("0", True, 0), (key, i, j)
                else:
                    assert not masked and abs(value(text) - v) <= TOLERANCE, (key, i, j, text, v)


def current_step(page) -> int:
    return int(page.locator(".itm-wt__step.is-current").get_attribute("data-step"))


@pytest.mark.slow  # > 5 s: many clicks, each redrawing the grids
def test_stepping_through_all_seven_steps_shows_each_steps_matrix(
    browser, site_url: str, data: dict
) -> None:
    page, record = open_walkthrough(browser, site_url)
    n_steps = len(data["steps"])
    assert page.locator(".itm-wt__step:visible").count() == 1
    moves = ["button", "key", "list"]  # all three ways of moving, in turn
    for step in range(1, n_steps + 1):
        assert current_step(page) == step
        hash_now = page.evaluate("location.hash")
        assert hash_now == f"#step-{step}" or (step == 1 and hash_now == "")  # "" on arrival
        assert page.locator(".itm-wt__step:visible").get_attribute("data-step") == str(step)
        check_grids(page, data, step, head=0)
        where = page.locator(".itm-wt__where").inner_text()
        assert where == f"Step {step} of {n_steps}: {data['steps'][step - 1]['title']}"
        if step == n_steps:
            break
        move = moves[step % 3]
        if move == "button":
            page.click('[data-wt-go="1"]')
        elif move == "key":
            page.locator("body").press("ArrowRight")
        else:
            page.click(f'.itm-wt__steps a[data-wt-step="{step + 1}"]')
    assert page.locator('[data-wt-go="1"]').is_disabled()
    page.locator("body").press("ArrowLeft")
    assert current_step(page) == n_steps - 1
    # The head selector redraws the grids; the "block 0 · head N" header follows (heads from 0).
    page.select_option("[data-wt-head]", value="1")  # the second head
    assert page.locator("[data-wt-head-label]").inner_text() == "1"
    check_grids(page, data, n_steps - 1, head=1)
    page.click('.itm-wt__steps a[data-wt-step="2"]')
    check_grids(page, data, 2, head=1)
    assert record["errors"] == []
    assert off_site(record["requests"], site_url) == []
    page.context.close()


def test_step_5_link_opens_softmax_whose_rows_sum_to_one(
    browser, site_url: str, data: dict
) -> None:
    page, record = open_walkthrough(browser, site_url, "#step-5")
    section = page.locator(".itm-wt__step.is-current")
    assert section.get_attribute("data-key") == "softmax"
    (table,) = page.evaluate(CURRENT_TABLES)
    assert table["matrix"] == "weights"
    for i, row in enumerate(table["rows"]):
        total = sum(0.0 if text == "0" else value(text) for text, _ in row)
        assert abs(total - 1) <= len(row) * TOLERANCE, (i, row)
        assert [masked for _, masked in row] == [j > i for j in range(len(row))]
    # The panel breaks the selected row into exp of each score and their sum.
    for i in range(len(data["tokens"])):
        page.click(f'.itm-wt__step.is-current tr[data-row="{i}"] .itm-wt-rowbtn')
        panel = page.locator("[data-wt-panel]")
        assert panel.is_visible()
        masked = data["trace"]["masked"][0][i]
        exps = [0.0 if m is None else math.exp(m) for m in masked]
        assert float(panel.locator(".itm-wt-sum").get_attribute("data-v")) == pytest.approx(
            sum(exps), rel=1e-9
        )
        weights = [
            float(w)
            for w in panel.locator("tbody td[data-v]").evaluate_all(
                "cells => cells.map(c => c.dataset.v)"
            )
        ]
        assert weights == pytest.approx(data["trace"]["weights"][0][i], abs=1e-5)
    # One step back, the masked cells show −∞ (check_grids knows which).
    page.locator("body").press("ArrowLeft")
    check_grids(page, data, 4, head=0)
    assert record["errors"] == []
    page.context.close()


@pytest.mark.slow  # > 5 s: many clicks, each redrawing the grids
def test_weighted_sum_panel_reproduces_each_output_row(browser, site_url: str, data: dict) -> None:
    page, record = open_walkthrough(browser, site_url, "#step-6")
    assert page.locator(".itm-wt__step.is-current").get_attribute("data-key") == "weighted-sum"
    for head in range(data["config"]["n_head"]):
        page.select_option("[data-wt-head]", value=str(head))
        for i in range(len(data["tokens"])):
            page.click(f'.itm-wt__step.is-current tr[data-row="{i}"] td >> nth=0')
            assert page.locator(".itm-wt__step.is-current tr.is-selected").get_attribute(
                "data-row"
            ) == str(i)
            result = page.locator("[data-wt-panel] .itm-wt-result span")
            sums = [float(v) for v in result.evaluate_all("s => s.map(e => e.dataset.v)")]
            assert sums == pytest.approx(data["trace"]["heads"][head][i], abs=1e-5)
            grid_row = page.locator(
                f'.itm-wt__step.is-current tr[data-row="{i}"] td:not(.itm-wt-blend)'
            ).all_inner_texts()
            assert [value(t) for t in result.all_inner_texts()] == pytest.approx(
                [value(t) for t in grid_row], abs=0.0101
            )
            # Its colour is the tokens' colours blended with the same weights as the grid row's.
            swatches = page.locator(
                f'.itm-wt__step.is-current tr[data-row="{i}"] .itm-wt-swatch, '
                "[data-wt-panel] tfoot .itm-wt-swatch"
            ).evaluate_all("s => s.map(e => getComputedStyle(e).backgroundColor)")
            assert len(swatches) == 2 and swatches[0] == swatches[1]
    assert record["errors"] == []
    page.context.close()


@pytest.mark.slow
def test_instant_navigation_from_home_works_and_sets_up_once(browser, site_url: str) -> None:
    context = browser.new_context()
    page, record = recorded(context, site_url, wait=None)
    page.evaluate("window.itmNoReload = true")
    for arrival in (1, 3):  # there, away, and back again: to the step the reader left
        page.click(f'nav a.md-nav__link[href$="{PATH}"]')
        page.wait_for_selector(READY, state="attached")
        assert page.evaluate("window.itmNoReload") is True  # instant: no full page load
        assert current_step(page) == arrival
        page.click('[data-wt-go="1"]')  # listeners bound twice would move two steps
        assert current_step(page) == arrival + 1
        page.locator("body").press("ArrowRight")
        assert current_step(page) == arrival + 2
        assert page.locator(".itm-wt__step.is-current .itm-wt__toy table").count() == 1
        assert page.locator(".katex").count() > 0
        page.click("article li > a:text-is('Architecture map')")  # Go deeper
        page.wait_for_selector(".itm-map-figure")
        page.evaluate("history.replaceState(null, '', location.pathname)")
    assert page.evaluate("window.itmNoReload") is True
    assert record["errors"] == []
    context.close()


def test_with_javascript_off_every_step_is_readable(browser, site_url: str, data: dict) -> None:
    context = browser.new_context(java_script_enabled=False)
    page, _ = recorded(context, site_url + PATH, wait=None, scripts=False)
    steps = page.locator(".itm-wt__step")
    assert steps.count() == len(data["steps"])
    for n in range(steps.count()):
        section = steps.nth(n)
        assert section.is_visible()
        assert section.locator(".itm-wt__text").is_visible()
        assert section.locator("table.itm-wt-grid").first.is_visible()
        assert section.locator(".itm-wt__big").is_visible()  # GPT-2's sizes too
    assert not page.locator("[data-wt-controls]").is_visible()
    assert not page.locator("[data-wt-nav]").is_visible()
    context.close()


def test_keyboard_reaches_and_drives_the_controls(browser, site_url: str) -> None:
    page, record = open_walkthrough(browser, site_url, "#step-3")
    button = page.locator('.itm-wt__step.is-current tr[data-row="1"] .itm-wt-rowbtn')
    button.focus()
    page.keyboard.press("Enter")
    assert page.locator(".itm-wt__step.is-current tr.is-selected").get_attribute("data-row") == "1"
    page.keyboard.press("ArrowDown")
    selected = page.locator('.itm-wt__step.is-current .itm-wt-rowbtn[aria-pressed="true"]')
    assert selected.count() == 1
    assert page.evaluate("document.activeElement.closest('tr').dataset.row") == "2"
    # Arrow keys inside a form control do not change the step.
    page.focus("[data-wt-head]")
    page.keyboard.press("ArrowRight")
    assert current_step(page) == 3
    page.check('input[name="itm-wt-scale"][value="big"]')
    assert page.locator(".itm-wt__step.is-current .itm-wt__big").is_visible()
    assert not page.locator(".itm-wt__step.is-current .itm-wt__toy").is_visible()
    assert not page.locator("[data-wt-panel]").is_visible()
    assert record["errors"] == []
    page.context.close()


@pytest.mark.slow
def test_axe_finds_no_serious_or_critical_violations(browser, site_url: str) -> None:
    """The whole article once; then the widget in GPT-2 mode, and a step as static HTML."""
    page, record = open_walkthrough(browser, site_url, "#step-6")
    problems = serious(run_axe(page, include="article"))
    page.check('input[name="itm-wt-scale"][value="big"]')
    problems += serious(run_axe(page, include=".itm-wt"))
    assert record["errors"] == []
    page.context.close()
    context = browser.new_context()
    page = context.new_page()
    page.route("**/walkthrough.js", lambda route: route.abort())
    page.goto(site_url + PATH, wait_until="networkidle")
    assert page.locator(".itm-wt.is-live").count() == 0  # the build-time page, as without JS
    problems += serious(run_axe(page, include="#step-7"))  # one step: they share one template
    context.close()
    assert problems == []


def shown_figures(page) -> list[str]:
    """The one-line GPT-2 figure of every step, of the size shown (the stepper hides all steps
    but the current one)."""
    return page.eval_on_selector_all(
        ".itm-wt__fig",
        "els => els.filter(e => getComputedStyle(e).display !== 'none')"
        ".map(e => e.textContent.trim().replace(/\\s+/g, ' '))",
    )


def test_gpt2_sizes_follow_the_readers_size_tab_and_set_it(browser, site_url: str) -> None:
    """Chosen in a component page's size tabs (Material's linked tabs), GPT-2 XL is the size the
    walkthrough shows on arrival, in every step, with the accounting's figures for XL; chosen
    here, GPT-2 medium is the tab a component page then opens with."""
    from generator.config import CONFIGS, TOY, TOY_TOKENS
    from generator.walkthrough.gpt2_scale import step_figures
    from generator.walkthrough.steps import STEPS

    def want(name: str) -> list[str]:
        figures = step_figures(TOY, TOY_TOKENS, CONFIGS[name])
        return [f"{CONFIGS[name].label} {figures[step.key].line}" for step in STEPS]

    context = browser.new_context()
    page, record = recorded(context, site_url + "components/attention/", wait=None)
    page.locator(".tabbed-labels > label", has_text="GPT-2 XL").first.click()
    page.goto(site_url + PATH, wait_until="networkidle")
    page.wait_for_selector(READY, state="attached")
    assert page.locator("[data-wt-model-select]").input_value() == "gpt2-xl"
    show(page, "toy")  # the trained head's view shows its own model's sizes, not GPT-2's
    assert shown_figures(page) == want("gpt2-xl")
    page.check('input[name="itm-wt-scale"][value="big"]')
    big = page.locator(".itm-wt__step.is-current .itm-wt__big").inner_text()
    assert "At GPT-2 XL scale" in big and "small" not in big, big
    assert page.locator(".itm-wt-dims dd").nth(1).inner_text().strip() == "GPT-2 XL 1,600"
    page.select_option("[data-wt-model-select]", "gpt2-medium")
    assert shown_figures(page) == want("gpt2-medium")
    text = page.locator(".itm-wt__step.is-current .itm-wt__text").inner_text()
    assert "GPT-2 medium" in text and "GPT-2 small" not in text, text
    page.goto(site_url + "components/attention/", wait_until="networkidle")
    checked = page.eval_on_selector_all(
        ".tabbed-set > input:checked",
        "els => els.map(i => document.querySelector(`label[for='${i.id}']`).innerText.trim())",
    )
    assert "GPT-2 medium" in checked, checked
    assert record["errors"] == []
    context.close()


def test_with_javascript_off_the_gpt2_figures_are_gpt2_smalls(browser, site_url: str) -> None:
    context = browser.new_context(java_script_enabled=False)
    page, _ = recorded(context, site_url + PATH, wait=None, scripts=False)
    tags = [line.split(" [")[0].split(" 12 ")[0] for line in shown_figures(page)]
    assert tags and all(t.startswith("GPT-2 small") for t in tags), tags
    assert "GPT-2 XL" not in page.locator(".itm-wt").inner_text()
    context.close()


def test_the_live_grids_show_the_pages_token_chips(browser, site_url: str) -> None:
    """The grids the script draws use each token's chip as the page rendered it, so a site's
    override of walkthrough_token.html reaches what a reader sees with JavaScript on (the
    script once drew its own copy of the chip's markup). The override is simulated by marking
    every server-rendered chip before any of the page's scripts run."""
    context = browser.new_context()
    context.add_init_script(
        """document.addEventListener("DOMContentLoaded", () =>
          document.querySelectorAll(".itm-wt-tok").forEach(c => c.classList.add("mine")));"""
    )
    page, record = recorded(context, site_url + PATH)  # the trained head's grids
    assert record["errors"] == []
    assert page.locator(".itm-wt").get_attribute("data-scale") == "trained"
    shown = page.evaluate(
        """() => Array.from(document.querySelectorAll('.itm-wt-tok'))
          .filter(c => c.offsetParent !== null).map(c => c.classList.contains('mine'))"""
    )
    assert shown and all(shown), shown  # the current step's grids and the row panel
    page.locator(".itm-wt__step.is-current tbody tr").first.click()
    assert page.locator("[data-wt-panel] .itm-wt-tok.mine").count() >= 1
    show(page, "toy")
    shown = page.evaluate(
        """() => Array.from(document.querySelectorAll('.itm-wt__toy .itm-wt-tok'))
          .filter(c => c.offsetParent !== null).map(c => c.classList.contains('mine'))"""
    )
    assert shown and all(shown), shown
    context.close()


@pytest.mark.parametrize("path", [PATH, "llama/walkthrough/"])
def test_a_plain_visit_stays_on_the_opening_a_step_link_scrolls_to_its_step(
    browser, site_url: str, path: str
) -> None:
    """A fresh visit marked its first history entry #step-1 and then scrolled as if the reader
    had followed a link to it: the title, the introduction and the chooser started off-screen
    (340 px at 1280). Only a link to a step scrolls to the step list."""
    for fragment, scrolled in (("", False), ("#step-3", True)):
        page, record = browser_helpers.recorded(
            browser.new_context(viewport={"width": 1280, "height": 900}),
            site_url + path + fragment,
            wait=READY,
        )
        assert page.url.endswith(fragment or "#step-1")  # Back finds its step
        top = page.evaluate("window.scrollY")
        assert (top > 0) is scrolled, (fragment, top)
        title_top = page.evaluate(
            "document.querySelector('article h1').getBoundingClientRect().top"
        )
        assert (title_top < 0) is scrolled, (fragment, title_top)
        assert record["errors"] == []
        page.context.close()

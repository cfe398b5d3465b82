"""The Llama family's rotary walkthrough in a real headless Chromium: the same stepper as the
attention walkthrough (list, buttons, ← →, #step-N), each step's grids against the page's JSON,
the row panel's rotated pairs, the Llama sizes, the page without its script, and axe-core."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from tests import browser_helpers
from tests.axe_helpers import run_axe, serious
from tests.browser_helpers import off_site
from tests.test_rotary_walkthrough import page_json
from tests.test_walkthrough_browser import CURRENT_TABLES, current_step, value

pytestmark = pytest.mark.browser

PATH = "llama/walkthrough/"
READY = '.itm-wt[data-wt-ready="ready"]'
TOLERANCE = 0.005 + 1e-9  # cells print two decimals


@pytest.fixture(scope="module")
def data(built_site: Path) -> dict:
    return page_json(built_site)


def open_rotary(browser, site_url: str, fragment: str = ""):
    return browser_helpers.recorded(browser.new_context(), site_url + PATH + fragment, wait=READY)


def check_grids(page, data: dict, step: int, head: int) -> None:
    """The visible grids are the step's matrices for `head`, cell by cell against the JSON."""
    tables = page.evaluate(CURRENT_TABLES)
    assert [t["matrix"] for t in tables] == data["steps"][step - 1]["show"]
    for table in tables:
        key = table["matrix"]
        want = data["trace"][key][head] if key in data["per_head"] else data["trace"][key]
        assert [len(row) for row in table["rows"]] == [len(row) for row in want], key
        for i, row in enumerate(table["rows"]):
            for j, (text, masked) in enumerate(row):
                assert not masked and abs(value(text) - want[i][j]) <= TOLERANCE, (key, i, j)


def test_the_rotary_steps_step_like_the_attention_walkthrough(
    browser, site_url: str, data: dict
) -> None:
    """Three steps, moved through with the keyboard, the button and the list; each shows its
    grids, and the header line and the step count follow; the head selector redraws them."""
    page, record = open_rotary(browser, site_url)
    # its browser title names its section, as every other Llama page's does (it did not)
    assert page.title().startswith("Walkthrough: rotary positions · Llama 2 and Mistral"), (
        page.title()
    )
    titles = [s["title"] for s in data["steps"]]
    assert page.locator(".itm-wt__steps a[data-wt-step]").all_inner_texts() == titles
    assert page.locator(".itm-wt__step:visible").count() == 1
    for step, move in zip(range(1, 4), ("key", "button", None), strict=True):
        assert current_step(page) == step
        where = page.locator(".itm-wt__where").inner_text()
        assert where == f"Step {step} of {len(titles)}: {titles[step - 1]}"
        check_grids(page, data, step, head=0)
        if move == "key":
            page.locator("body").press("ArrowRight")
        elif move == "button":
            page.click('[data-wt-go="1"]')
    assert page.evaluate("location.hash") == "#step-3"
    assert page.locator('[data-wt-go="1"]').is_disabled()
    check_shifted_scores(page, data)
    page.locator("body").press("ArrowLeft")
    assert current_step(page) == 2
    page.click('.itm-wt__steps a[data-wt-step="1"]')
    assert current_step(page) == 1
    page.select_option("[data-wt-head]", value="1")
    assert page.locator("[data-wt-head-label]").inner_text() == "1"
    check_grids(page, data, 1, head=1)
    assert record["errors"] == []
    assert off_site(record["requests"], site_url) == []
    page.context.close()


def rotated(vector: list[float], position: int, rates: list[float]) -> list[float]:
    """`vector` with pair i (dimensions i and i + d/2) turned by position · rates[i], written
    out as the 2 × 2 rotation the step's formula shows (not the engine's rotate_half)."""
    half = len(vector) // 2
    out = list(vector)
    for i, rate in enumerate(rates):
        x, y, angle = vector[i], vector[i + half], position * rate
        out[i] = x * math.cos(angle) - y * math.sin(angle)
        out[i + half] = x * math.sin(angle) + y * math.cos(angle)
    return out


def check_shifted_scores(page, data: dict) -> None:
    """The rotate step's table: the query and key it names, rotated at each (t, s) it prints,
    give the score it prints; rows of the same gap s − t print the same score, the row moved
    apart another. The relative-position property shown with numbers, not only stated."""
    demo = page.locator(".itm-wt__step.is-current .itm-wt-shift")
    assert demo.is_visible()
    words = demo.locator("p").first.inner_text()
    query = next(i for i, t in enumerate(data["tokens"]) if f"query of “{t}”" in words)
    key = next(i for i, t in enumerate(data["tokens"]) if f"key of “{t}”" in words)
    q, k = data["trace"]["q"][0][query], data["trace"]["k"][0][key]
    rows = [
        [value(cell.replace(",", "")) for cell in row.locator("td").all_inner_texts()]
        for row in demo.locator("tbody tr").all()
    ]
    assert len(rows) >= 3
    scores: dict[float, set[float]] = {}
    for t, s, gap, score in rows:
        assert gap == s - t
        turned = sum(
            a * b
            for a, b in zip(
                rotated(q, int(t), data["rates"]), rotated(k, int(s), data["rates"]), strict=True
            )
        )
        assert abs(turned - score) <= 1e-3, (t, s, turned, score)  # the JSON's 6 decimals
        scores.setdefault(gap, set()).add(score)
    assert len(scores) >= 2 and len(rows) > len(scores)  # a gap printed twice, and another
    assert all(len(same) == 1 for same in scores.values()), scores  # same gap, same score
    assert len({next(iter(same)) for same in scores.values()}) == len(scores)  # another gap, not


def test_the_row_panel_shows_each_pair_turned_and_its_length_kept(
    browser, site_url: str, data: dict
) -> None:
    """#step-3 opens the rotation; selecting a row breaks its query and key down pair by pair:
    each pair's angle, the pair before and after, and the vectors' lengths, which stay."""
    page, record = open_rotary(browser, site_url, "#step-3")
    assert current_step(page) == 3
    row = 3
    page.click(f'.itm-wt__step.is-current tbody tr[data-row="{row}"] .itm-wt-rowbtn')
    panel = page.locator("[data-wt-panel]")
    assert panel.is_visible()
    rows = panel.locator("tbody tr").all_inner_texts()
    half = data["config"]["d_head"] // 2
    assert len(rows) == half
    for p, text in enumerate(rows):
        cells = text.split("\t")
        assert value(cells[1]) == pytest.approx(data["trace"]["angles"][row][p], abs=TOLERANCE)
        q, q_rot = data["trace"]["q"][0][row], data["trace"]["q_rotated"][0][row]
        before, after = (part.strip("() ").split(", ") for part in cells[2].split("→"))
        assert [value(v) for v in before] == pytest.approx([q[p], q[p + half]], abs=TOLERANCE)
        assert [value(v) for v in after] == pytest.approx(
            [q_rot[p], q_rot[p + half]], abs=TOLERANCE
        )
    words = panel.inner_text()
    length = math.sqrt(sum(v * v for v in data["trace"]["q"][0][row]))
    assert f"|q| = {length:.2f}, |q̃| = {length:.2f}" in words
    assert record["errors"] == []
    page.context.close()


def test_llama_scale_shows_the_chosen_sizes_figures(browser, site_url: str) -> None:
    """ "Llama scale" swaps the toy's grids for the size's figures; Mistral's differ from
    Llama 2's where the sizes differ (key heads), in every step's line."""
    page, record = open_rotary(browser, site_url, "#step-3")
    page.check('input[name="itm-wt-scale"][value="big"]')
    big = page.locator(".itm-wt__step.is-current .itm-wt__big section:visible")
    assert big.count() == 1 and "At Llama 2 7B scale" in big.inner_text()
    assert page.locator(".itm-wt__step.is-current .itm-wt__toy").is_hidden()
    page.select_option("[data-wt-model-select]", label="Mistral 7B v0.1")
    shown = page.locator(".itm-wt__step.is-current .itm-wt__fig:visible").inner_text()
    assert "32 + 8 heads" in shown
    assert record["errors"] == []
    page.context.close()


def test_without_its_script_every_step_is_on_the_page(browser, site_url: str) -> None:
    context = browser.new_context()
    page = context.new_page()
    page.route("**/walkthrough.js", lambda route: route.abort())
    page.goto(site_url + PATH, wait_until="networkidle")
    assert page.locator(".itm-wt.is-live").count() == 0
    assert page.locator(".itm-wt__step").count() == 3
    assert page.locator(".itm-wt__step table.itm-wt-grid").count() == 5
    problems = serious(run_axe(page, include="article"))
    context.close()
    assert problems == [], "\n".join(problems)


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_axe_at_every_step_with_its_code_lines_lit(browser, site_url: str, scheme: str) -> None:
    """Each step lights its lines of the engine's code: keywords on the lit background keep
    4.5:1 (they did not, on a background lighter than the code's in dark mode and darker in
    light mode), and the row panel open beside the grids passes too."""
    context = browser.new_context(color_scheme=scheme)
    problems = []
    for step in (1, 2, 3):
        page, record = browser_helpers.recorded(
            context, site_url + PATH + f"#step-{step}", wait=READY
        )
        assert page.locator(".highlight span.is-step").count() > 0
        page.click('.itm-wt__step.is-current tbody tr[data-row="4"] .itm-wt-rowbtn')
        problems += [f"step {step}: {line}" for line in serious(run_axe(page, include="article"))]
        assert record["errors"] == []
        page.close()
    context.close()
    assert problems == [], "\n".join(problems)

"""Every page in a real Chromium: clean console, nothing from other hosts, KaTeX rendered,
no horizontal overflow on a phone; the size switch and the map's hover behave."""

from __future__ import annotations

import pytest

from tests.axe_helpers import run_axe, serious
from tests.browser_helpers import off_site, open_page
from tests.test_site_pages import nav_pages

pytestmark = pytest.mark.browser


def page_url(site_url: str, docs_path: str) -> str:
    from tests.test_site_pages import page_path

    return site_url + page_path(docs_path)  # llama/index.md is at llama/, not llama/index/


def test_every_page_loads_clean_is_accessible_and_fits_a_phone(browser, site_url: str) -> None:
    """No console errors, no off-site requests, KaTeX rendered, no serious or critical axe-core
    violations in the page content, and no horizontal overflow at a 375-px viewport."""
    problems = []
    for docs_path in nav_pages():
        page, record = open_page(browser, page_url(site_url, docs_path))
        if record["errors"]:
            problems.append(f"{docs_path}: console {record['errors']}")
        if off_site(record["requests"], site_url):
            problems.append(f"{docs_path}: off-site {off_site(record['requests'], site_url)}")
        if page.locator(".katex-error").count():
            problems.append(f"{docs_path}: KaTeX error")
        problems += [f"{docs_path}: {line}" for line in serious(run_axe(page, include="article"))]
        page.set_viewport_size({"width": 375, "height": 800})
        width = page.evaluate("document.documentElement.scrollWidth")
        if width > 375:
            problems.append(f"{docs_path}: {width}px wide at a 375px viewport")
        page.context.close()
    assert problems == []


def visible_number(page, quantity: str) -> str:
    return page.locator(f'.itm-shapes [data-q="{quantity}"]:visible').first.inner_text()


def test_size_switch_changes_numbers_and_persists_across_instant_navigation(
    browser, site_url: str
) -> None:
    page, record = open_page(browser, site_url + "components/attention/")
    small = visible_number(page, "params.per_instance")
    page.locator(".itm-shapes .tabbed-labels > label", has_text="GPT-2 XL").first.click()
    xl = visible_number(page, "params.per_instance")
    assert xl != small
    # The XL figure in the summary agrees with the XL accounting table's total.
    table_total = page.locator('[data-q="params.table_total"]:visible').first.inner_text()
    assert table_total == xl

    # Instant navigation (Material swaps the page without a reload) to the MLP page.
    page.evaluate("window.__itm_marker = 1")
    page.locator("nav.md-nav a[href$='mlp/']").first.click()
    page.wait_for_url("**/components/mlp/")
    page.wait_for_selector(".itm-shapes")
    assert page.evaluate("window.__itm_marker") == 1  # same document: instant navigation
    active = page.locator(".itm-shapes .tabbed-labels > label", has_text="GPT-2 XL").first
    tab_input = page.locator(f"#{active.get_attribute('for')}")
    assert tab_input.is_checked()
    assert page.locator(".katex-error").count() == 0
    assert record["errors"] == []
    page.context.close()


def test_hovering_a_map_box_lights_it_and_only_its_key(browser, site_url: str) -> None:
    page, _ = open_page(browser, site_url)
    page.locator('.itm-map a[data-light="mlp"]').hover()
    lit = page.eval_on_selector_all(".is-lit", "els => els.map(e => e.dataset.light)")
    assert lit and set(lit) == {"mlp"}
    page.mouse.move(0, 0)
    assert page.locator(".is-lit").count() == 0
    page.context.close()

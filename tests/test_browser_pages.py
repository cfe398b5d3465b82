"""In a real Chromium: the size switch and the map's hover behave (every page's console, requests,
KaTeX, phone width and axe run once per width and scheme in test_readers_browser)."""

from __future__ import annotations

import pytest

from tests.browser_helpers import open_page

pytestmark = pytest.mark.browser


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

"""A real headless Chromium (Debian's, driven by Playwright) opens the built attention page."""

from __future__ import annotations

import pytest

from tests.browser_helpers import off_site, open_page

pytestmark = pytest.mark.browser


def test_attention_page_loads_clean_and_local_and_a_formula_symbol_lights_its_diagram_box(
    browser, site_url: str
) -> None:
    """One load of the page for both: it loads clean and local, then hovering works."""
    page, record = open_page(browser, site_url + "components/attention/")
    assert record["errors"] == []
    assert off_site(record["requests"], site_url) == []
    assert page.locator(".katex").count() >= 3  # formula, shapes, table calculations
    assert page.locator(".katex-error").count() == 0
    # KaTeX's own fonts were loaded from this site.
    assert any("/assets/katex/fonts/" in u for u in record["requests"])

    box = page.locator('.itm-map [data-light="attention"]')
    symbol = page.locator('.arithmatex [data-light="attention"]').first
    assert "is-lit" not in (box.get_attribute("class") or "")
    symbol.hover()
    assert "is-lit" in box.get_attribute("class")
    # And back: hovering the ln_1 box lights the Z_1 symbol in the formula.
    page.mouse.move(0, 0)
    page.locator('.itm-map [data-light="ln1"]').hover()
    assert "is-lit" in page.locator('.arithmatex [data-light="ln1"]').first.get_attribute("class")
    page.context.close()

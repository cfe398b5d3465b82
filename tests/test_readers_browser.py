"""A careful reader in a real Chromium: search, keyboard, colour schemes, typeset math."""

from __future__ import annotations

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

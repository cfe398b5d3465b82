"""The Generation page in a real headless Chromium: it loads with no errors and nothing from
another host, the size tabs switch its cache numbers, and the toy's new and cached rows show."""

from __future__ import annotations

import pytest

from generator import decode_costs
from generator.config import CONFIGS
from generator.render.numbers import fmt_int
from tests.browser_helpers import off_site, recorded

pytestmark = pytest.mark.browser
PATH = "generation/"


def test_generation_page_follows_the_size_tabs(browser, site_url):
    page, record = recorded(browser.new_context(), site_url + PATH)
    xl = CONFIGS["gpt2-xl"]
    page.locator(".tabbed-labels > label", has_text=xl.label).first.click()
    visible = page.locator('[data-q="kv.values"]:visible')
    assert visible.count() == 1
    assert visible.inner_text() == fmt_int(decode_costs.kv_values_per_token(xl))
    new_rows = page.locator(".itm-gen-step tr.is-new:visible")
    cached_rows = page.locator(".itm-gen-step tr.is-cached:visible")
    assert new_rows.count() > 0 and cached_rows.count() > 0
    assert page.locator("table[data-gen=continuation] tbody tr").count() >= 1
    assert record["errors"] == []
    assert off_site(record["requests"], site_url) == []
    page.context.close()

"""The forward-pass page in a real headless Chromium: every head's thumbnail renders, selecting
one opens its large view, a #head-L-H link opens that head, JavaScript off still links to the
views, and nothing is loaded from another host or logged as an error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.browser_helpers import off_site, recorded

pytestmark = pytest.mark.browser
PATH = "forward-pass/"


@pytest.fixture(scope="module")
def heads(built_site: Path) -> list[dict]:
    return json.loads((built_site / "forward" / "heads.json").read_text(encoding="utf-8"))["heads"]


def test_gallery_renders_every_head(browser, site_url, heads):
    page, record = recorded(browser.new_context(), site_url + PATH)
    cells = page.locator(".itm-gallery a.itm-head")
    assert cells.count() == len(heads)
    for i in range(cells.count()):  # lazy images load once scrolled to
        cells.nth(i).scroll_into_view_if_needed()
    page.wait_for_function(
        "() => Array.from(document.querySelectorAll('.itm-head img'))"
        ".every(img => img.complete && img.naturalWidth > 0)"
    )
    box = cells.first.locator("img").bounding_box()
    assert box["width"] >= 30 and abs(box["width"] - box["height"]) < 1
    assert record["errors"] == []
    assert off_site(record["requests"], site_url) == []
    page.context.close()


def test_selecting_a_head_opens_its_large_view(browser, site_url, heads):
    page, record = recorded(browser.new_context(), site_url + PATH)
    view = page.locator(".itm-head-view")
    assert view.is_hidden()
    target = heads[-1]
    page.locator(f"#{target['anchor']}").click()
    assert view.is_visible()
    title = page.locator(".itm-head-view__title").inner_text()
    assert title == f"Block {target['layer']}, head {target['head']}"
    page.wait_for_function(
        "() => { const i = document.querySelector('.itm-head-view__image');"
        " return i.complete && i.naturalWidth > 200; }"
    )
    assert (
        page.locator(".itm-head-view__image")
        .get_attribute("src")
        .endswith(f"forward/heads/{target['layer']}-{target['head']}.svg")
    )
    assert page.evaluate("location.hash") == f"#{target['anchor']}"
    # Next wraps around to the first head; Escape closes and gives focus back.
    page.locator(".itm-head-view__next").click()
    first = heads[0]
    assert page.locator(".itm-head-view__title").inner_text() == (
        f"Block {first['layer']}, head {first['head']}"
    )
    page.keyboard.press("Escape")
    assert view.is_hidden()
    assert page.evaluate("document.activeElement.id") == first["anchor"]
    assert record["errors"] == []
    page.context.close()


def test_a_link_to_a_head_opens_it(browser, site_url, heads):
    target = heads[len(heads) // 2]
    page, record = recorded(browser.new_context(), site_url + PATH + f"#{target['anchor']}")
    assert page.locator(".itm-head-view").is_visible()
    assert page.locator(".itm-head-view__title").inner_text() == (
        f"Block {target['layer']}, head {target['head']}"
    )
    assert record["errors"] == []
    page.context.close()


def test_instant_navigation_binds_the_gallery_once(browser, site_url, heads):
    """Arrive from another page through Material's instant navigation: the gallery works, and a
    second visit does not bind it twice (one click moves exactly one head)."""
    page, record = recorded(browser.new_context(), site_url)
    for _ in range(2):
        page.locator(".md-nav--primary a.md-nav__link", has_text="Forward pass").first.click()
        page.wait_for_selector(".itm-gallery a.itm-head")
        page.locator(".itm-gallery a.itm-head").first.click()
        page.locator(".itm-head-view__next").click()
        second = heads[1]
        assert page.locator(".itm-head-view__title").inner_text() == (
            f"Block {second['layer']}, head {second['head']}"
        )
        page.locator(".md-nav--primary a.md-nav__link", has_text="Architecture map").first.click()
        page.wait_for_function("() => !document.querySelector('.itm-gallery')")
    assert record["errors"] == []
    page.context.close()


def test_without_javascript_a_head_links_to_its_view(browser, site_url, heads):
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.goto(site_url + PATH)
    cell = page.locator(".itm-gallery a.itm-head").first
    href = cell.get_attribute("href")
    cell.click()
    page.wait_for_load_state()
    assert page.url.endswith(href.lstrip("./").split("/", 1)[-1])
    assert page.locator("svg title").count() >= 1
    context.close()


def test_on_a_phone_the_large_view_fits_the_width(browser, site_url, heads):
    """At 375 px the large view fits the screen: no sideways swipe to see the whole pattern
    (at full size it needed several); the view's own link still opens it at full size, and the
    page itself does not overflow."""
    context = browser.new_context(viewport={"width": 375, "height": 740})
    page, record = recorded(context, site_url + PATH)
    page.locator(f"#{heads[0]['anchor']}").click()
    page.wait_for_function(
        "() => { const i = document.querySelector('.itm-head-view__image');"
        " return i.complete && i.naturalWidth > 200; }"
    )
    sizes = page.evaluate(
        "() => { const i = document.querySelector('.itm-head-view__image');"
        " const r = i.closest('.itm-head-view__scroll');"
        " return {shown: i.getBoundingClientRect().width, natural: i.naturalWidth,"
        " scroll: r.scrollWidth, client: r.clientWidth,"
        " page: document.documentElement.scrollWidth}; }"
    )
    assert sizes["natural"] > 375, sizes  # the case this test is about: wider than the phone
    assert sizes["shown"] <= sizes["client"] and sizes["scroll"] <= sizes["client"], sizes
    assert sizes["page"] <= 375, sizes
    href = page.locator(".itm-head-view__open a").get_attribute("href")
    assert href and href.endswith(".svg")
    assert record["errors"] == []
    context.close()


def test_the_gallery_is_one_tab_stop_and_the_arrow_keys_walk_it(browser, site_url, heads):
    """Blocks × heads cells (144 for GPT-2 small) are one tab stop; arrows move by head and by
    block, Home/End to a block's ends, Enter opens the focused head."""
    page, record = recorded(browser.new_context(), site_url + PATH)
    cells = page.locator(".itm-gallery a.itm-head")
    n_heads = int(page.locator(".itm-gallery").get_attribute("data-heads"))
    assert page.locator('.itm-gallery a.itm-head[tabindex="0"]').count() == 1
    cells.first.focus()

    def focused() -> int:
        return page.evaluate(
            "Array.from(document.querySelectorAll('.itm-gallery a.itm-head'))"
            ".indexOf(document.activeElement)"
        )

    page.keyboard.press("ArrowDown")
    assert focused() == n_heads  # the first head of the next block
    page.keyboard.press("End")
    assert focused() == 2 * n_heads - 1
    page.keyboard.press("ArrowUp")
    assert focused() == n_heads - 1
    assert page.locator('.itm-gallery a.itm-head[tabindex="0"]').count() == 1
    page.keyboard.press("Enter")
    expected = heads[n_heads - 1]
    title = page.locator(".itm-head-view__title").inner_text()
    assert title == f"Block {expected['layer']}, head {expected['head']}"
    assert record["errors"] == []
    page.context.close()

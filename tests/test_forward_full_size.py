"""The GPT-2 branch at full size in a real browser: a GPT-2-small-shaped random checkpoint with
its own vocabulary and pin (tests/full_size.py) built into a site, whose 12 × 12 gallery must
load lazily, walk by keyboard, fit a phone, and say where the heads disagree with the papers.
One slow test module: the checkpoint is 498 MB and the build takes ~2 GB and a minute or two."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.browser_helpers import recorded
from tests.full_size import build, project, write_checkpoint
from tests.site_helpers import free_port, serve

pytestmark = [pytest.mark.slow, pytest.mark.browser]
PATH = "forward-pass/"


@pytest.fixture(scope="module")
def full_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    scratch = tmp_path_factory.mktemp("full")
    project(scratch, write_checkpoint(scratch / "weights"))
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    result = build(scratch, scratch / "site", SITE_URL=url)
    assert result.returncode == 0, result.stderr[-3000:]
    (scratch / "weights" / "model.safetensors").unlink()  # 498 MB no longer needed
    with serve(scratch / "site", port) as served:
        yield served


def thumbnails_requested(requests: list[str]) -> int:
    return sum("/forward/heads/" in r and r.endswith(".png") for r in requests)


def test_the_page_shows_144_heads_and_loads_their_thumbnails_lazily(browser, full_site):
    page, record = recorded(
        browser.new_context(viewport={"width": 1280, "height": 800}), full_site + PATH
    )
    assert page.locator(".itm-gallery a.itm-head").count() == 144
    assert page.locator(".itm-gallery").get_attribute("data-heads") == "12"
    first = thumbnails_requested(record["requests"])
    assert first < 144, first  # only those near the viewport
    page.locator("#head-11-11").scroll_into_view_if_needed()
    page.wait_for_timeout(500)
    assert thumbnails_requested(record["requests"]) > first
    description = page.locator('meta[name="description"]').get_attribute("content")
    assert "GPT-2 small's own blocks" in description
    # Random weights bear out none of the published heads, and the page says so.
    items = page.locator(".itm-literature li")
    assert items.count() == 4
    assert page.locator('.itm-literature li[data-agrees="false"]').count() == 4
    assert record["errors"] == []
    page.context.close()


def test_the_keyboard_walks_the_12_by_12_gallery(browser, full_site):
    page, record = recorded(browser.new_context(), full_site + PATH)
    page.locator("#head-0-0").focus()
    page.keyboard.press("ArrowDown")
    assert page.evaluate("document.activeElement.id") == "head-1-0"
    page.keyboard.press("End")
    assert page.evaluate("document.activeElement.id") == "head-1-11"
    page.keyboard.press("ArrowRight")  # on to the next block's first head
    assert page.evaluate("document.activeElement.id") == "head-2-0"
    assert page.locator('.itm-gallery a.itm-head[tabindex="0"]').count() == 1
    page.keyboard.press("Enter")
    assert page.locator(".itm-head-view__title").inner_text() == "Block 2, head 0"
    assert record["errors"] == []
    page.context.close()


def test_on_a_phone_the_gallery_scrolls_inside_itself_with_block_labels_in_view(browser, full_site):
    context = browser.new_context(viewport={"width": 375, "height": 740})
    page, record = recorded(context, full_site + PATH)
    sizes = page.evaluate(
        "() => { const g = document.querySelector('.itm-gallery');"
        " const cell = g.querySelector('a.itm-head');"
        " return {page: document.documentElement.scrollWidth, scroll: g.scrollWidth,"
        " client: g.clientWidth, cell: cell.getBoundingClientRect().width}; }"
    )
    assert sizes["page"] <= 375, sizes  # the page does not overflow; the gallery scrolls
    assert sizes["scroll"] > sizes["client"] and sizes["cell"] >= 40, sizes
    page.locator("#head-5-11").focus()  # scrolls the gallery sideways
    label = page.locator(".itm-gallery__row").nth(6).locator(".itm-gallery__layer")
    box, gallery = label.bounding_box(), page.locator(".itm-gallery").bounding_box()
    assert box["x"] >= gallery["x"] - 1 and box["x"] < gallery["x"] + 10  # still at the left
    assert record["errors"] == []
    context.close()

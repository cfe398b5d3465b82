"""The page sweep's own plumbing, without a browser."""

from __future__ import annotations

from tests.page_sweep import reached


def test_a_page_fetched_for_the_no_script_sweep_comes_from_the_site_under_test() -> None:
    """CI's browser job tests the artifact at its public address, which Chromium maps to
    127.0.0.1; the no-script sweep's route.fetch() runs outside Chromium and fetched the public
    (live) site, or failed to resolve it. It fetches where Chromium's rule points."""
    args = ["--headless", "--host-resolver-rules=MAP example.org 127.0.0.1:8765"]
    assert reached("https://example.org/docs/a/?q=1", args) == "https://127.0.0.1:8765/docs/a/?q=1"
    assert reached("http://127.0.0.1:9000/a/", args) == "http://127.0.0.1:9000/a/"
    assert reached("https://example.org/a/", ["--headless"]) == "https://example.org/a/"

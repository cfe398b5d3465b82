"""Session fixtures: one built site shared by the page and browser tests, served on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.site_helpers import CHROMIUM_FLAGS, chromium_path, free_port, mkdocs_build, serve

# Material's instant navigation only follows links listed in sitemap.xml, whose host and port
# come from site_url: build for the address the tests will serve the site at.
TEST_PORT = free_port()
TEST_SITE_URL = f"http://127.0.0.1:{TEST_PORT}/"


@pytest.fixture(scope="session")
def built_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site, built once per test session with the standard `mkdocs build`."""
    site_dir = tmp_path_factory.mktemp("built") / "site"
    result = mkdocs_build(site_dir, SITE_URL=TEST_SITE_URL)
    assert result.returncode == 0, f"mkdocs build failed:\n{result.stdout}\n{result.stderr}"
    return site_dir


@pytest.fixture(scope="session")
def site_url(built_site: Path) -> Iterator[str]:
    with serve(built_site, TEST_PORT) as url:
        yield url


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    """Debian's Chromium driven by Playwright (Playwright's own browsers are never downloaded)."""
    playwright_api = pytest.importorskip("playwright.sync_api")
    executable = chromium_path()
    if not Path(executable).exists():
        pytest.fail(f"no Chromium at {executable}: run `make chromium` or set ITM_CHROMIUM")
    with playwright_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_FLAGS)
        yield browser
        browser.close()

"""Session fixtures: one built site shared by the page and browser tests, served on 127.0.0.1.

ITM_TEST_SITE (a built site's folder) and ITM_TEST_SITE_URL (the site_url it was built for) test
a site built elsewhere instead of building one: CI's browser job tests the very artifact it
deploys. That site is served at its own address: Chromium resolves the host to 127.0.0.1, and an
https address gets a throwaway self-signed certificate the browser is told to accept.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple
from urllib.parse import urlsplit

import pytest

from tests.site_helpers import (
    CHROMIUM_FLAGS,
    ROOT,
    chromium_path,
    free_port,
    mkdocs_build,
    self_signed,
    serve,
)

# Material's instant navigation only follows links listed in sitemap.xml, whose host and port
# come from site_url: build for the address the tests will serve the site at.
GIVEN_SITE = os.environ.get("ITM_TEST_SITE")
TEST_PORT = free_port()
TEST_SITE_URL = os.environ.get("ITM_TEST_SITE_URL") or f"http://127.0.0.1:{TEST_PORT}/"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked retrain (a training run from scratch) run weekly in verify-pins.yml, or
    whenever ITM_RETRAIN=1; elsewhere they are skipped, and -ra says so."""
    if os.environ.get("ITM_RETRAIN", "") in ("", "0", "false"):
        skip = pytest.mark.skip(reason="trains from scratch: weekly, or set ITM_RETRAIN=1")
        for item in items:
            if item.get_closest_marker("retrain"):
                item.add_marker(skip)


@pytest.fixture(scope="session")
def built_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site, built once per test session with the standard `mkdocs build` (or ITM_TEST_SITE)."""
    if GIVEN_SITE:
        return Path(GIVEN_SITE).resolve()
    site_dir = tmp_path_factory.mktemp("built") / "site"
    result = mkdocs_build(site_dir, SITE_URL=TEST_SITE_URL)
    assert result.returncode == 0, f"mkdocs build failed:\n{result.stdout}\n{result.stderr}"
    return site_dir


class ColdBuild(NamedTuple):
    site: Path  # what a build from an empty cache made
    cache: Path  # the cache it filled (its signing key beside it, as cache.key)
    started: float  # when it started (every entry of `cache` is younger)


@pytest.fixture(scope="session")
def cold_build(built_site: Path, tmp_path_factory: pytest.TempPathFactory) -> ColdBuild:
    """The site built once more, from an empty cache (everything fetched, figures drawn, nothing
    reused), once per session: test_build compares its bytes with `built_site`'s, and
    test_faults_build tampers with the cache it filled (a build each cost two whole builds)."""
    folder = tmp_path_factory.mktemp("cold")
    started = time.time()
    result = mkdocs_build(
        folder / "site", SITE_URL=TEST_SITE_URL, ITM_CACHE_DIR=str(folder / "cache")
    )
    assert result.returncode == 0, f"mkdocs build failed:\n{result.stdout}\n{result.stderr}"
    return ColdBuild(folder / "site", folder / "cache", started)


# A hook of the test's that adds to every page's content (tests/test_build.py's hook test).
HOOK = """
def on_page_content(html, page, config, files):
    return html + '<p class="hook-marker">added by a hook</p>'
"""


class CopyBuilds(NamedTuple):
    project: Path  # a copy of the build inputs (tests/test_build.py's project_copy), with HOOK
    cache: Path  # the project's cache without its typeset pages and memo (its key beside it)
    cold: Path  # the first build: every page filled, its math typeset afresh
    warm: Path  # the second: numpy unimportable too, everything replayed from the memo


@pytest.fixture(scope="session")
def copy_builds(tmp_path_factory: pytest.TempPathFactory) -> CopyBuilds:
    """A project copy built cold, then warm with numpy unimportable, once per session: the
    hook test, the memo's warm-replay test and the cache-pruning test each built a copy cold
    and warm (seven whole builds between them, now two and the pruning test's third)."""
    import shutil

    from tests.test_build import project_copy

    folder = tmp_path_factory.mktemp("copy-builds")
    project = project_copy(folder)
    (project / "hook.py").write_text(HOOK)
    config = project / "mkdocs.yml"
    config.write_text(config.read_text() + "\nhooks:\n  - hook.py\n")
    cache = folder / "cache"  # math to typeset on the first build, and this copy's own memo
    shutil.copytree(ROOT / ".cache", cache, ignore=shutil.ignore_patterns("katex", "memo_*"))
    shutil.copy(ROOT / ".cache.key", folder / "cache.key")  # its entries stay trusted
    for run, blocked in (("cold", ("torch",)), ("warm", ("torch", "numpy"))):
        built = mkdocs_build(
            folder / run, config_dir=project, blocked=blocked, ITM_CACHE_DIR=str(cache)
        )
        assert built.returncode == 0, f"the {run} build failed:\n{built.stderr}"
    return CopyBuilds(project, cache, folder / "cold", folder / "warm")


@pytest.fixture(scope="session")
def site_url(built_site: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    address = urlsplit(TEST_SITE_URL)
    host = address.hostname or "127.0.0.1"
    tls = self_signed(tmp_path_factory.mktemp("tls"), host) if address.scheme == "https" else None
    with serve(built_site, TEST_PORT, prefix=address.path or "/", tls=tls):
        yield TEST_SITE_URL


def chromium_args() -> list[str]:
    """Chromium's flags for the served test site (a site built for its public address is
    reached at 127.0.0.1, its throwaway certificate accepted)."""
    args = list(CHROMIUM_FLAGS)
    host = urlsplit(TEST_SITE_URL).hostname
    if host != "127.0.0.1":
        args += [f"--host-resolver-rules=MAP {host} 127.0.0.1:{TEST_PORT}"]
        args += ["--ignore-certificate-errors"]
    return args


@pytest.fixture(scope="session")
def browser_args() -> list[str]:
    return chromium_args()


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    """Debian's Chromium driven by Playwright (Playwright's own browsers are never downloaded)."""
    playwright_api = pytest.importorskip("playwright.sync_api")
    executable = chromium_path()
    if not Path(executable).exists():
        pytest.fail(f"no Chromium at {executable}: run `make chromium` or set ITM_CHROMIUM")
    with playwright_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=chromium_args())
        yield browser
        browser.close()

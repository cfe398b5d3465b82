"""axe-core in a real browser page: fetched once from the npm registry, pinned by sha256, cached.

    from tests.axe_helpers import run_axe, serious
    results = run_axe(page)                 # page: a Playwright page, already loaded
    assert serious(results) == []           # no serious or critical violations
    assert violations(run_axe(page, experimental=True)) == []   # none at all, any rule

The tarball is kept in the project's content-addressed cache (.cache/sha256/..., the same
Store generator/assets.py uses for KaTeX), so only the first run touches the network.
"""

from __future__ import annotations

import functools
import io
import os
import tarfile

import pytest

from generator.sources.excerpt import sha256_hex
from generator.sources.fetch import FetchError, Http
from generator.store import Store
from tests.site_helpers import ROOT

AXE_VERSION = "4.14.1"
AXE_URL = f"https://registry.npmjs.org/axe-core/-/axe-core-{AXE_VERSION}.tgz"
AXE_SHA256 = "e6b0ce02b84d892e2e33e403485e7f3d6c29e2be6df65daf44d89ba564139745"
AXE_MEMBER = "package/axe.min.js"
BLOCKING = ("serious", "critical")


def cache() -> Store:
    return Store(os.environ.get("ITM_CACHE_DIR") or ROOT / ".cache")


@functools.cache
def axe_source() -> str:
    """axe.min.js of the pinned axe-core tarball (from the cache, else the npm registry)."""
    blobs = cache()
    tarball = blobs.get(AXE_SHA256)
    if tarball is None:
        if os.environ.get("ITM_OFFLINE", "") not in ("", "0", "false"):
            pytest.skip(f"axe-core {AXE_VERSION} is not cached and ITM_OFFLINE is set")
        try:
            tarball = Http().get(AXE_URL)
        except FetchError as error:
            pytest.fail(f"cannot fetch {AXE_URL} ({error.reason}): the npm registry is needed once")
        if sha256_hex(tarball) != AXE_SHA256:
            pytest.fail(f"{AXE_URL} has sha256 {sha256_hex(tarball)}, pinned {AXE_SHA256}")
        blobs.put(tarball)
    with tarfile.open(fileobj=io.BytesIO(tarball), mode="r:gz") as archive:
        member = archive.extractfile(AXE_MEMBER)
        assert member is not None, f"{AXE_MEMBER} missing from axe-core {AXE_VERSION}"
        return member.read().decode("utf-8")


def run_axe(
    page, *, include: str | None = None, options: dict | None = None, experimental: bool = False
) -> dict:
    """Inject axe into `page` and run it (on the element `include` selects, else the document).

    Only violations are collected by default (resultTypes): it halves the run time.
    `experimental` also runs the rules axe tags experimental (label-content-name-mismatch,
    focus-order-semantics, …), which it leaves out by default.
    """
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.add_script_tag(content=axe_source())
    return page.evaluate(AXE_RUN, axe_arguments(include, options, experimental))


# axe.run in the page; its argument: axe_arguments(...)
AXE_RUN = """async ([include, options, experimental]) => {
  if (experimental) options.rules = Object.fromEntries(axe.getRules(['experimental'])
    .map(rule => [rule.ruleId, {enabled: true}]));
  return axe.run(include ? document.querySelector(include) : document, options);
}"""


def axe_arguments(include: str | None, options: dict | None, experimental: bool) -> list:
    """AXE_RUN's argument: only violations are collected (resultTypes), which halves the time."""
    return [include, {"resultTypes": ["violations"], **(options or {})}, experimental]


def violations(results: dict) -> list[str]:
    """Every violation, of any impact, one readable line per rule and element."""
    return [
        f"{violation['impact']} {violation['id']}: {node['target']}"
        for violation in results["violations"]
        for node in violation["nodes"]
    ]


def serious(results: dict) -> list[str]:
    """The serious and critical violations, one readable line per rule and element."""
    found = []
    for violation in results["violations"]:
        if violation["impact"] in BLOCKING:
            for node in violation["nodes"]:
                found.append(f"{violation['impact']} {violation['id']}: {node['target']}")
    return found

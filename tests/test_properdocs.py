"""ProperDocs (the continuation of MkDocs 1.x) builds the same site from the same mkdocs.yml.

It loads the `inside-the-model` plugin through the same entry point; only the
<meta name="generator"> tag, which names the tool, may differ.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.site_helpers import ROOT, build_env, tree_digest

pytestmark = pytest.mark.slow
GENERATOR_TAG = re.compile(rb'<meta name="generator" content="[^"]*">')


def test_properdocs_builds_the_same_site(built_site: Path, tmp_path: Path) -> None:
    from tests.conftest import TEST_SITE_URL

    properdocs = Path(sys.executable).with_name("properdocs")
    assert properdocs.exists(), "properdocs is in the test extras: make .venv/bin/.test-deps"
    site = tmp_path / "site"
    result = subprocess.run(
        [str(properdocs), "build", "-f", "mkdocs.yml", "--site-dir", str(site)],
        cwd=ROOT,
        env=build_env(SITE_URL=TEST_SITE_URL),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr
    assert b"ProperDocs" in (site / "index.html").read_bytes()  # it really was ProperDocs
    ours, theirs = tree_digest(built_site), tree_digest(site)
    assert ours.keys() == theirs.keys()
    differing = [path for path in ours if ours[path] != theirs[path]]
    for path in differing:  # only the generator tag may differ
        a, b = (GENERATOR_TAG.sub(b"", (d / path).read_bytes()) for d in (built_site, site))
        assert a == b, f"{path} differs beyond the generator tag"

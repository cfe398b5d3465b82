"""Fault injection, real builds: SIGINT and SIGTERM sent to a real `mkdocs build` while it writes
pages. The previous site must stay complete and byte-identical, and nothing half-built is left
published (issue 11: Ctrl-C swapped a site without index.html in)."""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from generator.publish import repair
from tests.site_helpers import ROOT, build_env, tree_digest

pytestmark = pytest.mark.slow


def start_build(site_dir: Path) -> subprocess.Popen:
    mkdocs = Path(sys.executable).with_name("mkdocs")
    return subprocess.Popen(
        [str(mkdocs), "build", "--site-dir", str(site_dir)],
        cwd=ROOT,
        env=build_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def wait_for_pages(site_dir: Path, process: subprocess.Popen, timeout: float = 300) -> None:
    """Until the build has written some pages into its staging folder (mid-render)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if any(site_dir.parent.glob(f".{site_dir.name}.staging-*/**/index.html")):
            return
        if process.poll() is not None:
            pytest.fail(f"the build ended before writing pages:\n{process.stdout.read()}")
        time.sleep(0.05)
    process.kill()
    pytest.fail("the build wrote no page in time")


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_an_interrupted_build_leaves_the_previous_site(built_site: Path, tmp_path: Path, sig):
    site = tmp_path / "site"
    shutil.copytree(built_site, site)
    before = tree_digest(site)
    process = start_build(site)
    wait_for_pages(site, process)
    process.send_signal(sig)
    output, _ = process.communicate(timeout=120)
    assert process.returncode != 0, output
    assert "Traceback" not in output or sig == signal.SIGINT  # Ctrl-C may print mkdocs' own
    assert tree_digest(site) == before  # complete and unchanged
    if sig == signal.SIGINT:  # it cleaned up after itself
        assert not list(tmp_path.glob(".site.staging-*")), output
        assert "build interrupted" in output
    repair(site, say=lambda m: None)  # what the next build does first
    assert tree_digest(site) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [".site.lock", "site"]

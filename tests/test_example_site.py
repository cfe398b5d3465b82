"""examples/pinned-excerpts builds on its own: copied out of the checkout, with the package
installed (not editable) into a fresh virtualenv from constraints.txt, and nothing of the GPT-2
site (no sources/, checkpoints, stand-in or pages; the engine's numpy and torch unimportable).
Its lock pins lines of openai/gpt-2 that resolve from the registry copies, as the site's do.

Network: PyPI only (the package's dependencies, from the pip cache when it has them, and the two
registry copies of src/model.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from generator.sources.lock import load_lock
from tests.site_helpers import BLOCKING_MKDOCS, ROOT

pytestmark = pytest.mark.slow

EXAMPLE = ROOT / "examples" / "pinned-excerpts"


def run(args: list, cwd: Path, env: dict[str, str], timeout: float) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """A fresh virtualenv with the package installed from a copy of its sources (so the build
    writes nothing into the checkout), pinned by constraints.txt."""
    scratch = tmp_path_factory.mktemp("example-venv")
    package = scratch / "package"
    package.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, package / name)
    shutil.copytree(
        ROOT / "generator", package / "generator", ignore=shutil.ignore_patterns("__pycache__")
    )
    venv = scratch / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ITM_", "VIRTUAL_ENV"))}
    env.update(SOURCE_DATE_EPOCH="1700000000", NO_MKDOCS_2_WARNING="1")
    pip = [
        venv / "bin" / "python",
        "-m",
        "pip",
        "install",
        "--quiet",
        "--disable-pip-version-check",
    ]
    done = run([*pip, "--constraint", ROOT / "constraints.txt", package], scratch, env, 1800)
    if done.returncode != 0 and "Could not find a version" in done.stderr + done.stdout:
        pytest.skip(f"the package index is unreachable: {done.stderr[-300:]}")
    assert done.returncode == 0, done.stderr
    return venv, env


def test_the_example_builds_from_a_non_editable_install(installed, tmp_path: Path) -> None:
    venv, env = installed
    where = run(
        [venv / "bin" / "python", "-c", "import generator; print(generator.__file__)"],
        tmp_path,
        env,
        60,
    ).stdout.strip()
    assert Path(where).is_relative_to(venv), where  # the installed copy, not the checkout's
    site = tmp_path / "example"
    shutil.copytree(EXAMPLE, site, ignore=shutil.ignore_patterns(".cache", "site", ".site*"))
    assert sorted(p.name for p in site.iterdir()) == ["docs", "excerpts.lock.toml", "mkdocs.yml"]

    # `mkdocs build` with the engine's packages unimportable: the example needs none of them
    blocking = BLOCKING_MKDOCS.format(blocked=["torch", "numpy", "matplotlib"])
    python = venv / "bin" / "python"
    built = run([python, "-c", blocking, "build"], site, env, 900)
    assert built.returncode == 0, built.stdout + built.stderr
    html = (site / "site" / "index.html").read_text(encoding="utf-8")
    soup = BeautifulSoup(html, "html.parser")
    cards = soup.select("div.pinned-excerpt")
    assert len(cards) == 3
    lock = load_lock(site / "excerpts.lock.toml")
    blob = lock.file_id("openai/gpt-2", "src/model.py").sha1_git
    for card in cards:
        swhid = card.select_one(".pinned-excerpt__swhid code").get_text()
        assert swhid.startswith(f"swh:1:cnt:{blob};origin=https://github.com/openai/gpt-2;")
    omitted = [p.get_text() for p in soup.select(".pinned-excerpt__omitted")]
    assert omitted == ["… lines 72–100 omitted …"]
    pages = sorted(p.relative_to(site / "site").as_posix() for p in (site / "site").rglob("*.html"))
    assert pages == ["404.html", "index.html"]

    # the commands find the example's lock through its mkdocs.yml, from the installed package
    verified = run([venv / "bin" / "itm", "verify"], site, env, 600)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert "3 of 3 excerpts verified against excerpts.lock.toml" in verified.stdout

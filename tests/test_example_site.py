"""examples/pinned-excerpts builds on its own: copied out of the checkout, from a wheel of the
package installed (not editable) into a fresh virtualenv from constraints.txt in its light form
(MkDocs and pymdown-extensions: no numpy, no matplotlib, no Material), and nothing of the GPT-2
site (no sources/, checkpoints, stand-in or pages). Its lock pins lines of openai/gpt-2 that
resolve from the registry copies, as the site's do.

Network: PyPI only (the package's dependencies, from the pip cache when it has them, and the two
registry copies of src/model.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from generator.sources.lock import load_lock
from tests.site_helpers import BLOCKING_MKDOCS, ROOT
from tests.sources_helpers import TOY_V1, make_upstream

pytestmark = pytest.mark.slow

EXAMPLE = ROOT / "examples" / "pinned-excerpts"
# The GPT-2 site's packages (the `site` extra), by import name: a light install has none.
SITE_EXTRA = ("numpy", "matplotlib", "PIL", "material", "py_mini_racer", "regex")


def run(args: list, cwd: Path, env: dict[str, str], timeout: float) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )


def new_venv(where: Path) -> Path:
    """A fresh virtualenv without pip of its own (this one's installs into it: `pip --python`),
    which spares ensurepip's 5 s of CPU per environment."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True)
    return where


def pip_install(venv: Path, *packages: object, env: dict[str, str], cwd: Path) -> None:
    """`pip install` into `venv`, pinned by constraints.txt; skips when PyPI is unreachable."""
    pip = [sys.executable, "-m", "pip", "--python", venv / "bin" / "python", "install", "-q"]
    pinned = ["--disable-pip-version-check", "--constraint", ROOT / "constraints.txt"]
    done = run([*pip, *pinned, *packages], cwd, env, 1800)
    if done.returncode != 0 and "Could not find a version" in done.stderr + done.stdout:
        pytest.skip(f"the package index is unreachable: {done.stderr[-300:]}")
    assert done.returncode == 0, done.stderr


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """A wheel of the package, built from a copy of its sources (so nothing is written into the
    checkout), and the environment the tests run commands in."""
    scratch = tmp_path_factory.mktemp("example-wheel")
    package = scratch / "package"
    package.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, package / name)
    shutil.copytree(
        ROOT / "generator", package / "generator", ignore=shutil.ignore_patterns("__pycache__")
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ITM_", "VIRTUAL_ENV"))}
    env.update(SOURCE_DATE_EPOCH="1700000000", NO_MKDOCS_2_WARNING="1")
    pip = [
        sys.executable,
        "-m",
        "pip",
        "wheel",
        "--quiet",
        "--no-deps",
        "--disable-pip-version-check",
    ]
    built = run([*pip, "--wheel-dir", scratch / "dist", package], scratch, env, 900)
    if built.returncode != 0 and "Could not find a version" in built.stderr + built.stdout:
        pytest.skip(f"the package index is unreachable: {built.stderr[-300:]}")
    assert built.returncode == 0, built.stderr
    (found,) = (scratch / "dist").glob("inside_the_model-*.whl")
    return found, env


def copy_example(where: Path) -> Path:
    site = where / "example"
    shutil.copytree(EXAMPLE, site, ignore=shutil.ignore_patterns(".cache", "site", ".site*"))
    assert sorted(p.name for p in site.iterdir()) == ["docs", "excerpts.lock.toml", "mkdocs.yml"]
    return site


def check_cards(site_dir: Path, lock: Path) -> BeautifulSoup:
    """The example's page: three cards with their SWHIDs and the one omission marker."""
    html = (site_dir / "index.html").read_text(encoding="utf-8")
    soup = BeautifulSoup(html, "html.parser")
    cards = soup.select("div.pinned-excerpt")
    assert len(cards) == 3
    blob = load_lock(lock).file_id("openai/gpt-2", "src/model.py").sha1_git
    for card in cards:
        swhid = card.select_one(".pinned-excerpt__swhid code").get_text()
        assert swhid.startswith(f"swh:1:cnt:{blob};origin=https://github.com/openai/gpt-2;")
    omitted = [p.get_text() for p in soup.select(".pinned-excerpt__omitted")]
    assert omitted == ["… lines 72–100 omitted …"]
    return soup


def test_the_wheel_ships_every_data_file_of_the_generator(wheel) -> None:
    """The TOML tables, templates and stylesheets beside the code: one left out of pyproject's
    package-data would stop an installed generator at its first import ("not found")."""
    shipped = set(zipfile.ZipFile(wheel[0]).namelist())
    data = {
        path.relative_to(ROOT).as_posix()
        for path in (ROOT / "generator").rglob("*")
        if path.is_file() and path.suffix not in (".py", ".pyc")
    }
    assert sorted(data - shipped) == []


def test_the_light_install_pins_verifies_and_builds_the_example(wheel, tmp_path: Path) -> None:
    """The package alone installs MkDocs and pymdown-extensions, not the GPT-2 site's packages
    (it pulled numpy, matplotlib, Pillow, mini-racer and regex: 423 MB to quote code), and `itm`
    there pins, verifies and says what a site command needs, never a traceback (it imported
    numpy on start)."""
    built_wheel, env = wheel
    venv = new_venv(tmp_path / "venv")
    pip_install(venv, built_wheel, env=env, cwd=tmp_path)
    python, itm = venv / "bin" / "python", venv / "bin" / "itm"
    probe = "import importlib.util as u, sys; print([n for n in sys.argv[1:] if u.find_spec(n)])"
    present = run([python, "-c", probe, *SITE_EXTRA, "mkdocs", "pymdownx"], tmp_path, env, 60)
    assert present.stdout.strip() == "['mkdocs', 'pymdownx']", present.stdout + present.stderr
    where = run([python, "-c", "import generator; print(generator.__file__)"], tmp_path, env, 60)
    assert Path(where.stdout.strip()).is_relative_to(venv), where  # not the checkout's copy

    needs = run([itm, "forward", "--prompt", "hello"], tmp_path, env, 120)
    assert needs.returncode == 2 and "Traceback" not in needs.stderr, needs.stderr
    assert "pip install 'inside-the-model[site]'" in needs.stderr

    # a writer's first pin, from a clone, then a check of it with no network
    upstream = tmp_path / "upstream"
    commit = make_upstream(upstream, {"pkg/toy.py": TOY_V1})
    lock = tmp_path / "notes" / "excerpts.lock.toml"
    lock.parent.mkdir()
    common = ["--lock", lock, "--cache-dir", tmp_path / "cache"]
    pinned = run(
        [itm, "pin", "toy.helper", *common, "--repo", "toy/upstream", "--path", "pkg/toy.py",
         "--symbol", "helper", "--commit", commit, "--license", "MIT", "--git", upstream],
        tmp_path, env, 120,
    )  # fmt: skip
    assert pinned.returncode == 0, pinned.stdout + pinned.stderr
    verified = run([itm, "verify", "--offline", *common], tmp_path, env, 120)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert "1 of 1 excerpts verified" in verified.stdout

    # the example's own lock, found through its mkdocs.yml, read from the registry copies
    site = copy_example(tmp_path)
    verified = run([itm, "verify"], site, env, 600)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert "3 of 3 excerpts verified against excerpts.lock.toml" in verified.stdout

    # the example's theme is the writer's choice: Material, installed beside
    pip_install(venv, "mkdocs-material", env=env, cwd=tmp_path)
    blocking = BLOCKING_MKDOCS.format(blocked=["torch", "numpy", "matplotlib"])
    built = run([python, "-c", blocking, "build"], site, env, 900)
    assert built.returncode == 0, built.stdout + built.stderr
    check_cards(site / "site", site / "excerpts.lock.toml")
    pages = sorted(p.relative_to(site / "site").as_posix() for p in (site / "site").rglob("*.html"))
    assert pages == ["404.html", "index.html"]


ZENSICAL = "zensical==0.0.73"  # the newest that installs from the registries here


def test_the_example_builds_on_zensical_from_the_wheel(wheel, tmp_path: Path) -> None:
    """Zensical ignores MkDocs plugins and runs Markdown extensions: the example's
    `pinned_excerpts` extension verifies its lock and renders the same cards, its stylesheet in
    the page; a tampered pin stops the build. In a virtualenv of its own: Zensical's
    dependencies move versions the GPT-2 site's bytes depend on."""
    built_wheel, env = wheel
    venv = new_venv(tmp_path / "zensical-venv")
    pip_install(venv, ZENSICAL, built_wheel, env=env, cwd=tmp_path)
    site = copy_example(tmp_path)
    zensical = [venv / "bin" / "zensical", "build", "--clean"]
    built = run(zensical, site, env, 600)
    assert built.returncode == 0, built.stdout + built.stderr
    soup = check_cards(site / "site", site / "excerpts.lock.toml")
    styles = [s.get_text() for s in soup.select("style") if ".pinned-excerpt" in s.get_text()]
    assert len(styles) == 1  # the cards' stylesheet, once
    text = BeautifulSoup((site / "site" / "index.html").read_bytes(), "html.parser")
    for code in text.select("pre, code"):
        code.decompose()  # the page shows the syntax in a fence: that is not a block left
    assert "/// excerpt" not in text.get_text()

    lock = site / "excerpts.lock.toml"
    pinned = load_lock(lock).pin("gpt2.softmax").sha256
    lock.write_text(lock.read_text().replace(pinned, pinned[::-1]))
    refused = run(zensical, site, env, 600)
    assert refused.returncode != 0, refused.stdout
    message = refused.stdout + refused.stderr
    assert "Pinned excerpts: excerpts.lock.toml, entry 'gpt2.softmax'" in message, message

"""`itm expand`: the expanded docs tree builds the same site with plain MkDocs + Material, with
ProperDocs and with Zensical, without this project's plugin: the same pages with the same words
and numbers, the same generated files, and the math typeset in the browser by the pinned KaTeX."""

from __future__ import annotations

import posixpath
import re
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import pytest
from bs4 import BeautifulSoup

from tests.site_helpers import ROOT, build_env, serve
from tests.test_expand_refusals import Unfilled

pytestmark = pytest.mark.slow
GENERATOR_TAG = re.compile(rb'<meta name="generator" content="[^"]*">')


@pytest.fixture(scope="module")
def expanded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.conftest import TEST_SITE_URL

    out = tmp_path_factory.mktemp("expanded") / "tree"
    done = subprocess.run(
        [sys.executable, "-m", "generator.cli", "expand", str(out)],
        cwd=ROOT,
        env=build_env(SITE_URL=TEST_SITE_URL),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    plugins = (out / "mkdocs.yml").read_text().split("plugins:")[1]
    assert "inside-the-model" not in plugins and "- itm" not in plugins  # nor its old name
    return out


@pytest.fixture(scope="module")
def plain_build(expanded: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The expanded tree built by plain MkDocs, once for the tests that compare or load it."""
    site = tmp_path_factory.mktemp("plain") / "site"
    build_with("mkdocs", expanded, site)
    return site


def build_with(tool: str, tree: Path, site: Path) -> None:
    from tests.conftest import TEST_SITE_URL

    done = subprocess.run(
        [str(Path(sys.executable).with_name(tool)), "build", "-q", "--site-dir", str(site)],
        cwd=tree,
        env=build_env(SITE_URL=TEST_SITE_URL),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr


def article_text(page: Path | BeautifulSoup) -> str:
    """A page's article as a reader reads it, with the math left out (typeset at build time in
    the site, in the browser in the expanded build) and the links the site's build gives a term's
    first use reduced to their words (the expanded build has no plugin to add them)."""
    soup = page if isinstance(page, BeautifulSoup) else parsed(page)
    article = soup.find("article")
    assert article is not None, page
    for math in article.select(".arithmatex"):
        math.decompose()
    for term in article.select("a.itm-term"):
        term.unwrap()
    article.smooth()
    return " ".join(article.get_text(" ").split())


def test_plain_mkdocs_and_properdocs_build_the_same_site_from_the_expanded_tree(
    built_site: Path, expanded: Path, plain_build: Path, tmp_path: Path
) -> None:
    build_with("properdocs", expanded, tmp_path / "properdocs")
    pages = sorted(p.relative_to(built_site) for p in built_site.rglob("*.html"))
    assert pages == sorted(p.relative_to(plain_build) for p in plain_build.rglob("*.html"))
    for page in pages:
        assert article_text(plain_build / page) == article_text(built_site / page), page
        assert title(plain_build / page) == title(built_site / page), page  # a family's named
        ours = GENERATOR_TAG.sub(b"", (plain_build / page).read_bytes())
        assert ours == GENERATOR_TAG.sub(b"", (tmp_path / "properdocs" / page).read_bytes()), page
    # the generated files the pages load: byte for byte the site's
    for kind in ("figures", "tables", "forward", "walkthrough"):
        for path in (built_site / kind).rglob("*"):
            if path.is_file() and path.suffix != ".html":  # pages were compared above
                relative = path.relative_to(built_site)
                assert (plain_build / relative).read_bytes() == path.read_bytes(), relative


def test_zensical_builds_the_same_pages_from_the_expanded_tree(
    expanded: Path, plain_build: Path, tmp_path: Path
) -> None:
    """Zensical (in a venv of its own: tests/engines_helpers.py) builds the expanded tree with
    the same pages as MkDocs: each page's article text, <title> and links to the tree's files,
    and every file of the tree's docs/ that is not a page, byte for byte. It stopped building on
    2026-12-03: overrides/main.html read `page.meta.family` (MiniJinja refuses a missing key) and
    `page.parent` (Zensical has none)."""
    from tests.engines_helpers import zensical

    exe = zensical()
    tree = shutil.copytree(expanded, tmp_path / "tree")  # Zensical writes site/ and .cache/ in it
    done = subprocess.run(
        [str(exe), "build"], cwd=tree, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stdout + done.stderr
    site = tree / "site"
    pages = sorted(p.relative_to(plain_build) for p in plain_build.rglob("*.html"))
    assert sorted(p.relative_to(site) for p in site.rglob("*.html")) == pages
    for page in pages:
        assert reading(site, page, tree / "docs") == reading(plain_build, page, tree / "docs")
    for path in (tree / "docs").rglob("*"):
        if path.is_file() and path.suffix != ".md":  # the generated files, the assets
            relative = path.relative_to(tree / "docs")
            assert (site / relative).read_bytes() == (plain_build / relative).read_bytes()


def parsed(page: Path) -> BeautifulSoup:
    return BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser")


def title(page: Path | BeautifulSoup) -> str:
    soup = page if isinstance(page, BeautifulSoup) else parsed(page)
    return soup.title.get_text() if soup.title else ""


def reading(site: Path, page: Path, docs: Path) -> tuple[str, str, list[str]]:
    """What a page shows whatever the engine: its <title>, its article's text, and the docs
    files it links (stylesheets, scripts; the engine's own theme files left out)."""
    soup = parsed(site / page)
    linked = []
    for tag in soup.select("link[href], script[src]"):
        address = urljoin(f"/{page.parent.as_posix()}/", str(tag.get("href") or tag.get("src")))
        path = posixpath.normpath(urlsplit(address).path).lstrip("/")
        if (docs / path).is_file():
            linked.append(path)
    return title(soup), article_text(soup), sorted(linked)


@pytest.mark.browser
def test_the_expanded_site_typesets_its_math_in_the_browser(plain_build: Path, browser) -> None:
    with serve(plain_build) as url:
        page = browser.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(f"{url}components/attention/")
        page.wait_for_selector(".arithmatex .katex")
        raw = page.evaluate(
            "[...document.querySelectorAll('.arithmatex')].filter(e => !e.querySelector('.katex')).length"
        )
        lit = page.locator(".arithmatex [data-light]").count()
        page.close()
    assert errors == [] and raw == 0 and lit > 0


def test_an_expand_that_fails_making_its_files_stops_the_charts_worker(
    tmp_path: Path, monkeypatch
) -> None:
    """The charts' worker waits for the features' figures; when making the files fails (a
    prompt too long for the model, say), `itm expand` printed its error and then waited for that
    idle worker's deadline (60 s) before it could exit. It is stopped with the build."""
    from generator.build import SiteBuild
    from generator.drawing import Drawing, Figure
    from generator.errors import InputError
    from generator.expand import expand
    from tests.test_charts import delivered

    chart = Figure("figures/a.svg", "tests.test_charts:plain_figure", ("a",), "c3" * 32)
    drawings: list[Drawing] = []

    def start(cls: type[SiteBuild], settings) -> SiteBuild:  # the charts started, as on a miss
        drawings.append(Drawing([chart], tmp_path / "cache", workers=1, stall=3600))
        delivered(drawings[0])  # its worker drew the charts and waits
        return cls(settings=settings, memo=None, made=None, drawings=list(drawings))  # type: ignore[arg-type]

    def make_files(self: SiteBuild) -> None:  # what files() runs to make them
        raise InputError("the prompt is too long", entry="ITM_FORWARD_PROMPT")

    monkeypatch.setattr(SiteBuild, "start", classmethod(start))
    monkeypatch.setattr(SiteBuild, "_make_files", make_files)
    try:
        with pytest.raises(InputError, match="too long"):
            expand(ROOT / "mkdocs.yml", tmp_path / "tree")
        (worker,) = drawings[0].processes
        worker.join(timeout=120)  # a safety net: it has ended already
        assert worker.exitcode not in (None, 0)  # killed; left, it would wait for more figures
    finally:
        drawings[0].cancel()


def test_an_expand_that_fails_halfway_leaves_out_as_it_was(tmp_path: Path, monkeypatch) -> None:
    """A page that fails to fill after others were written left a half-written tree in OUT, which
    the next run refused as "not empty" (review): what was written is now cleared."""
    from generator.build import SiteBuild
    from generator.errors import InputError
    from generator.expand import expand

    real_fill = SiteBuild.fill
    filled: list[str] = []

    def fill(self: SiteBuild, source, addresses):
        if len(filled) == 3:
            raise InputError("a macro failed", file=f"docs/{source.src_uri}")
        filled.append(source.src_uri)
        return real_fill(self, source, addresses)

    monkeypatch.setattr(SiteBuild, "fill", fill)
    out = tmp_path / "tree"
    with pytest.raises(InputError, match="a macro failed"):
        expand(ROOT / "mkdocs.yml", out)
    assert len(filled) == 3  # pages were filled, and written, before the failure
    assert list(tmp_path.iterdir()) == [out] and list(out.iterdir()) == []  # no partial tree


@pytest.mark.parametrize("kind", ["symlink", "current folder", "left by an older version"])
def test_expand_writes_into_any_usable_out(tmp_path: Path, monkeypatch, kind: str) -> None:
    """The tree was written beside OUT and renamed onto it (e2ef41f): that failed after the whole
    build, with a traceback and a full tree left beside, on an OUT that is a symlink to an empty
    folder (rename onto a symlink) or "." (a rename onto the current folder), and a run killed
    while writing left a folder the next run could not clean (another pid). It is now written
    in OUT itself (tests/test_expand_refusals.py has a run killed halfway)."""
    from generator.build import SiteBuild
    from generator.expand import expand

    monkeypatch.setattr(SiteBuild, "start", classmethod(lambda cls, settings: Unfilled()))
    target = tmp_path / "target"
    target.mkdir()
    out = target
    if kind == "symlink":
        out = tmp_path / "link"
        out.symlink_to(target)
    elif kind == "current folder":
        monkeypatch.chdir(target)
        out = Path(".")
    else:
        # what a run of an older version killed while writing left: its tree, named after a
        # pid no process has (above Linux's limit)
        (target / ".itm-expand-partial-4194305" / "docs").mkdir(parents=True)
    pages = expand(ROOT / "mkdocs.yml", out)
    assert "index.md" in pages
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted(
        ["target"] + (["link"] if kind == "symlink" else [])
    )  # nothing left beside OUT
    assert sorted(path.name for path in target.iterdir()) == ["docs", "mkdocs.yml", "overrides"]
    assert (target / "docs" / "tables" / "a.tex").read_bytes() == b"a\n"
    assert kind != "symlink" or out.is_symlink()


def test_the_zensical_check_is_skipped_only_when_the_registry_is_unreachable(
    tmp_path: Path, monkeypatch
) -> None:
    """A registry that refuses connections skips the check, with the reason; a requirement that
    does not exist on a reachable registry fails it (no skip hides a wrong pin)."""
    import tempfile

    from tests.engines_helpers import _installed

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # a venv of its own, not the kept one
    monkeypatch.setenv("PIP_EXTRA_INDEX_URL", "")
    monkeypatch.setenv("PIP_FIND_LINKS", "")
    with monkeypatch.context() as offline:
        offline.setenv("PIP_INDEX_URL", "http://127.0.0.1:9/simple")  # the discard port: refused
        exe, reason = _installed.__wrapped__("zensical==0.0.73", "zensical")
    assert exe is None and "registry is unreachable" in reason
    try:
        exe, reason = _installed.__wrapped__("zensical==0.0.0.1", "zensical")
    except AssertionError as error:
        assert "pip install zensical==0.0.0.1 failed" in str(error)
    else:
        pytest.skip(f"{reason} (the refused registry's half passed)")

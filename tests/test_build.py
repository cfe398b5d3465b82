"""Whole builds: byte-identical output, and a bad pin that stops the build and keeps the old site."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from tests.site_helpers import ROOT, mkdocs_build, tree_digest

pytestmark = pytest.mark.slow


def test_two_builds_of_one_commit_are_byte_identical(built_site: Path, cold_build) -> None:
    """The second build (conftest's cold_build) starts from an empty cache (everything fetched,
    figures drawn, nothing reused) and, like every test build, runs with torch unimportable
    (mkdocs_build): a cold build needs no torch and gives the same bytes as the session's build."""
    first_digest, second_digest = tree_digest(built_site), tree_digest(cold_build.site)
    assert first_digest.keys() == second_digest.keys()
    differing = [path for path in first_digest if first_digest[path] != second_digest[path]]
    assert differing == []


def test_the_sites_own_scripts_and_stylesheets_ship_minified(built_site: Path) -> None:
    """Every script and stylesheet of docs/ is served without its comments, smaller (the browser
    tests prove the walkthrough and the pages still run on them)."""
    own = sorted((ROOT / "docs" / "assets").glob("*.[jc]s*"))
    assert {p.suffix for p in own} == {".js", ".css"}
    for source in own:
        served = (built_site / "assets" / source.name).read_text(encoding="utf-8")
        assert "/*" in source.read_text(encoding="utf-8")
        assert "/*" not in served and len(served) < 0.85 * source.stat().st_size, source.name
    # the theme's own scripts and stylesheets are shipped as Material ships them
    import material

    theme = Path(material.__file__).parent / "templates" / "assets"
    shipped = [p for p in theme.rglob("*.min.[jc]s*") if p.suffix in (".js", ".css")]
    assert len(shipped) > 3
    for path in shipped:
        served_path = built_site / "assets" / path.relative_to(theme)
        if served_path.exists():
            assert served_path.read_bytes() == path.read_bytes(), path.name


def project_copy(tmp_path: Path) -> Path:
    """The project's build inputs in a scratch directory (so a test can break one)."""
    copy = tmp_path / "project"
    for name in ("docs", "generator", "sources", "overrides"):
        shutil.copytree(ROOT / name, copy / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "mkdocs.yml", copy / "mkdocs.yml")
    return copy


def test_a_pin_whose_hash_does_not_match_stops_the_build_and_keeps_the_old_site(
    built_site: Path, tmp_path: Path
) -> None:
    """The previous site is the session's build (a build of its own proved nothing more)."""
    project = project_copy(tmp_path)
    site = project / "site"
    shutil.copytree(built_site, site)
    before = tree_digest(site)

    # Break the attention excerpt's hash: flip its last hex digit.
    lock = project / "sources" / "lock.toml"
    text = lock.read_text()
    good = "05b8b58a1bbd1e0cd1ac46dd7177a0b7023f305ac3869658d73767856cbab32c"
    assert good in text
    bad = good[:-1] + ("d" if good[-1] != "d" else "e")
    lock.write_text(text.replace(good, bad))

    second = mkdocs_build(site, config_dir=project)
    assert second.returncode != 0
    message = second.stdout + second.stderr
    assert "sources/lock.toml" in message
    assert "gpt2.attn" in message  # the pin, by id
    assert re.search(r"fix:", message)
    assert tree_digest(site) == before  # the previous site/ is intact


def test_a_figure_no_worker_can_draw_stops_the_build_after_the_pages_and_keeps_the_old_site(
    tmp_path: Path,
) -> None:
    """The figures are awaited only once MkDocs has written every page (on_post_build), so the
    workers draw while the pages are built: a drawing that fails then still stops the build with
    the figure named, no traceback, and the previous site/ as it was."""
    project = project_copy(tmp_path)
    site = project / "site"
    site.mkdir()
    (site / "index.html").write_text("the previous site")
    before = tree_digest(site)
    charts = project / "generator" / "charts.py"
    signature = "def render_chart(figure: str, size: str, narrow: bool = False) -> bytes:\n"
    assert signature in charts.read_text()
    charts.write_text(
        charts.read_text().replace(signature, signature + '    raise ValueError("no axes")\n')
    )
    result = mkdocs_build(site, config_dir=project)
    assert result.returncode != 0
    # The build's own error, first: the figure named; the worker's traceback is quoted after it
    ours = result.stderr.split("Inside the Model: ", 1)
    assert len(ours) == 2 and "Traceback" not in ours[0], result.stderr
    assert re.match(r"[^\n]*figures/[a-z0-9-]+\.svg", ours[1]), result.stderr
    assert "no axes" in ours[1]
    assert tree_digest(site) == before  # nothing published
    assert not list(project.glob(".site.staging-*"))  # and nothing left behind


# A hook of the test's, first of every on_post_build (ours waits for the figures at 100): it says
# on a FIFO that MkDocs has written every page, and when.
ANNOUNCE_HOOK = """
from mkdocs.plugins import event_priority

@event_priority(101)
def on_post_build(config):
    with open({fifo!r}, "w") as announce:
        announce.write(config.site_dir + "\\n")
"""


def test_the_pages_are_written_while_a_figure_is_still_being_drawn(tmp_path: Path) -> None:
    """The build waits for its figures only after MkDocs has written every page: with the charts'
    worker held at a gate, the build still reaches on_post_build (every page written, the figure
    still an empty placeholder, the search index not written yet), then finishes with the real
    bytes once the gate opens. A build that waited for the figures before writing pages would
    never get there, and this test would fail at its safety deadline. Both waits are on events:
    the worker reads the gate (a FIFO), the test reads the hook's FIFO."""
    import os
    import select
    import subprocess
    import sys
    import time

    from generator.charts import chart_figures
    from tests.site_helpers import BLOCKING_MKDOCS, build_env, page_address
    from tests.test_site_pages import nav_pages

    project = project_copy(tmp_path)
    gate, announced = tmp_path / "gate", tmp_path / "announced"
    os.mkfifo(gate)
    os.mkfifo(announced)
    charts = project / "generator" / "charts.py"
    signature = "def render_chart(figure: str, size: str, narrow: bool = False) -> bytes:\n"
    held = f"    __import__('os').read(__import__('os').open({str(gate)!r}, 0), 1)  # the gate\n"
    assert signature in charts.read_text()
    charts.write_text(charts.read_text().replace(signature, signature + held))
    (project / "announce.py").write_text(ANNOUNCE_HOOK.format(fifo=str(announced)))
    config = project / "mkdocs.yml"
    config.write_text(config.read_text() + "hooks:\n  - announce.py\n")
    # held open for writing by the test (O_RDWR: opening never blocks): each chart's read waits
    # until the test writes a byte for it
    gate_end = os.open(gate, os.O_RDWR)
    announce_end = os.open(announced, os.O_RDONLY | os.O_NONBLOCK)
    site = project / "site"
    build = subprocess.Popen(
        [sys.executable, "-c", BLOCKING_MKDOCS.format(blocked=["torch"]), "build"],
        cwd=project,
        env=build_env(ITM_DRAW_TIMEOUT="900"),  # the held worker sends nothing meanwhile
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert build.stderr is not None
    logged = bytearray()  # the build's stderr, read while we wait: a full pipe would block it
    deadline = time.monotonic() + 600  # a safety net: one of the two events comes
    try:
        while True:  # until the hook's event, or the build's end (its stderr closes)
            left = max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select([announce_end, build.stderr.fileno()], [], [], left)
            assert ready, "the pages were not written while a figure was held"
            if announce_end in ready:
                break
            chunk = os.read(build.stderr.fileno(), 1 << 16)
            assert chunk, "the build ended first:\n" + logged.decode(errors="replace")
            logged += chunk
        staging = Path(os.read(announce_end, 4096).decode().strip())
        assert staging.name.startswith(".site.staging-")
        for page in nav_pages():
            assert (staging / page_address(page) / "index.html").is_file(), page
        assert (staging / "figures" / "params-gpt2.svg").stat().st_size == 0  # still being drawn
        assert not (staging / "search" / "search_index.json").exists()  # on_post_build waits
        # one byte per chart, twice over: a worker ended by its deadline has its figures redrawn
        os.write(gate_end, b"x" * (2 * len(chart_figures())))
        _, rest = build.communicate(timeout=600)
        stderr = logged.decode(errors="replace") + rest
    finally:
        if build.poll() is None:
            build.kill()
            build.wait()
        os.close(gate_end)
        os.close(announce_end)
    assert build.returncode == 0, stderr
    assert (site / "figures" / "params-gpt2.svg").read_bytes().startswith(b"<?xml")
    assert os.path.getsize(site / "search" / "search_index.json") > 0


def test_serve_regenerates_when_the_generator_changes(tmp_path: Path) -> None:
    """`mkdocs serve` watches generator/ and sources/ and re-imports the generator on rebuild."""
    import subprocess
    import sys
    import time
    import urllib.request

    from tests.site_helpers import build_env, free_port

    project = project_copy(tmp_path)
    port = free_port()
    mkdocs = Path(sys.executable).with_name("mkdocs")
    log = tmp_path / "serve.log"
    with log.open("w") as out:
        server = subprocess.Popen(
            [str(mkdocs), "serve", "-a", f"127.0.0.1:{port}"],
            cwd=project,
            env=build_env(),
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}/components/mlp/"

    def page() -> str:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.read().decode()

    def wait_for(predicate, what: str) -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                if predicate():
                    return
            except OSError:
                pass
            time.sleep(0.5)
        raise AssertionError(f"timed out waiting for {what}:\n{log.read_text()}")

    try:
        wait_for(lambda: "Transforms each token on its own" in page(), "the first build")
        registry = project / "generator" / "models" / "gpt2" / "family.toml"
        registry.write_text(
            registry.read_text().replace("Transforms each token", "Transforms every token")
        )
        wait_for(lambda: "Transforms every token on its own" in page(), "the rebuild")
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_a_page_asset_that_does_not_exist_stops_the_build(tmp_path: Path) -> None:
    """overrides/main.html links a page's page_css/page_js; a typo is an error, not a 404."""
    project = project_copy(tmp_path)
    page = project / "docs" / "forward-pass.md"
    page.write_text(page.read_text().replace("assets/forward.css", "assets/froward.css"))
    result = mkdocs_build(project / "site", config_dir=project)
    assert result.returncode != 0
    message = result.stdout + result.stderr
    assert "docs/forward-pass.md" in message and "assets/froward.css" in message
    assert not (project / "site").exists()


@pytest.mark.parametrize("front", ["page_css: 5", "component: [x]", "family: gtp2"])
def test_front_matter_of_the_wrong_kind_stops_the_build_naming_page_and_key(
    tmp_path: Path, front: str
) -> None:
    """Issue 35: `page_css: 5` failed in the plugin's own asset check, `component: [x]` in the
    page's macros, each with a TypeError traceback; an unknown family named no page."""
    project = project_copy(tmp_path)
    page = project / "docs" / "forward-pass.md"
    key = front.split(":")[0]
    lines = [line for line in page.read_text().split("\n") if not line.startswith(f"{key}:")]
    assert lines[0] == "---"
    page.write_text("\n".join(["---", front, *lines[1:]]))
    result = mkdocs_build(project / "site", config_dir=project)
    message = result.stdout + result.stderr
    assert result.returncode != 0 and "Traceback" not in message, message
    assert f"docs/forward-pass.md, entry '{key}': " in message, message
    assert not (project / "site").exists()


def test_the_test_builds_fail_when_a_build_imports_torch(tmp_path: Path) -> None:
    """mkdocs_build makes torch unimportable; a site whose hook imports it must fail, even when
    the hook swallows the ImportError."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.md").write_text("# x\n")
    (tmp_path / "hook.py").write_text("try:\n    import torch\nexcept ImportError:\n    pass\n")
    (tmp_path / "mkdocs.yml").write_text("site_name: x\nhooks:\n  - hook.py\n")
    result = mkdocs_build(tmp_path / "site", config_dir=tmp_path)
    assert result.returncode != 0
    assert "the build tried to import ['torch']" in result.stderr


def test_a_hook_that_changes_page_content_changes_every_page_on_cold_and_warm_builds(
    copy_builds,
) -> None:
    """Math not in the store is typeset on a thread and the page's content replaced in on_env:
    that once dropped what a later plugin or hook had changed in the page, on the pages that
    were not typeset before only (so a cold build lost it where a warm one kept it). The builds
    are conftest's copy_builds: a project copy with a hook (HOOK), its cache without typeset
    pages, built cold then warm."""
    pages = sorted(copy_builds.cold.rglob("index.html"))
    assert len(pages) > 10
    assert [p for p in pages if "hook-marker" not in p.read_text(encoding="utf-8")] == []
    assert tree_digest(copy_builds.cold) == tree_digest(copy_builds.warm)


def test_a_build_that_typeset_pages_afresh_prunes_the_cache(copy_builds, tmp_path: Path) -> None:
    """A build that replays every page from the memo skips pruning (it stores nothing new), but
    one whose pages' HTML changed (here mkdocs.yml's permalink sign) stores each page typeset
    afresh: 2.2 MB a build, and the cache grew without bound while every build replayed. The
    first two builds are conftest's copy_builds (its own memo, then everything replayed: not
    recorded, nothing pruned); this test's build is the third."""
    project, builds = copy_builds.project, copy_builds.cache / "builds.json"
    replayed = json.loads(builds.read_text())
    config = project / "mkdocs.yml"
    before = config.read_text()
    config.write_text(before.replace("permalink: true", 'permalink: "#"'))
    try:
        result = mkdocs_build(
            tmp_path / "site", config_dir=project, ITM_CACHE_DIR=str(copy_builds.cache)
        )
    finally:
        config.write_text(before)
    assert result.returncode == 0, result.stderr
    assert json.loads(builds.read_text()) != replayed  # typeset afresh: recorded, and pruned

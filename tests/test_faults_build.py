"""Fault injection, real builds: SIGINT and SIGTERM sent to a real `mkdocs build` while it writes
pages. The previous site must stay complete and byte-identical, and nothing half-built is left
published (issue 11: Ctrl-C swapped a site without index.html in)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from generator.publish import repair
from tests.site_helpers import ROOT, build_env, mkdocs_build, tree_digest

pytestmark = pytest.mark.slow


# `mkdocs build` whose pages each take 0.2 s longer to build: on an idle machine a warm build
# writes every page in well under a second, so without this the signal could arrive after the
# build had finished (seen in CI) and the test would prove nothing.
SLOW_PAGES_MKDOCS = """
import sys
import time

from mkdocs.__main__ import cli
from mkdocs.commands import build

build_page = build._build_page


def slow_build_page(*args, **kwargs):
    result = build_page(*args, **kwargs)
    time.sleep(0.2)
    return result


build._build_page = slow_build_page
cli.main(args=sys.argv[1:], prog_name="mkdocs")
"""


def start_build(site_dir: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", SLOW_PAGES_MKDOCS, "build", "--site-dir", str(site_dir)],
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


def _garbage(path: Path) -> None:
    path.write_bytes(b"\x00garbage\n" * 10)


def _rotate(paths: list[Path]) -> None:
    """Each file gets the next one's bytes: every figure now sits under another's name."""
    contents = [p.read_bytes() for p in paths]
    for path, data in zip(paths, contents[1:] + contents[:1], strict=True):
        path.write_bytes(data)


def _edit_payload(path: Path) -> None:
    head, _, payload = path.read_bytes().partition(b"\n")
    path.write_bytes(head + b"\n" + payload.replace(b"self", b"seIf", 1) + b"# injected\n")


def _directory(path: Path) -> None:
    path.unlink()
    (path / "x").mkdir(parents=True)


HUGE = 16 << 30  # sparse (no disk used), twice the build's memory cap: read whole, it stops it
BUILD_MEMORY = 8 << 30  # address space a tampered build may take (it runs in under 3 GB)


def _huge(files: list[Path]) -> None:
    """Each file grown to 16 GB: one such memo entry ran every build out of memory (issue 35)."""
    for path in files:
        os.truncate(path, HUGE)


TAMPER = {
    "figure-garbage": ("figure", lambda files: [_garbage(f) for f in files]),
    "figures-swapped": ("figure", _rotate),
    "typeset-garbage": ("katex", lambda files: [_garbage(f) for f in files]),
    "readable-garbage": ("readable_page", lambda files: [_garbage(f) for f in files]),
    "font-garbage": ("font", lambda files: [_garbage(f) for f in files]),
    "excerpt-edited": ("excerpts", lambda files: [_edit_payload(f) for f in files]),
    "blob-truncated": (
        "sha256",
        lambda files: [f.write_bytes(f.read_bytes()[:100]) for f in files],
    ),
    "blob-is-a-directory": ("sha256", lambda files: [_directory(f) for f in files]),
    "figures-huge": ("figure", _huge),
    "typeset-huge": ("katex", _huge),
    "templates-huge": ("jinja", _huge),
    "excerpts-huge": ("excerpts", _huge),
    "blobs-huge": ("sha256", _huge),
    "fonts-huge": ("font", _huge),
}
# Damage in different folders, several kinds per build (a build each would be slow for CI): a
# round damages each folder one way, and each folder must be named as discarded.
ROUNDS = {
    "swapped-edited-truncated": ("figures-swapped", "excerpt-edited", "blob-truncated"),
    "garbage-directory": (
        "typeset-garbage",
        "blob-is-a-directory",
        "figure-garbage",
        "readable-garbage",
        "font-garbage",
    ),
    "huge": (
        "figures-huge",
        "typeset-huge",
        "templates-huge",
        "excerpts-huge",
        "blobs-huge",
        "fonts-huge",
    ),
}


def _copy_cache(source: Path, target: Path) -> Path:
    """A copy of a cache with its signing key and without its memo entries, so a build takes
    the cold path and reads the figures, typeset pages, excerpts and archives themselves."""
    shutil.copytree(source, target, ignore=shutil.ignore_patterns("memo_*"))
    shutil.copy2(source.with_name(source.name + ".key"), target.with_name(target.name + ".key"))
    return target


@pytest.fixture(scope="module")
def read_cache(cold_build) -> tuple[Path, float]:
    """A cache filled by one build of this very site (conftest's cold_build, from an empty
    cache), and when that build started: the shared .cache/ holds entries of other tests' builds
    too, and prunes what recent builds did not use."""
    return cold_build.cache, cold_build.started


@pytest.mark.parametrize("round_", list(ROUNDS))
def test_a_tampered_cache_is_rebuilt_and_the_site_is_the_same(
    built_site, read_cache, tmp_path, round_
):
    """Every kind of damage to the entries a build reads: a warning, a rebuild, the same bytes."""
    from tests.conftest import TEST_SITE_URL

    source, started = read_cache
    cache = _copy_cache(source, tmp_path / "cache")
    for case in ROUNDS[round_]:
        folder, tamper = TAMPER[case]
        files = sorted(
            p
            for p in (cache / folder).rglob("*")
            if p.is_file() and (source / p.relative_to(cache)).stat().st_mtime >= started
        )
        assert files, f"nothing the build read is cached under {folder}"
        tamper(files)
    result = mkdocs_build(
        tmp_path / "site",
        memory_cap=BUILD_MEMORY,
        ITM_CACHE_DIR=str(cache),
        SITE_URL=TEST_SITE_URL,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Traceback" not in result.stderr
    for folder in {TAMPER[case][0] for case in ROUNDS[round_]}:
        assert f"{cache / folder}" in result.stderr and "discarded" in result.stderr, folder
    assert tree_digest(tmp_path / "site") == tree_digest(built_site)


@pytest.mark.parametrize(
    ("cache", "problem"),
    [
        ("cache", "is a file, not a directory"),
        ("a" * 300, "a name in its path is 300 bytes long"),  # was an ENAMETOOLONG traceback
    ],
    ids=["a-file", "a-name-too-long"],
)
def test_a_cache_dir_that_cannot_be_one_stops_the_build_clearly(
    built_site, tmp_path, cache: str, problem: str
) -> None:
    site = tmp_path / "site"
    shutil.copytree(built_site, site)
    before = tree_digest(site)
    if cache == "cache":
        (tmp_path / cache).write_text("not a folder")
    result = mkdocs_build(site, ITM_CACHE_DIR=str(tmp_path / cache))
    assert result.returncode != 0 and "Traceback" not in result.stderr
    assert problem in result.stderr and "fix: " in result.stderr
    assert tree_digest(site) == before


# -- a full disk while MkDocs writes the site (issue 24): a clean error, the old site intact ------
# `mkdocs build` whose page writes fail with ENOSPC after a few files, as on a full disk.
FULL_DISK_MKDOCS = """
import errno
import os
import sys

from mkdocs import utils
from mkdocs.__main__ import cli

write_file = utils.write_file
written = []


def full_disk(content, output_path):
    written.append(output_path)
    if len(written) > 3:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))  # as write() raises it: no name
    write_file(content, output_path)


utils.write_file = full_disk
cli.main(args=sys.argv[1:], prog_name="mkdocs")
"""

# The real thing: the site on a tmpfs with room for it and half of a second copy, in a private
# mount namespace; what the disk holds afterwards is copied out for the test to look at.
TMPFS_BUILD = """
set -e
mount -t tmpfs -o size="$SIZE" tmpfs "$DISK"
cp -a "$BUILT" "$DISK/site"
set +e
"$PYTHON" -c "$MKDOCS" build --site-dir "$DISK/site" > "$OUT" 2>&1
echo $? > "$CODE"
cp -a "$DISK/." "$AFTER"
"""


def _disk_bytes(folder: Path) -> int:
    """What a tmpfs needs to hold `folder`: whole 4 KiB pages per file and per folder."""
    paths = [folder, *folder.rglob("*")]
    return sum(4096 * (1 + (p.stat().st_size if p.is_file() else 0) // 4096) for p in paths)


@pytest.mark.parametrize("how", ["injected", "tmpfs"])
def test_a_full_disk_while_mkdocs_writes_is_a_clean_error(built_site, tmp_path, how) -> None:
    """ENOSPC from MkDocs' own writes went out as an OSError traceback."""
    from tests.site_helpers import NO_TORCH_MKDOCS

    before = tree_digest(built_site)
    if how == "injected":
        site = tmp_path / "site"
        shutil.copytree(built_site, site)
        result = subprocess.run(
            [sys.executable, "-c", FULL_DISK_MKDOCS, "build", "--site-dir", str(site)],
            cwd=ROOT,
            env=build_env(),
            capture_output=True,
            text=True,
            timeout=600,
        )
        code, output, after = result.returncode, result.stdout + result.stderr, tmp_path
    else:
        if shutil.which("unshare") is None:
            pytest.skip("no unshare here")
        disk = tmp_path / "disk"
        disk.mkdir()
        probe = subprocess.run(
            ["unshare", "-m", "mount", "-t", "tmpfs", "tmpfs", str(disk)], capture_output=True
        )
        if probe.returncode != 0:
            pytest.skip(f"mounting is not allowed here: {probe.stderr.decode().strip()}")
        after = tmp_path / "after"
        after.mkdir()
        room = _disk_bytes(built_site) * 3 // 2
        env = build_env(
            SIZE=str(room), DISK=str(disk), BUILT=str(built_site), PYTHON=sys.executable
        )
        env.update(MKDOCS=NO_TORCH_MKDOCS, OUT=str(tmp_path / "out"), CODE=str(tmp_path / "code"))
        env["AFTER"] = str(after)
        subprocess.run(["unshare", "-m", "sh", "-c", TMPFS_BUILD], cwd=ROOT, env=env, timeout=600)
        code = int((tmp_path / "code").read_text())
        output = (tmp_path / "out").read_text()
    assert code != 0 and "Traceback" not in output, output
    assert "No space left on device" in output and "free some space" in output, output
    assert tree_digest(after / "site") == before  # the previous site, whole and unchanged
    assert not list(after.glob(".site.staging-*")) and not (after / ".site.old").exists()


# -- a read-only checkout (issue 24) ----------------------------------------------------------------
READ_ONLY_BUILDS = """
set -e
mount --bind "$PROJECT" "$PROJECT"
mount -o remount,bind,ro "$PROJECT"
cd "$PROJECT"
set +e
"$PYTHON" -c "$MKDOCS" build > "$OUT/inside" 2>&1
echo $? > "$OUT/inside.code"
"$PYTHON" -c "$MKDOCS" build --site-dir "$OUT/site" > "$OUT/outside" 2>&1
echo $? > "$OUT/outside.code"
"""


def test_a_read_only_checkout_builds_elsewhere_or_stops_clearly(tmp_path: Path) -> None:
    """A checkout mounted read-only, its cache inside it: a build into the checkout's own site/
    stopped with an OSError traceback (the build lock); one into a writable folder works, saying
    once that the cache cannot be written."""
    from tests.site_helpers import NO_TORCH_MKDOCS
    from tests.test_build import project_copy

    if shutil.which("unshare") is None:
        pytest.skip("no unshare here")
    project = project_copy(tmp_path)
    probe = subprocess.run(
        ["unshare", "-m", "mount", "--bind", str(project), str(project)], capture_output=True
    )
    if probe.returncode != 0:
        pytest.skip(f"mounting is not allowed here: {probe.stderr.decode().strip()}")
    shutil.copytree(ROOT / ".cache", project / ".cache")  # warm, and read-only with the rest
    shutil.copy(ROOT / ".cache.key", project / ".cache.key")
    out = tmp_path / "out"
    out.mkdir()
    env = build_env(PROJECT=str(project), OUT=str(out), PYTHON=sys.executable)
    env.update(MKDOCS=NO_TORCH_MKDOCS, ITM_CACHE_DIR=str(project / ".cache"))
    env["ITM_FORWARD_PROMPT"] = "the cat sat on the mat and the cat sat"  # a page to compute
    subprocess.run(["unshare", "-m", "sh", "-c", READ_ONLY_BUILDS], env=env, timeout=1200)
    inside = (out / "inside").read_text()
    assert int((out / "inside.code").read_text()) != 0 and "Traceback" not in inside, inside
    assert "Read-only file system" in inside and "set site_dir" in inside, inside
    assert not (project / "site").exists()
    outside = (out / "outside").read_text()
    assert int((out / "outside.code").read_text()) == 0, outside
    assert "Traceback" not in outside and (out / "site" / "index.html").is_file()
    assert outside.count("cannot write the cache") <= 1, outside


def test_an_out_of_range_source_date_epoch_stops_the_build_clearly(built_site, tmp_path) -> None:
    """SOURCE_DATE_EPOCH=99999999999 passed isdigit() and stopped MkDocs with a struct.error
    traceback while it gzipped the sitemap, after the whole build."""
    site = tmp_path / "site"
    shutil.copytree(built_site, site)
    before = tree_digest(site)
    result = mkdocs_build(site, SOURCE_DATE_EPOCH="99999999999")
    assert result.returncode != 0 and "Traceback" not in result.stderr, result.stderr
    assert "SOURCE_DATE_EPOCH='99999999999' is out of range" in result.stderr
    assert tree_digest(site) == before


def test_a_fifo_or_a_device_in_docs_stops_the_build_clearly(tmp_path: Path) -> None:
    """A FIFO named like a page hung the build forever (MkDocs reads each page whole); a symlink
    to /dev/zero named like an image filled 27 GB of disk in a minute (unit-tested in
    test_faults_inputs.py: here, a regression would fill the disk)."""
    from tests.test_build import project_copy

    project = project_copy(tmp_path)
    os.mkfifo(project / "docs" / "notes.md")
    result = mkdocs_build(tmp_path / "site", config_dir=project)
    assert result.returncode != 0 and "Traceback" not in result.stderr, result.stderr
    assert "docs/notes.md: is a FIFO (a named pipe), not a file" in result.stderr
    assert not (tmp_path / "site").exists()


def test_a_page_that_is_not_utf8_stops_the_build_clearly(tmp_path: Path) -> None:
    """MkDocs decodes each page as UTF-8: a page of other bytes was a UnicodeDecodeError
    traceback (issue 24's re-run). The plugin reads each page first and names the byte."""
    from tests.test_build import project_copy

    project = project_copy(tmp_path)
    (project / "docs" / "notes.md").write_bytes(b"# Notes\n\n\xff\xfe caf\xe9\n")
    result = mkdocs_build(tmp_path / "site", config_dir=project)
    assert result.returncode != 0 and "Traceback" not in result.stderr, result.stderr
    assert "docs/notes.md: not UTF-8 text (byte 0xFF at offset 9)" in result.stderr
    assert not (tmp_path / "site").exists()


@pytest.mark.parametrize(
    "kind",
    [
        "main.html missing",
        "main.html a folder",
        "main.html a FIFO",
        "main.html binary",
        "site.js missing",
        "site.js binary",
    ],
)
def test_a_lost_theme_template_or_site_script_stops_the_build(tmp_path: Path, kind: str) -> None:
    """Issue 24's re-run: without overrides/main.html (missing, a folder, a FIFO) Material's own
    main.html was used and every page lost its page_css and page_js, with exit 0; a binary one
    was a UnicodeDecodeError traceback; a missing assets/site.js was linked from every page."""
    from tests.test_build import project_copy

    project = project_copy(tmp_path)
    main = project / "overrides" / "main.html"
    {
        "main.html missing": lambda: main.unlink(),
        "main.html a folder": lambda: (main.unlink(), main.mkdir()),
        "main.html a FIFO": lambda: (main.unlink(), os.mkfifo(main)),
        "main.html binary": lambda: main.write_bytes(b"{% extends 'base.html' %}\xff"),
        "site.js missing": lambda: (project / "docs" / "assets" / "site.js").unlink(),
        "site.js binary": lambda: (project / "docs" / "assets" / "site.js").write_bytes(b"\xff"),
    }[kind]()
    result = mkdocs_build(tmp_path / "site", config_dir=project)
    assert result.returncode != 0 and "Traceback" not in result.stderr, result.stderr
    named = "site.js" if kind.startswith("site.js") else "main.html"
    assert named in result.stderr, result.stderr
    assert not (tmp_path / "site").exists()


def test_a_yaml_alias_bomb_in_front_matter_builds_under_a_memory_cap(tmp_path: Path) -> None:
    """Issue 35: a page whose front matter holds a 9-level "billion laughs" (a few hundred
    bytes) ran out of memory after 222 s, where plain MkDocs builds it at once: the page's
    memo key expanded every alias. Capped at 4 GB, it builds."""
    from tests.test_build import project_copy
    from tests.test_memo import alias_bomb

    project = project_copy(tmp_path)
    page = project / "docs" / "glossary.md"  # its front matter, then {{ glossary() }}
    page.write_text(page.read_text().replace("---\n", "---\n" + alias_bomb(), 1))
    result = mkdocs_build(tmp_path / "site", config_dir=project, memory_cap=4 << 30)
    assert result.returncode == 0, result.stderr
    assert '<h1 id="notation">Notation' in (tmp_path / "site/glossary/index.html").read_text()

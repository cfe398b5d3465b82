"""Fault injection, publishing: two builds at once, a build killed mid-swap, failures and leftovers.
generator.publish is driven directly (real processes, real flock, real renames); the real
`mkdocs build` under SIGINT/SIGTERM is in test_faults_build.py."""

from __future__ import annotations

import multiprocessing
import os
import time
from pathlib import Path

import pytest

from generator.errors import InputError
from generator.publish import Publication, exchange, repair


def make_site(path: Path, marker: str, files: int = 20) -> None:
    path.mkdir(parents=True)
    (path / "index.html").write_text(marker)
    for i in range(files):
        (path / f"page{i}.html").write_text(f"{marker} {i}")


def is_complete(path: Path, marker: str, files: int = 20) -> bool:
    found = sorted(p.name for p in path.iterdir())
    expected = sorted(["index.html", *(f"page{i}.html" for i in range(files))])
    return found == expected and (path / "index.html").read_text() == marker


def test_commit_replaces_the_site_and_leaves_nothing_behind(tmp_path: Path) -> None:
    site = tmp_path / "site"
    make_site(site, "old")
    publication = Publication.begin(site, say=lambda m: None)
    os.rmdir(publication.staging)
    make_site(publication.staging, "new")
    publication.commit()
    assert is_complete(site, "new")
    assert sorted(p.name for p in tmp_path.iterdir()) == [".site.lock", "site"]
    assert oct(site.stat().st_mode & 0o777) != "0o700"  # readable like any built site


def test_abandon_keeps_the_previous_site(tmp_path: Path) -> None:
    site = tmp_path / "site"
    make_site(site, "old")
    publication = Publication.begin(site, say=lambda m: None)
    (publication.staging / "partial.html").write_text("half")
    publication.abandon()
    assert is_complete(site, "old") and not list(tmp_path.glob(".site.staging-*"))


def test_the_swap_is_one_atomic_exchange(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    make_site(a, "A")
    make_site(b, "B")
    if not exchange(a, b):
        pytest.skip("this file system has no renameat2(RENAME_EXCHANGE)")
    assert is_complete(a, "B") and is_complete(b, "A")


def test_a_kill_between_the_two_renames_is_repaired_first(tmp_path: Path) -> None:
    """The fallback swap renames site -> .site.old, then staging -> site; a SIGKILL between the
    two leaves no site/. The next build's begin() puts the old one back before anything else."""
    site = tmp_path / "site"
    make_site(tmp_path / ".site.old", "old")
    make_site(tmp_path / ".site.staging-dead", "half", files=3)
    messages: list[str] = []
    publication = Publication.begin(site, say=messages.append)
    assert is_complete(site, "old")
    assert not (tmp_path / ".site.old").exists() and not (tmp_path / ".site.staging-dead").exists()
    assert any("restored" in m for m in messages)
    publication.abandon()
    repair(site)  # idempotent
    assert is_complete(site, "old")


def _build(site: str, marker: str, hold: float, started) -> None:
    publication = Publication.begin(Path(site), say=lambda m: None)
    started.put(marker)
    os.rmdir(publication.staging)
    publication.staging.mkdir()
    for i in range(20):  # a slow build: other builds must not interleave their files
        (publication.staging / f"page{i}.html").write_text(f"{marker} {i}")
        time.sleep(hold / 20)
    (publication.staging / "index.html").write_text(marker)
    publication.commit()


def test_two_builds_of_one_checkout_take_turns(tmp_path: Path) -> None:
    """Issue 11: two builds shared one staging folder and left 2-14 of 141 files."""
    site = tmp_path / "site"
    make_site(site, "old")
    context = multiprocessing.get_context("fork")
    started = context.Queue()
    builds = [
        context.Process(target=_build, args=(str(site), marker, 0.6, started))
        for marker in ("first", "second")
    ]
    for build in builds:
        build.start()
    for build in builds:
        build.join(timeout=30)
    assert [b.exitcode for b in builds] == [0, 0]
    last = [started.get(timeout=1), started.get(timeout=1)][-1]
    assert is_complete(site, last)  # the later build's whole site, nothing mixed
    assert sorted(p.name for p in tmp_path.iterdir()) == [".site.lock", "site"]


def test_a_second_build_that_cannot_wait_stops_with_a_clear_error(tmp_path: Path) -> None:
    site = tmp_path / "site"
    first = Publication.begin(site, say=lambda m: None)
    try:
        context = multiprocessing.get_context("fork")
        errors = context.Queue()

        def second() -> None:
            try:
                Publication.begin(site, wait=0.3, say=lambda m: None)
            except InputError as error:
                errors.put(str(error))

        process = context.Process(target=second)
        process.start()
        process.join(timeout=10)
        message = errors.get(timeout=1)
    finally:
        first.abandon()
    assert f"another build of this checkout (pid {os.getpid()})" in message
    assert "fix:" in message


def test_a_symlinked_site_is_published_into_its_target(tmp_path: Path) -> None:
    """A deploy folder kept elsewhere and linked as site/: the target is what gets updated.
    Before, the link was swapped away (left as .site.staging-*) and a real folder took its place."""
    target = tmp_path / "deploy" / "www"
    make_site(target, "old")
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (checkout / "site").symlink_to(target)
    publication = Publication.begin(checkout / "site", say=lambda m: None)
    assert publication.staging.parent == target.parent
    os.rmdir(publication.staging)
    make_site(publication.staging, "new")
    publication.commit()
    assert (checkout / "site").is_symlink() and (checkout / "site").resolve() == target
    assert is_complete(target, "new")
    assert sorted(p.name for p in checkout.iterdir()) == ["site"]
    assert sorted(p.name for p in target.parent.iterdir()) == [".www.lock", "www"]


def test_a_dangling_site_symlink_gets_its_target_built(tmp_path: Path) -> None:
    (tmp_path / "site").symlink_to(tmp_path / "out" / "www")
    publication = Publication.begin(tmp_path / "site", say=lambda m: None)
    make_site(publication.staging / "x", "new", files=0)
    publication.commit()
    assert (tmp_path / "site").is_symlink() and (tmp_path / "out" / "www" / "x").is_dir()


@pytest.mark.parametrize("linked", [False, True])
def test_a_site_path_that_is_a_file_is_refused_and_kept(tmp_path: Path, linked: bool) -> None:
    afile = tmp_path / "notes.txt"
    afile.write_text("keep me")
    site = tmp_path / "site"
    if linked:
        site.symlink_to(afile)
    else:
        site = afile
    with pytest.raises(InputError) as raised:
        Publication.begin(site, say=lambda m: None)
    message = str(raised.value)
    assert str(site) in message and "not a folder" in message and "fix:" in message
    assert afile.read_text() == "keep me"
    assert not list(tmp_path.glob(".*staging-*")) and not list(tmp_path.glob(".*.lock"))


def test_a_symlink_left_as_a_staging_folder_is_removed(tmp_path: Path) -> None:
    """An older build left the swapped-away symlink as .site.staging-*; rmtree refuses symlinks
    (silently, with ignore_errors), so it stayed forever."""
    make_site(tmp_path / "elsewhere", "kept")
    (tmp_path / ".site.staging-old").symlink_to(tmp_path / "elsewhere")
    Publication.begin(tmp_path / "site", say=lambda m: None).abandon()
    assert not list(tmp_path.glob(".site.staging-*"))
    assert is_complete(tmp_path / "elsewhere", "kept")  # the link goes, never what it points to


def test_messages_go_to_the_named_logger(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    make_site(tmp_path / ".site.old", "old")
    with caplog.at_level("INFO", logger="mkdocs.plugins.itm"):
        Publication.begin(tmp_path / "site").abandon()
    said = [r.getMessage() for r in caplog.records if r.name == "mkdocs.plugins.itm"]
    assert any("restored" in m for m in said) and any("left as it was" in m for m in said)

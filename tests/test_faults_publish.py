"""Fault injection, publishing: two builds at once, a build killed mid-swap, failures and leftovers.
generator.publish is driven directly (real processes, real flock, real renames); the real
`mkdocs build` under SIGINT/SIGTERM is in test_faults_build.py."""

from __future__ import annotations

import errno
import fcntl
import multiprocessing
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from generator import publish
from generator.errors import InputError
from generator.publish import Publication, exchange, repair
from tests.site_helpers import ROOT, mkdocs_build, tree_digest


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


# -- file system errors while publishing (issue 24): a clear error, the previous site intact ------
ERRORS = {
    "EXDEV": OSError(errno.EXDEV, os.strerror(errno.EXDEV)),
    "ENOSPC": OSError(errno.ENOSPC, os.strerror(errno.ENOSPC)),
    "EACCES": PermissionError(errno.EACCES, os.strerror(errno.EACCES)),
    "EBUSY": OSError(errno.EBUSY, os.strerror(errno.EBUSY)),
}
FIXES = {"EXDEV": "folder inside it", "ENOSPC": "free some space", "EACCES": "writable"}
FIXES["EBUSY"] = FIXES["EXDEV"]


def staged(site: Path) -> Publication:
    """A publication of a complete new site ("new") over a complete old one ("old")."""
    make_site(site, "old")
    publication = Publication.begin(site, say=lambda m: None)
    os.rmdir(publication.staging)
    make_site(publication.staging, "new")
    return publication


def assert_clean(raised: pytest.ExceptionInfo, site: Path, name: str) -> None:
    """The error names the site, what happened and the fix; the old site is whole and alone."""
    message = str(raised.value)
    assert str(site) in message and ERRORS[name].strerror in message, message
    assert "left as it was" in message and FIXES[name] in message.partition("\n  fix: ")[2]
    assert is_complete(site, "old")
    assert sorted(p.name for p in site.parent.iterdir()) == [".site.lock", "site"]
    Publication.begin(site, wait=0, say=lambda m: None).abandon()  # the lock was released


@pytest.mark.parametrize("name", list(ERRORS))
def test_an_error_in_the_exchange_keeps_the_previous_site(tmp_path, monkeypatch, name) -> None:
    publication = staged(tmp_path / "site")

    def refuse(a: Path, b: Path) -> bool:
        raise OSError(ERRORS[name].errno, ERRORS[name].strerror, str(b))

    monkeypatch.setattr(publish, "exchange", refuse)
    with pytest.raises(InputError) as raised:
        publication.commit()
    assert_clean(raised, tmp_path / "site", name)


@pytest.mark.parametrize("step", ["first", "second"])
@pytest.mark.parametrize("name", list(ERRORS))
def test_an_error_in_either_rename_keeps_the_previous_site(tmp_path, monkeypatch, name, step):
    """The fallback swap (no renameat2 exchange): site -> .site.old, staging -> site. An error in
    the second rename left no site/ until the next build (and a traceback)."""
    site = tmp_path / "site"
    publication = staged(site)
    moving = site if step == "first" else publication.staging
    rename = Path.rename

    def failing(self: Path, target):
        if self == moving:
            raise type(ERRORS[name])(ERRORS[name].errno, ERRORS[name].strerror, str(self))
        return rename(self, target)

    monkeypatch.setattr(publish, "exchange", lambda a, b: False)
    monkeypatch.setattr(Path, "rename", failing)
    with pytest.raises(InputError) as raised:
        publication.commit()
    assert_clean(raised, site, name)


def test_ctrl_c_between_the_two_renames_puts_the_site_back(tmp_path, monkeypatch) -> None:
    site = tmp_path / "site"
    publication = staged(site)
    rename = Path.rename

    def interrupted(self: Path, target):
        if self == publication.staging:
            raise KeyboardInterrupt
        return rename(self, target)

    monkeypatch.setattr(publish, "exchange", lambda a, b: False)
    monkeypatch.setattr(Path, "rename", interrupted)
    with pytest.raises(KeyboardInterrupt):
        publication.commit()
    assert is_complete(site, "old") and not (tmp_path / ".site.old").exists()


# Run by the test below in a child process: a fallback swap that stops itself (SIGSTOP) right
# after its first rename, so the test can SIGKILL it exactly between the two.
STOP_BETWEEN_RENAMES = """
import os, signal, sys
from pathlib import Path

from generator import publish
from tests.test_faults_publish import make_site

site = Path(sys.argv[1])
publish.exchange = lambda a, b: False
rename = Path.rename


def stopping(self, target):
    result = rename(self, target)
    if self == site:  # site is now .site.old; the new site is not yet in place
        os.kill(os.getpid(), signal.SIGSTOP)
    return result


Path.rename = stopping
publication = publish.Publication.begin(site, say=lambda m: None)
os.rmdir(publication.staging)
make_site(publication.staging, "new")
publication.commit()
"""


def test_a_build_killed_between_the_two_renames_leaves_a_whole_site(tmp_path: Path) -> None:
    """Before, a SIGKILL there left no site/ until the next build's begin() repaired it: a web
    server or `itm check-heads` in between found nothing. Now the swap's guard puts the old site
    back as the build dies, and holds the build lock until it has."""
    site = tmp_path / "site"
    make_site(site, "old")
    child = subprocess.Popen([sys.executable, "-c", STOP_BETWEEN_RENAMES, str(site)], cwd=ROOT)
    try:
        _, status = os.waitpid(child.pid, os.WUNTRACED)  # until it stops itself (or ends)
        assert os.WIFSTOPPED(status), f"the child ended instead: {status}"
        assert not site.exists() and (tmp_path / ".site.old").is_dir()  # truly between the two
    finally:
        child.kill()
        child.wait()
    with open(tmp_path / ".site.lock", "rb") as lock:  # the guard holds it until it is done
        deadline = time.monotonic() + 60  # a safety net only: the lock is the event
        while True:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                assert time.monotonic() < deadline, "the guard never released the lock"
                time.sleep(0.01)
        assert is_complete(site, "old")  # before the next build, with no repair by anyone else


def test_begin_errors_are_clear_and_touch_nothing(tmp_path, monkeypatch) -> None:
    """No room or no permission for the staging folder: a traceback before."""
    make_site(tmp_path / "site", "old")
    for name in ("ENOSPC", "EACCES"):

        def refuse(*args, **kwargs):
            raise type(ERRORS[name])(ERRORS[name].errno, ERRORS[name].strerror)  # noqa: B023

        monkeypatch.setattr(tempfile, "mkdtemp", refuse)
        with pytest.raises(InputError) as raised:
            Publication.begin(tmp_path / "site", say=lambda m: None)
        monkeypatch.undo()
        assert_clean(raised, tmp_path / "site", name)


def test_a_site_name_too_long_for_the_file_system_is_clear(tmp_path: Path) -> None:
    """`mkdocs build -d` a folder named with 300 bytes: is_symlink() raised ENAMETOOLONG, which
    reached the user as a bug report."""
    site = tmp_path / ("a" * 300)
    with pytest.raises(InputError) as raised:
        Publication.begin(site, say=lambda m: None)
    assert "File name too long (ENAMETOOLONG)" in str(raised.value)
    assert "every name is at most 255 bytes" in str(raised.value)
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("kind", ["fifo", "directory", "device"])
def test_a_lock_that_is_not_a_file_is_refused(tmp_path: Path, kind: str) -> None:
    lock = tmp_path / ".site.lock"
    if kind == "fifo":
        os.mkfifo(lock)
    elif kind == "directory":
        lock.mkdir()
    else:
        lock.symlink_to("/dev/null")
    with pytest.raises(InputError) as raised:
        Publication.begin(tmp_path / "site", say=lambda m: None)
    assert str(lock) in str(raised.value) and "fix:" in str(raised.value)
    assert not list(tmp_path.glob(".site.staging-*"))


def test_a_mount_point_is_refused_before_anything_is_built(tmp_path, monkeypatch) -> None:
    """A site/ that is a container volume: renaming or swapping it fails (EBUSY), after the whole
    build. It is refused in begin(), with the fix; a bind mount of a folder of the same file
    system is not seen by os.path.ismount, so /proc/self/mountinfo is read (\\040 is a space)."""
    site = tmp_path / "my site"
    make_site(site, "old")
    escaped = str(site).replace(" ", "\\040")
    table = tmp_path / "mountinfo"
    table.write_text(
        f"27 1 254:0 / / rw - ext4 /dev/vda rw\n99 27 254:0 /x {escaped} rw - ext4 x\n"
    )
    monkeypatch.setattr(publish, "MOUNTINFO", table)
    with pytest.raises(InputError) as raised:
        Publication.begin(site, say=lambda m: None)
    message = str(raised.value)
    assert "mount point" in message and str(site / "www") in message and "fix:" in message
    assert is_complete(site, "old") and sorted(p.name for p in tmp_path.iterdir()) == [
        "mountinfo",
        "my site",
    ]
    Publication.begin(site / "www", say=lambda m: None).abandon()  # the fix works


REAL_MOUNT = """
set -e
{mount}
exec "$0" -c 'import sys
from pathlib import Path
from generator.errors import InputError
from generator.publish import Publication
try:
    Publication.begin(Path(sys.argv[1]), say=print).abandon()
except InputError as error:
    print(error)
    sys.exit(2)
' "$1"
"""


@pytest.mark.parametrize("how", ["tmpfs", "bind"])
def test_a_real_mount_point_is_refused(tmp_path: Path, how: str) -> None:
    """The same with real mounts, in a private mount namespace (skipped where that is refused)."""
    site = tmp_path / "site"
    make_site(site, "old")
    (tmp_path / "elsewhere").mkdir()
    mount = {
        "tmpfs": f"mount -t tmpfs -o size=1m tmpfs '{site}'",
        "bind": f"mount --bind '{tmp_path / 'elsewhere'}' '{site}'",
    }[how]
    script = REAL_MOUNT.format(mount=mount)
    command = ["unshare", "-m", "sh", "-c", script, sys.executable, str(site)]
    if shutil.which("unshare") is None:
        pytest.skip("no unshare here")
    probe = subprocess.run(["unshare", "-m", "sh", "-c", mount], capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"mounting is not allowed here: {probe.stderr.decode().strip()}")
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 2 and "mount point" in result.stdout, result.stdout + result.stderr
    assert is_complete(site, "old")  # outside the namespace nothing was mounted or changed


# -- a site folder that would replace what the build reads (issue 35) -----------------------------
def make_project(root: Path) -> list[Path]:
    """A project's inputs in `root`: mkdocs.yml, docs/, overrides/, sources/ with its lock."""
    for name, text in [
        ("mkdocs.yml", "site_name: x\n"),
        ("docs/index.md", "# x\n"),
        ("overrides/main.html", "{% extends 'base.html' %}\n"),
        ("sources/lock.toml", "# pins\n"),
    ]:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return [root / "mkdocs.yml", root / "docs", root / "overrides", root / "sources"]


@pytest.mark.parametrize(
    ("target", "how"),
    [
        ("docs", "is"),  # `ln -s docs site`: docs/ became the built site
        ("sources", "is"),  # lock.toml and the stand-in weights were gone
        ("overrides", "is"),
        (".", "holds"),  # the folder of mkdocs.yml
        ("..", "holds"),  # a parent of it
        ("docs/new", "lies inside"),  # a dangling link, into docs/
    ],
)
def test_a_site_folder_that_would_replace_an_input_is_refused(
    tmp_path: Path, target: str, how: str
) -> None:
    """Before, the link was followed and its target swapped for the new site (exit 0)."""
    project = tmp_path / "project"
    inputs = make_project(project)
    before = tree_digest(tmp_path)
    (project / "site").symlink_to(target)
    with pytest.raises(InputError) as raised:
        Publication.begin(project / "site", inputs=inputs, say=lambda m: None)
    message = str(raised.value)
    assert f"{project / 'site'}, entry 'site_dir': the site folder (symlinks followed) {how}" in (
        message
    )
    assert "which the build reads" in message and "fix: set site_dir" in message
    (project / "site").unlink()
    assert tree_digest(tmp_path) == before  # nothing written, not even the lock


def test_a_site_folder_beside_the_inputs_is_published(tmp_path: Path) -> None:
    """The default site/ beside mkdocs.yml lies inside the project folder, which is fine."""
    inputs = make_project(tmp_path)
    Publication.begin(tmp_path / "site", inputs=inputs, say=lambda m: None).abandon()
    make_site(tmp_path / "elsewhere", "old")
    (tmp_path / "out").symlink_to("elsewhere")
    Publication.begin(tmp_path / "out", inputs=inputs, say=lambda m: None).abandon()


@pytest.mark.parametrize("target", ["docs", "sources", "generator", "overrides", ".cache", "."])
def test_the_site_build_refuses_a_site_symlink_into_the_project(tmp_path: Path, target) -> None:
    """`ln -s docs site && mkdocs build` exited 0 with docs/ become the built site; with sources,
    lock.toml and the stand-in weights were gone. The build now stops before anything is
    written (the cache included)."""
    from tests.test_build import project_copy

    project = project_copy(tmp_path)
    (project / ".cache").mkdir()
    (project / ".cache" / "kept.txt").write_text("kept\n")
    before = tree_digest(project)
    (project / "site").symlink_to(target)
    done = mkdocs_build(project / "site", config_dir=project, ITM_CACHE_DIR=str(project / ".cache"))
    message = done.stdout + done.stderr
    assert done.returncode != 0 and "Traceback" not in message, message
    assert f"{project / 'site'}, entry 'site_dir': the site folder (symlinks followed)" in message
    assert "which the build reads" in message and "fix: set site_dir" in message
    (project / "site").unlink()
    assert tree_digest(project) == before

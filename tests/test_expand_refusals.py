"""`itm expand OUT` refuses an OUT it cannot use before building anything, and stops on a write
error halfway: a clear error naming the path and the fix, never a traceback, and whatever was at
OUT left as it was. Two runs into one OUT, or one killed while moving its tree into OUT, leave
a usable OUT. Most of these run with a stand-in for the build (Unfilled): the folders are the
subject here, not the pages."""

from __future__ import annotations

import multiprocessing
import os
import resource
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from generator.errors import InputError
from generator.memo import FilledPage, MadeFiles
from tests.site_helpers import ROOT, build_env, tree_digest

TREE = ["docs", "mkdocs.yml", "overrides"]  # what OUT holds after a run


class Unfilled:
    """A build that fills every page with its own text: what expand does with the files it is
    given, without making them (the folders are the subject here, not the pages)."""

    def files(self) -> MadeFiles:
        return MadeFiles(files={"tables/a.tex": b"a\n"}, katex_js=b"katex")

    def figures(self) -> dict[str, bytes]:
        return {}

    def fill(self, source, addresses) -> FilledPage:
        return FilledPage(markdown=source.markdown, description=None)

    def record(self) -> bool:
        return False


# `itm expand "$@"` with the stand-in build, in a child process of its own
STAND_IN = """
import sys
from generator.build import SiteBuild
from tests.test_expand_refusals import Unfilled
SiteBuild.start = classmethod(lambda cls, settings: Unfilled())
from generator.cli import main
sys.exit(main(["expand", *sys.argv[1:]]))
"""


def expand(
    out: Path, *options: str, memory_cap: int | None = None
) -> subprocess.CompletedProcess[str]:
    def capped() -> None:
        if memory_cap is not None:
            resource.setrlimit(resource.RLIMIT_DATA, (memory_cap, memory_cap))

    return subprocess.run(
        [sys.executable, "-m", "generator.cli", "expand", *options, str(out)],
        cwd=ROOT,
        env=build_env(),
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=capped,
    )


@pytest.mark.parametrize(
    ("where", "problem"),
    [
        ("a-file", "not a folder"),  # OUT is a regular file
        ("a-file/tree", "cannot create the folder"),  # OUT's parent is a regular file
        ("full", "the folder is not empty"),
        ("x" * 256, "File name too long"),  # a traceback before (ENAMETOOLONG)
    ],
)
def test_expand_refuses_an_unusable_out_before_building(
    tmp_path: Path, where: str, problem: str
) -> None:
    (tmp_path / "a-file").write_text("keep me\n")
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "mine.txt").write_text("mine\n")
    done = expand(tmp_path / where)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert problem in done.stderr and str(tmp_path / where) in done.stderr
    assert "fix:" in done.stderr
    assert (tmp_path / "a-file").read_text() == "keep me\n"
    assert (tmp_path / "full" / "mine.txt").read_text() == "mine\n"


def test_expand_refuses_a_site_without_the_generator(tmp_path: Path) -> None:
    """The example site quotes pinned excerpts with pinned-excerpts alone: it has no macros to
    expand, and expand told it to restore this project's sources/checkpoints.toml (review)."""
    config = ROOT / "examples" / "pinned-excerpts" / "mkdocs.yml"
    done = expand(tmp_path / "tree", "-f", str(config))
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and "checkpoints.toml" not in done.stderr
    assert "does not use the inside-the-model plugin" in done.stderr
    assert f"{config}, entry 'plugins'" in done.stderr
    assert not (tmp_path / "tree").exists()


@pytest.mark.parametrize(
    "text",
    [
        "site_name: x\nnav: [1, 2\n",
        "site_name: x\ntheme: {name: no-such-theme}\n",
        "site_name: x\nnav: " + "[" * 5000 + "]" * 5000 + "\n",  # a RecursionError before
    ],
)
def test_expand_refuses_a_config_mkdocs_cannot_load(tmp_path: Path, text: str) -> None:
    """A YAML error printed a traceback (ConfigurationError); a bad value exited with MkDocs'
    own Abort, without naming the file."""
    config = tmp_path / "mkdocs.yml"
    config.write_text(text)
    done = expand(tmp_path / "tree", "-f", str(config))
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert f"{config}: MkDocs cannot load it" in done.stderr and "fix:" in done.stderr
    assert not (tmp_path / "tree").exists()


@pytest.mark.parametrize("parent", ["mkdocs.yml", "parent.yml"])
def test_expand_refuses_a_config_that_inherits_itself(tmp_path: Path, parent: str) -> None:
    """INHERIT naming the file itself (or a parent that inherits it back): MkDocs followed it
    until a RecursionError, printed as a traceback."""
    config = tmp_path / "mkdocs.yml"
    config.write_text(f"INHERIT: {parent}\nsite_name: x\nplugins: [inside-the-model]\n")
    (tmp_path / "parent.yml").write_text("INHERIT: ./mkdocs.yml\ntheme: {name: material}\n")
    done = expand(tmp_path / "tree", "-f", str(config))
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert f"{config}, entry 'INHERIT': its INHERIT chain comes back to {config}" in done.stderr
    assert "fix: make INHERIT name a parent" in done.stderr
    assert not (tmp_path / "tree").exists()


@pytest.mark.parametrize(
    ("parent", "problem"),
    [("/dev/zero", "is a device, not a file"), ("huge.yml", "is larger than the 1,048,576 bytes")],
)
def test_expand_reads_an_inherited_config_bounded(
    tmp_path: Path, parent: str, problem: str
) -> None:
    """INHERIT naming /dev/zero was read whole looking for a loop: 24 GB and the machine's OOM
    killer (here a 1 GB cap stops it first); a huge parent was read whole too."""
    config = tmp_path / "mkdocs.yml"
    config.write_text(f"INHERIT: {parent}\nsite_name: x\nplugins: [inside-the-model]\n")
    with (tmp_path / "huge.yml").open("wb") as huge:
        huge.truncate((1 << 20) + 1)
    done = expand(tmp_path / "tree", "-f", str(config), memory_cap=1 << 30)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    named = Path(parent) if parent.startswith("/") else tmp_path / parent
    assert f"{config}, entry 'INHERIT': its INHERIT names {named}: {problem}" in done.stderr
    assert not (tmp_path / "tree").exists()


@pytest.mark.parametrize("target", ["docs", "sources", "."])
def test_expand_refuses_an_out_that_is_or_holds_what_the_build_reads(
    tmp_path: Path, target: str
) -> None:
    """OUT must not be, hold or lie inside the project's inputs: a symlink to docs/ was refused
    only because docs/ is not empty, and a run killed there would have its leftovers cleared."""
    before = tree_digest(ROOT / "docs")
    (tmp_path / "link").symlink_to(ROOT / target)
    done = expand(tmp_path / "link")
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert f"{tmp_path / 'link'}: the folder (symlinks followed)" in done.stderr
    assert "which the build reads" in done.stderr and "fix:" in done.stderr
    assert tree_digest(ROOT / "docs") == before


def stand_in_expand(
    out: Path, *, shell: str | None = None, preexec=None
) -> subprocess.CompletedProcess[str]:
    """`itm expand OUT` with the stand-in build in a child process; with `shell`, run by that
    script (as `"$PYTHON" -c "$CODE" "$OUT"`) in a mount namespace of its own."""
    env = build_env(PYTHONDONTWRITEBYTECODE="1", PYTHON=sys.executable, CODE=STAND_IN)
    command = [sys.executable, "-c", STAND_IN, str(out)]
    if shell is not None:
        command = ["unshare", "-m", "sh", "-c", shell]
        env["OUT"] = str(out)
    return subprocess.run(
        command,
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=preexec,
    )


def mounting_allowed(tmp_path: Path) -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = ["unshare", "-m", "mount", "-t", "tmpfs", "tmpfs", str(tmp_path)]
    return subprocess.run(probe, capture_output=True).returncode == 0


# A tmpfs on OUT, `itm expand OUT`, then what is left in OUT (the mount ends with the namespace)
ON_TMPFS = """
mount -t tmpfs -o "{options}" tmpfs "$OUT" || exit 99
"$PYTHON" -c "$CODE" "$OUT"
code=$?
ls -A "$OUT"
exit $code
"""


def limit_file_size() -> None:
    """In the child: files of at most 4 KiB (`ulimit -f`); SIGXFSZ ignored, so write() fails
    with EFBIG (as Python itself sets it up) instead of killing the process."""
    import signal

    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))


@pytest.mark.parametrize("fault", ["read-only", "full", "file size limit"])
def test_a_write_error_is_one_clear_line_and_leaves_nothing(tmp_path: Path, fault: str) -> None:
    """A read-only OUT, a full disk, `ulimit -f`: each printed an OSError traceback. As root, a
    chmod does not make a folder read-only: a read-only tmpfs does (in a mount namespace)."""
    out = tmp_path / "out"
    out.mkdir()
    root = os.geteuid() == 0
    if (fault == "full" or (fault == "read-only" and root)) and not mounting_allowed(tmp_path):
        pytest.skip("mounting a tmpfs is not allowed here")
    if fault == "read-only" and root:
        done = stand_in_expand(out, shell=ON_TMPFS.format(options="ro,size=1m"))
        code, fix = "EROFS", "a place you may write"
    elif fault == "read-only":
        out.chmod(0o555)
        done = stand_in_expand(out)
        code, fix = "EACCES", "a place you may write"
    elif fault == "full":  # the docs alone are larger than this
        done = stand_in_expand(out, shell=ON_TMPFS.format(options="size=64k"))
        code, fix = "ENOSPC", "free some space"
    else:
        done = stand_in_expand(out, preexec=limit_file_size)
        code, fix = "EFBIG", "ulimit -f"
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    (line, fix_line) = done.stderr.strip().split("\n")
    assert line.startswith(f"error: {out}: cannot ") and f"({code})" in line, line
    assert fix in fix_line, fix_line
    assert done.stdout == "" and list(out.iterdir()) == []  # nothing half-written in OUT


def run_held(out: str, building, release) -> None:
    """expand into `out`, held by its build until `release` (run in a child process)."""
    from generator.build import SiteBuild
    from generator.expand import expand

    class Held(Unfilled):
        def files(self) -> MadeFiles:
            building.set()
            assert release.wait(300)  # a safety net: the test sets it
            return super().files()

    SiteBuild.start = classmethod(lambda cls, settings: Held())  # type: ignore[assignment]
    expand(ROOT / "mkdocs.yml", Path(out))


def test_a_second_run_into_one_out_is_refused_while_the_first_runs(
    tmp_path: Path, monkeypatch
) -> None:
    """Two runs into one OUT: each cleared the other's tree as a leftover, and one stopped with
    "Directory not empty". The first now holds OUT (an flock); the second is refused at once."""
    from generator.build import SiteBuild
    from generator.expand import expand

    out = tmp_path / "out"
    context = multiprocessing.get_context("fork")
    building, release = context.Event(), context.Event()
    first = context.Process(target=run_held, args=(str(out), building, release))
    first.start()
    try:
        assert building.wait(300)  # the first holds OUT and is building
        monkeypatch.setattr(SiteBuild, "start", classmethod(lambda cls, settings: Unfilled()))
        with pytest.raises(InputError) as raised:
            expand(ROOT / "mkdocs.yml", out)
        assert "another `itm expand` is writing into this folder" in str(raised.value)
        assert str(out) in str(raised.value) and "fix:" in str(raised.value)
    finally:
        release.set()
        first.join(300)
    assert first.exitcode == 0
    assert sorted(path.name for path in out.iterdir()) == TREE
    assert (out / "mkdocs.yml").is_file()


def run_stopped_before_mkdocs_yml(out: str, stopped) -> None:
    """expand into `out`, stopping for good as it comes to put mkdocs.yml (the last of the tree)
    into OUT, written there or moved there from a tree beside (run in a child process, which the
    test kills there)."""
    from generator.expand import expand

    last = Path(out) / "mkdocs.yml"

    def stopping(real):
        def step(self: Path, *args):
            if last in (self, *(Path(a) for a in args if isinstance(a, (str, Path)))):
                stopped.set()
                threading.Event().wait()  # until killed
            return real(self, *args)

        return step

    Path.rename = stopping(Path.rename)  # type: ignore[method-assign]
    Path.write_bytes = stopping(Path.write_bytes)  # type: ignore[method-assign]
    expand(ROOT / "mkdocs.yml", Path(out))


def test_a_run_killed_before_its_tree_is_whole_is_cleared_by_the_next(
    tmp_path: Path, monkeypatch
) -> None:
    """Killed with docs/ in OUT but not yet mkdocs.yml (between its final moves, then): the next
    run refused OUT as "not empty", for ever. It now recognises its own unfinished tree (by the
    marker it wrote in OUT first) and clears it."""
    from generator.build import SiteBuild
    from generator.expand import expand

    monkeypatch.setattr(SiteBuild, "start", classmethod(lambda cls, settings: Unfilled()))
    out = tmp_path / "out"
    context = multiprocessing.get_context("fork")
    stopped = context.Event()
    child = context.Process(target=run_stopped_before_mkdocs_yml, args=(str(out), stopped))
    child.start()
    try:
        assert stopped.wait(300)
    finally:
        child.kill()
        child.join(300)
    assert (out / "docs" / "index.md").is_file() and not (out / "mkdocs.yml").exists()
    expand(ROOT / "mkdocs.yml", out)
    assert sorted(path.name for path in out.iterdir()) == TREE
    assert (out / "docs" / "tables" / "a.tex").read_bytes() == b"a\n"

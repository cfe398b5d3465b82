"""A clone named with `--git REPO=DIR` or ITM_GIT_DIRS is checked before anything is read: a
path that is not a git clone holding the pinned commit is a clear error naming the option, the
path and the fix, even when the cache could answer every excerpt (`itm verify` used to exit 0
then, never having read the clone it was told to read)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from generator.cli import main
from generator.sources.lock import load_lock
from tests.sources_helpers import (
    PATH,
    REPO,
    TOY_V1,
    TOY_V2,
    excerpt_table,
    isolated_env,
    line_of,
    make_upstream,
    repo_table,
    write,
)

pytestmark = pytest.mark.usefixtures(isolated_env.__name__)

HELPER = [[line_of(TOY_V1, "def helper"), line_of(TOY_V1, "return x * SCALE")]]


@pytest.fixture
def warm(tmp_path: Path) -> tuple[Path, list[str]]:
    """A lock whose excerpt the cache holds (verified once from a real clone), and the
    arguments of `itm verify` on it."""
    upstream = tmp_path / "upstream"
    commit = make_upstream(upstream, {PATH: TOY_V1})
    lock = write(
        tmp_path / "lock.toml",
        repo_table(commit) + excerpt_table("toy.helper", TOY_V1, lines=HELPER),
    )
    args = ["verify", "--lock", str(lock), "--cache-dir", str(tmp_path / "cache"), "--offline"]
    assert main([*args, "--git", f"{REPO}={upstream}"]) == 0
    assert main(args) == 0  # the cache alone answers from now on
    return tmp_path, args


def not_a_clone(tmp_path: Path, kind: str) -> tuple[Path, str]:
    """A path of `kind` and the words the error must use for it."""
    path = tmp_path / kind
    if kind == "missing":
        return path, "does not exist"
    if kind == "file":
        path.write_text(TOY_V1)
        return path, "is a regular file, not a folder"
    if kind == "fifo":
        os.mkfifo(path)  # opening it would block until a writer came
        return path, "is a FIFO, not a folder"
    if kind == "device":
        return Path("/dev/zero"), "is a character device, not a folder"
    if kind == "empty":
        path.mkdir()
        return path, "is not a git clone"
    if kind == "stranger":  # a clone, of something else: it lacks the pinned commit
        make_upstream(path, {PATH: TOY_V2})
        return path, "does not hold commit"
    raise AssertionError(kind)


KINDS = ["missing", "file", "fifo", "device", "empty", "stranger"]


@pytest.mark.parametrize("kind", KINDS)
def test_a_git_option_that_is_no_clone_is_refused_though_the_cache_answers(
    warm, kind: str, capsys
) -> None:
    tmp_path, args = warm
    path, words = not_a_clone(tmp_path, kind)
    capsys.readouterr()
    assert main([*args, "--git", f"{REPO}={path}"]) == 2
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err and "ok   toy.helper" not in captured.out
    assert f"--git names {path} as a clone of {REPO}, but it {words}" in captured.err
    assert f"git clone https://github.com/{REPO}" in captured.err


@pytest.mark.parametrize("kind", ["device", "empty"])
def test_the_git_dirs_setting_is_checked_the_same_way(warm, kind: str, monkeypatch, capsys) -> None:
    tmp_path, args = warm
    path, words = not_a_clone(tmp_path, kind)
    monkeypatch.setenv("ITM_GIT_DIRS", f"{REPO}={path}")
    capsys.readouterr()
    assert main(args) == 2
    error = capsys.readouterr().err
    assert f"ITM_GIT_DIRS (or the plugin's git_dirs option) names {path}" in error
    assert words in error and "point ITM_GIT_DIRS at a clone" in error


def test_a_clone_for_a_bump_must_hold_the_new_commit(tmp_path: Path, capsys) -> None:
    """`itm bump` reads the new commit: the clone is checked for that one, not the old."""
    upstream = tmp_path / "upstream"
    old = make_upstream(upstream, {PATH: TOY_V1})
    lock = write(
        tmp_path / "lock.toml", repo_table(old) + excerpt_table("toy.helper", TOY_V1, lines=HELPER)
    )
    args = ["bump", REPO, "e" * 40, "--lock", str(lock), "--offline", "--git", str(upstream)]
    assert main(args) == 2
    assert f"does not hold commit {'e' * 40}" in capsys.readouterr().err
    new = make_upstream(upstream, {PATH: TOY_V2})
    assert main(["bump", REPO, new, "--lock", str(lock), "--offline", "--git", str(upstream)]) == 0
    assert load_lock(lock).repos[REPO].commit == old  # a report: nothing written

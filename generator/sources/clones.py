"""Local git clones given with `--git REPO=DIR` or ITM_GIT_DIRS: checked before anything is read
from them, and git's objects for a commit read from them.

A clone the user names is checked at once: a folder (a missing path, a file, a FIFO or a device
is refused without being opened), inside a git repository, holding the commit the command needs.
Otherwise a command could answer from its cache and exit 0 although the clone it was told to
read was never read.
"""

from __future__ import annotations

import os
import stat
import subprocess
from collections.abc import Mapping
from pathlib import Path

from generator.errors import InputError
from generator.sources.gitobjects import CommitProof, ProofError, entries, tree_listing
from generator.sources.lockschema import Lock

GIT_DEADLINE = 120.0  # seconds for one git command on a local clone
GIT_DIRS_SETTING = "ITM_GIT_DIRS (or the plugin's git_dirs option)"


def git(directory: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    """One git command in `directory`, bounded by GIT_DEADLINE (TimeoutExpired past it;
    FileNotFoundError when git is not installed)."""
    return subprocess.run(
        ["git", "-C", str(directory), *args], capture_output=True, timeout=GIT_DEADLINE
    )


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISREG, "a regular file"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return "not a folder"


def check_clone(
    directory: Path, *, repo: str, commit: str | None, option: str, url: str | None = None
) -> None:
    """InputError (naming `option`, e.g. "--git", the path and the fix) unless `directory` is a
    folder in a git repository that holds `commit` (when given). Nothing is opened, so a FIFO
    cannot block. `url`: where the repository is cloned from (default GitHub's)."""
    url = url or f"https://github.com/{repo}"
    clone = f"point {option.split()[0]} at a clone of {repo}: git clone {url}"

    def fail(problem: str, fix: str = clone) -> InputError:
        named = f"{option} names {directory} as a clone of {repo}, but {problem}"
        return InputError(named, entry=option.split()[0], fix=fix)

    try:
        mode = os.stat(directory).st_mode  # follows a symlink, opens nothing
    except FileNotFoundError:
        raise fail("it does not exist") from None
    except OSError as error:
        raise fail(f"it cannot be looked at ({error.strerror})") from None
    if not stat.S_ISDIR(mode):
        raise fail(f"it is {_kind(mode)}, not a folder")
    try:
        inside = git(directory, "rev-parse", "--git-dir")
        if inside.returncode != 0:
            said = inside.stderr.decode(errors="replace").strip().splitlines()
            raise fail(f"it is not a git clone ({said[-1] if said else 'git refused it'})")
        if commit is not None:
            holds = git(directory, "cat-file", "-e", f"{commit}^{{commit}}")
            if holds.returncode != 0:
                raise fail(
                    f"it does not hold commit {commit}",
                    f"fetch it (git -C {directory} fetch {url} {commit}), or {clone}",
                )
    except FileNotFoundError:
        raise fail("the git program is not installed", "install git") from None
    except subprocess.TimeoutExpired:
        raise fail(f"git did not answer within {GIT_DEADLINE:g} s there") from None


def read_commit_proof(directory: Path, repo: str, commit: str, paths: list[str]) -> CommitProof:
    """The commit object and the trees on the way to each of `paths`, read from a clone (the
    clone checked first). ProofError when git cannot give them or they cannot be kept as text."""
    try:
        shown = git(directory, "cat-file", "commit", commit)
        if shown.returncode != 0:
            raise ProofError(f"git cannot show commit {commit[:12]} in {directory}")
        try:
            text = shown.stdout.decode("utf-8")
        except UnicodeDecodeError:
            raise ProofError(f"commit {commit[:12]} is not UTF-8 text") from None
        trees: dict[str, str] = {}
        for path in sorted(paths):
            current = text.split("\n", 1)[0].removeprefix("tree ")
            for name in path.split("/")[:-1] + [""]:
                if current not in trees:
                    raw = git(directory, "cat-file", "tree", current)
                    if raw.returncode != 0:
                        raise ProofError(f"git cannot show tree {current[:12]} in {directory}")
                    trees[current] = tree_listing(raw.stdout)
                if name:
                    current = entries(trees[current]).get(name, ("", ""))[1]
    except (FileNotFoundError, subprocess.TimeoutExpired):
        raise ProofError(f"git did not answer in {directory}") from None
    proof = CommitProof(repo=repo, commit=commit, text=text, trees=tuple(trees.values()))
    proof.check()
    return proof


def check_clones(
    lock: Lock,
    git_dirs: Mapping[str, Path],
    *,
    option: str,
    commits: Mapping[str, str] | None = None,
) -> None:
    """Each clone given (by `option`: "--git", or ITM_GIT_DIRS and the plugins' git_dirs) must
    be a git clone holding its repo's commit in the lock (or in `commits`, for `itm bump`);
    InputError naming the option, the path and the fix otherwise."""
    for name, directory in git_dirs.items():
        repo = lock.repos.get(name)
        commit = (commits or {}).get(name) or (repo.commit if repo else None)
        url = repo.url if repo else None
        check_clone(Path(directory), repo=name, commit=commit, option=option, url=url)

"""The folder `itm expand OUT` writes into: claimed for one run (an flock), the unfinished tree of
a killed run cleared, refused unless empty, cleared again when the run fails, and every file
system error on it a one-line InputError naming OUT and the fix."""

from __future__ import annotations

import errno
import fcntl
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from generator.errors import InputError

TREE = ("docs", "overrides", "mkdocs.yml")  # what OUT holds, mkdocs.yml written last
UNFINISHED = ".itm-expand-unfinished"  # in OUT while a run writes its tree there
OLDER = ".itm-expand-partial-*"  # what older versions left in OUT (a tree being written)


@contextmanager
def claimed(out: Path, inputs: list[Path]) -> Iterator[None]:
    """OUT made if need be and held for this run (_locked), the unfinished tree of a run that was
    killed there cleared, and refused unless then empty. The tree is written in OUT under a
    marker: a run that fails halfway clears what it wrote, and one killed halfway (the marker
    left) is cleared by the next, where OUT was refused as not empty for ever."""
    from generator.publish import overlap

    clash = overlap(out, inputs)
    if clash:
        raise InputError(
            f"the folder (symlinks followed) {clash}, which the build reads: the expanded tree"
            " would replace it",
            file=str(out),
            fix="name a new folder outside docs_dir, sources/, generator/, the cache and the"
            " theme's folders, and not holding mkdocs.yml",
        )
    folder = _locked(out)
    try:
        try:
            _clear_unfinished(out)
            if any(out.iterdir()):
                raise InputError(
                    "the folder is not empty", file=str(out), fix="name a new folder for the tree"
                )
            (out / UNFINISHED).touch()
        except OSError as error:
            raise out_error(error, out, "write the expanded tree") from None
        try:
            yield
        except BaseException:
            _clear_unfinished(out)
            raise
        _remove(out / UNFINISHED)
    finally:
        os.close(folder)


def _locked(out: Path) -> int:
    """OUT, made if need be, opened and locked for this run: an flock, which closing the returned
    descriptor (or the process's end, a kill included) drops. A second run into OUT is refused:
    each cleared the other's tree as a leftover ("Directory not empty" tracebacks)."""
    try:
        if out.exists() and not out.is_dir():
            raise InputError(
                "not a folder", file=str(out), fix="name a new folder for the expanded tree"
            )
        out.mkdir(parents=True, exist_ok=True)
        folder = os.open(out, os.O_RDONLY | os.O_DIRECTORY)
    except OSError as error:
        raise out_error(error, out, "create the folder") from None
    try:
        fcntl.flock(folder, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as error:
        os.close(folder)
        if isinstance(error, BlockingIOError):
            raise InputError(
                "another `itm expand` is writing into this folder",
                file=str(out),
                fix="wait for it to finish, or name another folder",
            ) from None
        raise out_error(error, out, "lock the folder") from None
    return folder


def _clear_unfinished(out: Path) -> None:
    """Remove the tree a run stopped halfway left in OUT (it holds the UNFINISHED marker; under
    the lock, no run is writing it). What cannot be removed stays: OUT is then "not empty"."""
    if (out / UNFINISHED).exists():
        for name in TREE:
            _remove(out / name)
        _remove(out / UNFINISHED)
    for older in out.glob(OLDER):
        _remove(older)


def _remove(path: Path) -> None:
    """Remove a file or a folder (a symlink, not what it points to), if it is there."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with suppress(OSError):
            path.unlink(missing_ok=True)


def out_error(error: OSError, out: Path, doing: str) -> InputError:
    """A file system error met on OUT as an InputError naming OUT, what happened and the fix."""
    path = os.fsdecode(error.filename) if error.filename else str(out)
    at = "" if path == str(out) else f" at {path}"
    what = f"{error.strerror or error} ({errno.errorcode.get(error.errno or 0, 'error')})"
    if error.errno in (errno.ENOSPC, errno.EDQUOT):
        fix = f"free some space on the disk holding {out}, then run again"
    elif error.errno == errno.EFBIG:
        fix = "raise the limit on the size of a file this shell may write (`ulimit -f`)"
    elif error.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        fix = "name a new folder in a place you may write"
    elif error.errno == errno.ENAMETOOLONG:
        fix = "name a folder whose every name is at most 255 bytes long"
    else:
        fix = f"check {path}, then run again"
    return InputError(f"cannot {doing}{at}: {what}", file=str(out), fix=fix)

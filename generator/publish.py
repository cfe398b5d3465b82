"""Publishing a build: one build per checkout at a time, and site/ replaced only by a whole site.

    publication = Publication.begin(Path("site"))   # waits for the checkout's lock, repairs
    ... build into publication.staging ...
    publication.commit()    # complete: swap it in       (or publication.abandon() on any failure)

- Exclusive: an flock on .site.lock next to site/ (released by the kernel even on SIGKILL). A
  second build of the same checkout waits for the first (saying so), or stops after `wait` seconds
  with a clear error.
- Unique staging: .site.staging-XXXX next to site/, so two builds never write into one folder.
- Atomic swap: on Linux, renameat2(RENAME_EXCHANGE) swaps the two folders in one step, so no
  instant lacks a complete site/. Elsewhere site/ is renamed to .site.old and the staging folder
  into place; a build killed between the two renames is repaired by the next begin(), which puts
  .site.old back before anything else.
- Leftovers of killed builds (staging folders, .site.old) are removed under the lock.
- A site path that is a symlink (a deploy folder kept elsewhere) is published into its target,
  which is what gets updated; a site path that names a file (or a symlink to one) is refused.
"""

from __future__ import annotations

import ctypes
import fcntl
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from generator.errors import InputError
from generator.log import log

_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _say(message: str) -> None:
    log.info("Inside the Model: %s", message)


def _remove(path: Path) -> None:
    """Remove a folder (or a symlink or file left at its path); say so when that fails."""
    try:
        if path.is_symlink() or path.is_file():
            path.unlink()
        elif path.exists():
            shutil.rmtree(path)
    except OSError as error:
        log.warning("Inside the Model: cannot remove %s (%s); delete it by hand", path, error)


def site_folder(final: Path) -> Path:
    """The folder a build replaces: `final` itself, or a symlink's target (a deploy folder kept
    elsewhere is updated, not shadowed by a real folder in the symlink's place). A path that
    exists but is not a folder is refused: replacing a file the user named would lose it."""
    named = Path(final).absolute()
    final = named.resolve() if named.is_symlink() else named  # a dangling link: made on build
    if final.exists() and not final.is_dir():
        via = f" (a symlink to {final})" if final != named else ""
        raise InputError(
            f"the site folder{via} exists but is not a folder; a build would replace it",
            file=str(named),
            fix="move that file away, or set site_dir in mkdocs.yml to a folder (or a new path)",
        )
    return final


def exchange(a: Path, b: Path) -> bool:
    """Swap two paths atomically (Linux renameat2 RENAME_EXCHANGE); False when unsupported."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p]
    renameat2.argtypes += [ctypes.c_uint]
    result = renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    if result == 0:
        return True
    errno = ctypes.get_errno()
    if errno in (22, 38, 95):  # EINVAL, ENOSYS, EOPNOTSUPP: this file system cannot
        return False
    raise OSError(errno, os.strerror(errno), str(b))


def repair(final: Path, say: Callable[[str], None] = _say) -> None:
    """Finish or undo a swap that a killed build left half done (call under the lock)."""
    old = final.with_name(f".{final.name}.old")
    if old.exists() and not final.exists():
        old.rename(final)  # killed between the two renames: the previous site comes back
        say(f"restored {final} from {old.name} (a previous build was interrupted mid-swap)")
    for stale in [old, *final.parent.glob(f".{final.name}.staging-*")]:
        if stale.exists() or stale.is_symlink():
            _remove(stale)


class Publication:
    """One build's hold on a site folder: its lock, its staging folder, and the final swap."""

    def __init__(self, final: Path, staging: Path, lock_fd: int, say: Callable[[str], None]):
        self.final = final
        self.staging = staging
        self._lock_fd: int | None = lock_fd
        self._say = say

    @classmethod
    def begin(
        cls, final: Path, *, wait: float = 900.0, say: Callable[[str], None] = _say
    ) -> Publication:
        """Take the checkout's build lock (waiting up to `wait` s), repair, make a staging dir."""
        final = site_folder(final)
        final.parent.mkdir(parents=True, exist_ok=True)
        lock_path = final.with_name(f".{final.name}.lock")
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            _lock(fd, lock_path, wait, say)
            repair(final, say)
            staging = Path(tempfile.mkdtemp(dir=final.parent, prefix=f".{final.name}.staging-"))
            umask = os.umask(0)
            os.umask(umask)
            staging.chmod(0o777 & ~umask)  # mkdtemp makes it 0700; a site is meant to be read
        except BaseException:
            os.close(fd)
            raise
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        return cls(final, staging, fd, say)

    def commit(self) -> None:
        """Put the complete staging folder in place of the site; the previous one is removed."""
        try:
            if self.final.exists() and exchange(self.staging, self.final):
                _remove(self.staging)  # now holds the previous site
            else:
                old = self.final.with_name(f".{self.final.name}.old")
                _remove(old)
                if self.final.exists():
                    self.final.rename(old)
                self.staging.rename(self.final)  # a kill just before this: repair() restores old
                _remove(old)
        finally:
            self._release()

    def abandon(self, why: str = "build failed") -> None:
        """Drop the staging folder; the previous site stays exactly as it was."""
        try:
            _remove(self.staging)
            self._say(f"{why}; {self.final} was left as it was.")
        finally:
            self._release()

    def _release(self) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # closing drops the flock
            self._lock_fd = None


def _lock(fd: int, lock_path: Path, wait: float, say: Callable[[str], None]) -> None:
    deadline = time.monotonic() + wait
    told = False
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            pass
        holder = Path(lock_path).read_text(errors="replace").strip() or "unknown"
        if time.monotonic() >= deadline:
            raise InputError(
                f"another build of this checkout (pid {holder}) still holds {lock_path}",
                file=str(lock_path),
                fix="wait for that build to finish (or stop it); two builds of one checkout"
                " would overwrite each other's site",
            )
        if not told:
            say(f"another build of this checkout is running (pid {holder}); waiting for it")
            told = True
        time.sleep(0.2)

"""Publishing a build: one build per checkout at a time, and site/ replaced only by a whole site.

    publication = Publication.begin(Path("site"))   # waits for the checkout's lock, repairs
    ... build into publication.staging ...
    publication.commit()    # complete: swap it in       (or publication.abandon() on any failure)

- Exclusive: an flock on .site.lock next to site/ (released by the kernel even on SIGKILL). A
  second build of the same checkout waits for the first (saying so), or stops after `wait` seconds
  with a clear error.
- Unique staging: .site.staging-XXXX next to site/, so two builds never write into one folder.
- Atomic swap: on Linux, renameat2(RENAME_EXCHANGE) swaps the two folders in one step, so no
  instant lacks a complete site/. Elsewhere (another system, or a file system without the
  exchange) site/ is renamed to .site.old and the staging folder into place. An error between
  the two renames puts .site.old back at once; for a kill there, a guard process started just
  before (it holds the lock too) puts it back the moment the build dies, so a reader sees no
  site/ for the instant between two renames only. Should the guard die as well, the next
  begin() puts .site.old back before anything else.
- Leftovers of killed builds (staging folders, .site.old) are removed under the lock.
- A site path that is a symlink (a deploy folder kept elsewhere) is published into its target,
  which is what gets updated; a site path that names a file (or a symlink to one) is refused.
- A site folder that, symlinks followed, is, holds or lies inside what the build reads (the
  `inputs`: mkdocs.yml, docs_dir, the theme's folders, the caller's own) is refused before
  anything is written: publishing would replace it (`ln -s docs site` made docs/ the site).
- A site folder that is a mount point (a container volume, a bind mount) is refused in begin(),
  before anything is built: a mount point cannot be renamed or swapped (EBUSY), and the only
  other way to publish into it, emptying it and copying the new site in, shows readers half a
  site meanwhile and loses the previous one to a kill or a full disk halfway. The fix is one line
  (site_dir one level inside the volume), after which every guarantee above holds there.
- Every file system error (a full disk, a read-only or foreign folder, no permission) is an
  InputError naming the path, what happened and the fix; site/ is left as it was.
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from generator.errors import InputError
from generator.log import log

_RENAME_EXCHANGE = 2
_AT_FDCWD = -100
MOUNTINFO = Path("/proc/self/mountinfo")  # Linux: every mount point, bind mounts included

# The guard of a swap by two renames (run as `python -c _GUARD FD SITE OLD`): it waits until the
# build says the swap is settled or dies (the pipe's end), then puts OLD back if SITE is missing.
_GUARD = """
import os, sys
fd, final, old = int(sys.argv[1]), sys.argv[2], sys.argv[3]
os.read(fd, 1)
try:
    if not os.path.lexists(final) and os.path.lexists(old):
        os.rename(old, final)
except OSError:
    pass  # the next build's begin() tries again
"""


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


def failure(error: OSError, doing: str, site: Path) -> InputError:
    """A file system error met while building or publishing `site`, as an InputError: the path,
    what happened and the fix. Raise it only once `site` is known to be as it was."""
    path = os.fsdecode(error.filename) if error.filename else str(site)
    what = f"{error.strerror or error} ({errno.errorcode.get(error.errno or 0, 'error')})"
    kept = "the site" if path == str(site) else str(site)
    problem = f"cannot {doing}: {what}; {kept} was left as it was"
    folder = site.parent
    if error.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
        fix = (
            f"free some space on the disk holding {folder} (a build needs room for a second copy"
            " of the site beside it), then build again"
        )
    elif error.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        fix = (
            f"make {folder} writable for this user, or set site_dir in mkdocs.yml (or pass"
            " --site-dir) to a folder you can write"
        )
    elif error.errno in (errno.EXDEV, errno.EBUSY):
        fix = (
            f"{site} is a mount point, or on another file system than its folder: set site_dir"
            f" in mkdocs.yml (or pass --site-dir) to a folder inside it, e.g. {site / 'www'}"
        )
    elif error.errno == errno.ENAMETOOLONG:
        fix = (
            "set site_dir in mkdocs.yml (or pass --site-dir) to a folder whose every name is at"
            " most 255 bytes long"
        )
    else:
        fix = f"check {path} and its folder, then build again"
    return InputError(problem, file=path, fix=fix)


def project_inputs(config: Any, *more: Path) -> list[Path]:
    """What a build of the MkDocs `config` reads, which its output must neither be, hold nor lie
    inside: mkdocs.yml (and so the folders holding it), docs_dir, the theme's folders (its
    custom_dir among them), and `more` (a plugin's own: a lock file, a cache)."""
    theme = [Path(folder) for folder in config.theme.dirs]
    return [Path(config.config_file_path), Path(config.docs_dir), *theme, *more]


def overlap(folder: Path, inputs: Iterable[Path]) -> str | None:
    """How `folder`, symlinks followed, meets the first of `inputs` it is, holds or lies inside
    ("is /p/docs", "holds /p/mkdocs.yml", "lies inside /p/sources"); None if it meets none."""
    real = Path(os.path.realpath(folder))
    for path in inputs:
        found = Path(os.path.realpath(path))
        if found == real:
            return f"is {found}"
        if real in found.parents:
            return f"holds {found}"
        if found in real.parents:
            return f"lies inside {found}"
    return None


def site_folder(final: Path, inputs: Iterable[Path] = ()) -> Path:
    """The folder a build replaces: `final` itself, or a symlink's target (a deploy folder kept
    elsewhere is updated, not shadowed by a real folder in the symlink's place). A path that
    exists but is not a folder is refused: replacing a file the user named would lose it; so is
    one that is, holds or lies inside one of `inputs` (project_inputs)."""
    named = Path(final).absolute()
    clash = overlap(named, inputs)
    if clash:
        raise InputError(
            f"the site folder (symlinks followed) {clash}, which the build reads: publishing the"
            " site would replace it",
            file=str(named),
            entry="site_dir",
            fix="set site_dir in mkdocs.yml (or pass --site-dir) to a folder of its own that the"
            " build does not read, such as the default `site` beside mkdocs.yml (a symlink: point"
            " it to such a folder)",
        )
    final = named.resolve() if named.is_symlink() else named  # a dangling link: made on build
    if final.exists() and not final.is_dir():
        via = f" (a symlink to {final})" if final != named else ""
        raise InputError(
            f"the site folder{via} exists but is not a folder; a build would replace it",
            file=str(named),
            fix="move that file away, or set site_dir in mkdocs.yml to a folder (or a new path)",
        )
    if is_mount_point(final):
        raise InputError(
            "the site folder is a mount point (a container volume or a bind mount): it cannot be"
            " swapped for the new site in one step, and emptying it to copy a site in would show"
            " readers half a site",
            file=str(final),
            fix=f"set site_dir in mkdocs.yml (or pass --site-dir) to a folder inside it, e.g."
            f" {final / 'www'}, and serve that one; or mount the volume one folder up",
        )
    return final


def is_mount_point(path: Path) -> bool:
    """Whether something is mounted on `path`: os.path.ismount, which misses a bind mount of a
    folder of the same file system, or a mount point listed in /proc/self/mountinfo."""
    if os.path.ismount(path):
        return True
    try:
        table = MOUNTINFO.read_bytes()  # a /proc file: regular, size 0, ends
    except OSError:
        return False
    real = os.fsencode(os.path.realpath(path))
    for line in table.splitlines():
        fields = line.split(b" ")  # field 5 is the mount point, with \040-style escapes
        if len(fields) > 4 and _unescape(fields[4]) == real:
            return True
    return False


def _unescape(field: bytes) -> bytes:
    return re.sub(rb"\\([0-7]{3})", lambda m: bytes([int(m[1], 8)]), field)


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
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):  # this file system cannot
        return False
    raise OSError(code, os.strerror(code), str(b))


def repair(final: Path, say: Callable[[str], None] = _say) -> None:
    """Finish or undo a swap that a killed build left half done (call under the lock)."""
    old = final.with_name(f".{final.name}.old")
    if old.exists() and not final.exists():
        try:
            old.rename(final)  # killed between the two renames: the previous site comes back
        except OSError as error:
            raise failure(error, f"put the previous site back from {old}", final) from None
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
        cls,
        final: Path,
        *,
        inputs: Iterable[Path] = (),
        wait: float = 900.0,
        say: Callable[[str], None] = _say,
    ) -> Publication:
        """Take the checkout's build lock (waiting up to `wait` s), repair, make a staging dir;
        refuse a site folder that is, holds or lies inside one of `inputs` (project_inputs)."""
        try:
            final = site_folder(final, inputs)
        except OSError as error:  # a name over 255 bytes: is_symlink() raised ENAMETOOLONG
            raise failure(error, "look at the site folder", Path(final)) from None
        lock_path = final.with_name(f".{final.name}.lock")
        try:
            final.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as error:
            raise failure(error, "take the build lock", final) from None
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise InputError(
                    "the build lock is not a file",
                    file=str(lock_path),
                    fix="remove it (no build of this checkout is running), then build again",
                )
            _lock(fd, lock_path, wait, say)
            repair(final, say)
            staging = Path(tempfile.mkdtemp(dir=final.parent, prefix=f".{final.name}.staging-"))
            umask = os.umask(0)
            os.umask(umask)
            staging.chmod(0o777 & ~umask)  # mkdtemp makes it 0700; a site is meant to be read
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n".encode())
        except OSError as error:
            os.close(fd)
            raise failure(error, "prepare a folder for the new site", final) from None
        except BaseException:
            os.close(fd)
            raise
        return cls(final, staging, fd, say)

    def commit(self) -> None:
        """Put the complete staging folder in place of the site; the previous one is removed.
        On a file system error the previous site stays as it was and an InputError says why."""
        try:
            if self.final.exists() and exchange(self.staging, self.final):
                _remove(self.staging)  # now holds the previous site
            else:
                self._swap_by_renames()
        except OSError as error:
            _remove(self.staging)
            raise failure(error, "put the new site in place", self.final) from None
        finally:
            self._release()

    def _swap_by_renames(self) -> None:
        """site -> .site.old, staging -> site, under a guard that undoes the first rename if this
        process dies before the second; an error in the second undoes the first at once."""
        old = self.final.with_name(f".{self.final.name}.old")
        _remove(old)
        if not self.final.exists():
            self.staging.rename(self.final)
            return
        guard = _start_guard(self.final, old, self._lock_fd)
        try:
            self.final.rename(old)
            try:
                self.staging.rename(self.final)  # a kill just before this: the guard restores old
            except BaseException:
                _put_back(old, self.final)
                raise
        finally:
            _settle(guard)
        _remove(old)

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


def _put_back(old: Path, final: Path) -> None:
    try:
        old.rename(final)
    except OSError as error:
        log.warning(
            "Inside the Model: cannot put the previous site back from %s (%s); the next build"
            " does it, or rename it to %s by hand",
            old,
            error.strerror or error,
            final.name,
        )


def _start_guard(
    final: Path, old: Path, lock_fd: int | None
) -> tuple[subprocess.Popen, int] | None:
    """A process that puts `old` back as `final` should this one die mid-swap: it shares the
    build lock (the same open file), so no other build starts before it is done. In a session
    of its own, so a Ctrl-C or a kill of the build's process group does not reach it. None when
    it cannot start (then the next begin() repairs, as before)."""
    read_end, write_end = os.pipe()
    fds = (read_end,) if lock_fd is None else (read_end, lock_fd)
    try:
        guard = subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", _GUARD, str(read_end), str(final), str(old)],
            pass_fds=fds,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
    except OSError as error:
        log.debug("Inside the Model: no guard for the swap (%s)", error)
        os.close(write_end)
        return None
    finally:
        os.close(read_end)
    return guard, write_end


def _settle(guard: tuple[subprocess.Popen, int] | None) -> None:
    """Tell the guard the swap is settled (it checks once more) and wait for it to end."""
    if guard is None:
        return
    process, write_end = guard
    try:
        os.write(write_end, b"x")
    except OSError:
        pass  # it died: nothing to wait for
    finally:
        os.close(write_end)
    process.wait()


def _lock(fd: int, lock_path: Path, wait: float, say: Callable[[str], None]) -> None:
    deadline = time.monotonic() + wait
    told = False
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            pass
        holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "unknown"
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

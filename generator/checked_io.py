"""Reading and writing the project's own files with clear errors: an InputError naming the file,
what is wrong and the fix; never an OSError traceback, never a hang.

    data = read_input(path, max_bytes=16 << 20, fix="restore it from git")
    write_output(path, data)    # atomic; a read-only checkout or a full disk is an InputError

A read takes a regular file of a bounded size only: a FIFO would block a read forever, a device
(a symlink to /dev/zero) never ends, and a folder, a missing file or one larger than the caller
expects cannot be what was meant.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from pathlib import Path

from generator.errors import InputError
from generator.store import read_regular, write_atomic

KINDS = {
    stat.S_IFREG: "a file",
    stat.S_IFDIR: "a folder",
    stat.S_IFIFO: "a FIFO (a named pipe)",
    stat.S_IFCHR: "a device",
    stat.S_IFBLK: "a device",
    stat.S_IFSOCK: "a socket",
}


def what_is(path: Path) -> str:
    """'a file', 'a folder', 'a FIFO (a named pipe)', 'a device', ...: what `path` names."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return "unreadable"
    return KINDS.get(stat.S_IFMT(mode), "not a regular file")


def read_input(path: Path, *, max_bytes: int, fix: str, entry: str | None = None) -> bytes:
    """The bytes of the regular file at `path` (symlinks followed), at most `max_bytes` of them."""
    try:
        return read_regular(path, max_bytes=max_bytes)
    except OSError as error:
        problem = _problem(path, error, max_bytes)
        raise InputError(problem, file=str(path), entry=entry, fix=fix) from None


def check_input(path: Path, *, max_bytes: int, fix: str) -> None:
    """An InputError unless `path` is a regular file (symlinks followed) of at most `max_bytes`,
    for files another program reads (MkDocs reads docs/ pages and copies its assets)."""
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        if info.st_size > max_bytes:
            raise OSError(errno.EFBIG, f"larger than {max_bytes:,} bytes", str(path))
    except OSError as error:
        raise InputError(_problem(path, error, max_bytes), file=str(path), fix=fix) from None


def _problem(path: Path, error: OSError, max_bytes: int) -> str:
    if isinstance(error, FileNotFoundError):
        return "not found" if not os.path.islink(path) else "not found (a dangling symlink)"
    if isinstance(error, NotADirectoryError):
        return "not found (a file stands where a folder of its path should be)"
    if error.errno in (errno.EINVAL, errno.ENXIO):  # ENXIO: a socket
        return f"is {what_is(path)}, not a file"
    if error.errno == errno.EFBIG:
        return f"is larger than the {max_bytes:,} bytes expected"
    return f"cannot read it ({error.strerror or error})"


def read_text_input(path: Path, *, max_bytes: int, fix: str, entry: str | None = None) -> str:
    """read_input, decoded as UTF-8 (an InputError if it is not)."""
    data = read_input(path, max_bytes=max_bytes, fix=fix, entry=entry)
    return utf8_text(data, file=str(path), fix=fix, entry=entry)


def utf8_text(data: bytes, *, file: str, fix: str, entry: str | None = None) -> str:
    """`data` (read from `file`) decoded as UTF-8, else an InputError naming the first bad byte:
    "not UTF-8 text (byte 0xFF at offset 0)"."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise InputError(
            f"not UTF-8 text (byte 0x{data[error.start]:02X} at offset {error.start})",
            file=file,
            entry=entry,
            fix=fix,
        ) from None


def check_writable(folder: Path, *, fix: str) -> None:
    """An InputError unless a file can be made in `folder` (made and removed at once): for a
    command that would otherwise work for minutes before finding it cannot write its result."""
    try:
        handle, probe = tempfile.mkstemp(dir=folder, prefix=".itm-write-probe-")
        os.close(handle)
        os.unlink(probe)
    except OSError as error:
        raise InputError(
            f"cannot write in it ({error.strerror or error})", file=str(folder), fix=fix
        ) from None


def write_output(path: Path, data: bytes) -> None:
    """write_atomic (all or nothing), an OSError (a read-only checkout, a full disk) becoming an
    InputError naming the file; the file is left as it was. A file rewritten keeps its
    permissions, a new one gets the umask's (write_atomic's temporary file is 0600)."""
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        mode = 0o666 & ~_umask()
    try:
        write_atomic(path, data)
    except OSError as error:
        raise InputError(
            f"cannot write it ({error.strerror or error}); it was left as it was",
            file=str(path),
            fix="make its folder writable (a read-only checkout cannot take new pins) and free"
            " some disk space if it is full, then run the command again",
        ) from None
    with contextlib.suppress(OSError):  # written whole already; only its mode could stay 0600
        os.chmod(path, mode)


def _umask() -> int:
    """The process's umask (read by setting it, then restoring it)."""
    umask = os.umask(0o022)
    os.umask(umask)
    return umask

"""Digests of what the generator reads: a folder's files, and the generator's own code.

The build's memo (generator/memo.py) and every drawn figure's cache key (generator/charts.py)
start from `code_fingerprint`: a figure's drawing reads more of generator/ than its own module
(the number formats, the accounting), so any change to the code draws it anew.
"""

from __future__ import annotations

import errno
import functools
import hashlib
import os
import sys
from collections.abc import Iterable
from pathlib import Path

from generator import per_build
from generator.errors import InputError
from generator.store import key_of, read_regular

PACKAGE = Path(__file__).resolve().parent  # the generator that runs: not always root/generator
SKIP_DIRS = frozenset({"__pycache__"})
LARGEST_INPUT = 256 << 20  # bytes of one file the fingerprint reads (the stand-in: ~2 MB)


def tree_digest(digest: hashlib._Hash, label: str, folder: Path) -> None:
    """Feed every file under `folder` (label/relative path, size, bytes) into `digest`, in order.
    Paths are named from `folder`, which need not be inside the project (a theme's custom_dir)."""
    for path in sorted(_files_under(folder)):
        try:
            data = read_regular(path, max_bytes=LARGEST_INPUT)  # a FIFO would block forever
        except FileNotFoundError:  # a dangling symlink (Emacs' .#name lock) or removed meanwhile
            continue
        except OSError as error:
            if error.errno == errno.EINVAL:
                continue  # not a regular file: nothing the generator reads
            raise InputError(
                f"cannot read it to fingerprint the build: {error.strerror or error}",
                file=str(path),
                fix=f"the generator's code, sources/ and overrides/itm/ hold files of at most"
                f" {LARGEST_INPUT:,} bytes: move this one out, or make it readable",
            ) from None
        name = f"{label}/{path.relative_to(folder).as_posix()}".encode()
        digest.update(b"%s\0%d\0" % (name, len(data)))
        digest.update(data)


def _files_under(folder: Path) -> Iterable[Path]:
    for current, dirs, names in os.walk(folder):
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS]
        for name in names:
            if not name.endswith((".pyc", ".pyo")):
                yield Path(current) / name


def installed_distributions() -> list[str]:
    """The names of the installed distributions' metadata folders (name-version.dist-info)."""
    found: set[str] = set()
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        found.update(n for n in names if n.endswith((".dist-info", ".egg-info", ".egg-link")))
    return sorted(found)


@functools.cache  # once a build: the memo, the figures and the readers' pages each ask
def code_fingerprint() -> str:
    """sha256 of the generator's code (every file of the package that runs), the Python version
    and the installed distributions: all that a figure's drawing reads besides its arguments (a
    drawing imports more of generator/ than its own module, e.g. the number formats)."""
    digest = hashlib.sha256(b"itm-code\0")
    tree_digest(digest, "generator", PACKAGE)
    digest.update(key_of(sys.version, installed_distributions()).encode())
    return digest.hexdigest()


per_build(
    code_fingerprint.cache_clear
)  # `mkdocs serve` keeps this module while the code is unchanged

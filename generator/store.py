"""The one storage module for every build cache: atomic writes, verified reads, discard-and-rebuild.

Two kinds of entry live under one cache directory:

- blobs, named by the sha256 of their bytes (CACHE/sha256/ab/abcdef…): pinned archives, npm
  tarballs. A read re-hashes the bytes; the name is the proof.
- keyed entries (CACHE/<kind>/ab/<key>), where the key is a sha256 of everything the content
  depends on (inputs, or a pinned location). Each file starts with one header line naming its
  kind, its key, the sha256 and size of the payload and an HMAC-SHA256 of those four under a
  random key kept beside the cache folder (CACHE.key, never inside it); a read checks all five,
  so a truncated, edited, swapped, forged or foreign entry is never returned. The signature is
  what makes a derived entry (a figure, typeset math, a checkpoint's hash) trustworthy: whoever
  can write the cache, or restores one made elsewhere (a CI cache, a copied folder), cannot sign
  for it. Entries whose caller checks the payload against a hash recorded outside the cache
  (excerpts, against the lock's sha256) are stored unsigned, so a copied cache still serves them.

Bounded: every entry a build reads or writes has its modification time set then, and at the
end of each build `prune()` removes the derived entries (memos, figures, typeset math, compiled
templates, checkpoint hashes, and blobs the pins do not name) that none of the last BUILDS_KEPT
builds used. Pinned archives and verified excerpts are inputs, never pruned: an offline build
needs them.

Every read is bounded before a byte of payload is read (`_read_entry`, the one read of entries
and blobs): a regular file, no larger than its kind's MAX_BYTES, and exactly the size its header
states; CACHE.key is a regular file of KEY_BYTES. A 3 GB file in the cache is never read whole.

Whatever is wrong with an entry (bad hash, garbage, too large, a directory in its place,
unreadable), it is discarded with a one-line warning on the "itm.cache" logger and the caller
rebuilds it: a cache problem never stops a build (a cache folder that cannot be one, a path too
long or a file in its way, is an InputError when the Store is made). A cache that cannot be
written (read-only) is warned about once and the build goes on without caching. Writes go to a
temp file in the same folder and are renamed into place, so no reader ever sees a partial file.
Entries are not fsynced: one that a power cut leaves short or empty fails its check on the next
read and is made again (a cold build's 480 fsyncs took 0.6 s).

The cache defends against corruption, interrupted writes, stale, mixed-up and forged entries;
what it trusts is the checkout and CACHE.key beside the cache, not the cache folder's contents.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import hmac
import json
import logging
import math
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from generator.errors import InputError

LOG = logging.getLogger("itm.cache")  # outside "mkdocs.*": a cache warning must not fail --strict
HEADER = b"itm-store/2 "  # /2: headers carry the entry's signature ("mac")
KEY_BYTES = 32
BUILDS_KEPT = 10  # prune what none of the last this many builds used
BUILDS_FILE = "builds.json"  # the start times of the last BUILDS_KEPT builds
PRUNED_KINDS = ("memo_files", "memo_page", "figure", "katex", "katex_formula", "jinja",
                "sha256_memo", "readable_page", "font")  # fmt: skip
BLOBS = "sha256"  # the folder of blobs, named by their own sha256
MAX_HEADER_BYTES = 1024  # an entry's header line: about 330 bytes
MAX_BYTES: dict[str, int] = {  # the largest payload of each kind (the largest seen here)
    BLOBS: 256 << 20,  # pinned archives (NetSettings.max_bytes), generated files, pages (13 MB)
    "excerpts": 16 << 20,  # lines of one pinned file, at most wholefiles.LARGEST_SOURCE (4 KB)
    "figure": 16 << 20,  # one SVG (27 KB)
    "katex": 16 << 20,  # a page's typeset math (230 KB)
    "readable_page": 16 << 20,  # a page's HTML made readable, before its math (230 KB)
    "katex_formula": 1 << 20,  # one typeset formula (18 KB)
    "font": 1 << 20,  # a KaTeX font cut to the site's characters (10 KB)
    "jinja": 16 << 20,  # a compiled template (16 KB)
    "memo_files": 16 << 20,  # the index of a build's generated files (16 KB)
    "memo_page": 1 << 20,  # a filled page's blob and description (0.6 KB)
    "sha256_memo": 1 << 20,  # a checkpoint's identity and hash (0.3 KB)
}
NAME_MAX = 255  # bytes in one file name (Linux and macOS file systems)
PATH_MAX = 4096  # bytes in a path (Linux)
ENTRY_PATH_BYTES = 96  # what the store adds below its folder: /katex_formula/ab/<64 hex digits>
SETTING = "ITM_CACHE_DIR (or cache_dir in mkdocs.yml, or an itm command's --cache-dir)"
_HEX = frozenset("0123456789abcdef")
_UNWRITABLE: set[str] = set()  # caches found read-only in this process: said once, not per Store
_PROCESS_KEYS: dict[str, bytes] = {}  # CACHE.key path -> this process's key, where it failed


def sha256_hex(data: bytes | str) -> str:
    if isinstance(data, str):
        data = data.encode("utf-8")
    return hashlib.sha256(data).hexdigest()


def key_of(*parts: object) -> str:
    """A cache key: the sha256 of the parts as canonical JSON."""
    return sha256_hex(json.dumps(parts, sort_keys=True, ensure_ascii=False, default=str))


def write_atomic(path: Path, data: bytes, *, durable: bool = True) -> None:
    """Write via a temp file in the same folder, fsync (when `durable`), then rename: never a
    half-written file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name[:40]}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@contextlib.contextmanager
def open_regular(path: Path, max_bytes: int) -> Iterator[tuple[BinaryIO, int]]:
    """`path` opened for reading, and its size: an OSError, before a byte is read, unless it is
    a regular file (a FIFO would block a read forever, a device like /dev/zero would never end)
    of at most `max_bytes` (a 3 GB file read whole runs a build out of memory)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:  # checked before fdopen, which refuses a folder with its own, vaguer error
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        if info.st_size > max_bytes:
            raise OSError(errno.EFBIG, f"larger than {max_bytes:,} bytes", str(path))
    except BaseException:
        os.close(fd)
        raise
    with os.fdopen(fd, "rb") as handle:
        yield handle, info.st_size


def read_regular(path: Path, max_bytes: int) -> bytes:
    """A regular file's bytes, at most `max_bytes` of them (open_regular; a file that grows
    while it is read is cut off past the cap and refused, never read to its end)."""
    with open_regular(path, max_bytes) as (handle, _):
        data = handle.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise OSError(errno.EFBIG, f"larger than {max_bytes:,} bytes", str(path))
    return data


def _create_exclusive(path: Path, data: bytes) -> None:
    """Write `data` to a new file at `path`, mode 0600, all or nothing: FileExistsError when a
    file is already there (written in full by whoever made it; the link is atomic)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name[:40]}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:  # mkstemp's files are 0600
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.link(tmp, path)
    finally:
        Path(tmp).unlink(missing_ok=True)


def _is_hex64(value: str) -> bool:
    return len(value) == 64 and set(value) <= _HEX


class _Damaged(Exception):
    """What is wrong with a cache entry, found before its payload is read."""


class _Foreign(_Damaged):
    """An entry of a whole other cache (restored, or outdated): one warning a kind."""


def _header_fields(head: bytes) -> dict[str, object]:
    """The fields of an entry's header line, as written (checked against the payload later).
    `head` is the file's first line, as readline(MAX_HEADER_BYTES) returned it."""
    ours = head.startswith(b"itm-store/") or b"itm-store/".startswith(head)
    if not head.endswith(b"\n"):
        if not head:
            raise _Damaged("it is empty")
        if ours and len(head) < MAX_HEADER_BYTES:  # the file ended within the line
            raise _Damaged(f"it is truncated: its {len(head)} bytes end within its header line")
        raise _Damaged("it has no header line")
    if ours and not head.startswith(HEADER):
        version = head.split(b" ", 1)[0].decode("ascii", "replace")
        raise _Foreign(f"written by another version of the generator ({version})")
    if not head.startswith(HEADER):
        raise _Damaged(f"its first line is not an {HEADER.decode().strip()} header")
    try:
        fields = json.loads(head.removeprefix(HEADER))
    except (ValueError, RecursionError):  # RecursionError: [[[[…
        raise _Damaged("its header is not JSON") from None
    if not isinstance(fields, dict):
        raise _Damaged("its header is not a JSON object")
    return fields


def _mismatch(found: dict[str, object], expected: dict[str, object]) -> str | None:
    """What in an entry's header differs from the one its kind, key and payload call for, or
    None; it names fields, never a value (the signature is checked apart)."""
    missing, extra = expected.keys() - found.keys(), found.keys() - expected.keys()
    if missing:
        return f"its header lacks {_names(missing)}"
    if extra:
        return f"its header has fields it should not: {_names(extra)}"
    if found["sha256"] != expected["sha256"]:
        return "its payload does not hash to the sha256 its header names"
    for name in ("kind", "key"):
        if found[name] != expected[name]:
            return f"its header names another {name}"
    return None


def _names(names: set[str]) -> str:
    """Field names as JSON strings, on one line however they were written."""
    return ", ".join(json.dumps(name) for name in sorted(names))


def _wrong_size(size: int, stated: object) -> str:
    """Why an entry whose payload has `size` bytes, its header saying `stated`, is refused."""
    if not isinstance(stated, int):
        return "its header states no size"
    if size < stated:
        return f"it is truncated: {size:,} bytes of payload, its header says {stated:,}"
    return f"it has {size:,} bytes of payload, its header says {stated:,}"


def _read_entry(path: Path, kind: str) -> tuple[dict[str, object], bytes]:
    """The header fields and payload of the `kind` entry at `path` (a blob has no header: {}).
    Every cache read is this one, bounded before a byte of payload is read: a regular file, at
    most the kind's MAX_BYTES (and a header line), exactly the size its header states. An
    OSError or _Damaged otherwise."""
    blob = kind == BLOBS
    with open_regular(path, MAX_BYTES[kind] + (0 if blob else MAX_HEADER_BYTES)) as found:
        handle, size = found
        head = b"" if blob else handle.readline(MAX_HEADER_BYTES)
        fields = {} if blob else _header_fields(head)
        size -= len(head)
        if not blob and fields.get("size") != size:
            raise _Damaged(_wrong_size(size, fields.get("size")))
        payload = handle.read(size + 1)
    if len(payload) != size:
        raise _Damaged("it changed while it was read")
    return fields, payload


def _key_file(path: Path) -> bytes | None:
    """CACHE.key's bytes, read as a regular file of at most KEY_BYTES: None when there is none,
    b"" when what is there cannot be a key (a larger file, a folder, a FIFO, a device); an
    OSError when it cannot be read."""
    try:
        return read_regular(path, KEY_BYTES)
    except FileNotFoundError:
        return None
    except OSError as error:
        if error.errno in (errno.EFBIG, errno.EINVAL):
            return b""
        raise


def _too_long(root: Path) -> str | None:
    """What in `root` is too long for a file system, or None: a name in its path, its key
    file's name beside it, or the whole path with the entries below it."""
    longest = max(len(os.fsencode(name)) for name in root.parts)
    length, limit = len(os.fsencode(root)), PATH_MAX - ENTRY_PATH_BYTES
    if longest > NAME_MAX:
        return f"a name in its path is {longest:,} bytes long, over the {NAME_MAX} a name may have"
    if len(os.fsencode(root.name)) + len(".key") > NAME_MAX:
        return f"its name and .key (its key file beside it) are over the {NAME_MAX} bytes allowed"
    if length > limit:
        return f"its path is {length:,} bytes long; the entries below it need under {limit:,}"
    return None


def _unusable(root: Path) -> tuple[str, str] | None:
    """Why `root` cannot be a cache folder and the fix, or None. A folder not there yet is made
    by the first write."""
    too_long = _too_long(root)
    if too_long is not None:
        return too_long, f"set {SETTING} to a shorter path"
    in_the_way = f"remove the file in the way, or set {SETTING} to a folder; the build fills it"
    try:
        if not stat.S_ISDIR(os.stat(root).st_mode):
            return "the cache directory is a file, not a directory", in_the_way
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        return "a file stands where a folder of its path should be", in_the_way
    except OSError as error:
        problem = f"cannot use it as the cache directory ({error.strerror or error})"
        return problem, f"set {SETTING} to a folder this user can read and write"
    return None


class Store:
    """One cache directory. Every method is safe to call when the cache is damaged or read-only."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        unusable = _unusable(self.root)
        if unusable is not None:
            problem, fix = unusable
            raise InputError(problem, file=str(self.root), fix=fix)
        self._unwritable = False
        self._key: bytes | None = None
        self._foreign_kinds: set[str] = set()

    # -- blobs: named by their own sha256 ----------------------------------------------------------
    def path_for(self, sha256: str) -> Path:
        return self.root / BLOBS / sha256[:2] / sha256

    def get(self, sha256: str) -> bytes | None:
        """The blob whose bytes hash to `sha256`, or None (absent, discarded as damaged, or
        `sha256` is not 64 hex digits)."""
        if not _is_hex64(sha256):
            return None
        path = self.path_for(sha256)
        read = self._read(path, BLOBS)
        if read is None:
            return None
        data = read[1]
        if sha256_hex(data) != sha256:
            self.discard(
                path, "it is empty" if not data else "its bytes no longer hash to its name"
            )
            return None
        return data

    def put(self, data: bytes) -> str:
        """Store `data` under its sha256 (atomically); returns the hash. A blob already stored
        is not written again (every read re-hashes it: a damaged one is discarded on reading,
        and the next put writes it afresh)."""
        sha256 = sha256_hex(data)
        path = self.path_for(sha256)
        try:
            if stat.S_ISREG(path.lstat().st_mode) and path.lstat().st_size == len(data):
                self._touch(path)  # used by this build: kept by prune()
                return sha256
        except OSError:
            pass
        self._write(path, data)
        return sha256

    # -- keyed entries: header line + payload --------------------------------------------------------
    def entry_path(self, kind: str, key: str) -> Path:
        if not _is_hex64(key) or kind not in MAX_BYTES or kind == BLOBS:
            raise ValueError(f"cache keys are 64 hex digits and kinds in MAX_BYTES: {kind}/{key}")
        return self.root / kind / key[:2] / key

    def get_entry(self, kind: str, key: str, *, signed: bool = True) -> bytes | None:
        """The payload stored under (kind, key) if its header vouches for exactly it (and, when
        `signed`, carries this cache's signature), else None. Pass signed=False only where the
        caller checks the payload against a hash recorded outside the cache."""
        path = self.entry_path(kind, key)
        read = self._read(path, kind)
        if read is None:
            return None
        fields, payload = read
        expected = self._header(kind, key, payload, signed=signed)
        mac = fields.pop("mac", None) if signed else None  # absent: not signed
        wrong = _mismatch(fields, {k: v for k, v in expected.items() if k != "mac"})
        if wrong is not None:
            self.discard(path, wrong)
            return None
        if signed and not (
            isinstance(mac, str)  # compare_digest refuses a str that is not ASCII
            and mac.isascii()
            and hmac.compare_digest(mac, str(expected["mac"]))
        ):
            why = f"not signed with {self.key_path.name}: forged, or made by another checkout"
            self._discard_batch(path, kind, why)
            return None
        return payload

    def _discard_batch(self, path: Path, kind: str, why: str) -> None:
        """A whole restored or outdated cache is foreign at once: one warning per kind."""
        loud = kind not in self._foreign_kinds
        self._foreign_kinds.add(kind)
        self.discard(path, why, quiet=not loud)

    def put_entry(self, kind: str, key: str, payload: bytes, *, signed: bool = True) -> None:
        header = self._header(kind, key, payload, signed=signed)
        line = HEADER + json.dumps(header, sort_keys=True).encode() + b"\n"
        self._write(self.entry_path(kind, key), line + payload)

    def _header(self, kind: str, key: str, payload: bytes, *, signed: bool) -> dict[str, object]:
        fields: dict[str, object] = {
            "kind": kind,
            "key": key,
            "size": len(payload),
            "sha256": sha256_hex(payload),
        }
        if signed:
            message = json.dumps(fields, sort_keys=True).encode()
            fields["mac"] = hmac.new(self._signing_key(), message, hashlib.sha256).hexdigest()
        return fields

    # -- the signing key: beside the cache folder, never inside it --------------------------------
    @property
    def key_path(self) -> Path:
        return self.root.with_name(self.root.name + ".key")

    def _signing_key(self) -> bytes:
        """CACHE.key's 32 random bytes, made on first use (created atomically, mode 0600). When it
        cannot be read or written, a key for this process alone: entries still verify within
        the build, and none made now will be trusted by the next one."""
        if self._key is None:
            self._key = _PROCESS_KEYS.get(str(self.key_path)) or self._load_or_make_key()
        return self._key

    def _load_or_make_key(self) -> bytes:
        path = self.key_path
        for _ in range(2):
            try:
                key = _key_file(path)
            except OSError as error:  # unreadable: left as it is
                LOG.warning("cannot read %s (%s)", path, error.strerror or error)
                return self._process_key()
            if key is not None and len(key) == KEY_BYTES:
                return key
            try:
                if key is not None:
                    LOG.warning("%s is not a cache key; making a new one", path)
                    path.unlink(missing_ok=True)
                _create_exclusive(path, os.urandom(KEY_BYTES))
            except FileExistsError:
                continue  # another build made it first: read theirs
            except OSError as error:  # a read-only checkout: neither removed nor made
                LOG.warning(
                    "cannot write %s (%s); cached entries will be rebuilt",
                    path,
                    error.strerror or error,
                )
                return self._process_key()
        return self._process_key()

    def _process_key(self) -> bytes:
        """A key for this process alone, shared by its every Store of this cache (said once)."""
        return _PROCESS_KEYS.setdefault(str(self.key_path), os.urandom(KEY_BYTES))

    def get_json(self, kind: str, key: str) -> object | None:
        payload = self.get_entry(kind, key)
        if payload is None:
            return None
        try:
            value: object = json.loads(payload)
        except ValueError:
            self.discard(self.entry_path(kind, key), "it is not JSON")
            return None
        return value

    def put_json(self, kind: str, key: str, value: object) -> None:
        self.put_entry(kind, key, json.dumps(value, sort_keys=True).encode())

    # -- damage control ------------------------------------------------------------------------------
    def discard(self, path: Path, why: str, *, quiet: bool = False) -> None:
        """Remove a damaged entry (a file or whatever sits in its place) with a one-line warning
        (`quiet`: at debug level, for the rest of a batch already warned about)."""
        if quiet:
            LOG.debug("cache entry %s discarded", path)
        else:
            LOG.warning("cache entry %s discarded (%s); rebuilding it", path, why)
        try:
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink(missing_ok=True)
        except OSError as error:
            LOG.warning("cannot remove %s (%s)", path, error.strerror or error)

    # -- growth: what recent builds did not use goes ------------------------------------------------
    def prune(self, started: float, *, keep: set[str], builds: int = BUILDS_KEPT) -> int:
        """Record a build that started at `started` (time.time()) and remove every derived entry
        and every blob outside `keep` (the sha256 the pins name) that none of the last `builds`
        builds read or wrote; returns the bytes freed. A build running meanwhile that misses an
        entry it meant to read makes it again."""
        starts = self._build_starts() + [started]
        starts = sorted(starts)[-builds:]
        try:
            write_atomic(self.root / BUILDS_FILE, json.dumps(starts).encode())
        except OSError:
            return 0  # a read-only cache: nothing is written, nothing to prune
        if len(starts) < builds:
            return 0
        cutoff = starts[0]
        freed = 0
        for kind in (*PRUNED_KINDS, "sha256"):
            for path in (self.root / kind).glob("*/*"):
                if kind == "sha256" and path.name in keep:
                    continue
                try:
                    info = path.lstat()
                    if info.st_mtime < cutoff and not stat.S_ISDIR(info.st_mode):
                        path.unlink()
                        freed += info.st_size
                except OSError:
                    continue
        return freed

    def _build_starts(self) -> list[float]:
        try:
            starts = json.loads(read_regular(self.root / BUILDS_FILE, max_bytes=1 << 16))
        except (OSError, ValueError, RecursionError):  # RecursionError: [[[[…
            return []
        if not isinstance(starts, list):
            return []
        numbers = [t for t in starts if isinstance(t, int | float) and not isinstance(t, bool)]
        return [float(t) for t in numbers if math.isfinite(t)]

    @staticmethod
    def _touch(path: Path) -> None:
        with contextlib.suppress(OSError):  # a read-only cache
            os.utime(path)

    def _read(self, path: Path, kind: str) -> tuple[dict[str, object], bytes] | None:
        """The header fields and payload of the `kind` entry at `path` (_read_entry), or None:
        absent, or discarded as damaged."""
        try:
            read = _read_entry(path, kind)
            self._touch(path)  # used by this build: kept by prune()
            return read
        except FileNotFoundError:
            return None
        except NotADirectoryError:  # a file where a folder of the layout should be
            self.discard(self._blocking_parent(path), "a file stands where a folder belongs")
        except _Foreign as why:
            self._discard_batch(path, kind, str(why))
        except _Damaged as why:
            self.discard(path, str(why))
        except OSError as error:  # not a file (a directory, a FIFO), too large, unreadable
            self.discard(path, f"{error.strerror or error}")
        return None

    def _blocking_parent(self, path: Path) -> Path:
        for parent in path.parents:
            if parent == self.root or self.root not in parent.parents:
                break
            if parent.exists() and not parent.is_dir():
                return parent
        return path

    def _write(self, path: Path, data: bytes) -> None:
        if self._unwritable or str(self.root) in _UNWRITABLE:  # said once, by whichever Store
            return
        try:
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            write_atomic(path, data, durable=False)  # checked on every read
        except OSError as error:
            self._unwritable = True
            _UNWRITABLE.add(str(self.root))
            LOG.warning(
                "cannot write the cache at %s (%s); going on without caching",
                self.root,
                error.strerror or error,
            )

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

Whatever is wrong with an entry (bad hash, garbage, a directory in its place, unreadable), it is
discarded with a one-line warning on the "itm.cache" logger and the caller rebuilds it: a cache
problem never stops a build. A cache that cannot be written (read-only) is warned about once and
the build goes on without caching. Writes go to a temp file in the same folder, are fsynced and
renamed into place, so no reader ever sees a partial file.

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
from pathlib import Path

from generator.errors import InputError

LOG = logging.getLogger("itm.cache")  # outside "mkdocs.*": a cache warning must not fail --strict
HEADER = b"itm-store/2 "  # /2: headers carry the entry's signature ("mac")
KEY_BYTES = 32
BUILDS_KEPT = 10  # prune what none of the last this many builds used
BUILDS_FILE = "builds.json"  # the start times of the last BUILDS_KEPT builds
PRUNED_KINDS = ("memo_files", "memo_page", "figure", "katex", "katex_formula", "jinja",
                "sha256_memo")  # fmt: skip
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


def write_atomic(path: Path, data: bytes) -> None:
    """Write via a temp file in the same folder, fsync, then rename: never a half-written file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name[:40]}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read_regular(path: Path, max_bytes: int | None = None) -> bytes:
    """A regular file's bytes; anything else (a FIFO would block forever, a device like
    /dev/zero would never end) or a file over `max_bytes` is an OSError, like a directory."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        if max_bytes is not None and info.st_size > max_bytes:
            raise OSError(errno.EFBIG, f"larger than {max_bytes:,} bytes", str(path))
        with os.fdopen(fd, "rb", closefd=False) as handle:
            return handle.read()
    finally:
        os.close(fd)


def _create_exclusive(path: Path, data: bytes) -> None:
    """Write `data` to a new file at `path`, mode 0600, all or nothing: FileExistsError when a
    file is already there (written in full by whoever made it; the link is atomic)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
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


class Store:
    """One cache directory. Every method is safe to call when the cache is damaged or read-only."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        if self.root.exists() and not self.root.is_dir():
            raise InputError(
                f"the cache directory {self.root} is a file, not a directory",
                file=str(self.root),
                fix="point ITM_CACHE_DIR at a directory (or remove the file); the build fills it",
            )
        self._unwritable = False
        self._key: bytes | None = None
        self._foreign_kinds: set[str] = set()

    # -- blobs: named by their own sha256 ----------------------------------------------------------
    def path_for(self, sha256: str) -> Path:
        return self.root / "sha256" / sha256[:2] / sha256

    def get(self, sha256: str) -> bytes | None:
        """The blob whose bytes hash to `sha256`, or None (absent, discarded as damaged, or
        `sha256` is not 64 hex digits)."""
        if not _is_hex64(sha256):
            return None
        path = self.path_for(sha256)
        data = self._read(path)
        if data is None:
            return None
        if sha256_hex(data) != sha256:
            self.discard(path, "its bytes no longer hash to its name")
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
        if not _is_hex64(key) or not kind.isidentifier():
            raise ValueError(f"cache keys are 64 hex digits and kinds identifiers: {kind}/{key}")
        return self.root / kind / key[:2] / key

    def get_entry(self, kind: str, key: str, *, signed: bool = True) -> bytes | None:
        """The payload stored under (kind, key) if its header vouches for exactly it (and, when
        `signed`, carries this cache's signature), else None. Pass signed=False only where the
        caller checks the payload against a hash recorded outside the cache."""
        path = self.entry_path(kind, key)
        data = self._read(path)
        if data is None:
            return None
        head, newline, payload = data.partition(b"\n")
        if head.startswith(b"itm-store/") and not head.startswith(HEADER):
            self._discard_batch(path, kind, "written by an older version of the generator")
            return None
        try:
            fields = json.loads(head.removeprefix(HEADER)) if head.startswith(HEADER) else None
        except ValueError:
            fields = None
        expected = self._header(kind, key, payload, signed=signed)
        if not newline or not isinstance(fields, dict) or fields.keys() != expected.keys():
            self.discard(path, "its header does not vouch for its content")
            return None
        mac = fields.pop("mac", "")
        if fields != {k: v for k, v in expected.items() if k != "mac"}:
            self.discard(path, "its header does not vouch for its content")
            return None
        if signed and not (isinstance(mac, str) and hmac.compare_digest(mac, str(expected["mac"]))):
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
                key = read_regular(path)
            except FileNotFoundError:
                key = b""
            except OSError as error:
                LOG.warning("Inside the Model: cannot read %s (%s)", path, error.strerror or error)
                return self._process_key()
            if len(key) == KEY_BYTES:
                return key
            try:
                if key:
                    LOG.warning("Inside the Model: %s is not a cache key; making a new one", path)
                    path.unlink(missing_ok=True)
                _create_exclusive(path, os.urandom(KEY_BYTES))
            except FileExistsError:
                continue  # another build made it first: read theirs
            except OSError as error:  # a read-only checkout: neither removed nor made
                LOG.warning(
                    "Inside the Model: cannot write %s (%s); cached entries will be rebuilt",
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
            return json.loads(payload)
        except ValueError:
            self.discard(self.entry_path(kind, key), "it is not JSON")
            return None

    def put_json(self, kind: str, key: str, value: object) -> None:
        self.put_entry(kind, key, json.dumps(value, sort_keys=True).encode())

    # -- damage control ------------------------------------------------------------------------------
    def discard(self, path: Path, why: str, *, quiet: bool = False) -> None:
        """Remove a damaged entry (a file or whatever sits in its place) with a one-line warning
        (`quiet`: at debug level, for the rest of a batch already warned about)."""
        if quiet:
            LOG.debug("Inside the Model: cache entry %s discarded", path)
        else:
            LOG.warning("Inside the Model: cache entry %s discarded (%s); rebuilding it", path, why)
        try:
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink(missing_ok=True)
        except OSError as error:
            LOG.warning("Inside the Model: cannot remove %s (%s)", path, error.strerror or error)

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
        except (OSError, ValueError):
            return []
        if not isinstance(starts, list):
            return []
        numbers = [t for t in starts if isinstance(t, int | float) and not isinstance(t, bool)]
        return [float(t) for t in numbers if math.isfinite(t)]

    @staticmethod
    def _touch(path: Path) -> None:
        with contextlib.suppress(OSError):  # a read-only cache
            os.utime(path)

    def _read(self, path: Path) -> bytes | None:
        try:
            data = read_regular(path)
            self._touch(path)  # used by this build: kept by prune()
            return data
        except FileNotFoundError:
            return None
        except NotADirectoryError:  # a file where a folder of the layout should be
            self.discard(self._blocking_parent(path), "a file stands where a folder belongs")
            return None
        except OSError as error:  # a directory in its place, unreadable, I/O error
            self.discard(path, f"unreadable: {error.strerror or error}")
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
            write_atomic(path, data)
        except OSError as error:
            self._unwritable = True
            _UNWRITABLE.add(str(self.root))
            LOG.warning(
                "Inside the Model: cannot write the cache at %s (%s); going on without caching",
                self.root,
                error.strerror or error,
            )

"""Fetch a file by URL, accept it only if its sha256 matches, and cache it under that hash."""

from __future__ import annotations

import hashlib
import os
import tempfile
import urllib.error
import urllib.request
from pathlib import Path

from generator.errors import InputError


def blob_path(cache_dir: Path, sha256: str) -> Path:
    return cache_dir / "blobs" / sha256[:2] / sha256


def read_cached(cache_dir: Path, sha256: str) -> bytes | None:
    """The cached bytes for this hash, re-verified; a corrupt entry is removed."""
    path = blob_path(cache_dir, sha256)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    if hashlib.sha256(data).hexdigest() == sha256:
        return data
    path.unlink(missing_ok=True)
    return None


def write_cached(cache_dir: Path, data: bytes) -> str:
    """Store bytes under their sha256 (atomic: temp file + rename). Returns the hash."""
    sha256 = hashlib.sha256(data).hexdigest()
    path = blob_path(cache_dir, sha256)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{sha256[:8]}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return sha256


def fetch_verified(
    url: str,
    sha256: str,
    cache_dir: Path,
    *,
    offline: bool = False,
    what: str = "",
    timeout: float = 60.0,
) -> bytes:
    """Bytes of `url` whose sha256 is `sha256`, from the cache or the network."""
    cached = read_cached(cache_dir, sha256)
    if cached is not None:
        return cached
    where = f"{what}: " if what else ""
    if offline:
        raise InputError(
            f"{where}{url} is not cached and the network is off",
            fix="run once with the network on, or unset ITM_OFFLINE",
        )
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            data = response.read()
    except (urllib.error.URLError, TimeoutError, OSError) as error:
        raise InputError(
            f"{where}cannot fetch {url}: {error}",
            fix="check the network (the package registry must be reachable)",
        ) from error
    actual = hashlib.sha256(data).hexdigest()
    if actual != sha256:
        raise InputError(
            f"{where}{url} has sha256 {actual}, the pin says {sha256}",
            fix="the file changed upstream or in transit: check the URL, then re-pin",
        )
    write_cached(cache_dir, data)
    return data

"""Registry mirrors: fetch a pinned archive through the PEP 691 simple index and read one member;
the releases an index lists, and the order their archives are tried in.

The archive must hash to the sha256 in the LOCK (the index's own hash is checked too, but is
not trusted alone). Verified archives go into the content-addressed cache.
"""

from __future__ import annotations

import functools
import io
import json
import re
import tarfile
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin

from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    parse_sdist_filename,
    parse_wheel_filename,
)
from packaging.version import InvalidVersion, Version

from generator import per_build
from generator.sources.excerpt import sha256_hex
from generator.sources.fetch import Http
from generator.sources.lockschema import Mirror
from generator.store import Store

SIMPLE_JSON = "application/vnd.pypi.simple.v1+json"


class MirrorError(Exception):
    """The mirror archive could not be had, or is not what the lock pins."""


def project_url(base: str, package: str) -> str:
    normalized = re.sub(r"[-_.]+", "-", package).lower()  # PEP 503
    return f"{base.rstrip('/')}/{normalized}/"


def archive_bytes(mirror: Mirror, http: Http | None, cache: Store, base: str) -> bytes:
    """The mirror's archive, from the cache or the index (http None: offline, cache only);
    always hashing to mirror.sha256."""
    cached = cache.get(mirror.sha256)
    if cached is not None:
        return cached
    if http is None:
        raise MirrorError(f"{mirror.filename} is not in the cache (offline)")
    index_url = project_url(base, mirror.package)
    entry = next(
        (
            f
            for f in index_files(http, base, mirror.package)
            if f.get("filename") == mirror.filename
        ),
        None,
    )
    if entry is None:
        raise MirrorError(f"{mirror.filename} is not listed at {index_url}")
    return download(http, cache, index_url, entry, mirror.sha256)


def index_files(http: Http, base: str, package: str) -> list[dict[str, Any]]:
    """The files the index lists for a project (PEP 691 JSON: filename, url, hashes, size)."""
    index_url = project_url(base, package)
    raw = http.get(index_url, headers={"Accept": SIMPLE_JSON})
    try:
        files = json.loads(raw)["files"]
        if not all(isinstance(f, dict) and isinstance(f.get("filename"), str) for f in files):
            raise TypeError
    except (ValueError, KeyError, TypeError, RecursionError):  # RecursionError: nested [[[…
        raise MirrorError(f"{index_url} did not answer with PEP 691 JSON") from None
    return list(files)


def download(
    http: Http, cache: Store, index_url: str, entry: dict[str, Any], sha256: str | None
) -> bytes:
    """One file the index lists, hashing to `sha256` (the lock's; None: the index's own, which
    `itm mirror add` records) and to the index's hash; kept in the cache."""
    name = entry["filename"]
    listed = (entry.get("hashes") or {}).get("sha256")
    wanted = sha256 or listed
    if not isinstance(wanted, str):
        raise MirrorError(f"the index lists no sha256 for {name}: nothing to check it against")
    if listed and listed != wanted:
        raise MirrorError(
            f"the index lists sha256 {listed[:12]}… for {name}, the lock pins {wanted[:12]}…"
        )
    # PEP 700: the index's size lowers the cap, never raises it (the index is not the pin)
    listed_size = entry.get("size")
    limit = http.settings.max_bytes
    if isinstance(listed_size, int) and listed_size > limit:
        raise MirrorError(
            f"the index lists {listed_size:,} bytes for {name}, over the {limit:,}-byte cap;"
            " not downloaded"
        )
    size = listed_size if isinstance(listed_size, int) and listed_size >= 0 else None
    data = cache.get(wanted) or http.get(urljoin(index_url, str(entry.get("url", ""))), size=size)
    got = sha256_hex(data)
    if got != wanted:
        raise MirrorError(
            f"{name} downloaded with sha256 {got[:12]}…, the lock pins {wanted[:12]}…; not used"
        )
    cache.put(data)
    return data


def read_member(archive: bytes, mirror: Mirror) -> bytes:
    """One file from a wheel/zip or an sdist tarball, read in memory (nothing is extracted)."""
    return archive_file(archive, mirror.filename, mirror.member)


ZIPS = (".whl", ".zip")
TARS = (".tar.gz", ".tgz", ".tar.bz2", ".tar.xz", ".tar")


def archive_file(archive: bytes, name: str, member: str, *, max_bytes: int | None = None) -> bytes:
    """The file `member` of the archive `name` (its bytes in `archive`); MirrorError when it has
    none, it is larger than `max_bytes` (its size as the archive states it), or the archive does
    not read."""
    try:
        if name.endswith(ZIPS):
            zipped = _opened_zip(archive)
            _fits(name, member, zipped.getinfo(member).file_size, max_bytes)
            return zipped.read(member)  # never more than the size it states
        if name.endswith(TARS):
            with tarfile.open(fileobj=io.BytesIO(archive)) as tarball:
                found = tarball.getmember(member)
                handle = tarball.extractfile(found) if found.isfile() else None
                if handle is None:
                    raise KeyError(member)
                _fits(name, member, found.size, max_bytes)
                return handle.read()
    except KeyError:
        raise MirrorError(f"{name} has no file {member!r}") from None
    except (zipfile.BadZipFile, tarfile.TarError, EOFError, OSError) as error:
        raise MirrorError(f"{name} is not a readable archive ({error})") from None
    raise MirrorError(f"{name}: unknown archive type (expected .whl, .zip or .tar.*)")


@functools.lru_cache(maxsize=2)
def _opened_zip(archive: bytes) -> zipfile.ZipFile:
    """The archive opened, its directory read once: a cold build reads 14 members of two
    transformers wheels, and each read of a wheel's directory (2,800 files) took 12 ms."""
    return zipfile.ZipFile(io.BytesIO(archive))


per_build(_opened_zip.cache_clear)  # `mkdocs serve` keeps this module: no archive kept past a build


def archive_names(archive: bytes, name: str) -> list[str]:
    """The regular files of an archive, by their paths inside it."""
    try:
        if name.endswith(ZIPS):
            with zipfile.ZipFile(io.BytesIO(archive)) as zipped:
                return [i.filename for i in zipped.infolist() if not i.is_dir()]
        if name.endswith(TARS):
            with tarfile.open(fileobj=io.BytesIO(archive)) as tarball:
                return [m.name for m in tarball.getmembers() if m.isfile()]
    except (zipfile.BadZipFile, tarfile.TarError, EOFError, OSError) as error:
        raise MirrorError(f"{name} is not a readable archive ({error})") from None
    raise MirrorError(f"{name}: unknown archive type (expected .whl, .zip or .tar.*)")


def _fits(name: str, member: str, size: int, max_bytes: int | None) -> None:
    if max_bytes is not None and size > max_bytes:
        raise MirrorError(f"{name}: {member} is {size:,} bytes, more than the {max_bytes:,} read")


@dataclass(frozen=True)
class Release:
    """One archive of a release on the index."""

    package: str
    version: str
    entry: dict[str, Any]  # the index's file entry (filename, url, hashes, size)

    @property
    def filename(self) -> str:
        return str(self.entry["filename"])


def releases(listed: Iterable[dict[str, Any]], package: str) -> dict[Version, list[Release]]:
    """The index's files by release version (filenames that are no sdist or wheel are left out),
    each release's archives in the order they are tried: the sdist (the repository's layout),
    then pure-Python wheels, then the rest."""
    found: dict[Version, list[Release]] = {}
    for entry in listed:
        version = archive_version(str(entry["filename"]))
        if version is not None:
            found.setdefault(version, []).append(Release(package, str(version), entry))
    for archives in found.values():
        archives.sort(key=lambda r: (kind_rank(r.filename), r.filename))
    return found


def archive_version(filename: str) -> Version | None:
    """The release an sdist's or a wheel's file name says, None for any other name."""
    try:
        if filename.endswith(".whl"):
            return parse_wheel_filename(filename)[1]
        return parse_sdist_filename(filename)[1]
    except (InvalidWheelFilename, InvalidSdistFilename, InvalidVersion):
        return None


def kind_rank(filename: str) -> int:
    """0 for an sdist, 1 for a pure-Python wheel, 2 for any other wheel."""
    if not filename.endswith(".whl"):
        return 0
    return 1 if filename.endswith("-none-any.whl") else 2

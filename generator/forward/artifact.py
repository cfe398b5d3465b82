"""Files this project makes once and commits, pinned by sha256 beside GPT-2's checkpoint.

A table [artifacts.KEY] in sources/checkpoints.toml names the file (relative to the project
root), its size, its sha256 and the command that remakes it. A build reads the file only through
read_pinned, which refuses bytes that do not hash to the pin; the command that remakes the file
rewrites the pin with write_pinned.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

import msgspec

from generator.checked_io import read_input, write_output
from generator.checkpoints import PINS_FILE, RESTORE, read_pins_file
from generator.data_file import convert
from generator.errors import InputError

HEX = re.compile(r"[0-9a-f]{64}")


class ArtifactTable(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """An [artifacts.KEY] table's keys (a misspelt one was ignored; what is missing: load_pin)."""

    file: object = None
    size: object = None
    sha256: object = None
    made_by: object = None


@dataclass(frozen=True)
class ArtifactPin:
    key: str  # "standin": the table name
    file: str  # path relative to the project root
    size: int  # bytes
    sha256: str
    made_by: str  # the command that remakes the file and its pin

    @property
    def entry(self) -> str:
        return f"artifacts.{self.key} in {PINS_FILE}"


def load_pin(root: Path, key: str) -> ArtifactPin:
    """The [artifacts.KEY] table of the pins file, checked field by field."""
    where = str(root / PINS_FILE)
    data = read_pins_file(root / PINS_FILE)
    tables = data.get("artifacts", {})
    table = tables.get(key) if isinstance(tables, dict) else None
    if not isinstance(table, dict):
        raise InputError(
            f"no [artifacts.{key}] table", file=where, fix="restore the table from git"
        )
    convert(table, ArtifactTable, file=where, fix=RESTORE, entry=f"artifacts.{key}")
    file, size, sha, made_by = (table.get(f) for f in ("file", "size", "sha256", "made_by"))
    if not (
        isinstance(file, str)
        and isinstance(made_by, str)
        and isinstance(size, int)
        and size >= 0
        and isinstance(sha, str)
        and HEX.fullmatch(sha)
    ):
        raise InputError(
            "an artifact needs file, size (bytes), sha256 (64 lowercase hex digits) and made_by",
            file=where,
            entry=f"artifacts.{key}",
            fix="restore the table from git, or remake the file with its command",
        )
    pin = ArtifactPin(key=key, file=file, size=size, sha256=sha, made_by=made_by)
    return pin


def read_pinned(root: Path, key: str) -> tuple[bytes, ArtifactPin]:
    """The artifact's bytes, verified against its pin (InputError naming the file and the fix)."""
    pin = load_pin(root, key)
    path = root / pin.file
    remake = f"run `{pin.made_by}` (it rewrites the file and its pin), then commit both"
    fix = f"restore it with `git checkout -- {pin.file}`, or {remake}"
    data = read_input(path, max_bytes=pin.size, entry=pin.entry, fix=fix)  # the pin's size: bounded
    actual = hashlib.sha256(data).hexdigest()
    if actual != pin.sha256:
        raise InputError(
            f"sha256 {actual} ({len(data):,} bytes) does not match the pinned sha256 "
            f"{pin.sha256} ({pin.size:,} bytes)",
            file=str(path),
            entry=pin.entry,
            fix=fix,
        )
    return data, pin


def write_pinned(root: Path, key: str, data: bytes) -> ArtifactPin:
    """Write the artifact's new bytes and rewrite its size and sha256 in the pins file (only those
    two lines of its table; comments and the other tables stay as they are)."""
    pin = load_pin(root, key)
    sha = hashlib.sha256(data).hexdigest()
    text = (root / PINS_FILE).read_text(encoding="utf-8")
    start = text.index(f"[artifacts.{key}]")
    end = text.find("\n[", start)
    end = len(text) if end < 0 else end
    table = re.sub(r"(?m)^size = \d+$", f"size = {len(data)}", text[start:end])
    table = re.sub(r'(?m)^sha256 = "[0-9a-f]{64}"$', f'sha256 = "{sha}"', table)
    write_output(root / pin.file, data)
    write_output(root / PINS_FILE, (text[:start] + table + text[end:]).encode("utf-8"))
    return load_pin(root, key)

"""The pins of checkpoints (sources/checkpoints.toml): each [checkpoints.KEY] table read and checked
field by field. Finding and verifying the pinned files: checkpoint_files.py."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import msgspec

from generator.data_file import convert, read_data
from generator.errors import InputError

PINS_FILE = "sources/checkpoints.toml"
WEIGHTS_FILE = "model.safetensors"
MAX_PINS_BYTES = 1 << 20  # the pins file: a few tables, 2 KB today
RESTORE = f"restore it from git (`git checkout -- {PINS_FILE}`)"


@dataclass(frozen=True)
class PinnedFile:
    name: str  # "model.safetensors"
    size: int  # bytes
    sha256: str  # 64 hex digits


@dataclass(frozen=True)
class CheckpointPin:
    key: str  # "gpt2": the table name in the pins file
    repo: str  # "openai-community/gpt2" on the Hugging Face hub
    revision: str  # full 40-hex commit of the hub repo
    model: str  # key in generator.config.CONFIGS
    license: str
    env: str  # environment variable that names a user path
    files: dict[str, PinnedFile]  # by file name, model.safetensors first

    @property
    def cache_folder(self) -> str:
        """The hub cache's folder for this repo: models--{owner}--{name}."""
        return "models--" + self.repo.replace("/", "--")

    def snapshot(self, hub_cache: Path) -> Path:
        return hub_cache / self.cache_folder / "snapshots" / self.revision

    @property
    def short(self) -> str:
        return f"{self.repo} @ {self.revision[:12]}"


class PinsFile(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The pins file's keys (a misspelt one was ignored); each table is checked by its reader."""

    version: Literal[1] = 1
    checkpoints: object = None
    artifacts: object = None


class CheckpointTable(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A [checkpoints.KEY] table's keys and types (what is missing: _pin says)."""

    repo: str = ""
    revision: str = ""
    model: str = ""
    license: str = ""
    env: str = ""
    files: dict[str, object] = {}


class FileTable(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    size: int = -1
    sha256: str = ""


def read_pins_file(path: Path) -> dict[str, object]:
    """The pins file as TOML: a regular file of at most MAX_PINS_BYTES with only the keys
    PinsFile names, else an InputError."""
    data = read_data(path, dict[str, object], fix=RESTORE, max_bytes=MAX_PINS_BYTES)
    convert(data, PinsFile, file=str(path), fix=RESTORE)
    return data


def load_checkpoint_pins(path: Path) -> dict[str, CheckpointPin]:
    """Every [checkpoints.KEY] table of the pins file, checked field by field."""
    where = str(path)
    data = read_pins_file(path)
    tables = data.get("checkpoints", {})
    if not isinstance(tables, dict) or not all(isinstance(t, dict) for t in tables.values()):
        raise InputError(
            "checkpoints must be tables ([checkpoints.KEY])",
            file=where,
            entry="checkpoints",
            fix=RESTORE,
        )
    return {key: _pin(key, table, where) for key, table in tables.items()}


def checkpoint_pin(path: Path, key: str) -> CheckpointPin:
    """The pin [checkpoints.KEY] of the pins file, or an InputError naming the table."""
    pins = load_checkpoint_pins(path)
    if key not in pins:
        raise InputError(
            f"no [checkpoints.{key}] table",
            file=str(path),
            entry=f"checkpoints.{key}",
            fix=RESTORE,
        )
    return pins[key]


def _pin(key: str, table: dict, where: str) -> CheckpointPin:
    entry = f"checkpoints.{key}"
    convert(table, CheckpointTable, file=where, fix=RESTORE, entry=entry)
    for name, spec in (table.get("files") or {}).items():
        convert(spec, FileTable, file=where, fix=RESTORE, entry=f"{entry}.files.{name}")

    def text(field: str) -> str:
        value = table.get(field)
        if not isinstance(value, str) or not value:
            raise InputError(
                f"field {field!r} is missing or not a string",
                file=where,
                entry=f"checkpoints.{key}",
                fix=f'add {field} = "..."',
            )
        return value

    revision = text("revision")
    if not re.fullmatch("[0-9a-f]{40}", revision):
        raise InputError(
            f"revision {revision!r} is not a full 40-hex commit",
            file=where,
            entry=f"checkpoints.{key}.revision",
            fix="pin the full commit id of the hub repo, never a branch name",
        )
    files: dict[str, PinnedFile] = {}
    specs = table.get("files", {})
    if not isinstance(specs, dict) or not all(isinstance(s, dict) for s in specs.values()):
        raise InputError(
            "files must be tables of size and sha256",
            file=where,
            entry=f"checkpoints.{key}.files",
            fix=RESTORE,
        )
    for name, spec in specs.items():
        size, sha = spec.get("size"), spec.get("sha256")
        ok_sha = isinstance(sha, str) and re.fullmatch("[0-9a-f]{64}", sha)
        if not isinstance(size, int) or size < 0 or not ok_sha:
            raise InputError(
                "a pinned file needs size (bytes) and sha256 (64 lowercase hex digits)",
                file=where,
                entry=f"checkpoints.{key}.files.{name}",
                fix="copy both from the hub's file page for that revision",
            )
        files[name] = PinnedFile(name, size, sha)
    if WEIGHTS_FILE not in files:
        raise InputError(
            f'no [checkpoints.{key}.files."{WEIGHTS_FILE}"] entry',
            file=where,
            entry=f"checkpoints.{key}",
            fix=f"pin the size and sha256 of {WEIGHTS_FILE}",
        )
    ordered = {WEIGHTS_FILE: files[WEIGHTS_FILE], **files}
    return CheckpointPin(
        key=key,
        repo=text("repo"),
        revision=revision,
        model=text("model"),
        license=text("license"),
        env=text("env"),
        files=ordered,
    )

"""Pinned checkpoints: find GPT-2's files, verify their bytes against the pin, or report none.

Resolution order for a pinned checkpoint (sources/checkpoints.toml):
1. a path the user gives (the `--weights` flag or the `gpt2_weights` setting, ITM_GPT2_WEIGHTS):
   a model.safetensors file, or a folder holding the pinned files;
2. the standard Hugging Face cache (settings.hub_cache: HF_HUB_CACHE, HF_HOME/hub,
   ~/.cache/huggingface/hub), snapshot of exactly the pinned revision;
3. a download of that revision through huggingface_hub, only when asked (download_weights) and
   not offline; the caller decides both from the build's settings.
Otherwise: None, and the page shows a stand-in. A file whose bytes do not hash to the pin is
refused with both hashes in the message. Hashing 548 MB takes seconds, so each result is
remembered in the cache by the file's path, inode, size and times.
"""

from __future__ import annotations

import hashlib
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from generator.checked_io import read_text_input
from generator.errors import InputError
from generator.store import Store, key_of

PINS_FILE = "sources/checkpoints.toml"
WEIGHTS_FILE = "model.safetensors"
DOWNLOAD_ENV = "ITM_DOWNLOAD_WEIGHTS"
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


@dataclass(frozen=True)
class Checkpoint:
    """A pinned checkpoint whose every file was found and verified."""

    pin: CheckpointPin
    paths: dict[str, Path]  # file name -> verified local path
    # where it was found, for the page: "ITM_GPT2_WEIGHTS", "the Hugging Face cache", ...
    origin: str

    @property
    def weights(self) -> Path:
        return self.paths[WEIGHTS_FILE]


# -- the pins file -------------------------------------------------------------------------------
def read_pins_file(path: Path) -> dict:
    """The pins file as TOML: a regular file of at most MAX_PINS_BYTES, else an InputError."""
    text = read_text_input(path, max_bytes=MAX_PINS_BYTES, fix=RESTORE)
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise InputError(
            f"not valid TOML ({error})", file=str(path), fix="fix the syntax"
        ) from None


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


# -- hashing, remembered by the file's identity -----------------------------------------------------
def sha256_of(path: Path, cache_dir: Path) -> str:
    """sha256 of the file's bytes; remembered per (resolved path, device, inode, size, mtime_ns,
    ctime_ns), so replacing, editing or even touching the file hashes it afresh."""
    real = Path(path).resolve()
    stat = real.stat()
    identity = [
        str(real),
        stat.st_dev,
        stat.st_ino,
        stat.st_size,
        stat.st_mtime_ns,
        stat.st_ctime_ns,
    ]
    store = Store(cache_dir)
    key = key_of("checkpoint-sha256", identity)
    memo = store.get_json("sha256_memo", key)
    if isinstance(memo, dict) and memo.get("identity") == identity:
        sha = memo.get("sha256")
        if isinstance(sha, str) and len(sha) == 64:
            return sha
    with real.open("rb") as handle:
        sha = hashlib.file_digest(handle, "sha256").hexdigest()
    store.put_json("sha256_memo", key, {"identity": identity, "sha256": sha})
    return sha


def verify(
    path: Path, pinned: PinnedFile, pin: CheckpointPin, cache_dir: Path, origin: str
) -> None:
    """Raise InputError unless the file's bytes hash to the pin (its size is checked first)."""
    where = f"{pinned.name} at {pin.repo} revision {pin.revision} (found via {origin})"
    fix = (
        f"use the file of exactly that revision, or unset {pin.env} / remove the file so the "
        "page falls back to the stand-in"
    )
    entry = f"checkpoints.{pin.key}.files.{pinned.name} in {PINS_FILE}"
    try:
        size = Path(path).stat().st_size
        if not Path(path).is_file():
            raise IsADirectoryError(f"{path} is not a file")
    except OSError as error:
        raise InputError(f"cannot read it: {error}", file=str(path), entry=entry, fix=fix) from None
    if size != pinned.size:
        raise InputError(
            f"it has {size:,} bytes, the pinned {where} has {pinned.size:,}",
            file=str(path),
            entry=entry,
            fix=fix,
        )
    try:
        actual = sha256_of(path, cache_dir)
    except OSError as error:
        raise InputError(f"cannot read it: {error}", file=str(path), entry=entry, fix=fix) from None
    if actual == pinned.sha256:
        return
    raise InputError(
        f"sha256 {actual} does not match the pinned sha256 {pinned.sha256} of {where}",
        file=str(path),
        entry=entry,
        fix=fix,
    )


# -- where files can be -----------------------------------------------------------------------------
def resolve(
    pin: CheckpointPin,
    *,
    cache_dir: Path,
    hub_cache: Path,
    user_path: str | Path | None = None,
    origin: str = "--weights",
    download: bool = False,
) -> Checkpoint | None:
    """The pinned checkpoint's verified files, or None when it is not on this machine.

    user_path (given by `origin`: the flag or pin.env) must exist and hold the pinned files: an
    InputError says which is missing. A file that hashes differently is refused, wherever it
    was found. `download` (asked for and not offline) fetches the revision into hub_cache.
    """
    if user_path is not None:
        return _from_user_path(pin, Path(user_path).expanduser(), cache_dir, hub_cache, origin)

    snapshot = pin.snapshot(hub_cache)
    if (snapshot / WEIGHTS_FILE).exists():
        paths = {name: snapshot / name for name in pin.files}
        missing = [name for name, p in paths.items() if not p.exists()]
        if not missing:
            # The page says where the files were found: by name, not this machine's path
            # (the site must be the same bytes wherever it is built).
            return _verified(pin, paths, cache_dir, "the Hugging Face cache")

    if download:
        paths = _download(pin, hub_cache)
        return _verified(pin, paths, cache_dir, "downloaded into the Hugging Face cache")
    return None


def _from_user_path(
    pin: CheckpointPin, given: Path, cache_dir: Path, hub_cache: Path, origin: str
) -> Checkpoint:
    if not given.exists():
        raise InputError(
            f"{given} does not exist",
            file=str(given),
            entry=origin,
            fix=f"point {pin.env} (or --weights) at {pin.repo}'s {WEIGHTS_FILE} of revision "
            f"{pin.revision}, or at a folder holding {', '.join(pin.files)}; unset it to use "
            "the stand-in",
        )
    folder = given if given.is_dir() else given.parent
    paths = {name: folder / name for name in pin.files}
    if given.is_file():
        paths[WEIGHTS_FILE] = given
    snapshot = pin.snapshot(hub_cache)
    for name, path in paths.items():  # the tokenizer files may sit in the hub cache instead
        if not path.exists() and (snapshot / name).exists():
            paths[name] = snapshot / name
    missing = [name for name, path in paths.items() if not path.exists()]
    if missing:
        raise InputError(
            f"{', '.join(missing)} not found next to {given}",
            file=str(folder),
            entry=origin,
            fix=f"put {', '.join(missing)} of {pin.repo} revision {pin.revision} in {folder}",
        )
    return _verified(pin, paths, cache_dir, origin)


def _verified(
    pin: CheckpointPin, paths: dict[str, Path], cache_dir: Path, origin: str
) -> Checkpoint:
    for name, path in paths.items():
        verify(path, pin.files[name], pin, cache_dir, origin)
    return Checkpoint(pin=pin, paths=paths, origin=origin)


def _download(pin: CheckpointPin, hub: Path) -> dict[str, Path]:
    """Fetch the pinned revision's files into the hub cache (huggingface_hub resumes partials)."""
    try:
        from huggingface_hub import hf_hub_download
    except ImportError:
        raise InputError(
            f"{DOWNLOAD_ENV} is set but huggingface_hub is not installed",
            entry=DOWNLOAD_ENV,
            fix="pip install huggingface_hub (it comes with transformers), or unset "
            f"{DOWNLOAD_ENV}",
        ) from None
    paths = {}
    for name in pin.files:
        try:
            local = hf_hub_download(
                repo_id=pin.repo, filename=name, revision=pin.revision, cache_dir=str(hub)
            )
        except Exception as error:  # network, authentication, missing revision
            raise InputError(
                f"could not download {name} of {pin.repo} at {pin.revision}: {error}",
                entry=DOWNLOAD_ENV,
                fix=f"check the network, or unset {DOWNLOAD_ENV} to build with the stand-in",
            ) from None
        paths[name] = Path(local)
    return paths

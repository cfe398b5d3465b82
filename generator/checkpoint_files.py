"""Pinned checkpoints' files: find GPT-2's files, verify their bytes against the pin (checkpoints.py
reads the pins), or report none.

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
from dataclasses import dataclass
from pathlib import Path

from generator.checkpoints import PINS_FILE, WEIGHTS_FILE, CheckpointPin, PinnedFile
from generator.errors import InputError
from generator.store import Store, key_of

DOWNLOAD_ENV = "ITM_DOWNLOAD_WEIGHTS"


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

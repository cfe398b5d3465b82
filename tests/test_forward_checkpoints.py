"""Pinned weights: resolution order (user path, Hugging Face cache, opt-in download), hashes
refused with both values named, hashes remembered by (path, size, mtime), and no network."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

from generator.errors import InputError
from generator.forward import checkpoints
from generator.forward.checkpoints import load_pins, resolve, sha256_of
from tests.forward_helpers import (
    block_network,
    hub_snapshot,
    pin_for,
    sha256_file,
    write_tiny_checkpoint,
)
from tests.site_helpers import ROOT, SHARED


@pytest.fixture
def offline(monkeypatch):
    return block_network(monkeypatch)


@pytest.fixture
def tiny(tmp_path):
    paths = write_tiny_checkpoint(tmp_path / "given")
    return paths, pin_for(paths)


def bare_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """An environment with an empty hub cache of its own and nothing else set."""
    return {"HF_HUB_CACHE": str(tmp_path / "empty-hub"), **extra}


def test_user_path_to_the_weights_file_resolves_with_tokenizer_beside_it(tmp_path, tiny, offline):
    paths, pin = tiny
    env = bare_env(tmp_path, ITM_TINY_WEIGHTS=str(paths["model.safetensors"]))
    found = resolve(pin, cache_dir=tmp_path / "cache", env=env)
    assert found is not None and found.origin == "ITM_TINY_WEIGHTS"
    assert found.paths == paths
    assert offline == []


def test_a_folder_given_with_the_flag_wins_over_the_environment(tmp_path, tiny, offline):
    paths, pin = tiny
    env = bare_env(tmp_path, ITM_TINY_WEIGHTS=str(tmp_path / "nowhere"))
    found = resolve(
        pin, cache_dir=tmp_path / "cache", env=env, user_path=paths["vocab.json"].parent
    )
    assert found.origin == "--weights"
    assert found.weights == paths["model.safetensors"]


def test_hugging_face_cache_layout_is_found(tmp_path, tiny, offline):
    paths, pin = tiny
    hub = tmp_path / "hub"
    snapshot = hub_snapshot(hub, pin)
    snapshot.mkdir(parents=True)
    blobs = hub / "models--example-owner--tiny-gpt2" / "blobs"
    blobs.mkdir()
    for name, path in paths.items():  # the hub's layout: snapshot entries link to blobs
        blob = blobs / sha256_file(path)
        shutil.copy(path, blob)
        (snapshot / name).symlink_to(os.path.relpath(blob, snapshot))
    for env in ({"HF_HUB_CACHE": str(hub)}, {"HF_HOME": str(hub.parent)}):
        if "HF_HOME" in env:
            (tmp_path / "hub").rename(tmp_path / "hub-moved")
            (tmp_path / "home").mkdir()
            (tmp_path / "hub-moved").rename(tmp_path / "home" / "hub")
            env = {"HF_HOME": str(tmp_path / "home")}
        found = resolve(pin, cache_dir=tmp_path / "cache", env=env)
        assert found is not None and found.origin.startswith("Hugging Face cache")
        assert found.weights.name == "model.safetensors"
    assert offline == []


def test_nothing_found_means_none_and_no_download(tmp_path, tiny, offline, monkeypatch):
    _, pin = tiny
    called = []
    monkeypatch.setattr("huggingface_hub.hf_hub_download", lambda **kw: called.append(kw))
    assert resolve(pin, cache_dir=tmp_path / "cache", env=bare_env(tmp_path)) is None
    assert called == [] and offline == []


def test_a_hash_mismatch_is_refused_naming_both_hashes(tmp_path, tiny, offline):
    paths, pin = tiny
    data = bytearray(paths["model.safetensors"].read_bytes())
    data[-1] ^= 0xFF  # one flipped byte in the last tensor
    paths["model.safetensors"].write_bytes(bytes(data))
    actual = sha256_file(paths["model.safetensors"])
    env = bare_env(tmp_path, ITM_TINY_WEIGHTS=str(paths["model.safetensors"]))
    with pytest.raises(InputError) as caught:
        resolve(pin, cache_dir=tmp_path / "cache", env=env)
    message = str(caught.value)
    assert actual in message
    assert pin.files["model.safetensors"].sha256 in message
    assert actual != pin.files["model.safetensors"].sha256
    assert caught.value.file == str(paths["model.safetensors"]) and "fix:" in message
    assert offline == []


def test_a_tokenizer_file_that_differs_is_refused_too(tmp_path, tiny, offline):
    paths, pin = tiny
    paths["merges.txt"].write_text("#version: 0.2\nĠ t\n", encoding="utf-8")
    env = bare_env(tmp_path, ITM_TINY_WEIGHTS=str(paths["model.safetensors"].parent))
    with pytest.raises(InputError, match=sha256_file(paths["merges.txt"])):
        resolve(pin, cache_dir=tmp_path / "cache", env=env)


def test_a_missing_user_path_says_what_to_do(tmp_path, tiny, offline):
    _, pin = tiny
    missing = tmp_path / "no" / "model.safetensors"
    with pytest.raises(InputError) as caught:
        resolve(
            pin, cache_dir=tmp_path / "cache", env=bare_env(tmp_path, ITM_TINY_WEIGHTS=str(missing))
        )
    message = str(caught.value)
    assert str(missing) in message and "does not exist" in message
    assert "ITM_TINY_WEIGHTS" in message and pin.revision in message


def test_missing_tokenizer_files_are_named(tmp_path, tiny, offline):
    paths, pin = tiny
    paths["vocab.json"].unlink()
    env = bare_env(tmp_path, ITM_TINY_WEIGHTS=str(paths["model.safetensors"]))
    with pytest.raises(InputError, match=r"vocab\.json not found"):
        resolve(pin, cache_dir=tmp_path / "cache", env=env)


def test_the_hash_is_remembered_by_path_size_and_mtime(tmp_path, tiny):
    paths, _ = tiny
    path, cache = paths["model.safetensors"], tmp_path / "cache"
    first = sha256_of(path, cache)
    assert first == sha256_file(path)
    stat = path.stat()
    # Same size and mtime, different bytes: the remembered hash is returned without reading.
    data = bytearray(path.read_bytes())
    data[-1] ^= 0xFF
    path.write_bytes(bytes(data))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert sha256_of(path, cache) == first
    # A new mtime makes it hash again.
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    assert sha256_of(path, cache) == sha256_file(path) != first


def test_download_is_opt_in_exact_revision_and_verified(tmp_path, tiny, offline, monkeypatch):
    """ITM_DOWNLOAD_WEIGHTS=1 asks huggingface_hub for the pinned revision (faked here: nothing
    leaves the machine); ITM_OFFLINE=1 overrides it."""
    paths, pin = tiny
    hub = tmp_path / "hub"
    calls = []

    def fake_download(*, repo_id, filename, revision, cache_dir):
        calls.append((repo_id, filename, revision, cache_dir))
        target = hub_snapshot(Path(cache_dir), pin) / filename
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(paths[filename], target)
        return str(target)

    monkeypatch.setattr("huggingface_hub.hf_hub_download", fake_download)
    env = {"HF_HUB_CACHE": str(hub), "ITM_DOWNLOAD_WEIGHTS": "1", "ITM_OFFLINE": "1"}
    assert resolve(pin, cache_dir=tmp_path / "cache", env=env) is None
    assert calls == []
    env.pop("ITM_OFFLINE")
    found = resolve(pin, cache_dir=tmp_path / "cache", env=env)
    assert found.origin.startswith("downloaded")
    assert {c[1] for c in calls} == set(pin.files)
    assert all(c[0] == pin.repo and c[2] == pin.revision and c[3] == str(hub) for c in calls)
    # Next time the cache has it: no download.
    calls.clear()
    assert resolve(pin, cache_dir=tmp_path / "cache", env={"HF_HUB_CACHE": str(hub)}) is not None
    assert calls == [] and offline == []


def test_the_real_pin_matches_upstream_md():
    pin = load_pins(ROOT / checkpoints.PINS_FILE)["gpt2"]
    upstream = SHARED / "UPSTREAM.md"
    if not upstream.exists():
        pytest.skip("../shared/UPSTREAM.md is absent")
    text = upstream.read_text(encoding="utf-8")
    section = text[text.index("## GPT-2 weights") :]
    assert f"`{pin.repo}`" in section and f"`{pin.revision}`" in section
    weights = pin.files["model.safetensors"]
    assert f"`{weights.sha256}`" in section
    size = int(
        re.search(r"`model\.safetensors` is\s+([\d,]+) bytes", section).group(1).replace(",", "")
    )
    assert weights.size == size
    assert set(pin.files) == {"model.safetensors", "vocab.json", "merges.txt"}


@pytest.mark.parametrize(
    ("field", "value", "fragment"),
    [
        ("revision", "main", "not a full 40-hex commit"),
        ("sha256", "abc", "size (bytes) and sha256"),
    ],
)
def test_a_malformed_pin_is_an_input_error(tmp_path, field, value, fragment):
    text = (ROOT / checkpoints.PINS_FILE).read_text(encoding="utf-8")
    if field == "revision":
        text = re.sub(r'revision = "[0-9a-f]{40}"', f'revision = "{value}"', text)
    else:
        text = re.sub(r'sha256 = "[0-9a-f]{64}"', f'sha256 = "{value}"', text, count=1)
    path = tmp_path / "checkpoints.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError, match=re.escape(fragment)) as caught:
        load_pins(path)
    assert caught.value.file == str(path) and caught.value.fix

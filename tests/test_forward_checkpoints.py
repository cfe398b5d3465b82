"""Pinned weights: resolution order (user path, Hugging Face cache, opt-in download), hashes
refused with both values named, hashes remembered by (path, size, mtime), and no network."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

from generator import checkpoint_files
from generator.checkpoint_files import resolve, sha256_of
from generator.checkpoints import PINS_FILE, load_checkpoint_pins
from generator.errors import InputError
from generator.settings import Settings
from tests.forward_helpers import (
    block_network,
    hub_snapshot,
    pin_for,
    pins_toml,
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


def find(tmp_path: Path, pin, user_path=None, *, hub_cache=None, download=False):
    """resolve() with an empty hub cache of its own; a user path is named by the pin's variable."""
    return resolve(
        pin,
        cache_dir=tmp_path / "cache",
        hub_cache=hub_cache or tmp_path / "empty-hub",
        user_path=user_path,
        origin=pin.env,
        download=download,
    )


def test_user_path_to_the_weights_file_resolves_with_tokenizer_beside_it(tmp_path, tiny, offline):
    paths, pin = tiny
    found = find(tmp_path, pin, str(paths["model.safetensors"]))
    assert found is not None and found.origin == "ITM_TINY_WEIGHTS"
    assert found.paths == paths
    assert offline == []


def test_a_folder_given_with_the_flag_wins_over_the_setting(tmp_path, tiny, offline, monkeypatch):
    """--weights beats ITM_GPT2_WEIGHTS (here pointing nowhere): choose_source asks for it."""
    from generator import config
    from generator.forward.pipeline import choose_source
    from tests.forward_helpers import TINY

    monkeypatch.setitem(config.CONFIGS, "tiny", TINY)
    paths, _ = tiny
    root = tmp_path / "project"
    (root / "sources").mkdir(parents=True)
    (root / "sources" / "checkpoints.toml").write_text(pins_toml(paths), encoding="utf-8")
    env = {"ITM_GPT2_WEIGHTS": str(tmp_path / "nowhere"), "HF_HUB_CACHE": str(tmp_path / "hub")}
    settings = Settings.load(root, {"cache_dir": str(tmp_path / "cache")}, env=env)
    source = choose_source(settings, weights=str(paths["vocab.json"].parent))
    assert source.checkpoint.origin == "--weights"
    assert source.checkpoint.weights == paths["model.safetensors"]
    with pytest.raises(InputError, match="ITM_GPT2_WEIGHTS"):  # without the flag: the setting
        choose_source(settings)


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
        hub_cache = Settings.load(tmp_path, env=env).hub_cache  # where the build would look
        found = find(tmp_path, pin, hub_cache=hub_cache)
        assert found is not None and found.origin == "the Hugging Face cache"
        assert str(tmp_path) not in found.origin  # the page names no path of this machine
        assert found.weights.name == "model.safetensors"
    assert offline == []


def test_nothing_found_means_none_and_no_download(tmp_path, tiny, offline, monkeypatch):
    _, pin = tiny
    called = []
    monkeypatch.setattr("huggingface_hub.hf_hub_download", lambda **kw: called.append(kw))
    assert find(tmp_path, pin) is None
    assert called == [] and offline == []


def test_a_hash_mismatch_is_refused_naming_both_hashes(tmp_path, tiny, offline):
    paths, pin = tiny
    data = bytearray(paths["model.safetensors"].read_bytes())
    data[-1] ^= 0xFF  # one flipped byte in the last tensor
    paths["model.safetensors"].write_bytes(bytes(data))
    actual = sha256_file(paths["model.safetensors"])
    with pytest.raises(InputError) as caught:
        find(tmp_path, pin, str(paths["model.safetensors"]))
    message = str(caught.value)
    assert actual in message
    assert pin.files["model.safetensors"].sha256 in message
    assert actual != pin.files["model.safetensors"].sha256
    assert caught.value.file == str(paths["model.safetensors"]) and "fix:" in message
    assert offline == []


def test_a_tokenizer_file_that_differs_is_refused_too(tmp_path, tiny, offline):
    paths, pin = tiny
    same_size = paths["merges.txt"].read_bytes().replace(b"t", b"u")
    paths["merges.txt"].write_bytes(same_size)
    with pytest.raises(InputError, match=sha256_file(paths["merges.txt"])):
        find(tmp_path, pin, str(paths["model.safetensors"].parent))


def test_a_file_of_another_size_is_refused_before_hashing(tmp_path, tiny, offline, monkeypatch):
    paths, pin = tiny
    paths["merges.txt"].write_text("#version: 0.2\nĠ t\n", encoding="utf-8")
    hashed = []
    real = checkpoint_files.sha256_of
    monkeypatch.setattr(checkpoint_files, "sha256_of", lambda p, c: hashed.append(p) or real(p, c))
    with pytest.raises(InputError, match="has 19 bytes, the pinned merges.txt .* has 55"):
        find(tmp_path, pin, str(paths["model.safetensors"].parent))
    assert paths["merges.txt"] not in hashed


def test_a_missing_user_path_says_what_to_do(tmp_path, tiny, offline):
    _, pin = tiny
    missing = tmp_path / "no" / "model.safetensors"
    with pytest.raises(InputError) as caught:
        find(tmp_path, pin, str(missing))
    message = str(caught.value)
    assert str(missing) in message and "does not exist" in message
    assert "ITM_TINY_WEIGHTS" in message and pin.revision in message


def test_missing_tokenizer_files_are_named(tmp_path, tiny, offline):
    paths, pin = tiny
    paths["vocab.json"].unlink()
    with pytest.raises(InputError, match=r"vocab\.json not found"):
        find(tmp_path, pin, str(paths["model.safetensors"]))


def test_the_hash_is_remembered_only_for_the_same_file(tmp_path, tiny):
    paths, _ = tiny
    path, cache = paths["model.safetensors"], tmp_path / "cache"
    first = sha256_of(path, cache)
    assert first == sha256_file(path)
    assert sha256_of(path, cache) == first  # remembered
    stat = path.stat()
    # Same size and mtime, different bytes: the write changed the inode's ctime, so it is hashed
    # again (touching mtime back cannot fool the memo).
    data = bytearray(path.read_bytes())
    data[-1] ^= 0xFF
    path.write_bytes(bytes(data))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert sha256_of(path, cache) == sha256_file(path) != first


def test_a_forged_memo_is_not_believed(tmp_path, tiny):
    """Entries are keyed by the file's identity and carry a digest of their content: an edited
    memo (the forged hash of issue 11) is discarded, and the file is hashed."""
    paths, _ = tiny
    path, cache = paths["model.safetensors"], tmp_path / "cache"
    truth = sha256_of(path, cache)
    (memo,) = [p for p in (cache / "sha256_memo").rglob("*") if p.is_file()]
    memo.write_bytes(memo.read_bytes().replace(truth.encode(), b"0" * 64))
    assert sha256_of(path, cache) == truth


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
    settings = Settings.load(tmp_path, env=env)
    assert find(tmp_path, pin, hub_cache=settings.hub_cache, download=settings.may_download) is None
    assert calls == []
    env.pop("ITM_OFFLINE")
    settings = Settings.load(tmp_path, env=env)
    found = find(tmp_path, pin, hub_cache=settings.hub_cache, download=settings.may_download)
    assert found.origin.startswith("downloaded")
    assert {c[1] for c in calls} == set(pin.files)
    assert all(c[0] == pin.repo and c[2] == pin.revision and c[3] == str(hub) for c in calls)
    # Next time the cache has it: no download.
    calls.clear()
    assert find(tmp_path, pin, hub_cache=hub) is not None
    assert calls == [] and offline == []


def test_the_real_pin_matches_upstream_md():
    pin = load_checkpoint_pins(ROOT / PINS_FILE)["gpt2"]
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
    text = (ROOT / PINS_FILE).read_text(encoding="utf-8")
    if field == "revision":
        text = re.sub(r'revision = "[0-9a-f]{40}"', f'revision = "{value}"', text)
    else:
        text = re.sub(r'sha256 = "[0-9a-f]{64}"', f'sha256 = "{value}"', text, count=1)
    path = tmp_path / "checkpoints.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError, match=re.escape(fragment)) as caught:
        load_checkpoint_pins(path)
    assert caught.value.file == str(path) and caught.value.fix

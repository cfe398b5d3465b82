"""The safetensors loader: round trips of files written by the safetensors package and by
transformers' save_pretrained, and clear InputErrors for corrupted files."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
import pytest

from generator.config import CONFIGS, TOY, TOY_TOKENS
from generator.engine import forward, load_safetensors, random_weights, toy_weights, weight_shapes
from generator.errors import InputError

safetensors_numpy = pytest.importorskip("safetensors.numpy")

WITH_BIAS = CONFIGS["toy"].__class__(**{**TOY.__dict__, "name": "toy-bias", "bias": True})


def save(path: Path, tensors: dict[str, np.ndarray]) -> Path:
    safetensors_numpy.save_file({k: np.ascontiguousarray(v) for k, v in tensors.items()}, path)
    return path


def rejects(path: Path, cfg, *fragments: str) -> InputError:
    """Loading must fail with an InputError naming the file and containing each fragment."""
    with pytest.raises(InputError) as caught:
        load_safetensors(path, cfg)
    error = caught.value
    assert error.file == str(path)
    assert error.fix
    message = str(error)
    for fragment in fragments:
        assert fragment in message, (fragment, message)
    return error


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_round_trip_of_hub_names(tmp_path, dtype):
    weights = toy_weights(TOY, dtype=dtype)
    loaded = load_safetensors(save(tmp_path / "toy.safetensors", weights), TOY)
    assert list(loaded) == list(weight_shapes(TOY))
    for name, value in weights.items():
        assert loaded[name].dtype == dtype
        np.testing.assert_array_equal(loaded[name], value)


def test_state_dict_names_buffers_and_tied_head_are_accepted(tmp_path):
    """transformers' state_dict() names ("transformer." prefix, a tied lm_head) and the mask
    buffers old hub checkpoints carry ("h.N.attn.bias", "h.N.attn.masked_bias")."""
    weights = random_weights(WITH_BIAS, seed=2, dtype=np.float32)
    stored = {f"transformer.{k}": v for k, v in weights.items()}
    stored["lm_head.weight"] = weights["wte.weight"]
    for i in range(WITH_BIAS.n_layer):
        n = WITH_BIAS.n_ctx
        stored[f"transformer.h.{i}.attn.bias"] = np.tril(np.ones((1, 1, n, n), np.float32))
        stored[f"h.{i}.attn.masked_bias"] = np.array(-1e4, np.float32)
    loaded = load_safetensors(save(tmp_path / "sd.safetensors", stored), WITH_BIAS)
    assert set(loaded) == set(weights)
    for name, value in weights.items():
        np.testing.assert_array_equal(loaded[name], value)


@pytest.mark.slow
def test_half_precision_is_widened_exactly(tmp_path):
    torch = pytest.importorskip("torch")
    safetensors_torch = pytest.importorskip("safetensors.torch")
    weights = random_weights(TOY, seed=5)
    for torch_dtype in (torch.bfloat16, torch.float16):
        stored = {k: torch.tensor(v).to(torch_dtype) for k, v in weights.items()}
        path = tmp_path / f"{torch_dtype}.safetensors"
        safetensors_torch.save_file(stored, path)
        loaded = load_safetensors(path, TOY)
        for name, tensor in stored.items():
            assert loaded[name].dtype == np.float32
            np.testing.assert_array_equal(loaded[name], tensor.float().numpy())


@pytest.mark.slow
def test_transformers_save_pretrained_loads_and_runs_the_same(tmp_path):
    """A checkpoint written by transformers itself; the engine reproduces its logits."""
    torch = pytest.importorskip("torch")
    from tests.engine_helpers import hf_model

    weights = random_weights(WITH_BIAS, seed=9, dtype=np.float32)
    model = hf_model(weights, WITH_BIAS, dtype=torch.float32)
    model.save_pretrained(tmp_path)
    loaded = load_safetensors(tmp_path / "model.safetensors", WITH_BIAS)
    ids = np.arange(TOY_TOKENS)
    with torch.no_grad():
        expected = model(torch.tensor(ids)[None]).logits[0].double().numpy()
    model64 = hf_model(loaded, WITH_BIAS, dtype=torch.float64)
    with torch.no_grad():
        expected64 = model64(torch.tensor(ids)[None]).logits[0].numpy()
    ours = forward(loaded, WITH_BIAS, ids).logits
    np.testing.assert_allclose(ours, expected64, rtol=0, atol=1e-10)
    np.testing.assert_allclose(ours, expected, rtol=1e-4, atol=1e-4)


def test_missing_tensor(tmp_path):
    weights = toy_weights(TOY)
    del weights["h.1.attn.c_proj.weight"]
    error = rejects(
        save(tmp_path / "m.safetensors", weights), TOY, "missing", "h.1.attn.c_proj.weight"
    )
    assert error.entry == "h.1.attn.c_proj.weight"


def test_missing_blocks_suggest_another_size(tmp_path):
    weights = {k: v for k, v in toy_weights(TOY).items() if not k.startswith("h.1.")}
    n_missing = len(toy_weights(TOY)) - len(weights)  # ln_1, ln_2 (γ, β) and 4 matrices
    assert n_missing == 8
    error = rejects(
        save(tmp_path / "m.safetensors", weights), TOY, f"missing {n_missing} tensor(s)"
    )
    assert "1 block(s)" in error.fix and "needs 2" in error.fix


def test_wrong_shape(tmp_path):
    weights = toy_weights(TOY)
    weights["wpe.weight"] = weights["wpe.weight"][:-1]
    error = rejects(save(tmp_path / "s.safetensors", weights), TOY, "shape [15, 8]", "[16, 8]")
    assert error.entry == "wpe.weight"


def test_linear_layout_is_recognised(tmp_path):
    weights = toy_weights(TOY)
    weights["h.0.mlp.c_fc.weight"] = weights["h.0.mlp.c_fc.weight"].T
    error = rejects(save(tmp_path / "t.safetensors", weights), TOY, "h.0.mlp.c_fc.weight")
    assert "transpose" in error.fix


def test_wrong_dtype(tmp_path):
    weights = toy_weights(TOY)
    weights["h.0.ln_1.weight"] = weights["h.0.ln_1.weight"].astype(np.int32)
    error = rejects(save(tmp_path / "d.safetensors", weights), TOY, "dtype I32")
    assert error.entry == "h.0.ln_1.weight"


def test_unexpected_tensor(tmp_path):
    """Biases in a checkpoint for the bias-free toy: a checkpoint of another shape."""
    weights = random_weights(WITH_BIAS, seed=1)
    error = rejects(save(tmp_path / "u.safetensors", weights), TOY, "unexpected tensor")
    assert error.entry.endswith(".bias")


def test_untied_head_is_rejected(tmp_path):
    weights = toy_weights(TOY)
    weights["lm_head.weight"] = weights["wte.weight"] + 1.0
    rejects(save(tmp_path / "h.safetensors", weights), TOY, "lm_head.weight differs")


@pytest.mark.parametrize("keep", [0, 5, 8 + 20, -1])
def test_truncated_file(tmp_path, keep):
    """Cut inside the length, the header, or the last tensor's data."""
    path = save(tmp_path / "full.safetensors", toy_weights(TOY))
    raw = path.read_bytes()
    cut = tmp_path / "cut.safetensors"
    cut.write_bytes(raw[:keep])
    error = rejects(cut, TOY)
    assert "truncated" in error.problem


def test_truncated_data_names_the_tensor(tmp_path):
    path = save(tmp_path / "full.safetensors", toy_weights(TOY))
    (n_header,) = struct.unpack("<Q", path.read_bytes()[:8])
    header = json.loads(path.read_bytes()[8 : 8 + n_header])
    last = max((k for k in header if k != "__metadata__"), key=lambda k: header[k]["data_offsets"])
    path.write_bytes(path.read_bytes()[:-4])
    error = rejects(path, TOY, "truncated")
    assert error.entry == last


def test_bytes_after_the_last_tensor_are_refused(tmp_path):
    """The package refuses a file its tensors do not cover exactly (the old reader took one)."""
    path = save(tmp_path / "long.safetensors", toy_weights(TOY))
    path.write_bytes(path.read_bytes() + b"\0" * 12)
    rejects(path, TOY, "12 bytes follow the last tensor's")


def test_a_header_length_of_3_gb_is_refused_before_it_is_read(tmp_path):
    """The package reads at most 100 MB of header, whatever the length field claims."""
    path = tmp_path / "huge.safetensors"
    with path.open("wb") as handle:  # sparse: 3 GB on disk costs nothing
        handle.write(struct.pack("<Q", 3 << 30) + b"{}")
        handle.truncate((3 << 30) + 64)
    rejects(path, TOY, "header claims 3,221,225,472 bytes", "100,000,000 at most")


def test_a_file_cut_short_while_it_is_read(tmp_path, monkeypatch):
    """The tensors are read with pread: a file truncated after its header was checked is an
    InputError (a memory map of it, as the old reader made, dies of SIGBUS)."""
    import generator.engine.safetensors_file as reader

    path = save(tmp_path / "cut.safetensors", toy_weights(TOY))
    real_check = reader.check_shapes

    def check_then_cut(*args, **kwargs):
        real_check(*args, **kwargs)
        path.write_bytes(path.read_bytes()[:100])

    monkeypatch.setattr(reader, "check_shapes", check_then_cut)
    rejects(path, TOY, "cannot read it")


@pytest.mark.parametrize("keep", [0, 5, 8 + 20, -1, -4])
def test_bytes_in_memory_get_the_errors_a_file_gets(tmp_path, keep):
    """parse_safetensors (the stand-in's reader, bytes checked against a pin) and
    load_safetensors say the same of the same bytes."""
    from generator.engine.safetensors_file import parse_safetensors

    raw = save(tmp_path / "full.safetensors", toy_weights(TOY)).read_bytes()
    cut = tmp_path / "cut.safetensors"
    cut.write_bytes(raw[:keep])
    with pytest.raises(InputError) as caught:
        parse_safetensors(cut.read_bytes(), TOY, str(cut))
    assert str(caught.value) == str(rejects(cut, TOY))


def test_not_a_safetensors_file(tmp_path):
    path = tmp_path / "x.safetensors"
    path.write_bytes(struct.pack("<Q", 6) + b"{nope}")
    rejects(path, TOY, "not valid JSON")


def test_missing_file(tmp_path):
    rejects(tmp_path / "absent.safetensors", TOY, "not found")


def test_our_writer_is_read_by_the_safetensors_package_and_is_deterministic(tmp_path: Path):
    """write_safetensors (the stand-in's and the full-size benchmark's writer) against the
    reference reader: same tensors, same metadata; and the same input gives the same bytes."""
    from generator.engine.safetensors_file import parse_safetensors, safetensors_bytes

    weights = random_weights(WITH_BIAS, seed=3, dtype=np.float32)
    weights["wpe.weight"] = weights["wpe.weight"].astype(np.float64)
    metadata = {"record": json.dumps({"b": 1, "a": [0.5]})}
    data = safetensors_bytes(dict(reversed(weights.items())), metadata)
    assert data == safetensors_bytes(weights, metadata)
    path = tmp_path / "ours.safetensors"
    path.write_bytes(data)
    from safetensors import safe_open

    with safe_open(str(path), framework="np") as handle:
        assert handle.metadata() == metadata
        for name, value in weights.items():
            np.testing.assert_array_equal(handle.get_tensor(name), value)
            assert handle.get_tensor(name).dtype == value.dtype
    ours, ours_metadata = parse_safetensors(data, WITH_BIAS, str(path))
    assert ours_metadata == metadata and ours.keys() == weights.keys()

"""Load a model's weights (any family) from a safetensors file, checking every name, shape and dtype.

Reads the format directly (8-byte little-endian header length, a JSON header, then raw
little-endian tensor bytes), so the engine needs neither torch nor the safetensors package.
Accepts the hub's names ("h.0.attn.c_attn.weight", "wte.weight") and those of transformers'
GPT2LMHeadModel.state_dict() ("transformer.h.0..."); ignores the causal-mask buffers
("h.N.attn.bias", "h.N.attn.masked_bias") and an "lm_head.weight" equal to wte (tied).
Nothing is downloaded: the caller supplies the file.

Why our own reader rather than the `safetensors` package: the build must not need torch, and
`safetensors.numpy` cannot load BF16 (numpy has no bfloat16), the dtype Llama and Mistral
checkpoints ship in. Here BF16 is read as raw 16-bit words and widened exactly to float32;
every header entry is checked (name, shape, dtype, offsets inside the file) and a problem is an
error naming the file, the tensor and the fix, where the package raises a generic exception.
"""

from __future__ import annotations

import io
import json
import re
import struct
from collections.abc import Mapping
from pathlib import Path
from typing import BinaryIO

import numpy as np

from generator.checked_io import what_is
from generator.config import ModelConfig
from generator.engine.layers import Weights
from generator.errors import InputError
from generator.models.checkpoint import check_shapes

# safetensors dtype -> numpy dtype as stored (little-endian). BF16 is read as raw bits.
FLOAT_DTYPES = {"F64": "<f8", "F32": "<f4", "F16": "<f2", "BF16": "<u2"}
OTHER_DTYPES = {
    "I64": 8, "I32": 4, "I16": 2, "I8": 1, "U64": 8, "U32": 4, "U16": 2, "U8": 1, "BOOL": 1,
    "F8_E4M3": 1, "F8_E5M2": 1,
}  # fmt: skip
BUFFERS = re.compile(r"h\.\d+\.attn\.(bias|masked_bias)$")  # causal-mask buffers, not weights
PREFIX = "transformer."
MAX_HEADER = 100 * 1024 * 1024


def load_safetensors(path: str | Path, cfg: ModelConfig) -> Weights:
    """Every tensor cfg needs, by hub name, as float32 (float64 if stored so).

    Raises InputError naming the file, the tensor and the fix when the file is missing,
    truncated or malformed, or a tensor is missing, unexpected, misshapen or not floating point.
    """
    path = Path(path)
    where = str(path)
    if not path.is_file():  # a FIFO would block, a device never end: neither is memory-mapped
        problem = f"is {what_is(path)}, not a file" if path.exists() else "not found"
        raise InputError(
            f"checkpoint {problem}",
            file=where,
            fix="pass the path of a local model.safetensors (the build never downloads weights)",
        )
    size = path.stat().st_size
    # Map the file instead of reading it: only the tensors' copies take memory.
    raw = np.memmap(path, dtype=np.uint8, mode="r") if size else np.zeros(0, np.uint8)
    return parse_safetensors(raw, cfg, where)[0]


def parse_safetensors(
    raw: bytes | np.ndarray, cfg: ModelConfig, where: str
) -> tuple[Weights, dict[str, str]]:
    """(weights, the header's __metadata__) from a safetensors file's bytes, checked as
    load_safetensors checks a file; `where` names the file in errors."""
    raw = np.frombuffer(raw, dtype=np.uint8) if isinstance(raw, bytes) else raw
    header, data = _split(raw, where)
    metadata = header.get("__metadata__") or {}
    if not isinstance(metadata, dict) or not all(isinstance(v, str) for v in metadata.values()):
        raise InputError(
            "__metadata__ is not a map of strings", file=where, fix="re-save the checkpoint"
        )
    tensors = _tensor_entries(header, where)

    from generator.models import get_family  # the families import this package's siblings

    expected = get_family(cfg.family).weight_shapes(cfg)
    embedding = next(iter(expected))  # every family lists its token embedding first
    shapes: dict[str, tuple[int, ...]] = {}  # by engine name, in the file's order
    stored_as: dict[str, str] = {}
    for stored_name, entry in tensors.items():
        name = stored_name.removeprefix(PREFIX)
        if BUFFERS.match(name):
            continue
        if name in shapes:
            raise InputError(
                "tensor stored twice (with and without the 'transformer.' prefix)",
                file=where,
                entry=stored_name,
                fix="keep one copy of each tensor",
            )
        shapes[name] = tuple(entry["shape"])
        stored_as[name] = stored_name
    # A tied family (GPT-2) has no lm_head: a file may keep a copy of the embedding under that
    # name (checked below).
    if "lm_head.weight" in shapes and "lm_head.weight" not in expected:
        expected_here = {**expected, "lm_head.weight": (cfg.vocab_size, cfg.d_model)}
    else:
        expected_here = expected
    check_shapes(shapes, cfg, expected_here, file=where)
    found = {name: _read(tensors[stored_as[name]], data, stored_as[name], where) for name in shapes}
    lm_head = found.pop("lm_head.weight", None) if "lm_head.weight" not in expected else None
    if lm_head is not None and not np.array_equal(lm_head, found[embedding]):
        raise InputError(
            f"lm_head.weight differs from {embedding}; {cfg.label} ties them and the engine uses "
            f"{embedding}",
            file=where,
            entry="lm_head.weight",
            fix="use a checkpoint with tied embeddings (GPT-2's own are)",
        )
    return {name: found[name] for name in expected}, metadata


def write_safetensors(
    handle: BinaryIO, tensors: Mapping[str, np.ndarray], metadata: Mapping[str, str] | None = None
) -> None:
    """Write tensors (float32 or float64) as safetensors, the same bytes for the same input:
    tensors in name order, the header's keys sorted, padded with spaces to 8 bytes."""
    names = sorted(tensors)
    header: dict[str, object] = {"__metadata__": dict(metadata)} if metadata else {}
    offset = 0
    for name in names:
        array = tensors[name]
        dtype = {np.dtype(np.float32): "F32", np.dtype(np.float64): "F64"}[array.dtype]
        header[name] = {
            "dtype": dtype,
            "shape": list(array.shape),
            "data_offsets": [offset, offset + array.nbytes],
        }
        offset += array.nbytes
    blob = json.dumps(header, sort_keys=True, separators=(",", ":")).encode()
    blob += b" " * (-len(blob) % 8)
    handle.write(struct.pack("<Q", len(blob)) + blob)
    for name in names:  # little-endian, as the format says
        handle.write(
            np.ascontiguousarray(
                tensors[name], dtype=tensors[name].dtype.newbyteorder("<")
            ).tobytes()
        )


def safetensors_bytes(
    tensors: Mapping[str, np.ndarray], metadata: Mapping[str, str] | None = None
) -> bytes:
    """write_safetensors into memory (for small files)."""
    buffer = io.BytesIO()
    write_safetensors(buffer, tensors, metadata)
    return buffer.getvalue()


def _split(raw: np.ndarray, where: str) -> tuple[dict, np.ndarray]:
    """The parsed JSON header and the data section that follows it."""
    if len(raw) < 8:
        raise InputError(
            f"file is {len(raw)} bytes: too short to be safetensors (truncated?)",
            file=where,
            fix="re-save or re-download the checkpoint",
        )
    (n_header,) = struct.unpack("<Q", raw[:8].tobytes())
    if n_header > min(MAX_HEADER, len(raw) - 8):
        raise InputError(
            f"header claims {n_header:,} bytes but the file has {len(raw) - 8:,} after the length "
            "(truncated, or not a safetensors file)",
            file=where,
            fix="re-save or re-download the checkpoint",
        )
    try:
        header = json.loads(raw[8 : 8 + n_header].tobytes().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as error:
        why = "nested too deeply" if isinstance(error, RecursionError) else str(error)
        raise InputError(
            f"header is not valid JSON ({why})",
            file=where,
            fix="re-save the checkpoint with safetensors",
        ) from None
    if not isinstance(header, dict):
        raise InputError("header is not a JSON object", file=where, fix="re-save the checkpoint")
    return header, raw[8 + n_header :]


def _tensor_entries(header: dict, where: str) -> dict[str, dict]:
    """Header entries other than __metadata__, each checked for dtype, shape and offsets."""
    entries = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        ok = (
            isinstance(entry, dict)
            and isinstance(entry.get("dtype"), str)
            and isinstance(entry.get("shape"), list)
            and all(isinstance(n, int) and n >= 0 for n in entry["shape"])
            and isinstance(entry.get("data_offsets"), list)
            and len(entry["data_offsets"]) == 2
            and all(isinstance(n, int) and n >= 0 for n in entry["data_offsets"])
        )
        if not ok:
            raise InputError(
                "malformed header entry (needs dtype, shape and data_offsets [begin, end])",
                file=where,
                entry=name,
                fix="re-save the checkpoint with safetensors",
            )
        entries[name] = entry
    return entries


def _read(entry: dict, data: np.ndarray, name: str, where: str) -> np.ndarray:
    """One tensor's bytes as a float array (float32, or float64 when stored as F64)."""
    dtype = entry["dtype"]
    if dtype not in FLOAT_DTYPES:
        raise InputError(
            f"dtype {dtype}; weights are floating point (F32 as GPT-2's hub files store them, "
            "BF16 as Llama's do; F16 and F64 are accepted too)",
            file=where,
            entry=name,
            fix="re-export the checkpoint with float weights, e.g. model.float().save_pretrained()",
        )
    begin, end = entry["data_offsets"]
    stored = np.dtype(FLOAT_DTYPES[dtype])
    n_bytes = int(np.prod(entry["shape"], dtype=np.int64)) * stored.itemsize
    if end > len(data):
        raise InputError(
            f"needs bytes {begin:,}–{end:,} of the data section, which has only {len(data):,} "
            "(the file is truncated)",
            file=where,
            entry=name,
            fix="re-download or re-save the checkpoint; compare its size and sha256 with the pin",
        )
    if end - begin != n_bytes:
        raise InputError(
            f"data_offsets span {end - begin:,} bytes; {dtype} {entry['shape']} needs {n_bytes:,}",
            file=where,
            entry=name,
            fix="re-save the checkpoint with safetensors",
        )
    array = data[begin:end].view(stored).reshape(entry["shape"])  # a view into the file
    if dtype == "BF16":  # bfloat16 is the top half of a float32
        return (array.astype(np.uint32) << 16).view(np.float32)
    return np.array(array, dtype=np.float64 if dtype == "F64" else np.float32)  # a copy

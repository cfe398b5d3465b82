"""Load a model's weights (any family) from a safetensors file, checking every name, shape and dtype.

The `safetensors` package reads the file (`safe_open(framework="np")`, or `deserialize` for
bytes already in memory) and checks its layout: an 8-byte header length of at most 100 MB, a
JSON header whose entries tile the data section exactly, and nothing after them. This wrapper
adds what the package lacks: its errors become one-line InputErrors naming the file (and the
tensor cut off by a truncation) with the fix; names and shapes are checked against the size's
tensors before any tensor is read, so a read never exceeds the weights the caller's config
expects; and BF16 (Llama's and Mistral's dtype, which numpy lacks) is read through ml_dtypes'
bfloat16 and widened exactly to float32. Accepts the hub's names ("h.0.attn.c_attn.weight") and
those of transformers' state_dict() ("transformer.h.0..."); ignores the causal-mask buffers
("h.N.attn.bias", "h.N.attn.masked_bias", never read) and an "lm_head.weight" equal to wte (tied).
Nothing is downloaded: the caller supplies the file.

The writer stays ours: the package's `save` orders the tensors by dtype before name and writes
each entry's keys as dtype, shape, data_offsets, so its bytes differ from those of the committed
stand-in (sources/standin.safetensors), whose pinned sha256 they must keep.
"""

from __future__ import annotations

import io
import json
import os
import re
import struct
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import BinaryIO

import numpy as np
from safetensors import SafetensorError, deserialize, safe_open

from generator.checked_io import what_is
from generator.config import ModelConfig
from generator.engine.layers import Weights
from generator.errors import InputError
from generator.models.checkpoint import check_shapes

# The float dtypes read, as numpy names them (ml_dtypes adds bfloat16); all but F64 give float32.
NUMPY = {"F64": "<f8", "F32": "<f4", "F16": "<f2", "BF16": "bfloat16"}
BUFFERS = re.compile(r"h\.\d+\.attn\.(bias|masked_bias)$")  # causal-mask buffers, not weights
PREFIX = "transformer."
MAX_HEADER = 100_000_000  # the package's own limit on a header's length
RESAVE = "re-save the checkpoint with safetensors"
REFETCH = "re-download or re-save the checkpoint; compare its size and sha256 with the pin"
Specs = dict[str, tuple[str, tuple[int, ...]]]  # stored name -> (dtype, shape)


def load_safetensors(path: str | Path, cfg: ModelConfig) -> Weights:
    """Every tensor cfg needs, by hub name, as float32 (float64 if stored so).

    Raises InputError naming the file, the tensor and the fix when the file is missing,
    truncated or malformed, or a tensor is missing, unexpected, misshapen or not floating point.
    """
    path = Path(path)
    where = str(path)
    if not path.is_file():  # a FIFO would block, a device never end
        problem = f"is {what_is(path)}, not a file" if path.exists() else "not found"
        raise InputError(
            f"checkpoint {problem}",
            file=where,
            fix="pass the path of a local model.safetensors (the build never downloads weights)",
        )
    try:  # pread, not a memory map: a file cut short while being read is an error, not SIGBUS
        with safe_open(path, framework="np", backend="pread") as handle:
            parts = {name: handle.get_slice(name) for name in handle.offset_keys()}  # file order
            specs = {name: (p.get_dtype(), tuple(p.get_shape())) for name, p in parts.items()}
            return _checked(specs, handle.get_tensor, cfg, where)
    except SafetensorError as error:
        raise _layout_error(str(error), *_head(path), where) from None
    except OSError as error:  # unreadable, or changed while being read
        raise InputError(f"cannot read it: {error}", file=where, fix=REFETCH) from None


def parse_safetensors(raw: bytes, cfg: ModelConfig, where: str) -> tuple[Weights, dict[str, str]]:
    """(weights, the header's __metadata__) from a safetensors file's bytes, checked as
    load_safetensors checks a file; `where` names the file in errors."""
    try:
        stored = deserialize(raw)
    except SafetensorError as error:
        raise _layout_error(str(error), raw[: 8 + MAX_HEADER], len(raw), where) from None
    specs = {name: (spec["dtype"], tuple(spec["shape"])) for name, spec in stored}
    tensors = {name: spec["data"] for name, spec in stored}
    (n_header,) = struct.unpack("<Q", raw[:8])  # deserialize has checked the header
    metadata = json.loads(raw[8 : 8 + n_header]).get("__metadata__") or {}

    def read(name: str) -> np.ndarray:
        return np.frombuffer(tensors[name], NUMPY[specs[name][0]]).reshape(specs[name][1])

    return _checked(specs, read, cfg, where), metadata


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


def _checked(
    specs: Specs, read: Callable[[str], np.ndarray], cfg: ModelConfig, where: str
) -> Weights:
    """The tensors cfg's family expects, their names and shapes checked before any is read."""
    from generator.models import get_family  # the families import this package's siblings

    expected = get_family(cfg.family).weight_shapes(cfg)
    embedding = next(iter(expected))  # every family lists its token embedding first
    stored_as: dict[str, str] = {}  # engine name -> stored name, in the file's order
    for stored_name in specs:
        name = stored_name.removeprefix(PREFIX)
        if BUFFERS.match(name):
            continue
        if name in stored_as:
            raise InputError(
                "tensor stored twice (with and without the 'transformer.' prefix)",
                file=where,
                entry=stored_name,
                fix="keep one copy of each tensor",
            )
        stored_as[name] = stored_name
    # A tied family (GPT-2) has no lm_head: a file may keep a copy of the embedding under that
    # name (checked below).
    if "lm_head.weight" in stored_as and "lm_head.weight" not in expected:
        expected_here = {**expected, "lm_head.weight": (cfg.vocab_size, cfg.d_model)}
    else:
        expected_here = expected
    shapes = {name: specs[stored][1] for name, stored in stored_as.items()}
    check_shapes(shapes, cfg, expected_here, file=where)
    found = {
        name: _read(read, specs[stored][0], stored, where) for name, stored in stored_as.items()
    }
    lm_head = found.pop("lm_head.weight", None) if "lm_head.weight" not in expected else None
    if lm_head is not None and not np.array_equal(lm_head, found[embedding]):
        raise InputError(
            f"lm_head.weight differs from {embedding}; {cfg.label} ties them and the engine uses "
            f"{embedding}",
            file=where,
            entry="lm_head.weight",
            fix="use a checkpoint with tied embeddings (GPT-2's own are)",
        )
    return {name: found[name] for name in expected}


def _read(read: Callable[[str], np.ndarray], dtype: str, name: str, where: str) -> np.ndarray:
    """One tensor as a float array: float32, or float64 when stored as F64."""
    if dtype not in NUMPY:
        raise InputError(
            f"dtype {dtype}; weights are floating point (F32 as GPT-2's hub files store them, "
            "BF16 as Llama's do; F16 and F64 are accepted too)",
            file=where,
            entry=name,
            fix="re-export the checkpoint with float weights, e.g. model.float().save_pretrained()",
        )
    if dtype == "BF16":
        import ml_dtypes  # noqa: F401 - gives numpy the bfloat16 dtype the package asks for
    array = read(name)
    return array if dtype in ("F32", "F64") else array.astype(np.float32)  # exact widening


def _head(path: Path) -> tuple[bytes, int]:
    """The file's header length and the header it claims, if the file and the package's limit
    hold it, and the file's size: what the package's error is about."""
    try:
        with path.open("rb") as file:
            size = os.fstat(file.fileno()).st_size
            length = file.read(8)
            (n_header,) = struct.unpack("<Q", length) if len(length) == 8 else (0,)
            return length + file.read(n_header if n_header <= min(size, MAX_HEADER) else 0), size
    except OSError:
        return b"", 0


def _layout_error(message: str, head: bytes, size: int, where: str) -> InputError:
    """The package's complaint about a file's layout (`head`: its first bytes, `size` bytes in
    all) as an InputError saying what is wrong."""
    about, _, said = message.partition(": ")
    if not about.startswith("Error while deserializing"):  # changed after its header was read
        return InputError(f"cannot read it ({message})", file=where, fix=REFETCH)
    (n_header,) = struct.unpack("<Q", head[:8]) if len(head) >= 8 else (0,)
    if said.startswith("incomplete metadata"):  # the tensors and the data section differ
        return _coverage_error(head[8 : 8 + n_header], size - 8 - n_header, where)
    if said in ("header too small", "header too large", "invalid header length"):
        problem = (
            f"header claims {n_header:,} bytes but the file has {size - 8:,} after the length "
            "(truncated, or not a safetensors file)"
        )
        if size < 8:
            problem = f"file is {size:,} bytes: too short to be safetensors (truncated?)"
        elif n_header > MAX_HEADER:
            problem = f"header claims {n_header:,} bytes; safetensors reads {MAX_HEADER:,} at most"
        return InputError(problem, file=where, fix=REFETCH)
    why = said.removeprefix("invalid JSON in header: ")
    why = "nested too deeply" if "recursion limit" in why else why
    problem = f"header is not valid JSON ({why})" if why != said else f"not safetensors ({said})"
    if "expected struct HashMetadata" in why:  # an array, a number: not a map of tensors
        problem = "header is not a JSON object"
    return InputError(problem, file=where, fix=RESAVE)


def _coverage_error(header: bytes, data: int, where: str) -> InputError:
    """The tensors and the data section (`data` bytes) do not match: name the first tensor cut
    off, or count the bytes after the last (the package has checked the header otherwise)."""
    offsets = {
        name: entry["data_offsets"]
        for name, entry in json.loads(header).items()
        if name != "__metadata__"
    }
    cut = sorted((begin, end, name) for name, (begin, end) in offsets.items() if end > data)
    if cut:
        begin, end, name = cut[0]
        return InputError(
            f"needs bytes {begin:,}–{end:,} of the data section, which has only {data:,} "
            "(the file is truncated)",
            file=where,
            entry=name,
            fix=REFETCH,
        )
    last = max((end for _, end in offsets.values()), default=0)
    return InputError(
        f"{data - last:,} bytes follow the last tensor's (not a file safetensors wrote)",
        file=where,
        fix=REFETCH,
    )

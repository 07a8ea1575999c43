"""Reading and writing .safetensors files: an 8-byte little-endian header length N, N bytes of
JSON naming each tensor's dtype, shape and [begin, end) byte range in the data that follows.

Only what einc's inputs and outputs need: the numeric dtypes NumPy has and BF16 (ml_dtypes), every
tensor a contiguous C-order block. A malformed file is one RunError line.
"""
from __future__ import annotations

import json
import math
import struct

import ml_dtypes  # noqa: F401  (registers NumPy's "bfloat16" dtype name)
import numpy as np

from einc.diagnostics import file_problem
from einc.runtime.errors import RunError

_DTYPES = {"BOOL": "bool", "U8": "uint8", "I8": "int8", "U16": "uint16", "I16": "int16", "F16": "float16",
           "BF16": "bfloat16",
           "U32": "uint32", "I32": "int32", "F32": "float32", "U64": "uint64", "I64": "int64", "F64": "float64"}
_NAMES = {np.dtype(numpy): name for name, numpy in _DTYPES.items()}
_METADATA = "__metadata__"
_MAX_HEADER = 100 * 1024 * 1024   # the format's own limit on the JSON header


def safetensors_bytes(arrays: dict[str, np.ndarray]) -> bytes:
    """The .safetensors file of `arrays` (little-endian, in the given order)."""
    header, chunks, offset = {}, [], 0
    for name, array in arrays.items():
        array = np.asarray(array)
        if array.dtype not in _NAMES:
            raise ValueError(f"{name} holds {array.dtype}, which .safetensors has no name for")
        data = array.astype(array.dtype.newbyteorder("<"), copy=False).tobytes(order="C")
        header[name] = {"dtype": _NAMES[array.dtype], "shape": list(array.shape),
                        "data_offsets": [offset, offset + len(data)]}
        chunks.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)        # the data starts 8-byte aligned, as the format advises
    return struct.pack("<Q", len(text)) + text + b"".join(chunks)


def read_safetensors(path: str) -> dict[str, np.ndarray]:
    """Every tensor of a .safetensors file by name."""
    try:
        with open(path, "rb") as tensor_file:
            data = tensor_file.read()
    except OSError as err:
        raise RunError(f"cannot read {path}: {file_problem(err)}") from None
    return _tensors(path, data)


def _tensors(path: str, data: bytes) -> dict[str, np.ndarray]:
    if len(data) < 8:
        _bad(path, "shorter than its 8-byte header length")
    (size,) = struct.unpack("<Q", data[:8])
    if size > min(_MAX_HEADER, len(data) - 8):
        _bad(path, f"its header length {size} runs past the end of the file")
    try:
        header = json.loads(data[8:8 + size])
    except (ValueError, UnicodeDecodeError) as err:
        _bad(path, f"its header is not JSON ({err})")
    if not isinstance(header, dict):
        _bad(path, "its header is not a JSON object")
    body = memoryview(data)[8 + size:]
    return {name: _tensor(path, name, entry, body) for name, entry in header.items() if name != _METADATA}


def _tensor(path: str, name: str, entry, body: memoryview) -> np.ndarray:
    if not isinstance(entry, dict) or entry.get("dtype") not in _DTYPES:
        _bad(path, f"tensor {name!r} has no dtype einc reads ({', '.join(_DTYPES)})")
    shape, offsets = entry.get("shape"), entry.get("data_offsets")
    if not (isinstance(shape, list) and all(_count(d) for d in shape)):
        _bad(path, f"tensor {name!r} has a malformed shape {shape!r}")
    if not (isinstance(offsets, list) and len(offsets) == 2 and all(_count(o) for o in offsets)):
        _bad(path, f"tensor {name!r} has malformed data_offsets {offsets!r}")
    dtype = np.dtype(_DTYPES[entry["dtype"]]).newbyteorder("<")
    begin, end = offsets
    if not begin <= end <= len(body) or end - begin != math.prod(shape) * dtype.itemsize:
        _bad(path, f"tensor {name!r} has data_offsets {offsets} that do not fit its shape {shape} "
                   f"and {entry['dtype']} in {len(body)} bytes of data")
    array = np.frombuffer(body[begin:end], dtype=dtype).reshape(tuple(shape))
    return array.astype(array.dtype.newbyteorder("="))   # a copy: the file's bytes are read-only


def _count(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _bad(path: str, why: str):
    raise RunError(f"cannot read {path}: not a valid .safetensors file ({why})")

"""Reading safetensors files with their header checked first.

The header (8-byte little-endian length, then JSON) is parsed and validated
before any tensor is read: known dtypes, shapes that match their byte ranges,
ranges that tile the data area without gaps or overlap, and a file long enough
to hold them. A truncated or corrupt file raises :class:`FormatError` naming
the file and the tensor; tensors are then read through the ``safetensors``
package (memory-mapped, lazily).
"""
from __future__ import annotations

import json
import math
import os
import struct
from typing import Iterator, Mapping

import torch

from ..errors import FormatError

__all__ = ["SafetensorsFile", "ShardedTensors", "read_header"]

_DTYPE_BYTES = {
    "BOOL": 1, "U8": 1, "I8": 1, "F8_E4M3": 1, "F8_E5M2": 1, "F8_E8M0": 1, "F4": 1,
    "I16": 2, "U16": 2, "F16": 2, "BF16": 2,
    "I32": 4, "U32": 4, "F32": 4,
    "I64": 8, "U64": 8, "F64": 8,
}
_MAX_HEADER = 100 * 1024 * 1024


def read_header(path: str) -> dict:
    """The validated header of a safetensors file: ``{name: {dtype, shape, data_offsets}}``."""
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as f:
            head = f.read(8)
            if len(head) < 8:
                raise FormatError(f"safetensors file {path}: expected an 8-byte header length, the file has "
                                  f"{size} bytes (truncated?)")
            (hlen,) = struct.unpack("<Q", head)
            if hlen > _MAX_HEADER or 8 + hlen > size:
                raise FormatError(f"safetensors file {path}: header claims {hlen} bytes, the file has "
                                  f"{size - 8} after the length (truncated or not a safetensors file)")
            raw = f.read(hlen)
    except OSError as e:
        raise FormatError(f"safetensors file {path}: cannot be read: {e}") from None
    try:
        header = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise FormatError(f"safetensors file {path}: header is not valid JSON ({e})") from None
    if not isinstance(header, dict):
        raise FormatError(f"safetensors file {path}: header must be a JSON object")
    header.pop("__metadata__", None)
    data_size = size - 8 - hlen
    spans = []
    for name, info in header.items():
        where = f"safetensors file {path}, tensor {name}"
        if not isinstance(info, dict) or not {"dtype", "shape", "data_offsets"} <= set(info):
            raise FormatError(f"{where}: header entry needs dtype, shape and data_offsets, got {info!r}")
        dt, shape, offs = info["dtype"], info["shape"], info["data_offsets"]
        if dt not in _DTYPE_BYTES:
            raise FormatError(f"{where}: unknown dtype {dt!r}")
        if not (isinstance(shape, list) and all(isinstance(d, int) and d >= 0 for d in shape)):
            raise FormatError(f"{where}: expected a list of non-negative sizes as shape, got {shape!r}")
        if not (isinstance(offs, list) and len(offs) == 2 and all(isinstance(o, int) for o in offs)
                and 0 <= offs[0] <= offs[1]):
            raise FormatError(f"{where}: expected data_offsets [begin, end], got {offs!r}")
        want = math.prod(shape) * _DTYPE_BYTES[dt]
        if dt == "F4":
            want = (math.prod(shape) + 1) // 2
        if offs[1] - offs[0] != want:
            raise FormatError(f"{where}: shape {shape} of {dt} needs {want} bytes, data_offsets span "
                              f"{offs[1] - offs[0]}")
        if offs[1] > data_size:
            raise FormatError(f"{where}: data ends at byte {offs[1]}, the file holds {data_size} data bytes "
                              "(truncated)")
        spans.append((offs[0], offs[1], name))
    spans.sort()
    pos = 0
    for b, e, name in spans:
        if b != pos:
            what = "overlaps the previous tensor" if b < pos else f"leaves a gap of {b - pos} bytes"
            raise FormatError(f"safetensors file {path}, tensor {name}: data at {b} {what} (corrupt header)")
        pos = e
    return header


class SafetensorsFile(Mapping):
    """A read-only mapping ``name -> torch.Tensor`` over one validated file (tensors read on access)."""

    def __init__(self, path: str):
        from safetensors import safe_open

        self.path = str(path)
        self.header = read_header(self.path)
        try:
            self._f = safe_open(self.path, framework="pt", device="cpu")
        except Exception as e:  # safetensors raises its own error types
            raise FormatError(f"safetensors file {self.path}: cannot be opened: {e}") from None

    def __getitem__(self, name: str) -> torch.Tensor:
        if name not in self.header:
            raise KeyError(name)
        try:
            return self._f.get_tensor(name)
        except Exception as e:
            raise FormatError(f"safetensors file {self.path}, tensor {name}: cannot be read: {e}") from None

    def __iter__(self) -> Iterator[str]:
        return iter(self.header)

    def __len__(self) -> int:
        return len(self.header)

    def __contains__(self, name) -> bool:
        return name in self.header


class ShardedTensors(Mapping):
    """All tensors of a checkpoint directory (one file, or shards with an index)."""

    def __init__(self, files: list[str], weight_map: Mapping[str, str] | None = None):
        self.files = {os.path.basename(p): SafetensorsFile(p) for p in files}
        self._where: dict[str, SafetensorsFile] = {}
        for f in self.files.values():
            for name in f.header:
                if name in self._where:
                    raise FormatError(f"tensor {name}: found in both {self._where[name].path} and {f.path}")
                self._where[name] = f
        for name, fname in (weight_map or {}).items():
            base = os.path.basename(fname)
            if base not in self.files:
                raise FormatError(f"safetensors index: tensor {name} maps to {fname}, which is not in the "
                                  "checkpoint directory")
            if name not in self.files[base].header:
                raise FormatError(f"safetensors index: tensor {name} expected in {fname}, not found there")

    def __getitem__(self, name: str) -> torch.Tensor:
        return self._where[name][name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._where)

    def __len__(self) -> int:
        return len(self._where)

    def __contains__(self, name) -> bool:
        return name in self._where

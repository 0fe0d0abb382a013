"""The C3D layout: a 512-byte header block, the parameter section (groups and typed
parameters), then the frames (points as x y z + residual word, then the analog samples),
as 16-bit integers times ``POINT:SCALE`` or, when the scale is negative, float32. The
processor byte of the parameter section says the byte order and float format (84 Intel,
85 DEC, 86 MIPS/big-endian); DEC floats are read as IEEE after swapping their two 16-bit
halves and dividing by 4.

Everything is bounded by the file's own size: a parameter section or a frame block that
runs past the end of the file is a FormatError, parameter dimensions are checked against
the bytes that hold them, and the frames are streamed a slab at a time (decode.py).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from ...errors import FormatError

PathLike = str | os.PathLike[str]
BLOCK = 512
PROCESSORS = {84: "intel", 85: "dec", 86: "mips"}
#: Most groups + parameters a section may hold (real files have a few hundred).
MAX_ITEMS = 65536


@dataclass
class Parameter:
    """One parameter: its type (-1 text, 1 byte, 2 int16, 4 float) and its values."""

    kind: int
    dims: tuple[int, ...]
    raw: bytes

    def numbers(self, processor: str) -> NDArray[np.float64]:
        """The values as numbers (text parameters: empty)."""
        if self.kind == -1:
            return np.zeros(0)
        if self.kind == 1:
            return np.frombuffer(self.raw, dtype=np.uint8).astype(np.float64)
        if self.kind == 2:
            order = ">" if processor == "mips" else "<"
            return np.frombuffer(self.raw, dtype=f"{order}i2").astype(np.float64)
        return floats(self.raw, processor).astype(np.float64)

    def texts(self) -> list[str]:
        """A text parameter as its strings (the first dimension is the length of each),
        trailing spaces and NULs stripped."""
        if self.kind != -1:
            return []
        text = self.raw.decode("latin-1")
        if len(self.dims) <= 1:
            return [text.rstrip(" \0")]
        width = self.dims[0]
        if width == 0:  # strings of no characters (Optotrak writes such DESCRIPTIONS)
            return [""] * int(np.prod(self.dims[1:], dtype=np.int64))
        return [text[i:i + width].rstrip(" \0") for i in range(0, len(text), width)]


@dataclass
class C3D:
    """A parsed file: header numbers, the parameters by ``GROUP:NAME`` and the raw frames."""

    processor: str
    points: int
    analog_per_frame: int
    first_frame: int
    last_frame: int
    scale: float
    data_block: int
    rate: float
    params: dict[str, Parameter] = field(default_factory=dict)

    def number(self, key: str, default: float | None = None) -> float | None:
        param = self.params.get(key)
        values = param.numbers(self.processor) if param is not None else np.zeros(0)
        return float(values[0]) if values.size else default

    def numbers(self, key: str) -> NDArray[np.float64]:
        param = self.params.get(key)
        return param.numbers(self.processor) if param is not None else np.zeros(0)

    def texts(self, key: str) -> list[str]:
        param = self.params.get(key)
        return param.texts() if param is not None else []


def _signed(byte: int) -> int:
    return byte - 256 if byte > 127 else byte


def floats(raw: bytes, processor: str) -> NDArray[np.float32]:
    """float32 values in the processor's format."""
    if processor == "mips":
        return np.frombuffer(raw, dtype=">f4").astype(np.float32)
    if processor == "intel":
        return np.frombuffer(raw, dtype="<f4")
    words = np.frombuffer(raw, dtype="<u2").reshape(-1, 2)[:, ::-1]  # DEC: halves swapped
    values: NDArray[np.float32] = np.ascontiguousarray(words).view("<f4").reshape(-1)
    out: NDArray[np.float32] = (values / np.float32(4.0)).astype(np.float32)
    return out


def parse(data: bytes, path: PathLike) -> C3D:
    """The header and parameters of a C3D file's bytes."""
    if len(data) < BLOCK or data[1] != 0x50:
        raise FormatError("not a C3D file (no 0x50 key in the header's second byte)", path)
    start = (data[0] - 1) * BLOCK
    if data[0] < 2 or start + 4 > len(data):
        raise FormatError(f"the parameter section (block {data[0]}) lies beyond the file", path)
    processor = PROCESSORS.get(data[start + 3])
    if processor is None:
        raise FormatError(f"unknown processor type {data[start + 3]}", path)
    order = ">" if processor == "mips" else "<"
    words = np.frombuffer(data[:24], dtype=f"{order}u2")
    header = C3D(processor, int(words[1]), int(words[2]), int(words[3]), int(words[4]),
                 float(floats(data[12:16], processor)[0]), int(words[8]),
                 float(floats(data[20:24], processor)[0]))
    blocks = data[start + 2]
    end = start + blocks * BLOCK
    if blocks == 0 or end > len(data):
        raise FormatError(f"the parameter section is truncated: it claims {blocks} blocks "
                          f"from byte {start}, the file has {len(data)} bytes", path)
    _parameters(data, start + 4, end, order, header, path)
    return header


def _parameters(data: bytes, at: int, end: int, order: str, header: C3D,
                path: PathLike) -> None:
    groups: dict[int, str] = {}
    pending: list[tuple[int, str, Parameter]] = []
    first = at
    for _ in range(MAX_ITEMS):
        if at < first:
            raise FormatError(f"a parameter offset points before the parameter section "
                              f"(byte {at})", path)
        if at + 2 > end:
            raise FormatError(f"the parameter section is truncated at byte {at}", path)
        length, ident = abs(_signed(data[at])), _signed(data[at + 1])
        if length == 0 or ident == 0:
            break
        name_end = at + 2 + length
        if name_end + 2 > end:
            raise FormatError(f"the parameter section is truncated at byte {at}", path)
        name = data[at + 2:name_end].decode("latin-1").upper()
        offset = int(np.frombuffer(data[name_end:name_end + 2], dtype=f"{order}i2")[0])
        body = name_end + 2
        if ident < 0:
            groups[-ident] = name
        else:
            if body + 2 > end:
                raise FormatError(f"parameter {name!r} is truncated", path)
            kind, ndims = _signed(data[body]), data[body + 1]
            if kind not in (-1, 1, 2, 4):
                raise FormatError(f"parameter {name!r} has an unknown type {kind}", path)
            dims = tuple(data[body + 2:body + 2 + ndims])
            count = int(np.prod(dims, dtype=np.int64)) if ndims else 1
            raw_at = body + 2 + ndims
            raw_end = raw_at + count * abs(kind)
            if raw_end > end:
                raise FormatError(f"parameter {name!r} runs past the parameter section", path)
            pending.append((ident, name, Parameter(kind, dims, data[raw_at:raw_end])))
        if offset == 0:
            break
        at = name_end + offset
    else:
        raise FormatError(f"more than {MAX_ITEMS} parameters", path)
    for ident, name, param in pending:
        header.params[f"{groups.get(ident, str(ident))}:{name}"] = param

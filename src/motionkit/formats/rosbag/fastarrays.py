"""Header-less numeric messages (``std_msgs/Float64MultiArray``, ``Float64``, …) read in
blocks: their values are the message's last bytes, so a message of the same length whose
bytes before the values equal those of a message rosbags decoded has the same layout and
count, and its values are read from the end with NumPy, many messages at once.

The shortcut is never the authority: each run starts with a message rosbags decodes, whose
last bytes must be exactly its values, and any message that differs before its values
starts a new run (or, where the check fails, is decoded by rosbags alone).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

#: Little-endian dtype of ``data`` per message type (without ``std_msgs/msg/``, ``MultiArray``).
DTYPES = {"Float64": "<f8", "Float32": "<f4", "Int8": "i1", "Int16": "<i2", "Int32": "<i4",
          "Int64": "<i8", "UInt8": "u1", "UInt16": "<u2", "UInt32": "<u4", "UInt64": "<u8",
          "Bool": "?"}
#: Messages read at once at most (bounds the bytes held beside the decoded values).
BLOCK = 1 << 14


@dataclass(frozen=True)
class Block:
    """Consecutive messages of one layout: their log times (ns) and values ``(n, count)``."""

    log_ns: NDArray[np.int64]
    data: NDArray[np.float64]


def dtype_of(msgtype: str) -> np.dtype[np.generic]:
    """The values' dtype of a numeric message type."""
    name = msgtype.rsplit("/", 1)[-1].removesuffix("MultiArray")
    return np.dtype(DTYPES[name])


@dataclass(frozen=True)
class _Layout:
    length: int
    prefix: bytes
    count: int

    @classmethod
    def of(cls, raw: bytes, message: object, dtype: np.dtype[np.generic]) -> _Layout | None:
        """The layout when ``raw`` ends in exactly the values rosbags decoded, else None."""
        values = np.asarray(getattr(message, "data", None)).reshape(-1)
        size = values.size * dtype.itemsize
        if values.dtype.kind not in "biuf" or size > len(raw):
            return None
        tail = np.frombuffer(raw, dtype=dtype, count=values.size, offset=len(raw) - size)
        if not np.array_equal(tail, values.astype(dtype)):
            return None
        return cls(len(raw), bytes(raw[:len(raw) - size]), values.size)

    def matches(self, raw: bytes) -> bool:
        return len(raw) == self.length and raw[:len(self.prefix)] == self.prefix

    def block(self, raws: list[bytes], log_ns: list[int], dtype: np.dtype[np.generic]) -> Block:
        rows = np.frombuffer(b"".join(raws), dtype=np.uint8).reshape(len(raws), self.length)
        values = np.ascontiguousarray(rows[:, len(self.prefix):]).view(dtype)
        return Block(np.asarray(log_ns, dtype=np.int64),
                     values.astype(np.float64).reshape(len(raws), self.count))


def decode_all(raws: Iterable[tuple[int, bytes]], msgtype: str,
               deserialize: Callable[[bytes], object]) -> Iterator[tuple[int, object]]:
    """(log ns, message) where rosbags decodes one, ``(-1, Block)`` for the runs after it."""
    dtype = dtype_of(msgtype)
    layout: _Layout | None = None
    run: list[bytes] = []
    times: list[int] = []
    for log_ns, raw in raws:
        if layout is not None and layout.matches(raw):
            run.append(raw)
            times.append(log_ns)
            if len(run) == BLOCK:
                yield -1, layout.block(run, times, dtype)
                run, times = [], []
            continue
        if run:
            assert layout is not None
            yield -1, layout.block(run, times, dtype)
            run, times = [], []
        message = deserialize(raw)
        layout = _Layout.of(raw, message, dtype)
        yield log_ns, message
    if run and layout is not None:
        yield -1, layout.block(run, times, dtype)

"""Packed motion libraries (``.mkpack``): a whole MotionLib in one memory-mappable file.

Layout (all integers little-endian)::

    0   8 bytes   magic  b"MKPACK\\x00\\x01"
    8   8 bytes   length L of the index
    16  32 bytes  SHA-256 of the index
    48  L bytes   index: UTF-8 JSON (names, source files and their hashes, and for every
                  array its dtype, shape, offset and SHA-256)
    ...           the arrays, raw and C-ordered, each at a 64-byte aligned offset

Nothing is pickled: opening reads the index, checks it against its hash, checks every
array's dtype and shape against what a MotionLib needs and every extent against the file's
size, then maps the arrays in place, so a library of thousands of motions opens in
milliseconds. The arrays' own hashes are checked by :func:`check` (``motionkit pack
--check``) or :meth:`Pack.verify`, which read the whole file. This module holds arrays
only; :class:`~motionkit.motionlib.MotionLib` builds on it.
"""

from __future__ import annotations

import hashlib
import json
import math
import mmap
import os
import struct
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._io import atomic_write, sha256
from ..errors import FormatError, warn

MAGIC = b"MKPACK\x00\x01"
HEADER = struct.Struct("<8sQ32s")
ALIGN = 64
VERSION = 1
#: The largest index a pack may have (a 100,000-motion index is a few MB).
MAX_INDEX = 64 << 20
#: Every array of a pack: dtype and shape, with N motions, T frames in all, J joints,
#: C contact columns and D degrees of freedom.
SPEC: dict[str, tuple[str, tuple[str | int, ...]]] = {
    "frame_counts": ("<i8", ("N",)), "fps": ("<f8", ("N",)), "wrap": ("|b1", ("N",)),
    "weights": ("<f8", ("N",)), "loop_shift": ("<f8", ("N", 3)),
    "root_pos": ("<f8", ("T", 3)), "root_rot": ("<f8", ("T", 4)),
    "joint_rot": ("<f8", ("T", "J", 4)), "contacts": ("<f4", ("T", "C")),
    "root_vel": ("<f4", ("T", 3)), "root_ang_vel": ("<f4", ("T", 3)),
    "dof_vel": ("<f4", ("T", "D")),
    "root_slerp.start": ("<f4", ("T", 4)), "root_slerp.end": ("<f4", ("T", 4)),
    "root_slerp.theta": ("<f4", ("T",)), "root_slerp.inv_sin": ("<f4", ("T",)),
    "joint_slerp.start": ("<f4", ("T", "J", 4)), "joint_slerp.end": ("<f4", ("T", "J", 4)),
    "joint_slerp.theta": ("<f4", ("T", "J")), "joint_slerp.inv_sin": ("<f4", ("T", "J")),
}


def _aligned(offset: int) -> int:
    return -(-offset // ALIGN) * ALIGN


def write(path: str | os.PathLike[str], state: Mapping[str, NDArray[np.generic]], names: list[str],
          character: bool, sources: list[Path] | None = None) -> Path:
    """Write a library's ``state`` (``MotionLib.state()``) to ``path`` (atomically), with
    its motion names, whether it had a character, and each source file's size and hash.

    Source paths are stored relative to the pack's folder, so a dataset moved together with
    its pack still checks; ``check`` opens only those inside that folder."""
    target = Path(path)
    arrays = {name: np.ascontiguousarray(state[name], dtype=np.dtype(dtype))
              for name, (dtype, _) in SPEC.items()}
    entries: dict[str, dict[str, Any]] = {}
    records = []
    folder = os.path.realpath(target.absolute().parent)
    outside = 0
    for source in sources or []:
        size, digest = sha256(source)
        records.append({"path": os.path.relpath(source.absolute(), target.absolute().parent),
                        "size": size, "sha256": digest})
        outside += os.path.commonpath([folder, os.path.realpath(source)]) != folder
    if outside:
        warn(f"{target}: {outside} source file(s) lie outside the pack's folder; `pack --check` "
             "will not open them (write the pack beside or above its sources)")
    index: dict[str, Any] = {"format": "motionkit-pack", "version": VERSION,
                             "names": list(names), "sources": records,
                             "character": character, "arrays": entries}
    # Offsets depend on the index's length, which depends on the offsets' digits: lay the
    # arrays out after a generous guess and grow the guess until the index fits.
    room = 4096
    while True:
        offset = _aligned(HEADER.size + room)
        start = offset
        for name, array in arrays.items():
            entries[name] = {"dtype": SPEC[name][0], "shape": list(array.shape),
                             "offset": offset, "sha256": hashlib.sha256(array.data).hexdigest()}
            offset = _aligned(offset + array.nbytes)
        text = json.dumps(index, separators=(",", ":")).encode()
        if HEADER.size + len(text) <= start:
            break
        room = len(text) * 2
    with atomic_write(target) as handle:
        handle.write(HEADER.pack(MAGIC, len(text), hashlib.sha256(text).digest()))
        handle.write(text)
        position = HEADER.size + len(text)
        for name, array in arrays.items():
            handle.write(b"\0" * (entries[name]["offset"] - position))
            handle.write(array.data)
            position = entries[name]["offset"] + array.nbytes
    return target


class Pack:
    """An opened pack: its index and its arrays mapped from the file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            with open(path, "rb") as handle:
                size = os.fstat(handle.fileno()).st_size
                if size < HEADER.size:
                    raise FormatError("is not a motion pack (too short)", path)
                magic, length, digest = HEADER.unpack(handle.read(HEADER.size))
                if magic != MAGIC:
                    raise FormatError("is not a motion pack (no MKPACK header)"
                                      if magic[:6] != MAGIC[:6] else
                                      "is a motion pack of another version", path)
                if length > min(MAX_INDEX, size - HEADER.size):
                    raise FormatError(f"is truncated or damaged (an index of {length} bytes "
                                      f"in a file of {size})", path)
                text = handle.read(length)
                if hashlib.sha256(text).digest() != digest:
                    raise FormatError("is damaged: its index does not match its hash", path)
                self.map = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        except OSError as exc:
            raise FormatError(f"cannot read: {exc.strerror or exc}", path) from None
        self.size = size
        self.data_start = HEADER.size + length
        try:
            self.index = json.loads(text)
        except (ValueError, RecursionError):
            raise FormatError("is damaged: its index is not JSON", path) from None
        self.arrays = self._arrays()

    def fail(self, message: str) -> FormatError:
        """A FormatError saying the pack is damaged, naming it."""
        return FormatError(f"is damaged: {message}", self.path)

    def _arrays(self) -> dict[str, NDArray[Any]]:
        index = self.index
        if not isinstance(index, dict) or index.get("format") != "motionkit-pack":
            raise self.fail("its index is not a motion pack's")
        if index.get("version") != VERSION:
            raise FormatError(f"is a motion pack of version {index.get('version')!r}; this "
                              f"motionkit reads version {VERSION}", self.path)
        names, entries = index.get("names"), index.get("arrays")
        if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
            raise self.fail("its index has no list of motion names")
        if not isinstance(entries, dict):
            raise self.fail("its index lists no arrays")
        dims: dict[str | int, int] = {"N": len(names)}
        arrays = {}
        for name, (dtype, shape) in SPEC.items():
            arrays[name] = self._array(name, entries.get(name), dtype, shape, dims)
        self._check_values(arrays, dims)
        return arrays

    def _array(self, name: str, entry: object, dtype: str, shape: tuple[str | int, ...],
               dims: dict[str | int, int]) -> NDArray[Any]:
        if not isinstance(entry, dict) or entry.get("dtype") != dtype:
            raise self.fail(f"array {name!r} is missing or not {dtype}")
        found, offset = entry.get("shape"), entry.get("offset")
        if not (isinstance(found, list) and len(found) == len(shape)
                and all(type(n) is int and n >= 0 for n in found)
                and type(offset) is int and offset % ALIGN == 0 and offset >= self.data_start):
            raise self.fail(f"array {name!r} has a bad shape or offset")
        for symbol, n in zip(shape, found, strict=True):
            expected = symbol if isinstance(symbol, int) else dims.setdefault(symbol, n)
            if n != expected:
                raise self.fail(f"array {name!r} has shape {found}, which disagrees with the "
                                 "other arrays")
        kind = np.dtype(dtype)
        count = math.prod(found)
        if offset + count * kind.itemsize > self.size:
            raise FormatError(f"is truncated: array {name!r} ends at byte "
                              f"{offset + count * kind.itemsize}, the file has {self.size}",
                              self.path)
        if count == 0:
            return np.zeros(found, dtype=kind)
        return np.frombuffer(self.map, dtype=kind, count=count, offset=offset).reshape(found)

    def _check_values(self, arrays: dict[str, NDArray[Any]], dims: dict[str | int, int]) -> None:
        counts, fps, weights = arrays["frame_counts"], arrays["fps"], arrays["weights"]
        frames = dims["T"]
        # each count at most T first, so that their sum cannot overflow
        if counts.min() < 1 or counts.max() > frames or int(counts.sum()) != frames:
            raise self.fail("its frame counts do not add up to its frames")
        if not (np.isfinite(fps).all() and fps.min() > 0):
            raise self.fail("a frame rate is not a positive number")
        if not (np.isfinite(weights).all() and weights.min() >= 0
                and abs(float(weights.sum()) - 1.0) <= 1e-9):
            raise self.fail("its weights are not numbers >= 0 that sum to 1")
        if arrays["wrap"].view(np.uint8).max() > 1:
            raise self.fail("its loop flags are not booleans")

    def verify(self) -> list[str]:
        """Arrays whose bytes no longer match their recorded hashes."""
        return [f"array {name!r} does not match its hash (the pack was modified)"
                for name, array in self.arrays.items()
                if hashlib.sha256(np.ascontiguousarray(array).data).hexdigest()
                != self.index["arrays"][name].get("sha256")]


def check(path: str | os.PathLike[str]) -> list[str]:
    """What changed since the pack was written: damaged arrays, and source files that are
    missing or whose bytes differ from the recorded hash. Empty when all is as packed.

    Only files inside the pack's folder are opened (after resolving links), and only when
    their size is the recorded one: a crafted pack can make this neither hash a file of its
    choosing elsewhere nor read a huge one. A record outside the folder is a problem."""
    target = Path(path)
    pack = Pack(target)
    problems = pack.verify()
    sources = pack.index.get("sources")
    if not isinstance(sources, list):
        raise pack.fail("its index has no list of source files")
    folder = os.path.realpath(target.parent)
    for record in sources:
        if not (isinstance(record, dict) and isinstance(record.get("path"), str)
                and type(record.get("size")) is int and isinstance(record.get("sha256"), str)):
            raise pack.fail("a source file record is not a path, a size and a hash")
        source = target.parent / record["path"]
        real = os.path.realpath(source)
        if os.path.isabs(record["path"]) or os.path.commonpath([folder, real]) != folder:
            problems.append(f"not checked (outside the pack's folder): {source}")
        elif not os.path.isfile(real):
            problems.append(f"missing: {source}")
        elif os.path.getsize(real) != record["size"] or sha256(Path(real)) != (
                record["size"], record["sha256"]):
            problems.append(f"changed: {source}")
    return problems

"""NumPy ``.npz`` archives read without pickles and within a size budget, and written
atomically.

``np.load`` on an archive trusts each member's header: a few compressed bytes may declare
an array of any size, and ``allow_pickle=True`` would run code from the file. Here every
member's header is read first: object arrays are refused, the declared size must fit in
the member's uncompressed size, and the sum of those sizes (numbers counted as stored and
as the float64 copy the readers make) is charged to a byte budget tied to the file's size
(:mod:`motionkit._limits`), before any array is allocated. A broken archive, a member name
that is not UTF-8 included, is one FormatError.
"""

from __future__ import annotations

import io
import json
import os
import tokenize
import zipfile
import zlib
from collections.abc import Mapping

import numpy as np
from numpy.typing import NDArray

from ..._io import atomic_write
from ..._limits import MAX_FPS, MIN_FPS, Budget, array_budget
from ...errors import FormatError

PathLike = str | os.PathLike[str]
#: Most members an archive may have.
MAX_MEMBERS = 4096
#: The side key in which motionkit states a written file's conventions (JSON text); the
#: loaders of these containers read only the keys they know, so they ignore it.
CONVENTIONS_KEY = "motionkit_conventions"
#: What a damaged archive raises inside zipfile, zlib and NumPy's header parser.
ARCHIVE_ERRORS: tuple[type[Exception], ...] = (
    zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, OSError, ValueError, SyntaxError,
    tokenize.TokenError, UnicodeDecodeError, OverflowError)
#: The ``.npz`` magic: a zip local file header.
MAGIC = b"PK\x03\x04"


def sniff(head: bytes) -> bool:
    """A zip archive whose first member is a ``.npy`` array (each format's ``accepts``
    then reads the archive's directory: the member names are at its end)."""
    if not head.startswith(MAGIC) or len(head) < 30:
        return False
    length = int.from_bytes(head[26:28], "little")
    return head[30:30 + length].endswith(b".npy")


def hint(head: bytes) -> str | None:
    """For an archive no container format took: how to name one."""
    if not sniff(head):
        return None
    return ("a NumPy archive of none of the known layouts: name the format (--from amass, "
            "isaaclab-amp or beyondmimic)")


def members(path: PathLike) -> frozenset[str]:
    """The array keys of an archive, from its directory alone (empty for a broken one)."""
    try:
        with zipfile.ZipFile(path) as archive:
            names = archive.namelist()
    except ARCHIVE_ERRORS:  # a name that is not UTF-8, too: not an archive of ours
        return frozenset()
    return frozenset(name[:-4] for name in names[:MAX_MEMBERS] if name.endswith(".npy"))


def load(path: PathLike) -> dict[str, NDArray[np.generic]]:
    """Every array of the archive by key (``.npy`` stripped), in archive order."""
    size = os.path.getsize(path)
    budget = array_budget(path, size)
    try:
        archive = zipfile.ZipFile(path)
    except ARCHIVE_ERRORS:
        raise FormatError("not a NumPy .npz archive (not a zip file)", path) from None
    try:
        with archive:
            return _arrays(archive, budget, path)
    except ARCHIVE_ERRORS as exc:
        what = " ".join(str(exc).split())[:120] or type(exc).__name__
        raise FormatError(f"a broken .npz archive ({what})", path) from None


def _arrays(archive: zipfile.ZipFile, budget: Budget,
            path: PathLike) -> dict[str, NDArray[np.generic]]:
    out: dict[str, NDArray[np.generic]] = {}
    members = archive.infolist()
    if len(members) > MAX_MEMBERS:
        raise FormatError(f"holds {len(members)} members (at most {MAX_MEMBERS})", path)
    for info in members:
        if not info.filename.endswith(".npy"):
            raise FormatError(f"member {info.filename[:80]!r} is not a .npy array", path)
        key = info.filename[:-4]
        with archive.open(info) as handle:
            budget.charge(_check_header(handle, info, key, path))
        with archive.open(info) as handle:
            try:
                out[key] = np.lib.format.read_array(handle, allow_pickle=False)
            except ValueError as exc:
                raise FormatError(f"array {key!r} is broken ({exc})", path) from None
    return out


def _check_header(handle: io.BufferedIOBase | object, info: zipfile.ZipInfo, key: str,
                  path: PathLike) -> int:
    """The bytes the array takes once read and converted (numbers become float64, as
    :func:`numbers` makes them), after checking its header against the member."""
    fmt = np.lib.format
    stream = handle if isinstance(handle, io.IOBase) else None
    if stream is None:
        raise FormatError(f"array {key!r} cannot be opened", path)
    try:
        version = fmt.read_magic(stream)
        if version == (1, 0):
            shape, _, dtype = fmt.read_array_header_1_0(stream)
        elif version == (2, 0):
            shape, _, dtype = fmt.read_array_header_2_0(stream)
        else:
            raise FormatError(f"array {key!r}: .npy version {version} is not read", path)
    except ValueError as exc:
        raise FormatError(f"array {key!r} has a broken header ({exc})", path) from None
    if dtype.hasobject:
        raise FormatError(f"array {key!r} holds Python objects (a pickle): refused, "
                          "never unpickled", path)
    count = int(np.prod(shape, dtype=np.int64)) if shape else 1
    declared = count * dtype.itemsize
    if declared > info.file_size:
        raise FormatError(f"array {key!r} declares {declared} bytes but its member holds "
                          f"{info.file_size}", path)
    return declared + (count * 8 if dtype.kind in "biuf" else 0)  # and its float64 copy


def rate(arrays: Mapping[str, NDArray[np.generic]], key: str, path: PathLike) -> float:
    """The frame rate stored under ``key``: one number within ``MIN_FPS``–``MAX_FPS``."""
    value = scalar(arrays, key, path)
    if not MIN_FPS <= value <= MAX_FPS:
        raise FormatError(f"{key} must be between {MIN_FPS:g} and {MAX_FPS:g}, got {value:g}",
                          path)
    return value


def scalar(arrays: Mapping[str, NDArray[np.generic]], key: str, path: PathLike) -> float:
    """A finite number stored as a 0-d or one-element array."""
    value = arrays[key]
    if value.size != 1 or value.dtype.kind not in "iuf":
        raise FormatError(f"{key} must be one number, got {value.dtype} of shape {value.shape}",
                          path)
    number = float(value.reshape(-1)[0])
    if not np.isfinite(number):
        raise FormatError(f"{key} is not finite", path)
    return number


def text(value: NDArray[np.generic], key: str, path: PathLike) -> tuple[str, str]:
    """A 0-d text array as (text, 'bytes' | 'str')."""
    if value.shape != () or value.dtype.kind not in "SU":
        raise FormatError(f"{key} must be one text, got {value.dtype} of shape {value.shape}",
                          path)
    item = value[()]
    if isinstance(item, bytes):
        return item.decode("utf-8", "replace"), "bytes"
    return str(item), "str"


def names(arrays: Mapping[str, NDArray[np.generic]], key: str, count: int,
          path: PathLike) -> list[str]:
    """A list of ``count`` names stored as a 1-d text array."""
    value = arrays[key]
    if value.ndim != 1 or value.dtype.kind not in "SU" or len(value) != count:
        raise FormatError(f"{key} must be {count} names, got {value.dtype} of shape "
                          f"{value.shape}", path)
    return [item.decode("utf-8", "replace") if isinstance(item, bytes) else str(item)
            for item in value.tolist()]


def numbers(arrays: Mapping[str, NDArray[np.generic]], key: str, ndim: int,
            path: PathLike) -> NDArray[np.float64]:
    """A finite numeric array of ``ndim`` axes as float64."""
    return checked(arrays, key, ndim, path).astype(np.float64)


def checked(arrays: Mapping[str, NDArray[np.generic]], key: str, ndim: int,
            path: PathLike) -> NDArray[np.generic]:
    """A finite numeric array of ``ndim`` axes, as stored (checked before any conversion:
    a float32 array is finite exactly when its float64 copy is)."""
    value = arrays[key]
    if value.dtype.kind not in "iuf" or value.ndim != ndim:
        raise FormatError(f"{key} must be a numeric array of {ndim} axes, got {value.dtype} "
                          f"of shape {value.shape}", path)
    if value.dtype.kind == "f" and not np.isfinite(value).all():
        raise FormatError(f"{key} holds non-finite numbers", path)
    return value


def save(path: PathLike, arrays: Mapping[str, NDArray[np.generic]],
         conventions: Mapping[str, object]) -> None:
    """Write ``arrays`` as an uncompressed ``.npz`` (atomically; no object arrays), with
    ``conventions`` (names, quaternion order, body order, up axis, units, fps) as JSON text
    under :data:`CONVENTIONS_KEY`."""
    arrays = {**arrays, CONVENTIONS_KEY: np.array(json.dumps(dict(conventions), sort_keys=True))}
    for key, value in arrays.items():
        if value.dtype.hasobject:
            raise ValueError(f"array {key!r} would need a pickle")
    with atomic_write(path, "wb") as handle:
        np.savez(handle, **arrays)  # type: ignore[arg-type]

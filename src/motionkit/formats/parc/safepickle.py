"""A restricted unpickler for PARC files: no code from the file ever runs.

Three layers keep a crafted pickle harmless:

1. :func:`scan` walks the opcodes first, without building anything, and rejects what
   could make decoding allocate far more than the file's size (declared lengths past the
   end, sparse memo indices), nest without bound (stack and mark depth) or run long
   (dictionary and set insertions, which hash collisions can make quadratic), and they
   bound how much memoized data is fetched again (re-using one large bytes object or
   array state many times would copy it each time).
2. :class:`SafeUnpickler` resolves globals only from an allowlist of harmless callables
   (NumPy's array/dtype/scalar rebuilders behind checks, ``collections.OrderedDict``, a
   torch shim written here, stand-ins for PARC's classes). Anything in a known dangerous
   or known library module is an attack and a :class:`UnsafePickleError`; an unknown
   class of some other module becomes an inert :class:`Unknown` placeholder when the
   caller allows it, so one odd misc entry does not sink the whole file.
3. Torch tensors are rebuilt from the legacy ``torch.save`` byte stream by our own parser
   (:func:`load_torch_bytes`); torch itself is never imported.
"""

from __future__ import annotations

import io
import mmap
import pickle
import pickletools
import struct
from collections import OrderedDict
from collections.abc import Callable, Mapping
from pathlib import PurePath, PurePosixPath, PureWindowsPath
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ...errors import FormatError

#: Most values the unpickler stack may hold at once, and most open MARKs.
MAX_STACK = 100_000
MAX_MARKS = 1_000
#: Most dictionary/set insertions per pickle (bounds hash-collision work).
MAX_INSERTS = 10_000
#: Bytes of memoized data a pickle may fetch again beyond its own size (so decoding can
#: copy at most about twice the file's data).
MAX_REUSE_SLACK = 1 << 20
#: Longest text argument of the protocol-0 number opcodes (INT, LONG, FLOAT, GET, PUT).
MAX_TEXT_NUMBER = 4_300

_NUMERIC_KINDS = frozenset("biufc")

#: Modules whose unlisted names are treated as an attack, not as an unknown class.
DANGEROUS_MODULES = frozenset({
    "__builtin__", "__main__", "_codecs", "_io", "_pickle", "_posixsubprocess", "_thread",
    "asyncio", "ast", "bdb", "builtins", "code", "codecs", "codeop", "collections",
    "commands", "copy_reg", "copyreg", "ctypes", "dill", "cloudpickle", "functools", "gc",
    "glob", "http", "imp", "importlib", "inspect", "io", "joblib", "marshal",
    "multiprocessing", "nt", "numpy", "operator", "os", "pathlib", "pdb", "pickle",
    "platform", "posix", "profile", "pty", "requests", "runpy", "shutil", "signal", "site",
    "socket", "subprocess", "sys", "tempfile", "threading", "timeit", "torch", "types",
    "urllib", "webbrowser", "yaml", "zipimport",
})


class UnsafePickleError(FormatError):
    """The pickle asks for something the reader never runs, or breaks a safety limit."""


class PickleProblem(Exception):
    """Raised inside the shims; turned into a FormatError that names the file."""

    def __init__(self, message: str, hard: bool = True) -> None:
        super().__init__(message)
        self.hard = hard


# --------------------------------------------------------------------------- scanning

_COUNTED = {-2: (1, "<B"), -3: (4, "<i"), -4: (4, "<I"), -5: (8, "<Q")}
_NUMBER_OPS = frozenset({"INT", "LONG", "FLOAT", "GET", "PUT"})
_PUT_OPS = frozenset({"PUT", "BINPUT", "LONG_BINPUT"})
_GET_OPS = frozenset({"GET", "BINGET", "LONG_BINGET"})
_FORBIDDEN_OPS = frozenset({"EXT1", "EXT2", "EXT4", "PERSID"})
_MARKERS = ("mark", "stackslice")


def _build_table() -> dict[int, tuple[Any, ...]]:
    table: dict[int, tuple[Any, ...]] = {}
    for op in pickletools.opcodes:
        before = [s.name for s in op.stack_before]
        after = len(op.stack_after)
        mark_at = before.index("mark") if "mark" in before else -1
        plain = len([s for s in before if s not in _MARKERS])
        arg = op.arg
        kind = 0 if arg is None else arg.n
        pair = arg is not None and arg.name == "stringnl_noescape_pair"
        table[ord(op.code.encode("latin-1"))] = (op.name, kind, pair, mark_at, plain, after)
    return table


_TABLE = _build_table()


def scan(data: bytes, start: int = 0, *, allow_persistent: bool = False) -> int:
    """Check one pickle's opcodes against the limits; return the offset just past STOP.

    Nothing is built and no large argument is copied, so this costs time linear in the
    number of opcodes (a NumPy array is a single opcode).
    """
    size = len(data)
    pos = start
    stack: list[int] = []  # per value on the unpickler stack: bytes of data it carries
    marks: list[int] = []
    memo: list[int] = []
    inserts = 0
    reused = 0  # data fetched again from the memo (each fetch may be copied again)
    reuse_limit = size - start + MAX_REUSE_SLACK
    length = 0
    while pos < size:
        entry = _TABLE.get(data[pos])
        if entry is None:
            raise PickleProblem(f"invalid pickle opcode 0x{data[pos]:02x} at byte {pos}")
        name, kind, pair, mark_at, plain, after = entry
        at = pos
        pos += 1
        if name in _FORBIDDEN_OPS or (name == "BINPERSID" and not allow_persistent):
            raise PickleProblem(f"forbidden pickle opcode {name} at byte {at}")
        number = 0
        if kind > 0:
            if pos + kind > size:
                raise PickleProblem(f"truncated pickle at byte {at}")
            number = int.from_bytes(data[pos:pos + kind], "little")
            pos += kind
        elif kind == -1:
            limit = MAX_TEXT_NUMBER if (name in _NUMBER_OPS or pair) else size
            for _ in range(2 if pair else 1):
                end = data.find(b"\n", pos, min(size, pos + limit + 1))
                if end < 0:
                    raise PickleProblem(f"unterminated or overlong {name} argument at byte {at}")
                if name in ("PUT", "GET"):
                    try:
                        number = int(data[pos:end])
                    except ValueError:
                        raise PickleProblem(f"bad {name} index at byte {at}") from None
                pos = end + 1
        elif kind < -1:
            width, fmt = _COUNTED[kind]
            if pos + width > size:
                raise PickleProblem(f"truncated pickle at byte {at}")
            (length,) = struct.unpack_from(fmt, data, pos)
            pos += width
            if length < 0 or length > size - pos:
                raise PickleProblem(f"{name} at byte {at} declares {length} bytes but only "
                                    f"{size - pos} remain")
            pos += length
        if name == "FRAME" and number > size - pos:
            raise PickleProblem(f"FRAME at byte {at} is longer than the data")
        weight = length if kind < -1 else 0
        if name in _PUT_OPS or name == "MEMOIZE":
            index = number if name in _PUT_OPS else len(memo)
            if index > len(memo):
                raise PickleProblem(f"memo index {index} out of order at byte {at}")
            if not stack:
                raise PickleProblem(f"{name} on an empty stack at byte {at}")
            memo[index:index + 1] = [stack[-1]]
            continue
        if name in _GET_OPS:
            if number >= len(memo):
                raise PickleProblem(f"memo index {number} not yet stored at byte {at}")
            reused += memo[number]
            weight = memo[number]
        elif name == "DUP" and stack:
            reused += stack[-1]
        if reused > reuse_limit:
            raise PickleProblem("pickle re-uses large data more often than its size allows")
        if name == "MARK":
            marks.append(len(stack))
            if len(marks) > MAX_MARKS:
                raise PickleProblem(f"pickle nests deeper than {MAX_MARKS} marks")
            continue
        if mark_at >= 0:
            if not marks:
                raise PickleProblem(f"{name} without MARK at byte {at}")
            top = marks.pop()
            if name in ("SETITEMS", "DICT"):
                inserts += (len(stack) - top) // 2
            elif name in ("ADDITEMS", "FROZENSET"):
                inserts += len(stack) - top
            start = top - mark_at
            if start < 0 or (marks and start < marks[-1]):
                raise PickleProblem(f"pickle stack underflow at byte {at} ({name})")
        else:
            if name == "SETITEM":
                inserts += 1
            start = len(stack) - plain
            if start < 0 or (marks and start < marks[-1]):
                raise PickleProblem(f"pickle stack underflow at byte {at} ({name})")
        weight += sum(stack[start:])
        del stack[start:]
        if after:
            stack.append(weight)
            stack.extend([weight if name == "DUP" else 0] * (after - 1))
        if len(stack) > MAX_STACK:
            raise PickleProblem(f"pickle holds more than {MAX_STACK} values at once")
        if inserts > MAX_INSERTS:
            raise PickleProblem(f"pickle inserts more than {MAX_INSERTS} dictionary/set items")
        if name == "STOP":
            return pos
    raise PickleProblem("pickle data was truncated (no STOP)")


# --------------------------------------------------------------------------- allowlist


def _dtype(spec: Any, align: Any = False, copy: Any = True) -> np.dtype[Any]:
    """``numpy.dtype`` limited to plain numeric and boolean types."""
    if not isinstance(spec, str) or len(spec) > 8:
        raise PickleProblem(f"refused numpy dtype {spec!r:.40}")
    try:
        dtype = np.dtype(spec)
    except TypeError:
        raise PickleProblem(f"unknown numpy dtype {spec!r:.40}") from None
    if dtype.kind not in _NUMERIC_KINDS or dtype.fields is not None or dtype.subdtype:
        raise PickleProblem(f"refused numpy dtype {spec!r:.40} (only numbers and booleans)")
    return dtype


def _reconstruct(subtype: Any, shape: Any, code: Any) -> NDArray[Any]:
    """``numpy.core.multiarray._reconstruct`` for plain ndarrays only."""
    if subtype is not np.ndarray:
        raise PickleProblem("refused an ndarray subclass")
    if not isinstance(code, bytes) or len(code) > 8:
        raise PickleProblem("bad ndarray reconstruct arguments")
    return np.ndarray.__new__(np.ndarray, (0,), np.uint8)


def _scalar(dtype: Any, data: Any = None) -> Any:
    """``numpy.core.multiarray.scalar`` for numeric dtypes built by :func:`_dtype`."""
    if not isinstance(dtype, np.dtype) or dtype.kind not in _NUMERIC_KINDS:
        raise PickleProblem("refused a numpy scalar of a non-numeric type")
    if not isinstance(data, bytes) or len(data) != dtype.itemsize:
        raise PickleProblem("bad numpy scalar data")
    return np.frombuffer(data, dtype=dtype)[0]


def _frombuffer(buf: Any, dtype: Any, shape: Any, order: Any) -> NDArray[Any]:
    """``numpy.core.numeric._frombuffer`` (protocol 5 arrays) with checked arguments."""
    if not isinstance(dtype, np.dtype) or dtype.kind not in _NUMERIC_KINDS:
        raise PickleProblem("refused a protocol-5 array of a non-numeric type")
    if not isinstance(buf, (bytes, bytearray)) or order not in ("C", "F"):
        raise PickleProblem("bad protocol-5 array arguments")
    if not isinstance(shape, tuple) or not all(isinstance(n, int) and n >= 0 for n in shape):
        raise PickleProblem("bad protocol-5 array shape")
    count = int(np.prod(shape, dtype=np.int64)) if shape else 1
    if count * dtype.itemsize != len(buf):
        raise PickleProblem("protocol-5 array shape does not match its data")
    return np.frombuffer(bytearray(buf), dtype=dtype).reshape(shape, order=order)


def _codecs_encode(text: Any, encoding: Any = "utf-8") -> bytes:
    """How protocol 2 stores ``bytes``: ``_codecs.encode(str, 'latin1')``."""
    if not isinstance(text, str) or encoding not in ("latin1", "latin-1"):
        raise PickleProblem("refused a _codecs.encode call")
    return text.encode("latin-1")


def _bytes(*args: Any) -> bytes:
    """``bytes()`` as protocol 2 writes an empty bytes object; nothing else."""
    if args:
        raise PickleProblem("refused a bytes(...) call with arguments")
    return b""


def _bytearray(*args: Any) -> bytearray:
    """``bytearray`` rebuilt from bytes, or from latin-1 text (protocol 2)."""
    if not args:
        return bytearray()
    if len(args) == 1 and isinstance(args[0], bytes):
        return bytearray(args[0])
    if len(args) == 2 and isinstance(args[0], str) and args[1] in ("latin1", "latin-1"):
        return bytearray(args[0].encode("latin-1"))
    raise PickleProblem("refused a bytearray(...) call")


def _ordered_dict(*args: Any) -> OrderedDict[Any, Any]:
    """``collections.OrderedDict()``; items arrive through SETITEMS, which are counted."""
    if args:
        raise PickleProblem("refused OrderedDict(...) with arguments")
    return OrderedDict()


def _set(items: Any = ()) -> set[Any]:
    """``set(list)`` as protocol 2 writes sets (size-limited like dict insertions)."""
    if not isinstance(items, (list, tuple)) or len(items) > MAX_INSERTS:
        raise PickleProblem("refused a set(...) call")
    return set(items)


def _frozenset(items: Any = ()) -> frozenset[Any]:
    return frozenset(_set(items))


def _path(flavour: type[PurePath]) -> Callable[..., str]:
    """``pathlib.*Path(*parts)`` read as its text (no file system access), as PARC's
    legacy converter stores paths."""

    def build(*parts: Any) -> str:
        if not all(isinstance(part, str) for part in parts):
            raise PickleProblem("refused a path built from non-text parts")
        return str(flavour(*parts))

    return build


class StandIn:
    """A PARC class seen in a pickle, kept as its attribute dict; it has no behaviour."""

    parc_class = ""

    def __new__(cls, *args: Any, **kwargs: Any) -> StandIn:
        return object.__new__(cls)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def __setstate__(self, state: Any) -> None:
        if isinstance(state, tuple) and len(state) == 2:  # (dict, slot dict)
            state = {**(state[0] or {}), **(state[1] or {})}
        if not isinstance(state, dict):
            raise PickleProblem(f"{self.parc_class}: state is not a dict")
        self.__dict__.update({str(k): v for k, v in state.items()})

    def state(self) -> dict[str, Any]:
        """The object's attributes."""
        return dict(self.__dict__)


class BodyConstraint(StandIn):
    """PARC's ``BodyConstraint`` (start/end frame, constraint point)."""

    parc_class = "BodyConstraint"


class SubTerrain(StandIn):
    """PARC's ``SubTerrain`` heightfield object (legacy files)."""

    parc_class = "SubTerrain"


class Unknown:
    """An inert placeholder for a class the reader does not know (only where allowed)."""

    global_name = ""

    def __new__(cls, *args: Any, **kwargs: Any) -> Unknown:
        return object.__new__(cls)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def __setstate__(self, state: Any) -> None:
        pass

    def __setitem__(self, key: Any, value: Any) -> None:
        pass

    def append(self, value: Any) -> None:
        pass

    def extend(self, values: Any) -> None:
        pass


def _numpy_globals() -> dict[tuple[str, str], Any]:
    names: dict[tuple[str, str], Any] = {("numpy", "ndarray"): np.ndarray,
                                         ("numpy", "dtype"): _dtype}
    for core in ("numpy.core", "numpy._core"):
        names[(f"{core}.multiarray", "_reconstruct")] = _reconstruct
        names[(f"{core}.multiarray", "scalar")] = _scalar
        names[(f"{core}.numeric", "_frombuffer")] = _frombuffer
    names[("_codecs", "encode")] = _codecs_encode
    names[("builtins", "bytes")] = _bytes
    names[("__builtin__", "bytes")] = _bytes
    names[("builtins", "bytearray")] = _bytearray
    names[("__builtin__", "bytearray")] = _bytearray
    return names


#: Globals of the core motion and terrain blobs.
NUMPY_GLOBALS: Mapping[tuple[str, str], Any] = _numpy_globals()


def _misc_globals() -> dict[tuple[str, str], Any]:
    names = dict(NUMPY_GLOBALS)
    names[("collections", "OrderedDict")] = _ordered_dict
    for builtins in ("builtins", "__builtin__"):
        names[(builtins, "set")] = _set
        names[(builtins, "frozenset")] = _frozenset
    for name in ("Path", "PosixPath", "PurePath", "PurePosixPath"):
        names[("pathlib", name)] = _path(PurePosixPath)
    for name in ("WindowsPath", "PureWindowsPath"):
        names[("pathlib", name)] = _path(PureWindowsPath)
    names[("torch._utils", "_rebuild_tensor_v2")] = rebuild_tensor
    names[("torch._utils", "_rebuild_tensor")] = rebuild_tensor
    names[("torch._utils", "_rebuild_parameter")] = _rebuild_parameter
    names[("torch.storage", "_load_from_bytes")] = load_torch_bytes
    for module in ("parc.motion_synthesis.motion_opt.motion_optimization",
                   "tools.motion_opt.motion_optimization"):
        names[(module, "BodyConstraint")] = BodyConstraint
    for module in ("parc.util.terrain_util", "util.terrain_util"):
        names[(module, "SubTerrain")] = SubTerrain
    return names


# --------------------------------------------------------------------------- torch shim

_STORAGE_DTYPES = {
    "FloatStorage": "<f4", "DoubleStorage": "<f8", "HalfStorage": "<f2",
    "LongStorage": "<i8", "IntStorage": "<i4", "ShortStorage": "<i2", "CharStorage": "i1",
    "ByteStorage": "u1", "BoolStorage": "?",
}
_TORCH_MAGIC = 0x1950A86A20F9469CFC6C
_TORCH_PROTOCOL = 1001


class StorageType:
    """Stand-in for a ``torch.XStorage`` class: only its element type."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.dtype = np.dtype(_STORAGE_DTYPES[name])


class Storage:
    """A torch storage read from the byte stream: a flat NumPy array."""

    def __init__(self, data: NDArray[Any]) -> None:
        self.data = data


def rebuild_tensor(storage: Any, offset: Any, size: Any, stride: Any, *rest: Any) -> NDArray[Any]:
    """``torch._utils._rebuild_tensor_v2`` without torch: a NumPy copy of the view."""
    if not isinstance(storage, Storage):
        raise PickleProblem("tensor rebuilt from something that is not a storage")
    if not (isinstance(offset, int) and isinstance(size, tuple) and isinstance(stride, tuple)
            and len(size) == len(stride)
            and all(isinstance(v, int) and v >= 0 for v in (*size, *stride)) and offset >= 0):
        raise PickleProblem("bad tensor geometry")
    flat = storage.data
    count = int(np.prod(size, dtype=np.int64)) if size else 1
    if count == 0:
        return np.zeros(size, dtype=flat.dtype)
    last = offset + sum((n - 1) * s for n, s in zip(size, stride, strict=True))
    if last >= flat.size or count > flat.size:
        raise PickleProblem("tensor view reaches past its storage")
    index = np.full(size, offset, dtype=np.int64) if size else np.array(offset)
    for axis, (n, s) in enumerate(zip(size, stride, strict=True)):
        shape = [1] * len(size)
        shape[axis] = n
        index = index + (np.arange(n, dtype=np.int64) * s).reshape(shape)
    return np.ascontiguousarray(flat[index])


def _rebuild_parameter(data: Any, requires_grad: Any = False, hooks: Any = None) -> Any:
    """``torch._utils._rebuild_parameter``: a parameter is just its data here."""
    if not isinstance(data, np.ndarray):
        raise PickleProblem("parameter without tensor data")
    return data


def load_torch_bytes(blob: Any) -> Any:
    """Parse a legacy ``torch.save`` byte stream (what ``_load_from_bytes`` receives).

    Five protocol-2 pickles (magic number, protocol 1001, system info, the object, the
    storage keys) followed by each storage as an int64 element count and raw data. The
    object pickle may reference storages only through persistent ids; the storage
    location (``cuda:0`` …) is ignored.
    """
    if not isinstance(blob, (bytes, bytearray)):
        raise PickleProblem("torch payload is not bytes")
    data = bytes(blob)
    pos = 0
    parts: list[Any] = []
    spans: list[tuple[int, int]] = []
    for index in range(5):
        end = scan(data, pos, allow_persistent=index == 3)
        spans.append((pos, end))
        if index != 3:
            parts.append(_plain_load(data[pos:end]))
        else:
            parts.append(None)
        pos = end
    magic, protocol, sys_info, _, keys = parts
    if magic != _TORCH_MAGIC or protocol != _TORCH_PROTOCOL:
        raise PickleProblem("not a torch byte stream (bad magic number or protocol)")
    little = not isinstance(sys_info, dict) or sys_info.get("little_endian", True) is not False
    if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
        raise PickleProblem("torch storage key list is malformed")
    declared: dict[str, tuple[StorageType, int]] = {}
    start, end = spans[3]
    object_bytes = data[start:end]
    _TorchObjectUnpickler(io.BytesIO(object_bytes), declared, None).load()  # collect ids
    storages: dict[str, Storage] = {}
    for key in keys:
        if key not in declared:
            raise PickleProblem(f"torch storage {key!r} is not referenced")
        kind, numel = declared[key]
        if pos + 8 > len(data):
            raise PickleProblem("torch storage data truncated")
        (count,) = struct.unpack_from("<q", data, pos)
        pos += 8
        nbytes = count * kind.dtype.itemsize
        if count != numel or count < 0 or nbytes > len(data) - pos:
            raise PickleProblem("torch storage size does not match its data")
        dtype = kind.dtype if little else kind.dtype.newbyteorder(">")
        array = np.frombuffer(data, dtype=dtype, count=count, offset=pos).astype(kind.dtype)
        storages[key] = Storage(array)
        pos += nbytes
    return _TorchObjectUnpickler(io.BytesIO(object_bytes), declared, storages).load()


def _plain_load(data: bytes) -> Any:
    return SafeUnpickler(io.BytesIO(data), {}).load()


class SafeUnpickler(pickle.Unpickler):
    """``pickle.Unpickler`` whose globals come only from ``allowed``.

    With ``lenient=True`` an unknown global outside :data:`DANGEROUS_MODULES` yields an
    inert :class:`Unknown` subclass instead of an error.
    """

    def __init__(self, file: io.BytesIO | mmap.mmap, allowed: Mapping[tuple[str, str], Any],
                 lenient: bool = False) -> None:
        super().__init__(file)
        self._allowed = allowed
        self._lenient = lenient

    def find_class(self, module: str, name: str) -> Any:
        found = self._allowed.get((module, name))
        if found is not None:
            return found
        top = module.split(".", 1)[0]
        if not self._lenient or top in DANGEROUS_MODULES or module in DANGEROUS_MODULES:
            raise PickleProblem(f"refused global {module}.{name}")
        return type(name, (Unknown,), {"global_name": f"{module}.{name}"})

    def persistent_load(self, pid: Any) -> Any:
        raise PickleProblem("refused a persistent id outside a torch stream")


def _first_pass(*args: Any) -> None:
    """Tensors are not built while the storage ids are being collected."""


class _TorchObjectUnpickler(SafeUnpickler):
    """The object pickle of a torch stream: storages come from persistent ids."""

    def __init__(self, file: io.BytesIO, declared: dict[str, tuple[StorageType, int]],
                 storages: dict[str, Storage] | None) -> None:
        allowed: dict[tuple[str, str], Any] = {
            ("torch", name): StorageType(name) for name in _STORAGE_DTYPES}
        allowed[("collections", "OrderedDict")] = _ordered_dict
        rebuild = rebuild_tensor if storages is not None else _first_pass
        allowed[("torch._utils", "_rebuild_tensor_v2")] = rebuild
        allowed[("torch._utils", "_rebuild_tensor")] = rebuild
        super().__init__(file, allowed)
        self._declared = declared
        self._storages = storages

    def persistent_load(self, pid: Any) -> Any:
        if not (isinstance(pid, tuple) and len(pid) == 6 and pid[0] == "storage"
                and isinstance(pid[1], StorageType) and isinstance(pid[2], str)
                and isinstance(pid[4], int) and pid[4] >= 0):
            raise PickleProblem("torch persistent id is malformed")
        _, kind, key, _location, numel, view = pid
        self._declared.setdefault(key, (kind, numel))
        if self._declared[key][1] != numel:
            raise PickleProblem(f"torch storage {key!r} declared with two sizes")
        if self._storages is None:
            return None
        storage = self._storages.get(key)
        if storage is None:
            raise PickleProblem(f"torch storage {key!r} has no data")
        if view is not None:
            if not (isinstance(view, tuple) and len(view) == 3 and isinstance(view[1], int)
                    and isinstance(view[2], int) and view[1] >= 0
                    and view[1] + view[2] <= storage.data.size):
                raise PickleProblem("torch storage view is malformed")
            return Storage(storage.data[view[1]:view[1] + view[2]])
        return storage


# --------------------------------------------------------------------------- entry points

MISC_GLOBALS: Mapping[tuple[str, str], Any] = _misc_globals()


def loads(data: bytes | mmap.mmap, path: Any, what: str, *,
          allowed: Mapping[tuple[str, str], Any] = NUMPY_GLOBALS,
          lenient: bool = False) -> Any:
    """Decode one pickle safely; every failure is a :class:`FormatError` naming ``what``.

    ``data`` may be a memory map of the file: it is scanned in place and unpickled
    straight from the map, which saves one copy of a large file.
    """
    return _guarded(lambda: _load_checked(data, allowed, lenient), path, what)


def _load_checked(data: bytes | mmap.mmap, allowed: Mapping[tuple[str, str], Any],
                  lenient: bool) -> Any:
    end = scan(data)  # type: ignore[arg-type]  # an mmap offers the same operations
    if end != len(data):
        raise PickleProblem(f"{len(data) - end} stray bytes after the pickle")
    if isinstance(data, mmap.mmap):
        data.seek(0)
        return SafeUnpickler(data, allowed, lenient).load()
    return SafeUnpickler(io.BytesIO(data), allowed, lenient).load()


def _guarded(action: Callable[[], Any], path: Any, what: str) -> Any:
    try:
        return action()
    except PickleProblem as exc:
        raise UnsafePickleError(f"{what}: {exc}", path) from None
    except FormatError:
        raise
    except RecursionError:
        raise UnsafePickleError(f"{what}: nested too deeply", path) from None
    except MemoryError:
        raise UnsafePickleError(f"{what}: needs more memory than its size warrants",
                                path) from None
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, KeyError, IndexError,
            AttributeError, OverflowError, struct.error, UnicodeDecodeError) as exc:
        raise FormatError(f"{what}: not a valid pickle ({type(exc).__name__}: {exc})",
                          path) from None


def contains_unknown(value: Any, limit: int = 64) -> str | None:
    """The global name of the first :class:`Unknown` inside ``value``, if any.

    Raises :class:`PickleProblem` when ``value`` nests deeper than ``limit``.
    """
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            raise PickleProblem(f"value nests deeper than {limit} levels")
        if isinstance(item, Unknown):
            return item.global_name
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values())
            stack.extend((k, depth + 1) for k in item)
        elif isinstance(item, (list, tuple, set, frozenset)):
            stack.extend((v, depth + 1) for v in item)
        elif isinstance(item, StandIn):
            stack.extend((v, depth + 1) for v in item.__dict__.values())
    return None

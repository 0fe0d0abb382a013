"""A restricted unpickler for PARC files: no code from the file ever runs.

Four layers keep a crafted pickle harmless:

1. :func:`~.pickle_scan.scan` walks the opcodes first, without building anything, and rejects what
   could make decoding allocate far more than the file's size (declared lengths past the
   end, sparse memo indices), nest without bound (stack, mark and value depth: a deeply
   nested tuple would crash CPython's hashing) or run long (dictionary and set
   insertions, which hash collisions can make quadratic), and they bound how much
   memoized data is fetched again (re-using one large bytes object or array state many
   times would copy it each time).
2. :class:`SafeUnpickler` resolves globals only from an allowlist of shims written here
   (NumPy's array/dtype/scalar rebuilders limited to plain numeric types, a torch shim,
   ``collections.OrderedDict``, stand-ins for PARC's classes). Every allowed callable is
   an immutable :class:`Shim` (a pickle's BUILD cannot change it for later files), every
   allowed class is sealed, and every array or tensor a shim makes is charged against a
   budget tied to the pickle's size. Anything in a known dangerous or known library
   module is an attack and a :class:`UnsafePickleError`; an unknown class of some other
   module becomes an inert :class:`Unknown` placeholder when the caller allows it, so one
   odd misc entry does not sink the whole file.
3. Torch tensors are rebuilt from the legacy ``torch.save`` byte stream by our own parser
   (:func:`load_torch_bytes`); torch itself is never imported.
4. :class:`PlainWalk` is the one walk over decoded data: each object is visited once
   (shared parts cost their size, not their number of paths), with a depth and a step
   limit, and it turns the result into plain Python and NumPy values.
"""

from __future__ import annotations

import io
import math
import os
import pickle
import struct
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from contextvars import ContextVar
from pathlib import PurePath, PurePosixPath, PureWindowsPath
from types import MappingProxyType
from typing import Any, NoReturn, TypeVar, cast

import numpy as np
from numpy.lib.stride_tricks import as_strided
from numpy.typing import NDArray

from ....errors import FormatError
from .pickle_scan import (
    MAX_DEPTH,
    MAX_INSERTS,
    scan,
)
from .pickle_scan import PickleProblem as PickleProblem  # re-exported: what callers catch

PathLike = str | os.PathLike[str]
#: Bytes a pickle may make its shims build (arrays, tensors, text turned into bytes,
#: object states copied): four times its size (its own data decoded twice, text to bytes
#: and bytes to array, plus copies of torch views) plus this slack.
DECODE_SLACK = 1 << 20
DECODE_FACTOR = 4
#: Bytes charged per attribute an object's state copies (a dict entry and its key).
STATE_ITEM_BYTES = 32
#: Most distinct unknown classes one pickle may name, and the longest such name.
MAX_UNKNOWN_CLASSES = 100
MAX_GLOBAL_NAME = 200
#: Most steps (container items) of one walk over decoded data.
MAX_WALK_STEPS = 5_000_000
#: Most axes of an array.
MAX_AXES = 32

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


class RefusedGlobalError(UnsafePickleError):
    """The pickle names a global that is not allowed where it appears."""


class RefusedGlobal(PickleProblem):
    """A global outside the allowlist (see :class:`RefusedGlobalError`)."""


class UnknownObject(PickleProblem):
    """A walk met an object of a class the reader does not know."""

    def __init__(self, global_name: str) -> None:
        super().__init__(f"holds an object of unknown class {global_name}")
        self.global_name = global_name


def type_name(value: object) -> str:
    """The type of an untrusted value for a message (never its repr)."""
    return type(value).__name__[:40]


# --------------------------------------------------------------------------- budget


class _Budget:
    """Array and tensor bytes one pickle may still decode, and set items it may still add
    (``set(list)`` calls are REDUCEs the opcode scan cannot size)."""

    __slots__ = ("left", "set_items")

    def __init__(self, left: int) -> None:
        self.left = left
        self.set_items = MAX_INSERTS


_BUDGET: ContextVar[_Budget | None] = ContextVar("parc_decode_budget", default=None)


def _charge(nbytes: int, what: str) -> None:
    budget = _BUDGET.get()
    if budget is None:
        raise PickleProblem(f"{what} built outside a safe load")
    if nbytes > budget.left:
        raise PickleProblem(f"{what} needs more memory than the file's size allows")
    budget.left -= nbytes


# --------------------------------------------------------------------------- sealed objects


def _refuse_change(self: Any, name: str, value: Any = None) -> NoReturn:
    raise PickleProblem(f"refused to change {name[:40]} of a {type_name(self)}")


class Shim:
    """An allow-listed callable. Immutable: BUILD on it is refused, so a file cannot change
    the library for later files."""

    __slots__ = ("_call", "name")
    name: str
    _call: Callable[..., object]

    def __init__(self, name: str, call: Callable[..., object]) -> None:
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "_call", call)

    def __call__(self, *args: object) -> object:
        return self._call(*args)

    def __setstate__(self, state: object) -> NoReturn:
        raise PickleProblem(f"refused BUILD on {self.name}")

    __setattr__ = _refuse_change
    __delattr__ = _refuse_change


class _Sealed(type):
    """Metaclass of the classes a pickle may name: their attributes cannot be changed."""

    __setattr__ = _refuse_change
    __delattr__ = _refuse_change


# --------------------------------------------------------------------------- numpy shims


class DType:
    """What ``numpy.dtype(...)`` gives a pickle: a plain numeric type, BUILD-checked.

    It is not a real dtype, so no pickle can hand one to NumPy's own ``__setstate__``. Each
    holds a dtype object of its own, so the arrays built with it share their dtype object
    exactly where the pickle shared it (a memo reference) — what a byte-exact rewrite needs.
    """

    __slots__ = ("dtype",)
    dtype: np.dtype[np.generic]

    def __init__(self, dtype: np.dtype[np.generic]) -> None:
        object.__setattr__(self, "dtype", _own_copy(dtype))

    def __setstate__(self, state: object) -> None:
        if not (isinstance(state, tuple) and len(state) == 8 and state[0] == 3
                and state[1] in ("<", ">", "|", "=") and state[2:5] == (None, None, None)
                and state[5:] == (-1, -1, 0)):
            raise PickleProblem("refused numpy dtype state (only plain numbers and booleans)")
        if state[1] in ("<", ">"):  # a dtype object of its own (see the class docstring)
            object.__setattr__(self, "dtype",
                               _own_copy(np.dtype(state[1] + self.dtype.str[1:])))

    __setattr__ = _refuse_change
    __delattr__ = _refuse_change


def _own_copy(dtype: np.dtype[np.generic]) -> np.dtype[np.generic]:
    """A dtype object of its own, equal to ``dtype``: what ``copy.deepcopy`` makes (the
    same reduce, call and state), without its generic machinery (60 µs a dtype)."""
    reduced = cast("tuple[Callable[..., Any], tuple[object, ...], object]",
                   dtype.__reduce_ex__(4))
    out = reduced[0](*reduced[1])
    out.__setstate__(reduced[2])
    return cast("np.dtype[np.generic]", out)


def _dtype(spec: Any, align: Any = False, copy: Any = True) -> DType:
    """``numpy.dtype`` limited to plain numeric and boolean types."""
    return DType(_numeric(spec))


def _numeric(spec: Any) -> np.dtype[Any]:
    if isinstance(spec, DType):
        return spec.dtype
    if not isinstance(spec, str) or len(spec) > 8:
        raise PickleProblem(f"refused numpy dtype given as a {type_name(spec)}")
    try:
        dtype = np.dtype(spec)
    except TypeError:
        raise PickleProblem(f"unknown numpy dtype {spec!r}") from None
    if dtype.kind not in _NUMERIC_KINDS or dtype.fields is not None or dtype.subdtype:
        raise PickleProblem(f"refused numpy dtype {spec!r} (only numbers and booleans)")
    return dtype


def _shape(value: Any) -> tuple[int, ...]:
    dims = (value,) if isinstance(value, int) else value
    if not (isinstance(dims, tuple) and len(dims) <= MAX_AXES
            and all(isinstance(n, int) and n >= 0 for n in dims)):
        raise PickleProblem("bad array shape")
    return dims


def _new_array(shape: Any = None, dtype: Any = None, buffer: Any = None, offset: Any = 0,
               strides: Any = None, order: Any = None) -> NDArray[Any]:
    """``numpy.ndarray(shape, dtype)``: zeros of a numeric type; no buffer, offset or strides."""
    if buffer is not None or strides is not None or not (isinstance(offset, int)
                                                         and offset == 0):
        raise PickleProblem("refused numpy.ndarray with a buffer, offset or strides")
    if order not in (None, "C", "F"):
        raise PickleProblem("bad numpy.ndarray order")
    dims = _shape(shape)
    kind = np.dtype(np.float64) if dtype is None else _numeric(dtype)
    _charge(math.prod(dims) * kind.itemsize, "numpy.ndarray")
    return np.zeros(dims, kind, order="F" if order == "F" else "C")


NDARRAY = Shim("numpy.ndarray", _new_array)


class Rebuilt(np.ndarray):
    """An array being rebuilt by ``_reconstruct`` + BUILD; its state is checked first.

    :class:`PlainWalk` (and the PARC readers) hand out plain ``ndarray`` views of it.
    """

    __slots__ = ()

    def __setstate__(self, state: object) -> None:
        if not isinstance(state, tuple) or len(state) not in (4, 5) or (
                len(state) == 5 and state[0] != 1):
            raise PickleProblem("bad ndarray state")
        shape, dtype, fortran, raw = state[-4:]
        if not isinstance(dtype, DType):
            raise PickleProblem("ndarray state without a checked numeric dtype")
        dims = _shape(shape)
        if not isinstance(fortran, int) or not isinstance(raw, bytes):
            raise PickleProblem("bad ndarray state")
        if math.prod(dims) * dtype.dtype.itemsize != len(raw):
            raise ValueError("ndarray shape does not match its data")  # broken, not hostile
        _charge(len(raw), "ndarray")
        state = (1, dims, dtype.dtype, bool(fortran), raw)
        # NumPy's stub asks a numpy.bool for the order flag; the C code reads any int
        np.ndarray.__setstate__(self, state)  # type: ignore[arg-type]


def _reconstruct(subtype: Any, shape: Any, code: Any) -> Rebuilt:
    """``numpy.core.multiarray._reconstruct`` for plain ndarrays only."""
    if subtype is not NDARRAY:
        raise PickleProblem("refused an ndarray subclass")
    if not isinstance(code, bytes) or len(code) > 8:
        raise PickleProblem("bad ndarray reconstruct arguments")
    return cast(Rebuilt, np.ndarray.__new__(Rebuilt, (0,), np.uint8))


def _scalar(dtype: Any, data: Any = None) -> Any:
    """``numpy.core.multiarray.scalar`` for numeric dtypes built by :func:`_dtype`."""
    if not isinstance(dtype, DType):
        raise PickleProblem("refused a numpy scalar of a non-numeric type")
    if not isinstance(data, bytes) or len(data) != dtype.dtype.itemsize:
        raise PickleProblem("bad numpy scalar data")
    return np.frombuffer(data, dtype=dtype.dtype)[0]


def _frombuffer(buf: Any, dtype: Any, shape: Any, order: Any) -> NDArray[Any]:
    """``numpy.core.numeric._frombuffer`` (protocol 5 arrays) with checked arguments."""
    if not isinstance(dtype, DType):
        raise PickleProblem("refused a protocol-5 array of a non-numeric type")
    if not isinstance(buf, (bytes, bytearray)) or order not in ("C", "F"):
        raise PickleProblem("bad protocol-5 array arguments")
    dims = _shape(shape)
    if math.prod(dims) * dtype.dtype.itemsize != len(buf):
        raise ValueError("protocol-5 array shape does not match its data")
    _charge(len(buf), "protocol-5 array")
    return np.frombuffer(bytearray(buf), dtype=dtype.dtype).reshape(dims, order=order)


# --------------------------------------------------------------------------- other shims


def _codecs_encode(text: Any, encoding: Any = "utf-8") -> bytes:
    """How protocol 2 stores ``bytes``: ``_codecs.encode(str, 'latin1')``."""
    if not isinstance(text, str) or encoding not in ("latin1", "latin-1"):
        raise PickleProblem("refused a _codecs.encode call")
    _charge(len(text), "_codecs.encode")
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
        _charge(len(args[0]), "bytearray")
        return bytearray(args[0])
    if len(args) == 2 and isinstance(args[0], str) and args[1] in ("latin1", "latin-1"):
        _charge(2 * len(args[0]), "bytearray")
        return bytearray(args[0].encode("latin-1"))
    raise PickleProblem("refused a bytearray(...) call")


def _ordered_dict(*args: Any) -> OrderedDict[Any, Any]:
    """``collections.OrderedDict()``; items arrive through SETITEMS, which are counted."""
    if args:
        raise PickleProblem("refused OrderedDict(...) with arguments")
    return OrderedDict()


def _set(*args: Any) -> set[Any]:
    """``set(list)`` as protocol 2 writes sets. All set calls of one pickle together may
    add at most MAX_INSERTS items, which bounds both their memory (repeated calls on one
    memoized list) and their hash work (colliding items cost a probe per item held)."""
    items = args[0] if args else ()
    if len(args) > 1 or not isinstance(items, (list, tuple)):
        raise PickleProblem("refused a set(...) call")
    budget = _BUDGET.get()
    if budget is None:
        raise PickleProblem("set built outside a safe load")
    budget.set_items -= len(items)
    if budget.set_items < 0:
        raise PickleProblem(f"pickle adds more than {MAX_INSERTS} set items")
    return set(items)


def _frozenset(*args: Any) -> frozenset[Any]:
    return frozenset(_set(*args))


def _path(flavour: type[PurePath]) -> Callable[..., str]:
    """``pathlib.*Path(*parts)`` read as its text (no file system access), as PARC's
    legacy converter stores paths."""

    def build(*parts: Any) -> str:
        if not all(isinstance(part, str) for part in parts):
            raise PickleProblem("refused a path built from non-text parts")
        _charge(sum(len(part) for part in parts), "path")
        return str(flavour(*parts))

    return build


class _Inert(metaclass=_Sealed):
    """Built from any arguments without running anything: the base of every placeholder."""

    def __new__(cls, *args: Any, **kwargs: Any) -> _Inert:
        return object.__new__(cls)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass


class StandIn(_Inert):
    """A PARC class seen in a pickle, kept as its attribute dict; it has no behaviour."""

    parc_class = ""

    def __setstate__(self, state: object) -> None:
        if isinstance(state, tuple) and len(state) == 2:  # (dict, slot dict)
            parts = [part for part in state if part is not None]
        else:
            parts = [state]
        for part in parts:
            if not isinstance(part, dict) or not all(isinstance(k, str) for k in part):
                raise PickleProblem(f"{self.parc_class}: state is not a dict of names")
            _charge(STATE_ITEM_BYTES * len(part), f"{self.parc_class} state")
            self.__dict__.update(part)

    def state(self) -> dict[str, object]:
        """The object's attributes."""
        return dict(self.__dict__)


class BodyConstraint(StandIn):
    """PARC's ``BodyConstraint`` (start/end frame, constraint point)."""

    parc_class = "BodyConstraint"


class SubTerrain(StandIn):
    """PARC's ``SubTerrain`` heightfield object (legacy files)."""

    parc_class = "SubTerrain"


class Unknown(_Inert):
    """An inert placeholder for a class the reader does not know (only where allowed)."""

    global_name = ""

    def __setstate__(self, state: object) -> None:
        pass

    def __setitem__(self, key: object, value: object) -> None:
        pass

    def append(self, value: object) -> None:
        pass

    def extend(self, values: object) -> None:
        pass


#: One placeholder class per unknown global, shared by all files (they are sealed).
_UNKNOWN_CLASSES: dict[tuple[str, str], type[Unknown]] = {}
_UNKNOWN_CACHE_SIZE = 4096


def _unknown_class(module: str, name: str) -> type[Unknown]:
    key = (module, name)
    found = _UNKNOWN_CLASSES.get(key)
    if found is not None:
        return found
    if len(_UNKNOWN_CLASSES) >= _UNKNOWN_CACHE_SIZE:
        _UNKNOWN_CLASSES.clear()
    made = cast("type[Unknown]", _Sealed(name, (Unknown,), {"global_name": f"{module}.{name}",
                                                           "__slots__": ()}))
    _UNKNOWN_CLASSES[key] = made
    return made


def _numpy_globals() -> dict[tuple[str, str], Any]:
    names: dict[tuple[str, str], Any] = {("numpy", "ndarray"): NDARRAY,
                                         ("numpy", "dtype"): Shim("numpy.dtype", _dtype)}
    for core in ("numpy.core", "numpy._core"):
        names[(f"{core}.multiarray", "_reconstruct")] = Shim("_reconstruct", _reconstruct)
        names[(f"{core}.multiarray", "scalar")] = Shim("scalar", _scalar)
        names[(f"{core}.numeric", "_frombuffer")] = Shim("_frombuffer", _frombuffer)
    names[("_codecs", "encode")] = Shim("_codecs.encode", _codecs_encode)
    for builtins in ("builtins", "__builtin__"):
        names[(builtins, "bytes")] = Shim("bytes", _bytes)
        names[(builtins, "bytearray")] = Shim("bytearray", _bytearray)
    return names


#: Globals of the outer MS container: none but the two ways protocol 2 writes ``bytes``.
CONTAINER_GLOBALS: Mapping[tuple[str, str], object] = MappingProxyType({
    key: found for key, found in _numpy_globals().items()
    if key[0] in ("_codecs", "builtins", "__builtin__") and key[1] != "bytearray"})
#: Globals of the core motion and terrain blobs.
NUMPY_GLOBALS: Mapping[tuple[str, str], object] = MappingProxyType(_numpy_globals())


def _misc_globals() -> dict[tuple[str, str], Any]:
    names = dict(NUMPY_GLOBALS)
    names[("collections", "OrderedDict")] = Shim("OrderedDict", _ordered_dict)
    for builtins in ("builtins", "__builtin__"):
        names[(builtins, "set")] = Shim("set", _set)
        names[(builtins, "frozenset")] = Shim("frozenset", _frozenset)
    for name in ("Path", "PosixPath", "PurePath", "PurePosixPath"):
        names[("pathlib", name)] = Shim(name, _path(PurePosixPath))
    for name in ("WindowsPath", "PureWindowsPath"):
        names[("pathlib", name)] = Shim(name, _path(PureWindowsPath))
    rebuild = Shim("_rebuild_tensor_v2", rebuild_tensor)
    names[("torch._utils", "_rebuild_tensor_v2")] = rebuild
    names[("torch._utils", "_rebuild_tensor")] = rebuild
    names[("torch._utils", "_rebuild_parameter")] = Shim("_rebuild_parameter",
                                                        _rebuild_parameter)
    names[("torch.storage", "_load_from_bytes")] = Shim("_load_from_bytes", load_torch_bytes)
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

    __slots__ = ("dtype", "name")
    dtype: np.dtype[np.generic]
    name: str

    def __init__(self, name: str) -> None:
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "dtype", np.dtype(_STORAGE_DTYPES[name]))

    def __setstate__(self, state: object) -> NoReturn:
        raise PickleProblem(f"refused BUILD on torch.{self.name}")

    __setattr__ = _refuse_change
    __delattr__ = _refuse_change


class Storage:
    """A torch storage read from the byte stream: a flat NumPy array."""

    __slots__ = ("data",)
    data: NDArray[np.generic]

    def __init__(self, data: NDArray[np.generic]) -> None:
        object.__setattr__(self, "data", data)

    def __setstate__(self, state: object) -> NoReturn:
        raise PickleProblem("refused BUILD on a torch storage")

    __setattr__ = _refuse_change
    __delattr__ = _refuse_change


def rebuild_tensor(storage: object, offset: object, size: object, stride: object,
                   *rest: object) -> NDArray[np.generic]:
    """``torch._utils._rebuild_tensor_v2`` without torch: a NumPy copy of the view.

    Each copy is charged against the pickle's budget, so many tensors on one storage
    cannot multiply the file's size.
    """
    if not isinstance(storage, Storage):
        raise PickleProblem("tensor rebuilt from something that is not a storage")
    if not (isinstance(offset, int) and isinstance(size, tuple) and isinstance(stride, tuple)
            and len(size) == len(stride) <= MAX_AXES
            and all(isinstance(v, int) and v >= 0 for v in (*size, *stride)) and offset >= 0):
        raise PickleProblem("bad tensor geometry")
    flat = storage.data
    count = math.prod(size)
    if count == 0:
        return np.zeros(size, dtype=flat.dtype)
    last = offset + sum((n - 1) * s for n, s in zip(size, stride, strict=True))
    if last >= flat.size or count > flat.size:
        raise PickleProblem("tensor view reaches past its storage")
    _charge(count * flat.itemsize, "torch tensor")
    if stride == _contiguous(size):  # the usual tensor: a slice of its storage, copied
        return np.array(flat[offset:offset + count].reshape(size))
    view = as_strided(flat[offset:], shape=size,
                      strides=tuple(s * flat.itemsize for s in stride), writeable=False)
    return np.array(view, order="C")


def _contiguous(size: tuple[int, ...]) -> tuple[int, ...]:
    """The element strides of a C-ordered tensor of ``size`` (torch's ``contiguous()``)."""
    strides, step = [], 1
    for n in reversed(size):
        strides.append(step)
        step *= n
    return tuple(reversed(strides))


def _rebuild_parameter(data: Any, requires_grad: Any = False, hooks: Any = None) -> Any:
    """``torch._utils._rebuild_parameter``: a parameter is just its data here."""
    if not isinstance(data, np.ndarray):
        raise PickleProblem("parameter without tensor data")
    return data


def load_torch_bytes(blob: object) -> object:
    """Parse a legacy ``torch.save`` byte stream (what ``_load_from_bytes`` receives).

    Five protocol-2 pickles (magic number, protocol, system info, the object, the storage
    keys) followed by each storage as an int64 element count and raw data. The object
    pickle may reference storages only through persistent ids; the storage location
    (``cuda:0`` …) is ignored. Every pickle is scanned, in order; the header pickles, the
    same in every stream, are decoded once per distinct bytes (:func:`_header_value`), and
    an object that is one storage (what pickling a tensor stores) is unpickled once.
    """
    if not isinstance(blob, (bytes, bytearray)):
        raise PickleProblem("torch payload is not bytes")
    data = bytes(blob)
    pos = 0
    parts: list[Any] = []
    for _ in range(3):
        end = scan(data, pos)
        parts.append(_header_value(data[pos:end]))
        pos = end
    start, end = pos, scan(data, pos, allow_persistent=True)
    pos = scan(data, end)
    magic, protocol, sys_info = parts
    keys = _plain_load(data[end:pos])
    if magic != _TORCH_MAGIC or protocol != _TORCH_PROTOCOL:
        raise PickleProblem("not a torch byte stream (bad magic number or protocol)")
    little = not isinstance(sys_info, dict) or sys_info.get("little_endian", True) is not False
    if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
        raise PickleProblem("torch storage key list is malformed")
    declared: dict[str, tuple[StorageType, int]] = {}
    object_bytes = data[start:end]
    found = _TorchObjectUnpickler(io.BytesIO(object_bytes), declared, None).load()  # ids
    storages, pos = _read_storages(data, pos, keys, declared, little)
    if isinstance(found, _StorageRef):  # exactly what the second pass would return
        return _storage_view(storages, found.key, found.view)
    return _TorchObjectUnpickler(io.BytesIO(object_bytes), declared, storages).load()


def _read_storages(data: bytes, pos: int, keys: list[str],
                   declared: dict[str, tuple[StorageType, int]],
                   little: bool) -> tuple[dict[str, Storage], int]:
    """Each storage of ``keys`` from ``pos`` on: an int64 element count and raw data."""
    storages: dict[str, Storage] = {}
    for key in keys:
        if key not in declared:
            raise PickleProblem(f"torch storage {key[:40]!r} is not referenced")
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
    return storages, pos


#: Decoded torch header pickles (magic number, protocol, system info) by their bytes.
_HEADERS: dict[bytes, object] = {}
_HEADER_CACHE_SIZE = 64
_HEADER_CACHE_BYTES = 512


def _header_value(piece: bytes) -> object:
    """One header pickle of a torch stream, decoded with no globals allowed: a function of
    its bytes alone, so short ones are kept (they are read, never changed, by the caller)."""
    known = _HEADERS.get(piece)
    if known is not None:
        return known
    value = _plain_load(piece)
    if len(piece) <= _HEADER_CACHE_BYTES:
        if len(_HEADERS) >= _HEADER_CACHE_SIZE:
            _HEADERS.clear()
        _HEADERS[piece] = value
    return value


def _plain_load(data: bytes) -> Any:
    return SafeUnpickler(io.BytesIO(data), {}).load()


class SafeUnpickler(pickle.Unpickler):
    """``pickle.Unpickler`` whose globals come only from ``allowed``.

    With ``lenient=True`` an unknown global outside :data:`DANGEROUS_MODULES` yields an
    inert :class:`Unknown` subclass (one per name, at most :data:`MAX_UNKNOWN_CLASSES`
    names per pickle) instead of an error.
    """

    def __init__(self, file: io.BytesIO, allowed: Mapping[tuple[str, str], object],
                 lenient: bool = False) -> None:
        super().__init__(file)
        self._allowed = allowed
        self._lenient = lenient
        self._unknown: set[tuple[str, str]] = set()

    def find_class(self, module: str, name: str) -> object:
        found = self._allowed.get((module, name))
        if found is not None:
            return found
        top = module.split(".", 1)[0]
        label = f"{module}.{name}"[:MAX_GLOBAL_NAME]
        if top == "joblib":  # joblib.dump's arrays follow the pickle as raw bytes
            raise RefusedGlobal(f"refused global {label}: a joblib container (joblib.dump), "
                                "not a plain pickle: not supported")
        if not self._lenient or top in DANGEROUS_MODULES or module in DANGEROUS_MODULES:
            raise RefusedGlobal(f"refused global {label}")
        if len(module) + len(name) > MAX_GLOBAL_NAME:
            raise PickleProblem(f"overlong global name {label}")
        self._unknown.add((module, name))
        if len(self._unknown) > MAX_UNKNOWN_CLASSES:
            raise PickleProblem(f"pickle names more than {MAX_UNKNOWN_CLASSES} unknown classes")
        return _unknown_class(module, name)

    def persistent_load(self, pid: object) -> object:
        raise PickleProblem("refused a persistent id outside a torch stream")


def _first_pass(*args: Any) -> None:
    """Tensors are not built while the storage ids are being collected."""


class _StorageRef:
    """What the first pass gives for a storage id: the key and view to build it from."""

    __slots__ = ("key", "view")
    key: str
    view: object

    def __init__(self, key: str, view: object) -> None:
        object.__setattr__(self, "key", key)
        object.__setattr__(self, "view", view)

    def __setstate__(self, state: object) -> NoReturn:
        raise PickleProblem("refused BUILD on a torch storage")

    __setattr__ = _refuse_change
    __delattr__ = _refuse_change


def _storage_view(storages: dict[str, Storage], key: str, view: object) -> Storage:
    """The storage ``key`` (or the slice ``view`` names), as a persistent id gives it."""
    storage = storages.get(key)
    if storage is None:
        raise PickleProblem(f"torch storage {key[:40]!r} has no data")
    if view is not None:
        if not (isinstance(view, tuple) and len(view) == 3 and isinstance(view[1], int)
                and isinstance(view[2], int) and view[1] >= 0 and view[2] >= 0
                and view[1] + view[2] <= storage.data.size):
            raise PickleProblem("torch storage view is malformed")
        return Storage(storage.data[view[1]:view[1] + view[2]])
    return storage


def _torch_object_globals(rebuild: Callable[..., object]) -> Mapping[tuple[str, str], object]:
    """The globals of a torch stream's object pickle (immutable, made once)."""
    allowed: dict[tuple[str, str], object] = {
        ("torch", name): StorageType(name) for name in _STORAGE_DTYPES}
    allowed[("collections", "OrderedDict")] = Shim("OrderedDict", _ordered_dict)
    shim = Shim("_rebuild_tensor_v2", rebuild)
    allowed[("torch._utils", "_rebuild_tensor_v2")] = shim
    allowed[("torch._utils", "_rebuild_tensor")] = shim
    return MappingProxyType(allowed)


_TORCH_FIRST_PASS = _torch_object_globals(_first_pass)
_TORCH_OBJECT = _torch_object_globals(rebuild_tensor)


class _TorchObjectUnpickler(SafeUnpickler):
    """The object pickle of a torch stream: storages come from persistent ids (the first
    pass, without storages, collects their declarations and gives :class:`_StorageRef`)."""

    def __init__(self, file: io.BytesIO, declared: dict[str, tuple[StorageType, int]],
                 storages: dict[str, Storage] | None) -> None:
        super().__init__(file, _TORCH_FIRST_PASS if storages is None else _TORCH_OBJECT)
        self._declared = declared
        self._storages = storages

    def persistent_load(self, pid: object) -> object:
        if not (isinstance(pid, tuple) and len(pid) == 6 and pid[0] == "storage"
                and isinstance(pid[1], StorageType) and isinstance(pid[2], str)
                and isinstance(pid[4], int) and pid[4] >= 0):
            raise PickleProblem("torch persistent id is malformed")
        _, kind, key, _location, numel, view = pid
        self._declared.setdefault(key, (kind, numel))
        if self._declared[key][1] != numel:
            raise PickleProblem(f"torch storage {key[:40]!r} declared with two sizes")
        if self._storages is None:
            return _StorageRef(key, view)
        return _storage_view(self._storages, key, view)


# --------------------------------------------------------------------------- entry points

MISC_GLOBALS: Mapping[tuple[str, str], object] = MappingProxyType(_misc_globals())


class Blob:
    """One pickle held inside the file's bytes, not copied out."""

    __slots__ = ("data", "start", "stop")

    def __init__(self, data: bytes, start: int, stop: int) -> None:
        self.data = data
        self.start = start
        self.stop = stop

    def __len__(self) -> int:
        return self.stop - self.start


def loads(data: bytes | Blob, path: PathLike | None, what: str, *,
          allowed: Mapping[tuple[str, str], object] = NUMPY_GLOBALS,
          lenient: bool = False) -> object:
    """Decode one pickle safely; every failure is a :class:`FormatError` naming ``what``.

    ``data`` may be a :class:`Blob` inside the file's bytes: it is scanned in place and
    unpickled straight from there, which saves a copy of every blob. Arrays come back as
    :class:`Rebuilt` views until :class:`PlainWalk` (or ``np.asarray``) plains them.
    """
    return _guarded(lambda: _load_checked(data, allowed, lenient), path, what)


def _load_checked(data: bytes | Blob, allowed: Mapping[tuple[str, str], object],
                  lenient: bool) -> Any:
    if isinstance(data, Blob):
        buffer, start, stop = data.data, data.start, data.stop
    else:
        buffer, start, stop = data, 0, len(data)
    end = scan(buffer, start, stop=stop, origin=start)
    if end != stop:
        raise PickleProblem(f"{stop - end} stray bytes after the pickle")
    token = _BUDGET.set(_Budget(DECODE_FACTOR * (stop - start) + DECODE_SLACK))
    try:
        # the scan ends at STOP, so the unpickler never reads past ``stop``
        file = io.BytesIO(buffer)  # shares the bytes, no copy
        file.seek(start)
        return SafeUnpickler(file, allowed, lenient).load()
    finally:
        _BUDGET.reset(token)


_TEXT_WIDTHS = {0x8C: 1, 0x58: 4, 0x8D: 8}  # SHORT_BINUNICODE, BINUNICODE, BINUNICODE8
_BYTES_WIDTHS = {0x43: 1, 0x42: 4, 0x8E: 8}  # SHORT_BINBYTES, BINBYTES, BINBYTES8
_SKIPPED_WIDTHS = {0x94: 0, 0x71: 1, 0x72: 4, 0x95: 8}  # MEMOIZE, BINPUT, LONG_BINPUT, FRAME
_EMPTY_DICT, _MARK_OP, _SETITEM, _SETITEMS, _NONE, _STOP_OP = b"}(suN."


def key_names(keys: Sequence[object]) -> str:
    """Decoded dict keys for a message: text cut short, other keys by type, at most 10."""
    shown = [k[:40] if isinstance(k, str) else f"<{type_name(k)}>"
             for k in keys[:10]]
    return ", ".join(shown) + (f" and {len(keys) - 10} more" if len(keys) > 10 else "")


#: The blobs of PARC's MS container (a dict of pickled pickles), in file order.
MS_KEYS = ("motion_data", "terrain_data", "misc_data")


def split_container(data: bytes, path: PathLike | None,
                    keys: tuple[str, ...]) -> dict[str, Blob | None] | None:
    """An MS container's blobs, left in place, when it is laid out as pickle writes one.

    That is a dict of some of ``keys`` (each once) to bytes or None, with no other
    opcodes than protocol 2+ framing and memo puts. The result equals what :func:`loads`
    gives with no globals allowed, with :class:`Blob` for bytes. Anything else, valid or
    not, gives None (decode it with :func:`loads`); the scan's limits apply first.
    """
    return cast("dict[str, Blob | None] | None",
                _guarded(lambda: _split_checked(data, keys), path, "file"))


def _split_checked(data: bytes, keys: tuple[str, ...]) -> dict[str, Blob | None] | None:
    size = len(data)
    if scan(data) != size or data[0] != 0x80 or data[1] < 2:
        return None
    tokens: list[tuple[int, int, int]] = []  # opcode, argument start, argument length
    pos = 2  # past PROTO
    while pos < size:
        code = data[pos]
        pos += 1
        if code in _SKIPPED_WIDTHS:
            pos += _SKIPPED_WIDTHS[code]
            continue
        width = _TEXT_WIDTHS.get(code) or _BYTES_WIDTHS.get(code)
        length = 0
        if width is not None:
            length = int.from_bytes(data[pos:pos + width], "little")
            pos += width
        elif code not in b"}(suN.":
            return None
        tokens.append((code, pos, length))
        pos += length
    names = {key.encode(): key for key in keys}
    if len(tokens) < 2 or tokens[0][0] != _EMPTY_DICT or tokens[-1][0] != _STOP_OP:
        return None
    out: dict[str, Blob | None] = {}
    batch = False  # inside MARK … SETITEMS
    index = 1
    while index < len(tokens) - 1:
        code, start, length = tokens[index]
        if code == _MARK_OP and not batch:
            batch = True
        elif code == _SETITEMS and batch:
            batch = False
        elif code in _TEXT_WIDTHS and index + 1 < len(tokens) - 1:
            key = names.get(bytes(data[start:start + length])) if length <= 64 else None
            value, value_start, value_length = tokens[index + 1]
            if key is None or key in out:
                return None
            if value == _NONE:
                out[key] = None
            elif value in _BYTES_WIDTHS:
                out[key] = Blob(data, value_start, value_start + value_length)
            else:
                return None
            index += 1
            if not batch:
                index += 1
                if tokens[index][0] != _SETITEM:
                    return None
        else:
            return None
        index += 1
    return out if out and not batch else None


#: Exceptions that decoding or converting untrusted data may raise; all become FormatErrors.
DATA_ERRORS = (pickle.UnpicklingError, EOFError, ValueError, TypeError, KeyError, IndexError,
               AttributeError, OverflowError, RuntimeError, struct.error, UnicodeDecodeError)


def _guarded(action: Callable[[], Any], path: PathLike | None, what: str) -> Any:
    try:
        return action()
    except RefusedGlobal as exc:
        raise RefusedGlobalError(f"{what}: {exc}", path) from None
    except PickleProblem as exc:
        raise UnsafePickleError(f"{what}: {exc}", path) from None
    except FormatError:
        raise
    except RecursionError:  # a RuntimeError, so before DATA_ERRORS
        raise UnsafePickleError(f"{what}: nested too deeply", path) from None
    except MemoryError:
        raise UnsafePickleError(f"{what}: needs more memory than its size warrants",
                                path) from None
    except DATA_ERRORS as exc:
        raise FormatError(f"{what}: not a valid pickle ({describe_error(exc)})",
                          path) from None


T = TypeVar("T")


def converting(action: Callable[[], T], path: PathLike | None) -> T:
    """Run a reader's conversion of decoded data (a Motion from PARC or MimicKit dicts):
    whatever untrusted data makes it trip over becomes a FormatError naming the file."""
    try:
        return action()
    except PickleProblem as exc:
        raise UnsafePickleError(str(exc), path) from None
    except FormatError:
        raise
    except RecursionError:
        raise FormatError("data nested too deeply", path) from None
    except MemoryError:
        raise FormatError("data needs more memory than available", path) from None
    except DATA_ERRORS as exc:
        raise FormatError(f"unreadable data ({describe_error(exc)})", path) from None


def describe_error(exc: BaseException) -> str:
    """An exception as ``Type: message``, the message cut short."""
    text = str(exc)
    return f"{type(exc).__name__}: {text[:200]}{'…' if len(text) > 200 else ''}"


_ATOMS = (type(None), bool, int, float, complex, str, bytes, bytearray, np.generic)


class PlainWalk:
    """The one walk over decoded data: plain Python and NumPy values out.

    Arrays become plain ``ndarray``, torch storages their data, PARC stand-ins their
    attribute dicts (a ``BodyConstraint`` its three fields), ``OrderedDict`` a dict, sets
    sorted lists. Each object is converted once (shared parts stay shared and cost their
    size, not their number of paths), over at most :data:`MAX_DEPTH` levels and
    ``max_steps`` items in all (one budget per walker, shared by all its calls). An
    :class:`Unknown` object raises :class:`UnknownObject`; anything else unexpected, a
    cycle, or a limit raises :class:`PickleProblem`.
    """

    def __init__(self, max_steps: int = MAX_WALK_STEPS) -> None:
        self._done: dict[int, Any] = {}
        self._unknown: dict[int, str] = {}
        self._open: set[int] = set()
        self._keep: list[Any] = []  # originals stay alive, so their ids stay theirs
        self._steps = max_steps

    def plain(self, value: object, depth: int = 0) -> object:
        """``value`` as plain data (see the class)."""
        self._steps -= 1
        if self._steps < 0:
            raise PickleProblem("decoded data has too many parts")
        if isinstance(value, _ATOMS):
            return value
        key = id(value)
        if key in self._done:
            return self._done[key]
        if key in self._unknown:
            raise UnknownObject(self._unknown[key])
        if key in self._open:
            raise PickleProblem("value nests inside itself")
        if depth >= MAX_DEPTH:
            raise PickleProblem(f"value nests deeper than {MAX_DEPTH} levels")
        self._open.add(key)
        try:
            out = self._convert(value, depth + 1)
        except UnknownObject as exc:
            self._unknown[key] = exc.global_name
            raise
        finally:
            self._open.discard(key)
        self._done[key] = out
        self._keep.append(value)
        return out

    def _convert(self, value: Any, depth: int) -> Any:
        if isinstance(value, np.ndarray):
            return value if type(value) is np.ndarray else value.view(np.ndarray)
        if isinstance(value, Unknown) or (isinstance(value, type)
                                          and issubclass(value, Unknown)):
            raise UnknownObject(value.global_name)
        if isinstance(value, Storage):
            return value.data
        if isinstance(value, DType):
            return value.dtype
        if isinstance(value, StandIn):
            state = {k: self.plain(v, depth) for k, v in value.state().items()}
            if isinstance(value, BodyConstraint):
                return {k: state.get(k) for k in ("start_frame_idx", "end_frame_idx",
                                                  "constraint_point")}
            return state
        if isinstance(value, dict):  # OrderedDict included
            out: dict[Any, Any] = {}
            for k, v in value.items():
                k, v = self.plain(k, depth), self.plain(v, depth)
                try:
                    out[k] = v
                except TypeError:
                    raise PickleProblem("a dict key is not plain data") from None
            return out
        if isinstance(value, list):
            return [self.plain(v, depth) for v in value]
        if isinstance(value, tuple):
            return tuple(self.plain(v, depth) for v in value)
        if isinstance(value, (set, frozenset)):
            items = [self.plain(v, depth) for v in value]
            try:
                return sorted(items)
            except (TypeError, ValueError):
                return items
        if isinstance(value, memoryview):
            return value.tobytes()
        raise PickleProblem(f"holds a {type_name(value)}, which is not data")

"""Malicious pickles: every one is a FormatError, and nothing in them ever runs.

Each payload tries to create a sentinel file. A control test shows the payloads are
live (the standard unpickler does create it), so "sentinel absent" proves the reader
ran nothing.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import resource
import struct
import subprocess
import sys
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

import motionkit as mk
from motionkit.errors import FormatError
from motionkit.formats.shared.pickles import pickle_scan, safepickle


def _str4(text: str) -> bytes:
    raw = text.encode()
    return b"\x8c" + bytes([len(raw)]) + raw if len(raw) < 256 else (
        b"X" + struct.pack("<I", len(raw)) + raw)


def os_system(sentinel: Path) -> bytes:
    """Protocol 0: GLOBAL os.system + REDUCE."""
    return b"cos\nsystem\n(V" + f"touch {sentinel}".encode() + b"\ntR."


def posix_system(sentinel: Path) -> bytes:
    return b"cposix\nsystem\n(V" + f"touch {sentinel}".encode() + b"\ntR."


def builtins_eval(sentinel: Path) -> bytes:
    """Protocol 4: STACK_GLOBAL builtins.eval + REDUCE."""
    code = f"open({str(sentinel)!r}, 'w').close()"
    return b"\x80\x04" + _str4("builtins") + _str4("eval") + b"\x93" + _str4(code) + b"\x85R."


def builtins_exec(sentinel: Path) -> bytes:
    code = f"open({str(sentinel)!r}, 'w').close()"
    return b"\x80\x02c__builtin__\nexec\n" + _str4(code) + b"\x85R."


def subprocess_popen(sentinel: Path) -> bytes:
    return (b"\x80\x04" + _str4("subprocess") + _str4("check_call") + b"\x93]("
            + _str4("touch") + _str4(str(sentinel)) + b"e\x85R.")


def object_new_via_build(sentinel: Path) -> bytes:
    """INST opcode (protocol 0 instantiation) of os._wrap_close-style gadgets."""
    return b"(V" + f"touch {sentinel}".encode() + b"\nios\nsystem\n."


PAYLOADS: dict[str, Callable[[Path], bytes]] = {
    "os.system": os_system,
    "posix.system": posix_system,
    "builtins.eval": builtins_eval,
    "__builtin__.exec": builtins_exec,
    "subprocess.check_call": subprocess_popen,
    "INST os.system": object_new_via_build,
}


def _container(motion: bytes | None = None, terrain: bytes | None = None,
               misc: bytes | None = None) -> bytes:
    return pickle.dumps({"motion_data": motion, "terrain_data": terrain, "misc_data": misc},
                        protocol=4)


def _good_motion() -> bytes:
    rot = np.zeros((2, 4), np.float32)
    rot[:, 3] = 1
    return pickle.dumps({"root_pos": np.zeros((2, 3), np.float32), "root_rot": rot,
                         "joint_rot": rot[:, None], "body_contacts": None, "fps": 30,
                         "loop_mode": "CLAMP"}, protocol=4)


def _torch_stream(object_pickle: bytes, key: str = "0", numel: int = 2,
                  data: bytes | None = None) -> bytes:
    """A legacy torch.save byte stream around the given object pickle."""
    head = (pickle.dumps(0x1950A86A20F9469CFC6C, protocol=2) + pickle.dumps(1001, protocol=2)
            + pickle.dumps({"protocol_version": 1001, "little_endian": True,
                            "type_sizes": {"short": 2, "int": 4, "long": 4}}, protocol=2))
    payload = np.arange(numel, dtype=np.int64).tobytes() if data is None else data
    return (head + object_pickle + pickle.dumps([key], protocol=2)
            + struct.pack("<q", numel) + payload)


def _storage_object(key: str = "0", numel: int = 2) -> bytes:
    return (b"\x80\x02(X\x07\x00\x00\x00storagectorch\nLongStorage\nX"
            + struct.pack("<I", len(key)) + key.encode() + b"X\x06\x00\x00\x00cuda:0"
            + b"J" + struct.pack("<i", numel) + b"NtQ.")


def _tensor_misc(stream: bytes, size: tuple[int, ...] = (2,),
                 stride: tuple[int, ...] = (1,)) -> bytes:
    """misc = {"t": _rebuild_tensor_v2(_load_from_bytes(stream), 0, size, stride, False, {})}."""
    def ints(values: tuple[int, ...]) -> bytes:
        return b"(" + b"".join(b"J" + struct.pack("<i", v) for v in values) + b"t"
    return (b"\x80\x04}" + _str4("t") + _str4("torch._utils") + _str4("_rebuild_tensor_v2")
            + b"\x93(" + _str4("torch.storage") + _str4("_load_from_bytes") + b"\x93"
            + b"B" + struct.pack("<I", len(stream)) + stream + b"\x85RK\x00" + ints(size)
            + ints(stride) + b"\x89}tRs.")


@pytest.fixture
def sentinel(tmp_path: Path) -> Path:
    return tmp_path / "sentinel"


def _read_fails(tmp_path: Path, data: bytes, sentinel: Path, match: str | None = None) -> None:
    path = tmp_path / "evil.pkl"
    path.write_bytes(data)
    with pytest.raises(FormatError, match=match) as info:
        mk.read(path, format="parc")
    assert info.value.path == str(path)
    assert not sentinel.exists(), "a payload ran"


@pytest.mark.parametrize("name", sorted(PAYLOADS))
def test_payloads_are_live_under_plain_pickle(name: str, sentinel: Path) -> None:
    """Control: the standard unpickler does run them (so the other tests can fail)."""
    with contextlib.suppress(Exception):
        pickle.loads(PAYLOADS[name](sentinel))  # test-made bytes, run on purpose
    assert sentinel.exists()


@pytest.mark.parametrize("name", sorted(PAYLOADS))
def test_payload_as_whole_file(name: str, tmp_path: Path, sentinel: Path) -> None:
    _read_fails(tmp_path, PAYLOADS[name](sentinel), sentinel, "refused|forbidden")


@pytest.mark.parametrize("slot", ["motion", "terrain", "misc"])
@pytest.mark.parametrize("name", sorted(PAYLOADS))
def test_payload_inside_a_nested_blob(name: str, slot: str, tmp_path: Path,
                                      sentinel: Path) -> None:
    evil = PAYLOADS[name](sentinel)
    blobs = {"motion": _good_motion(), "terrain": None, "misc": None}
    blobs[slot] = evil
    _read_fails(tmp_path, _container(blobs["motion"], blobs["terrain"], blobs["misc"]),
                sentinel, "refused|forbidden")


def test_payload_inside_misc_value(tmp_path: Path, sentinel: Path) -> None:
    inner = os_system(sentinel)[:-1]  # drop STOP: the REDUCE result becomes a dict value
    misc = b"(dV" + b"key\n" + inner + b"s."
    _read_fails(tmp_path, _container(_good_motion(), None, misc), sentinel, "refused")


def test_payload_inside_legacy_terrain_state(tmp_path: Path, sentinel: Path) -> None:
    frames = pickle.dumps(np.zeros((2, 6), np.float32), protocol=4)[2:-1]
    frames = frames[9:] if frames[:1] == b"\x95" else frames
    legacy = (b"\x80\x04}(" + _str4("frames") + frames + _str4("terrain")
              + _str4("util.terrain_util") + _str4("SubTerrain") + b"\x93)\x81}"
              + _str4("hf") + os_system(sentinel)[:-1] + b"sbu.")
    _read_fails(tmp_path, legacy, sentinel, "refused")


def test_payload_inside_torch_byte_stream_object(tmp_path: Path, sentinel: Path) -> None:
    evil_object = b"\x80\x02" + os_system(sentinel)
    misc = _tensor_misc(_torch_stream(evil_object))
    _read_fails(tmp_path, _container(_good_motion(), None, misc), sentinel, "refused")


def test_payload_inside_torch_byte_stream_header(tmp_path: Path, sentinel: Path) -> None:
    stream = _torch_stream(_storage_object())
    evil = os_system(sentinel)
    stream = evil + stream[len(pickle.dumps(0x1950A86A20F9469CFC6C, protocol=2)):]
    misc = _tensor_misc(stream)
    _read_fails(tmp_path, _container(_good_motion(), None, misc), sentinel, "refused")


def test_genuine_torch_stream_is_read(tmp_path: Path) -> None:
    """The same builder without a payload loads: the tests above fail for the payload."""
    misc = _tensor_misc(_torch_stream(_storage_object(numel=6), numel=6), (2, 3), (3, 1))
    path = tmp_path / "ok.pkl"
    path.write_bytes(_container(_good_motion(), None, misc))
    tensor = mk.read(path).meta["parc"]["misc"]["t"]
    assert tensor.dtype == np.int64 and tensor.tolist() == [[0, 1, 2], [3, 4, 5]]
    transposed = _tensor_misc(_torch_stream(_storage_object(numel=6), numel=6), (3, 2), (1, 3))
    path.write_bytes(_container(_good_motion(), None, transposed))
    assert mk.read(path).meta["parc"]["misc"]["t"].tolist() == [[0, 3], [1, 4], [2, 5]]


@pytest.mark.parametrize(("module", "name"), [
    ("copyreg", "_reconstructor"), ("numpy", "load"), ("numpy.lib.npyio", "load"),
    ("torch", "load"), ("torch.serialization", "load"), ("collections", "namedtuple"),
    ("__main__", "Evil"), ("importlib", "import_module"), ("pickle", "loads"),
    ("functools", "partial"), ("operator", "attrgetter"), ("sys", "exit"),
    ("shutil", "rmtree"), ("socket", "socket"), ("ctypes", "CDLL"),
])
def test_dangerous_globals_refused_everywhere(module: str, name: str, tmp_path: Path,
                                              sentinel: Path) -> None:
    evil = b"\x80\x04" + _str4(module) + _str4(name) + b"\x93)R."
    _read_fails(tmp_path, _container(_good_motion(), None, evil), sentinel, "refused")
    _read_fails(tmp_path, _container(evil), sentinel, "refused")


def test_object_dtype_refused(tmp_path: Path, sentinel: Path) -> None:
    array = pickle.dumps(np.array([1, "a"], dtype=object), protocol=4)
    _read_fails(tmp_path, _container(array), sentinel, "dtype")


# ----------------------------------------------------------------- resource limits


def test_oversized_bytes_header(tmp_path: Path, sentinel: Path) -> None:
    data = b"\x80\x04\x8e" + struct.pack("<Q", 1 << 50) + b"abc."
    _read_fails(tmp_path, data, sentinel, "declares")


def test_oversized_frame_header(tmp_path: Path, sentinel: Path) -> None:
    data = b"\x80\x04\x95" + struct.pack("<Q", 1 << 50) + b"N."
    _read_fails(tmp_path, data, sentinel, "FRAME")


def test_sparse_memo_index(tmp_path: Path, sentinel: Path) -> None:
    data = b"\x80\x04Nr" + struct.pack("<I", 0xFFFFFFF0) + b"."
    _read_fails(tmp_path, data, sentinel, "memo")


def test_array_header_larger_than_its_data(tmp_path: Path, sentinel: Path) -> None:
    good = pickle.dumps(np.zeros(4, np.float32), protocol=4)
    evil = good.replace(b"K\x04\x85", b"J" + struct.pack("<i", 2**31 - 1) + b"\x85")
    assert evil != good
    _read_fails(tmp_path, _container(evil), sentinel)


def test_protocol5_array_header_larger_than_its_data(tmp_path: Path, sentinel: Path) -> None:
    good = pickle.dumps(np.zeros(4, np.float32), protocol=5)
    evil = good.replace(b"K\x04\x85", b"J" + struct.pack("<i", 2**31 - 1) + b"\x85")
    assert evil != good
    _read_fails(tmp_path, _container(evil), sentinel)


def test_torch_view_larger_than_storage(tmp_path: Path, sentinel: Path) -> None:
    huge = _tensor_misc(_torch_stream(_storage_object()), (2**31 - 1,), (0,))
    _read_fails(tmp_path, _container(_good_motion(), None, huge), sentinel, "storage")
    past = _tensor_misc(_torch_stream(_storage_object()), (3,), (1,))
    _read_fails(tmp_path, _container(_good_motion(), None, past), sentinel, "storage")


def test_torch_storage_size_lies(tmp_path: Path, sentinel: Path) -> None:
    stream = _torch_stream(_storage_object(numel=2), numel=2)
    stream = stream.replace(struct.pack("<q", 2) + np.arange(2, dtype=np.int64).tobytes(),
                            struct.pack("<q", 1 << 40) + np.arange(2, dtype=np.int64).tobytes())
    _read_fails(tmp_path, _container(_good_motion(), None, _tensor_misc(stream)), sentinel,
                "size")


def test_deep_nesting_on_the_stack(tmp_path: Path, sentinel: Path) -> None:
    depth = pickle_scan.MAX_STACK + 10
    data = b"\x80\x04" + b"]" * depth + b"a" * (depth - 1) + b"."
    _read_fails(tmp_path, data, sentinel, "values at once")


def test_deep_nesting_through_marks(tmp_path: Path, sentinel: Path) -> None:
    depth = pickle_scan.MAX_MARKS + 10
    data = b"\x80\x04" + b"(" * depth + b"l" * depth + b"."
    _read_fails(tmp_path, data, sentinel, "marks")


def test_deep_nesting_in_misc(tmp_path: Path, sentinel: Path) -> None:
    nested: list = []
    for _ in range(200):
        nested = [nested]
    misc = pickle.dumps({"deep": nested}, protocol=4)
    _read_fails(tmp_path, _container(_good_motion(), None, misc), sentinel, "nest")


def test_self_referencing_misc(tmp_path: Path, sentinel: Path) -> None:
    loop: list = []
    loop.append(loop)
    misc = pickle.dumps({"loop": loop}, protocol=4)
    _read_fails(tmp_path, _container(_good_motion(), None, misc), sentinel, "nest")


def test_dictionary_flood(tmp_path: Path, sentinel: Path) -> None:
    count = safepickle.MAX_INSERTS + 1
    body = b"".join(b"J" + struct.pack("<i", i) + b"Ns" for i in range(count))
    _read_fails(tmp_path, b"\x80\x04}" + body + b".", sentinel, "dictionary")


@pytest.mark.parametrize("data", [
    b"\x80\x04\x82\x01.",  # EXT1 (copyreg extension registry)
    b"\x80\x04Pfoo\n.",  # PERSID outside a torch stream
    b"\x80\x04NQ.",  # BINPERSID outside a torch stream
    b"\x80\x04\xff.",  # not an opcode
    b"\x80\x04N",  # no STOP
    b"\x80\x04a.",  # stack underflow
    b"\x80\x04N.junk",  # bytes after STOP
    b"\x80\x04L" + b"9" * 10000 + b"L\n.",  # overlong text number
])
def test_forbidden_or_broken_opcodes(data: bytes, tmp_path: Path, sentinel: Path) -> None:
    _read_fails(tmp_path, data, sentinel)


class _SharedState:
    """An array whose pickled state is one shared object: the pickler memoizes it."""

    def __init__(self, state: tuple) -> None:
        self.state = state

    def __reduce__(self) -> tuple:
        return (np.ndarray.__reduce__(np.zeros(1))[0], (np.ndarray, (0,), b"b"), self.state)


def test_reused_array_state_is_refused(tmp_path: Path, sentinel: Path) -> None:
    """50 arrays built from one memoized 1 MB state would copy 50 MB out of a 1 MB file."""
    count = 250_000
    state = (1, (count,), np.dtype("f4"), False, bytes(4 * count))
    data = pickle.dumps([_SharedState(state) for _ in range(50)], protocol=4)
    assert len(data) < 2 * 4 * count
    _read_fails(tmp_path, _container(data), sentinel, "re-uses")
    single = pickle.dumps([_SharedState(state)], protocol=4)  # used once: fine
    assert safepickle.loads(single, "x", "ok")[0].shape == (count,)


def test_reused_torch_storage_is_refused(tmp_path: Path, sentinel: Path) -> None:
    numel = 200_000
    stream = _torch_stream(_storage_object(numel=numel), numel=numel)
    size, stride = b"(J" + struct.pack("<i", numel) + b"t", b"(K\x01t"
    first = (_str4("torch._utils") + _str4("_rebuild_tensor_v2") + b"\x93\x94("
             + _str4("torch.storage") + _str4("_load_from_bytes") + b"\x93B"
             + struct.pack("<I", len(stream)) + stream + b"\x85R\x94K\x00" + size + stride
             + b"\x89}tR")
    again = b"h\x00(h\x01K\x00" + size + stride + b"\x89}tR"
    misc = b"\x80\x04}" + _str4("t") + b"](" + first + again * 10 + b"es."
    _read_fails(tmp_path, _container(_good_motion(), None, misc), sentinel, "re-uses")
    once = b"\x80\x04}" + _str4("t") + b"](" + first + b"es."
    path = tmp_path / "once.pkl"
    path.write_bytes(_container(_good_motion(), None, once))
    assert mk.read(path).meta["parc"]["misc"]["t"][0].shape == (numel,)


# ------------------------------------------------- security review (findings 1-8, 12, 13, 15)
#
# Files that crashed, hung or exhausted memory before the fixes are read in one child
# process under a timeout and an address-space cap; the child prints one outcome per file.

_CHILD = """
import sys, warnings
import motionkit as mk
from motionkit.errors import FormatError
from motionkit.formats.parc import ms
warnings.simplefilter("ignore")
for path in sys.argv[1:]:
    try:
        motion = mk.read(path, format="parc")
        misc = motion.meta["parc"].get("misc") or {}
        ms.describe_misc(misc)
        ms.encode(motion)
        print(path, "read", flush=True)
    except FormatError as exc:
        print(path, "FormatError", str(exc).replace("\\n", " "), flush=True)
"""
_CHILD_MEMORY = 2_000_000_000


def _glob(module: str, name: str) -> bytes:
    return _str4(module) + _str4(name) + b"\x93"


def _ints(values: tuple[int, ...]) -> bytes:
    return b"(" + b"".join(b"J" + struct.pack("<i", v) for v in values) + b"t"


def _ndarray_call(args: bytes) -> bytes:
    """numpy.ndarray(*args) through REDUCE."""
    return _glob("numpy", "ndarray") + b"(" + args + b"tR"


def _dag(depth: int) -> bytes:
    """x_{i+1} = [x_i, x_i]: 2**depth paths through 2 * depth list objects."""
    out = b"]q\x00"
    for i in range(depth):
        out += b"0(h" + bytes([i]) + b"h" + bytes([i]) + b"lq" + bytes([i + 1])
    return out


def _deep_tuple(depth: int) -> bytes:
    return b")" + b"\x85" * depth


def _motion_with(field: str, value_ops: bytes) -> bytes:
    """A motion blob whose ``field`` is built by ``value_ops`` (the others are fine)."""
    rot = np.zeros((2, 4), np.float32)
    rot[:, 3] = 1
    fields = {"root_pos": np.zeros((2, 3), np.float32), "root_rot": rot,
              "joint_rot": rot[:, None]}
    body = b"".join(_str4(k) + pickle.dumps(v, protocol=4)[2:-1] for k, v in fields.items()
                    if k != field)
    body += _str4("fps") + b"K\x1e" + (_str4("loop_mode") + _str4("CLAMP")
                                       if field != "loop_mode" else b"")
    return b"\x80\x04}(" + body + _str4(field) + value_ops + b"u."


def _legacy(extra: bytes = b"", frames: bytes | None = None) -> bytes:
    array = pickle.dumps(np.zeros((2, 34), np.float32), protocol=4)[2:-1]
    return (b"\x80\x04}(" + _str4("frames") + (array if frames is None else frames)
            + _str4("fps") + b"K\x1e" + _str4("loop_mode") + _str4("CLAMP") + extra + b"u.")


def _legacy_terrain(hf_ops: bytes) -> bytes:
    sub = (_glob("util.terrain_util", "SubTerrain") + b")\x81}" + _str4("hf") + hf_ops
           + b"sb")
    return _legacy(_str4("terrain") + sub)


def _shared_storage_tensors(numel: int, tensors: int) -> bytes:
    """misc = {"t": a torch stream of ``tensors`` tensors, each over its whole storage}."""
    obj = (b"\x80\x02ctorch._utils\n_rebuild_tensor_v2\nq\x00(X\x07\x00\x00\x00storage"
           b"ctorch\nByteStorage\nX\x01\x00\x00\x000X\x03\x00\x00\x00cpuJ"
           + struct.pack("<i", numel) + b"NtQq\x010](")
    obj += (b"h\x00(h\x01K\x00" + _ints((numel,)) + _ints((1,)) + b"\x89}tR") * tensors
    stream = _torch_stream(obj + b"e.", numel=numel, data=b"\x01" * numel)
    return (b"\x80\x04}" + _str4("t") + _glob("torch.storage", "_load_from_bytes") + b"B"
            + struct.pack("<I", len(stream)) + stream + b"\x85Rs.")


_FORGED = _ndarray_call(_ints((1,)) + _str4("O") + b"C\x08" + b"A" * 8)
_DANGEROUS: dict[str, tuple[bytes, str]] = {
    # 1: object pointers forged through numpy.ndarray(shape, "O", buffer)
    "forged_pointer": (_container(_good_motion(), None, b"\x80\x04}" + _str4("k") + _FORGED
                                  + b"s."), "numpy.ndarray with a buffer"),
    "forged_pointer_legacy": (_legacy(_str4("k") + _FORGED), "numpy.ndarray with a buffer"),
    "forged_structured": (_container(b"\x80\x04" + _ndarray_call(
        _ints((1,)) + _str4("O,i4") + b"C\x0c" + b"A" * 12) + b"."),
        "numpy.ndarray with a buffer"),
    "object_dtype_no_buffer": (_container(b"\x80\x04" + _ndarray_call(
        _ints((2,)) + _str4("O")) + b"."), "refused numpy dtype"),
    "subarray_dtype": (_container(b"\x80\x04" + _glob("numpy", "dtype") + _str4("(1,)O")
                                  + b"\x85R."), "refused numpy dtype"),
    # 2: a deeply nested tuple as a dict key (CPython's tuple hash recursed and crashed)
    "deep_tuple_key": (b"\x80\x04}" + _deep_tuple(200_000) + b"K\x01s.", "nests deeper"),
    "deep_tuple_key_misc": (_container(_good_motion(), None, b"\x80\x04}" + _deep_tuple(200_000)
                                       + b"K\x01s."), "nests deeper"),
    # 3: shared sub-objects walked once per path (2**40 paths)
    "dag_legacy_frames": (b"\x80\x04}" + _str4("frames") + _dag(40) + b"s.",
                          "frames must be a numeric array"),
    # 4: repr() of an untrusted value in a message
    "dag_loop_mode": (_container(_motion_with("loop_mode", _dag(30))), "loop_mode must be"),
    "deep_loop_mode": (_container(_motion_with("loop_mode", _deep_tuple(100_000))),
                       "nests deeper"),
    # 5: huge arrays from tiny files
    "ndarray_huge_shape": (_container(_motion_with("root_pos", _ndarray_call(
        _ints((30_000_000, 3)) + _str4("<f4")))), "more memory than the file"),
    "ndarray_zero_strides": (_container(_motion_with("root_pos", _ndarray_call(
        _ints((1_000_000_000, 3)) + _str4("<f4") + b"C\x04\x00\x00\x00\x00K\x00"
        + _ints((0, 0))))), "numpy.ndarray with a buffer"),
    # 6: many tensors over one memoized storage
    "torch_shared_storage": (_container(_good_motion(), None,
                                        _shared_storage_tensors(1 << 18, 200)),
                             "more memory than the file"),
    # 7: a legacy SubTerrain whose state is nested or shared without bound
    "legacy_terrain_deep": (_legacy_terrain(_deep_tuple(100_000)), "nests deeper"),
    "legacy_terrain_dag": (_legacy_terrain(_dag(40)), "terrain.hf must be a numeric array"),
}


@pytest.fixture(scope="module")
def child_outcomes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Each dangerous file read in its own guarded child (all at once): name -> outcome."""
    folder = tmp_path_factory.mktemp("dangerous")
    files = {name: data for name, (data, _) in _DANGEROUS.items()}
    # 3: valid data whose 2**40 paths must not be walked one by one
    files["dag_misc"] = _container(_good_motion(), None, b"\x80\x04}" + _str4("k") + _dag(40)
                                   + b"s.")

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (_CHILD_MEMORY, _CHILD_MEMORY))

    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    children = {}
    for name, data in files.items():
        path = folder / f"{name}.pkl"
        path.write_bytes(data)
        children[name] = subprocess.Popen(
            [sys.executable, "-c", _CHILD, str(path)], stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True, preexec_fn=limit, env=env)
    outcomes = {}
    for name, child in children.items():
        try:
            out, err = child.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            child.kill()
            child.communicate()
            outcomes[name] = "timed out"
            continue
        if child.returncode != 0:
            outcomes[name] = f"died ({child.returncode}): {err[-2000:]}"
        else:
            outcomes[name] = out.strip().split(" ", 1)[1]
    return outcomes


@pytest.mark.parametrize("name", sorted(_DANGEROUS))
def test_dangerous_file_is_a_format_error(name: str, child_outcomes: dict[str, str]) -> None:
    outcome = child_outcomes[name]
    assert outcome.startswith("FormatError"), outcome
    assert _DANGEROUS[name][1] in outcome


def test_shared_misc_data_reads_in_linear_time(child_outcomes: dict[str, str]) -> None:
    assert child_outcomes["dag_misc"] == "read"


def test_shared_misc_data_stays_shared(tmp_path: Path) -> None:
    path = tmp_path / "dag.pkl"
    path.write_bytes(_container(_good_motion(), None, b"\x80\x04}" + _str4("k") + _dag(12)
                                + b"s."))
    value = mk.read(path).meta["parc"]["misc"]["k"]
    assert value[0] is value[1] and value[0][0] is value[0][1]


def test_rebuilt_arrays_check_their_state(tmp_path: Path, sentinel: Path) -> None:
    """BUILD on a _reconstruct array takes only a checked numeric dtype and exact data."""
    head = (_glob("numpy.core.multiarray", "_reconstruct") + b"(" + _glob("numpy", "ndarray")
            + _ints((0,)) + b"C\x01btR")
    as_text = head + b"(K\x01" + _ints((1,)) + _str4("O") + b"\x89C\x08" + b"A" * 8 + b"tb."
    _read_fails(tmp_path, _container(b"\x80\x04" + as_text), sentinel, "checked numeric dtype")
    dtype = _glob("numpy", "dtype") + _str4("f8") + b"\x89\x88\x87R"
    fields = (b"(K\x03" + _str4("|") + b"N" + b"(" + _str4("a") + b"t" + b"}" + b"J\xff\xff\xff"
              b"\xffJ\xff\xff\xff\xffK\x3ftb")  # names, fields and object flags
    _read_fails(tmp_path, _container(b"\x80\x04" + dtype + fields + b"."), sentinel,
                "dtype state")
    short = head + b"(K\x01" + _ints((4,)) + dtype + b"\x89C\x08" + b"A" * 8 + b"tb."
    _read_fails(tmp_path, _container(b"\x80\x04" + short), sentinel, "does not match")


@pytest.mark.parametrize(("field", "ops", "match"), [
    ("fps", b"\x8a\xff" + b"\x00" * 254 + b"\x01", "fps is out of range"),  # 2**2032
    ("fps", b"G" + struct.pack(">d", 5e-324), "fps must be between"),
    ("fps", b"G" + struct.pack(">d", float("nan")), "fps must be finite"),
])
def test_bad_numbers_in_motion_data(field: str, ops: bytes, match: str, tmp_path: Path,
                                    sentinel: Path) -> None:
    """8 and 15: numbers that do not fit a float, or rates that make no sense."""
    _read_fails(tmp_path, _container(_motion_with(field, ops)), sentinel, match)


def test_bad_values_elsewhere(tmp_path: Path, sentinel: Path) -> None:
    """8: a huge int as dx or as a key, an empty legacy dxdy: FormatErrors, not tracebacks."""
    terrain = {"hf": np.zeros((2, 2), np.float32), "min_point": np.zeros(2, np.float32),
               "dx": 2**2000}
    _read_fails(tmp_path, _container(None, pickle.dumps(terrain, protocol=4)), sentinel,
                "dx is out of range")
    path = tmp_path / "key.pkl"
    path.write_bytes(_container(_good_motion(), None,
                                pickle.dumps({10**5000: 1, "k": 2}, protocol=4)))
    with pytest.warns(mk.MotionkitWarning, match="key of type int"):
        assert mk.read(path).meta["parc"]["misc"] == {"k": 2}
    extra = _motion_with("root_pos", pickle.dumps(np.zeros((2, 3), np.float32))[2:-1])
    extra = extra[:-2] + b"\x8a\x02\x01\x01K\x01u."  # a non-text extra key is only named
    path = tmp_path / "extra.pkl"
    path.write_bytes(_container(extra))
    with pytest.warns(mk.MotionkitWarning, match="<int>"):
        mk.read(path)
    empty = (_glob("util.terrain_util", "SubTerrain") + b")\x81}(" + _str4("hf")
             + pickle.dumps(np.zeros((2, 2), np.float32), protocol=4)[2:-1]
             + _str4("min_point") + pickle.dumps(np.zeros(2, np.float32), protocol=4)[2:-1]
             + _str4("dxdy") + pickle.dumps(np.zeros(0, np.float32), protocol=4)[2:-1] + b"ub")
    _read_fails(tmp_path, _legacy(_str4("terrain") + empty), sentinel, "too short")


def test_build_cannot_change_the_library(tmp_path: Path, sentinel: Path) -> None:
    """12: BUILD on an allow-listed callable or class is refused; later files are unaffected."""
    innocent = tmp_path / "innocent.pkl"
    innocent.write_bytes(_container(_good_motion(), None, b"\x80\x04}" + _str4("k")
                                    + _glob("builtins", "set") + b")Rs."))
    assert mk.read(innocent).meta["parc"]["misc"] == {"k": []}
    attacks = [
        _glob("builtins", "set") + b"N}" + _str4("__defaults__") + b"]\x85\x85s\x86b",
        _glob("numpy", "ndarray") + b"N}" + _str4("name") + _str4("x") + b"s\x86b",
        _glob("util.terrain_util", "SubTerrain") + b"N}" + _str4("parc_class") + _str4("x")
        + b"s\x86b",
        _glob("mymodule", "Thing") + b"N}" + _str4("global_name") + _str4("x") + b"s\x86b",
    ]
    for attack in attacks:
        path = tmp_path / "evil.pkl"
        path.write_bytes(_container(_good_motion(), None, b"\x80\x04}" + _str4("k") + attack
                                    + b"s."))
        with contextlib.suppress(FormatError), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            mk.read(path)
        assert not sentinel.exists()
    assert mk.read(innocent).meta["parc"]["misc"] == {"k": []}
    assert safepickle.SubTerrain.parc_class == "SubTerrain"
    assert safepickle._unknown_class("mymodule", "Thing").global_name == "mymodule.Thing"
    assert safepickle.MISC_GLOBALS[("builtins", "set")].name == "set"
    with pytest.raises(FormatError, match="refused BUILD"):
        safepickle.loads(b"\x80\x04" + attacks[0] + b".", "x", "misc",
                         allowed=safepickle.MISC_GLOBALS)


def test_unknown_classes_are_cached_and_capped(tmp_path: Path, sentinel: Path) -> None:
    """13: one placeholder class per unknown name, and a cap on distinct names."""
    same = b"\x80\x04]" + b"(" + b"cmymod\nThing\n)R" * 1000 + b"e."
    first = safepickle.loads(same, "x", "misc", allowed=safepickle.MISC_GLOBALS, lenient=True)
    again = safepickle.loads(same, "x", "misc", allowed=safepickle.MISC_GLOBALS, lenient=True)
    assert len({type(item) for item in first + again}) == 1
    names = b"".join(f"cmymod\nThing{i}\n".encode() for i in range(150))
    flood = _container(_good_motion(), None, b"\x80\x04}" + _str4("u") + b"](" + names + b"es.")
    _read_fails(tmp_path, flood, sentinel, "unknown classes")


def test_outer_container_names_no_globals(tmp_path: Path, sentinel: Path) -> None:
    """15: an MS container that calls anything (here a discarded OrderedDict()) is refused."""
    plain = _container(_good_motion())
    evil = b"\x80\x04" + _glob("collections", "OrderedDict") + b")R0" + plain[2:]
    _read_fails(tmp_path, evil, sentinel, "names globals")


def test_ndarray_calls_give_zeros_within_the_budget(tmp_path: Path, sentinel: Path) -> None:
    """5: numpy.ndarray(shape, dtype) makes zeros (never uninitialised memory), and only as
    many bytes as the file's size allows."""
    small = b"\x80\x04}" + _str4("z") + _ndarray_call(_ints((4,)) + _str4("<f4")) + b"s."
    path = tmp_path / "small.pkl"
    path.write_bytes(_container(_good_motion(), None, small))
    assert mk.read(path).meta["parc"]["misc"]["z"].tolist() == [0.0] * 4
    big = (b"\x80\x04}" + _str4("z") + _ndarray_call(_ints((4 << 20,)) + _str4("<f4"))
           + b"s.")
    _read_fails(tmp_path, _container(_good_motion(), None, big), sentinel, "more memory")

"""Malicious pickles: every one is a FormatError, and nothing in them ever runs.

Each payload tries to create a sentinel file. A control test shows the payloads are
live (the standard unpickler does create it), so "sentinel absent" proves the reader
ran nothing.
"""

from __future__ import annotations

import contextlib
import pickle
import struct
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

import motionkit as mk
from motionkit.errors import FormatError
from motionkit.formats.parc import safepickle


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
    depth = safepickle.MAX_STACK + 10
    data = b"\x80\x04" + b"]" * depth + b"a" * (depth - 1) + b"."
    _read_fails(tmp_path, data, sentinel, "values at once")


def test_deep_nesting_through_marks(tmp_path: Path, sentinel: Path) -> None:
    depth = safepickle.MAX_MARKS + 10
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

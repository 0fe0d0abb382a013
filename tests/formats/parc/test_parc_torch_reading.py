"""Torch tensors in PARC misc data (real PARC output pickles them as legacy ``torch.save``
streams): read with two small unpicklers per tensor instead of six, with the same results.

Each stream is five pickles; all five are still scanned. The three header pickles are
decoded once per distinct bytes, and an object pickle that is one storage id (what pickling
a tensor stores) is unpickled once instead of twice.
"""

from __future__ import annotations

import hashlib
import pickle
import struct
import warnings

import numpy as np
import pytest

import motionkit as mk
from conftest import corpus_file
from motionkit.formats.parc import ms_read
from motionkit.formats.shared.pickles import safepickle

TORCH_FILE = ("parc", "ms", "dec2024_teaser_717_1_modified_opt.pkl")
_MAGIC_PICKLE = pickle.dumps(0x1950A86A20F9469CFC6C, protocol=2)

#: Digests of every track, attribute, meta entry (misc tensors included) and terrain field
#: of the corpus PARC files, as the reader gave them before this change.
DIGESTS = {
    "TEASER_TERRAIN.pkl": "84e851beb4dbac214c383431f17d4df4577924b9a3772c951a046015d18037fc",
    "dec2024_teaser_717_1_modified_opt.pkl":
        "c68751bee00e1daa8f217a14453b89efd7a88bf2bd1f2b07a58379dba660edc9",
    "sfu.pkl": "b1e70fd45d7dba96e2eec81d842e014a6a85e8ac52b4d879800be33e95f22b17",
}


def _feed(digest: hashlib._Hash, value: object) -> None:
    if isinstance(value, np.ndarray):
        digest.update(f"A{value.dtype.str}{value.shape}{value.flags.c_contiguous}".encode())
        digest.update(np.ascontiguousarray(value).tobytes())
    elif isinstance(value, dict):
        digest.update(b"D%d" % len(value))
        for key, item in value.items():
            _feed(digest, key)
            _feed(digest, item)
    elif isinstance(value, (list, tuple)):
        digest.update(f"L{type(value).__name__}{len(value)}".encode())
        for item in value:
            _feed(digest, item)
    else:
        digest.update(f"{type(value).__name__}:{value!r}".encode())


@pytest.mark.parametrize("name", sorted(DIGESTS))
def test_corpus_files_read_bit_identical_to_before(name: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mk.MotionkitWarning)
        motion = ms_read.read(corpus_file("parc", "ms", name))
    digest = hashlib.sha256()
    for track_name, track in motion.tracks.items():
        _feed(digest, track_name)
        _feed(digest, track.data)
        _feed(digest, dict(track.attrs))
    _feed(digest, dict(motion.meta))
    if motion.terrain is not None:
        _feed(digest, vars(motion.terrain))
    assert digest.hexdigest() == DIGESTS[name]


def test_a_tensor_costs_two_unpicklers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Deterministic: the torch-laden corpus file (142 tensors) makes 3 + 3 + 2 × 142
    unpicklers (the three blobs, the three header pickles once, then per tensor its key
    list and one pass over its object pickle); it made 3 + 6 × 142 before."""
    path = corpus_file(*TORCH_FILE)
    tensors = path.read_bytes().count(_MAGIC_PICKLE)
    assert tensors == 142
    made = 0
    init = safepickle.SafeUnpickler.__init__

    def counted(self: safepickle.SafeUnpickler, *args: object, **kwargs: object) -> None:
        nonlocal made
        made += 1
        init(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(safepickle.SafeUnpickler, "__init__", counted)
    monkeypatch.setattr(safepickle, "_HEADERS", {})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mk.MotionkitWarning)
        ms_read.read(path)
    assert made == 3 + 3 + 2 * tensors


def _stream(object_pickle: bytes, numel: int = 4, keys: tuple[str, ...] = ("0",),
            sys_info: object = None) -> bytes:
    info = sys_info if sys_info is not None else {
        "protocol_version": 1001, "little_endian": True,
        "type_sizes": {"short": 2, "int": 4, "long": 4}}
    head = _MAGIC_PICKLE + pickle.dumps(1001, protocol=2) + pickle.dumps(info, protocol=2)
    storages = (struct.pack("<q", numel) + np.arange(numel, dtype=np.int64).tobytes()) * len(keys)
    return head + object_pickle + pickle.dumps(list(keys), protocol=2) + storages


def _storage_id(view: bytes = b"N", numel: int = 4) -> bytes:
    return (b"\x80\x02(X\x07\x00\x00\x00storagectorch\nLongStorage\nX\x01\x00\x00\x000"
            b"X\x03\x00\x00\x00cpuJ" + struct.pack("<i", numel) + view + b"tQ.")


def _decode(stream: bytes) -> object:
    token = safepickle._BUDGET.set(safepickle._Budget(1 << 20))
    try:
        return safepickle.load_torch_bytes(stream)
    finally:
        safepickle._BUDGET.reset(token)


def test_a_lone_storage_is_what_the_second_pass_gives() -> None:
    whole = _decode(_stream(_storage_id()))
    assert isinstance(whole, safepickle.Storage)
    np.testing.assert_array_equal(whole.data, np.arange(4))
    view = _decode(_stream(_storage_id(b"(NK\x01K\x02t")))  # (root, offset 1, size 2)
    assert isinstance(view, safepickle.Storage)
    np.testing.assert_array_equal(view.data, [1, 2])
    with pytest.raises(safepickle.PickleProblem, match="view is malformed"):
        _decode(_stream(_storage_id(b"(NK\x03K\x02t")))
    with pytest.raises(safepickle.PickleProblem, match="has no data"):
        _decode(_stream(_storage_id(), keys=()))


def test_a_storage_reference_cannot_be_changed() -> None:
    ref = safepickle._StorageRef("0", None)
    with pytest.raises(safepickle.PickleProblem):
        ref.__setstate__({"key": "1"})
    with pytest.raises(safepickle.PickleProblem):
        ref.key = "1"  # type: ignore[misc]


@pytest.mark.parametrize(("size", "stride", "offset"), [
    ((), (), 3), ((5,), (1,), 2), ((2, 3), (3, 1), 1), ((2, 3), (1, 2), 0),
    ((3, 1, 2), (2, 2, 1), 0), ((3, 1, 2), (2, 7, 1), 0), ((2, 2), (0, 1), 4)])
def test_contiguous_tensors_are_copied_as_the_strided_view_was(
        size: tuple[int, ...], stride: tuple[int, ...], offset: int) -> None:
    storage = safepickle.Storage(np.arange(12, dtype=np.float32) * 1.5)
    token = safepickle._BUDGET.set(safepickle._Budget(1 << 20))
    try:
        ours = safepickle.rebuild_tensor(storage, offset, size, stride)
    finally:
        safepickle._BUDGET.reset(token)
    view = np.lib.stride_tricks.as_strided(storage.data[offset:], shape=size,
                                           strides=tuple(s * 4 for s in stride))
    expected = np.array(view, order="C")
    assert ours.dtype == expected.dtype and ours.shape == expected.shape
    assert ours.flags.c_contiguous and ours.flags.writeable and ours.flags.owndata
    assert ours.tobytes() == expected.tobytes()


def test_the_header_cache_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(safepickle, "_HEADERS", {})
    for index in range(200):
        _decode(_stream(_storage_id(), sys_info={"little_endian": True, "n": index}))
    assert 0 < len(safepickle._HEADERS) <= safepickle._HEADER_CACHE_SIZE
    _decode(_stream(_storage_id(), sys_info={"little_endian": True, "pad": "x" * 2000}))
    assert all(len(piece) <= safepickle._HEADER_CACHE_BYTES for piece in safepickle._HEADERS)


def test_a_big_endian_header_read_from_the_cache_still_swaps(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(safepickle, "_HEADERS", {})
    stream = _stream(_storage_id(), sys_info={"little_endian": False})
    first, second = _decode(stream), _decode(stream)
    assert isinstance(first, safepickle.Storage) and isinstance(second, safepickle.Storage)
    np.testing.assert_array_equal(first.data, second.data)
    assert first.data[1] == np.arange(4, dtype=np.int64).byteswap()[1]


@pytest.mark.parametrize("spec", ["<f4", ">f8", "|b1", "<i8", ">i2", "|u1", "<c16", "<f2",
                                  "|i1", ">c8", "=f4"])
def test_each_checked_dtype_is_an_own_copy_as_deepcopy_made_it(spec: str) -> None:
    """``DType`` gives every pickled dtype an object of its own (a byte-exact rewrite shares
    dtypes exactly where the file did); the copy is deepcopy's, without its cost."""
    import copy

    original = np.dtype(spec)
    ours, theirs = safepickle._own_copy(original), copy.deepcopy(original)
    assert ours is not original
    assert ours == theirs and ours.byteorder == theirs.byteorder and ours.str == theirs.str
    assert ours.__reduce__() == theirs.__reduce__()
    assert pickle.dumps(ours, protocol=2) == pickle.dumps(theirs, protocol=2)

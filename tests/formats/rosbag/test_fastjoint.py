"""Our JointState decoder against rosbags' own (the peer) on any names, frame ids and
arrays, in ROS1 and CDR bytes; what it cannot take apart goes to rosbags."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import require_peer
from motionkit.formats.rosbag import fastjoint

TYPE = "sensor_msgs/msg/JointState"


def _store(ros1: bool) -> Any:
    require_peer("rosbags")
    from rosbags.typesys import Stores, get_typestore

    return get_typestore(Stores.ROS1_NOETIC if ros1 else Stores.ROS2_HUMBLE)


def _message(store: Any, ros1: bool, names: list[str], frame: str, sec: int, nanosec: int,
             sizes: tuple[bool, bool, bool], values: list[float]) -> Any:
    types = store.types
    stamp = types["builtin_interfaces/msg/Time"](sec=sec, nanosec=nanosec)
    header = (types["std_msgs/msg/Header"](seq=sec % 997, stamp=stamp, frame_id=frame) if ros1 else
              types["std_msgs/msg/Header"](stamp=stamp, frame_id=frame))
    arrays = [np.array(values[:len(names)] if given else [], dtype=np.float64)
              for given in sizes]
    return types[TYPE](header=header, name=names, position=arrays[0], velocity=arrays[1],
                       effort=arrays[2])


def _serialize(store: Any, ros1: bool, message: Any) -> bytes:
    return bytes(store.serialize_ros1(message, TYPE) if ros1
                 else store.serialize_cdr(message, TYPE))


TEXT = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=9)


@settings(max_examples=150, deadline=None)
@given(ros1=st.booleans(), names=st.lists(TEXT, max_size=6), frame=TEXT,
       sec=st.integers(0, 2**31 - 1), nanosec=st.integers(0, 10**9 - 1),
       sizes=st.tuples(st.booleans(), st.booleans(), st.booleans()),
       values=st.lists(st.floats(allow_nan=True), min_size=6, max_size=6))
def test_decoder_equals_rosbags(ros1: bool, names: list[str], frame: str, sec: int,
                                nanosec: int, sizes: tuple[bool, bool, bool],
                                values: list[float]) -> None:
    store = _store(ros1)
    message = _message(store, ros1, names, frame, sec, nanosec, sizes, values)
    raw = _serialize(store, ros1, message)
    theirs = store.deserialize_ros1(raw, TYPE) if ros1 else store.deserialize_cdr(raw, TYPE)
    decoder = fastjoint.Decoder(ros1)
    for _ in range(2):  # the second time through the cached name bytes
        ours = decoder(raw)
        assert ours is not None
        assert fastjoint._same(ours, theirs)
        assert list(ours.name) == names
        assert (ours.header.stamp.sec, ours.header.stamp.nanosec) == (sec, nanosec)
    truncated = decoder(raw[:-1]) if len(raw) > 4 else None
    assert truncated is None or not fastjoint._same(truncated, theirs)
    assert decoder(raw + b"\x01") is None  # bytes left over: not ours to guess


@pytest.mark.parametrize("ros1", [True, False])
def test_a_first_message_that_differs_hands_the_topic_to_rosbags(ros1: bool) -> None:
    store = _store(ros1)
    raw = _serialize(store, ros1, _message(store, ros1, ["a"], "", 1, 2, (True,) * 3,
                                           [1.0] * 6))
    marker = object()
    decoded = list(fastjoint.decode_all([(1, raw), (2, raw)], ros1, lambda _: marker))
    assert [m for _, m in decoded] == [marker, marker]
    calls: list[bytes] = []

    def deserialize(data: bytes) -> Any:
        calls.append(data)
        if data == b"\x00":
            return marker  # what rosbags would make of it is its business
        return store.deserialize_ros1(data, TYPE) if ros1 else store.deserialize_cdr(data, TYPE)

    decoded = list(fastjoint.decode_all([(1, raw), (2, raw), (3, b"\x00")], ros1, deserialize))
    assert calls == [raw, b"\x00"]  # the first to check, the broken one to rosbags
    assert decoded[1][0] == -1 and isinstance(decoded[1][1], fastjoint.Block)  # same layout
    assert decoded[2][1] is marker


def _flatten(decoded: list[tuple[int, Any]]) -> list[tuple[int, int, list[str], list[list[float]]]]:
    """(log ns, stamp ns, names, arrays) per message, blocks opened up."""
    out = []
    for log_ns, item in decoded:
        if isinstance(item, fastjoint.Block):
            for row in range(item.log_ns.size):
                out.append((int(item.log_ns[row]), int(item.stamps_ns[row]), list(item.name),
                            [a[row].tolist() for a in item.arrays]))
        else:
            stamp = item.header.stamp
            out.append((log_ns, int(stamp.sec) * 10**9 + int(stamp.nanosec),
                        [str(n) for n in item.name],
                        [np.asarray(getattr(item, f)).tolist() for f in fastjoint.FIELDS]))
    return out


MESSAGE = st.tuples(st.sampled_from([["a", "b"], ["bb", "a", "c"], []]), st.sampled_from(["", "odom"]),
                    st.integers(0, 2**31 - 1), st.integers(0, 10**9 - 1),
                    st.tuples(st.booleans(), st.booleans(), st.booleans()),
                    st.lists(st.floats(allow_nan=False), min_size=6, max_size=6))


@settings(max_examples=60, deadline=None)
@given(ros1=st.booleans(), messages=st.lists(MESSAGE, min_size=1, max_size=12))
def test_runs_of_one_layout_read_at_once_equal_rosbags(ros1: bool,
                                                        messages: list[Any]) -> None:
    store = _store(ros1)
    raws = [(k, _serialize(store, ros1, _message(store, ros1, *fields)))
            for k, fields in enumerate(messages)]

    def deserialize(data: bytes) -> Any:
        return store.deserialize_ros1(data, TYPE) if ros1 else store.deserialize_cdr(data, TYPE)

    ours = _flatten(list(fastjoint.decode_all(raws, ros1, deserialize)))
    theirs = _flatten([(k, deserialize(raw)) for k, raw in raws])
    assert ours == theirs


def test_long_runs_come_in_bounded_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    store = _store(False)
    raws = [(k, _serialize(store, False, _message(store, False, ["a"], "", k, 0, (True,) * 3,
                                                  [float(k)] * 6))) for k in range(10)]
    monkeypatch.setattr(fastjoint, "BLOCK", 4)
    decoded = list(fastjoint.decode_all(raws, False, lambda raw: store.deserialize_cdr(raw, TYPE)))
    assert [item.log_ns.size for _, item in decoded[1:]] == [4, 4, 1]
    assert [row[1] for row in _flatten(decoded)] == [k * 10**9 for k in range(10)]

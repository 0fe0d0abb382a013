"""Numeric messages read in blocks equal rosbags' own decoding (the peer), message for
message, for array and scalar types, ROS1 and CDR, runs of changing sizes and layouts."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import require_peer
from motionkit.formats.rosbag import fastarrays


def _store(ros1: bool) -> Any:
    require_peer("rosbags")
    from rosbags.typesys import Stores, get_typestore

    return get_typestore(Stores.ROS1_NOETIC if ros1 else Stores.ROS2_HUMBLE)


def _message(store: Any, msgtype: str, values: list[float], label: str) -> Any:
    types = store.types
    kind = msgtype.rsplit("/", 1)[-1].removesuffix("MultiArray")
    dtype = np.dtype(fastarrays.DTYPES[kind])
    data = np.asarray(values).astype(dtype)
    if not msgtype.endswith("MultiArray"):
        return types[msgtype](data=data[0].item() if values else 0)
    dim = types["std_msgs/msg/MultiArrayDimension"](label=label, size=len(values),
                                                     stride=len(values))
    layout = types["std_msgs/msg/MultiArrayLayout"](dim=[dim] if label else [], data_offset=0)
    return types[msgtype](layout=layout, data=data)


def _values(item: Any) -> list[list[float]]:
    if isinstance(item, fastarrays.Block):
        return item.data.tolist()
    return [np.asarray(item.data, dtype=np.float64).reshape(-1).tolist()]


TYPES = ["std_msgs/msg/Float64MultiArray", "std_msgs/msg/Int32MultiArray",
         "std_msgs/msg/UInt8MultiArray", "std_msgs/msg/Float32MultiArray",
         "std_msgs/msg/Float64", "std_msgs/msg/Int16"]


@settings(max_examples=80, deadline=None)
@given(ros1=st.booleans(), msgtype=st.sampled_from(TYPES),
       messages=st.lists(st.tuples(st.integers(1, 4), st.sampled_from(["", "joints", "j"]),
                                   st.lists(st.integers(0, 100), min_size=4, max_size=4)),
                         min_size=1, max_size=15))
def test_blocks_equal_rosbags(ros1: bool, msgtype: str, messages: list[Any]) -> None:
    store = _store(ros1)
    scalar = not msgtype.endswith("MultiArray")
    raws = []
    for k, (size, label, values) in enumerate(messages):
        message = _message(store, msgtype, [float(v) for v in values[:1 if scalar else size]],
                           label)
        raw = store.serialize_ros1(message, msgtype) if ros1 else \
            store.serialize_cdr(message, msgtype)
        raws.append((k, bytes(raw)))

    def deserialize(data: bytes) -> Any:
        return store.deserialize_ros1(data, msgtype) if ros1 else \
            store.deserialize_cdr(data, msgtype)

    ours: list[tuple[int, list[float]]] = []
    for log_ns, item in fastarrays.decode_all(raws, msgtype, deserialize):
        times = item.log_ns.tolist() if isinstance(item, fastarrays.Block) else [log_ns]
        ours.extend(zip(times, _values(item), strict=True))
    assert ours == [(k, _values(deserialize(raw))[0]) for k, raw in raws]


def test_runs_are_blocks_and_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    store = _store(False)
    msgtype = "std_msgs/msg/Float64MultiArray"
    raws = [(k, bytes(store.serialize_cdr(_message(store, msgtype, [k, -k], "j"), msgtype)))
            for k in range(7)]
    calls: list[bytes] = []

    def deserialize(data: bytes) -> Any:
        calls.append(data)
        return store.deserialize_cdr(data, msgtype)

    monkeypatch.setattr(fastarrays, "BLOCK", 4)
    decoded = list(fastarrays.decode_all(raws, msgtype, deserialize))
    assert len(calls) == 1  # rosbags decodes the first; the rest are read in blocks
    assert [item.data.shape[0] for _, item in decoded[1:]] == [4, 2]
    assert decoded[2][1].data.tolist() == [[5, -5], [6, -6]]

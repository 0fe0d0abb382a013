"""Broken bags: whatever rosbags or a malformed message raises becomes a FormatError that
names the bag (and the topic and message), on one line."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from motionkit.errors import FormatError
from motionkit.formats.rosbag import bag

POSE = "geometry_msgs/msg/PoseStamped"


def _pose_message(sec: int = 1) -> SimpleNamespace:
    stamp = SimpleNamespace(sec=sec, nanosec=0)
    point = SimpleNamespace(x=0.0, y=0.0, z=0.0)
    quat = SimpleNamespace(x=0.0, y=0.0, z=0.0, w=1.0)
    return SimpleNamespace(header=SimpleNamespace(stamp=stamp, frame_id="map"),
                           pose=SimpleNamespace(position=point, orientation=quat))


class FakeReader:
    """Stands in for rosbags' AnyReader: yields given messages or raises given errors."""

    def __init__(self, messages: list[Any], fail_at: int | None = None,
                 error: BaseException | None = None, decode_error: BaseException | None = None
                 ) -> None:
        self.connection = SimpleNamespace(topic="/pose", msgtype=POSE)
        self.items = messages
        self.fail_at, self.error, self.decode_error = fail_at, error, decode_error

    def messages(self, connections: list[Any]) -> Iterator[tuple[Any, int, Any]]:
        for index, message in enumerate(self.items):
            if index == self.fail_at and self.error is not None:
                raise self.error
            yield self.connection, index, message

    def deserialize(self, raw: Any, msgtype: str) -> Any:
        if self.decode_error is not None:
            raise self.decode_error
        return raw


@pytest.mark.parametrize("reader,match", [
    (FakeReader([_pose_message()], fail_at=0, error=AssertionError()),
     "cannot read its messages: AssertionError"),
    (FakeReader([_pose_message()], fail_at=0, error=KeyError("chunk")),
     "cannot read its messages: KeyError"),
    (FakeReader([_pose_message()], fail_at=0, error=OSError("short read\nsecond line")),
     "cannot read its messages: OSError: short read second line"),
    (FakeReader([_pose_message()], decode_error=UnicodeDecodeError("utf-8", b"\xff", 0, 1,
                                                                   "invalid start byte")),
     "message 0 on /pose cannot be decoded: UnicodeDecodeError"),
    (FakeReader([_pose_message(), SimpleNamespace(header=None)]),
     f"message 1 on /pose lacks the fields of {POSE}: AttributeError"),
    (FakeReader([_pose_message(sec=2**62)]), "lacks the fields of .*OverflowError"),
])
def test_broken_bag_is_a_format_error_naming_it(reader: FakeReader, match: str) -> None:
    base = Path("broken.bag")
    with pytest.raises(FormatError, match=match) as caught:
        bag._read_topic(reader, base, [reader.connection], sort=False, dedupe=False)
    assert caught.value.path == "broken.bag"
    assert "\n" not in str(caught.value)

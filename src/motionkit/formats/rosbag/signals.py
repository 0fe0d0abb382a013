"""Signal topics of a bag: ``sensor_msgs/JointState``, ``sensor_msgs/Imu`` and header-less
numeric messages (``std_msgs/Float64MultiArray``, ``std_msgs/Float64``, …).

Each topic becomes one or more *fields*: a JointState's position, velocity and effort
(labelled by joint name, mapped by name per message), an IMU's orientation (x y z w),
angular velocity and linear acceleration, a numeric message's ``data``. Where a message
leaves a field out (an empty JointState array, a name another message has) its values
are NaN, so a resampler sees a gap instead of invented zeros; a field no message carries
gives no track.

Time per message: ``header.stamp``, or the bag's log (receive) time where the stamp is 0,
for messages without a header, or when ``time="log"`` is asked. Which one was used is
recorded once, as ``time`` in the topic's facts (``header``, ``log`` or ``header+log``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np
from numpy.typing import NDArray

from ...errors import ConversionError, FormatError, MotionkitError
from ...model import Motion, Track
from ...model.timeline import ns_to_seconds
from ..loss import Holds, tracks
from . import fastarrays, fastjoint

JOINT_STATE = "sensor_msgs/msg/JointState"
IMU = "sensor_msgs/msg/Imu"
#: Header-less numeric messages: their one field ``data`` (a number or an array).
NUMERIC_TYPES = (*(f"std_msgs/msg/{kind}{suffix}"
                   for kind in ("Float64", "Float32", "Int8", "Int16", "Int32", "Int64",
                                "UInt8", "UInt16", "UInt32", "UInt64")
                   for suffix in ("MultiArray", "")), "std_msgs/msg/Bool")
SIGNAL_TYPES = (JOINT_STATE, IMU, *NUMERIC_TYPES)
#: The JointState arrays, in message order; ``position`` is the topic's main field.
JOINT_FIELDS = ("position", "velocity", "effort")
TIME_MODES = ("header", "log")
#: The name a topic's tracks take when it is read alone (``bag:/joint_states``).
SINGLE_BASE = {JOINT_STATE: "joints", IMU: "imu"}
NUMERIC_BASE = "data"
JOINT_STATES_TOPIC = "/joint_states"
#: The tracks a JointState writer takes, by message field.
JOINT_TRACKS = {"position": "joints", "velocity": "joints.velocity",
                "effort": "joints.effort"}


@dataclass
class Field:
    """One field of a topic: ``(messages, …)`` values, NaN where a message lacks them."""

    name: str  # "" for the topic's main field
    kind: str
    data: NDArray[np.float64]
    labels: list[str] | None = None


@dataclass
class Signal:
    """A decoded signal topic: its message times (integer ns), fields and facts."""

    stamps_ns: NDArray[np.int64]
    fields: list[Field]
    facts: dict[str, object] = field(default_factory=dict)


def base_name(msgtype: str) -> str:
    """The track name of a topic read alone (its main field; other fields add ``.field``)."""
    return SINGLE_BASE.get(msgtype, NUMERIC_BASE)


def track_name(base: str, field_name: str) -> str:
    """``base`` for a topic's main field, ``base.field`` for the others (one rule for a
    topic read alone, base ``joints``, and for several topics, base = the topic)."""
    return f"{base}.{field_name}" if field_name else base


def header_ns(header: object) -> int:
    """A message header's stamp in integer nanoseconds (OverflowError past int64)."""
    given = cast(Any, header).stamp
    stamp = int(given.sec) * 1_000_000_000 + int(given.nanosec)
    if not -(2**63) <= stamp < 2**63:
        raise OverflowError("the stamp does not fit in 64-bit nanoseconds")
    return stamp


class _Clock:
    """Each message's time by the rule above, counting which source was used."""

    def __init__(self, mode: str, has_header: bool) -> None:
        if mode not in TIME_MODES:
            raise MotionkitError(f"time must be one of {', '.join(TIME_MODES)}, not {mode!r}")
        self.use_header = has_header and mode == "header"
        self.header = self.log = 0

    def __call__(self, message: Any, log_ns: int) -> int:
        if self.use_header:
            stamp = header_ns(message.header)
            if stamp != 0:
                self.header += 1
                return stamp
        self.log += 1
        return log_ns

    def many(self, stamps: NDArray[np.int64], log_ns: NDArray[np.int64]) -> NDArray[np.int64]:
        """The rule for many messages at once (header stamps and log times in ns)."""
        if not self.use_header:
            self.log += int(log_ns.size)
            return log_ns
        zero = stamps == 0
        self.log += int(np.count_nonzero(zero))
        self.header += int(zero.size - np.count_nonzero(zero))
        return np.where(zero, log_ns, stamps)

    def used(self) -> str:
        return "+".join(name for name, count in (("header", self.header), ("log", self.log))
                        if count) or ("header" if self.use_header else "log")


def decode(msgtype: str, messages: Iterable[tuple[int, object]], topic: str, source: object,
           time: str = "header") -> Signal:
    """Decode one signal topic's ``(log ns, message)`` pairs (``msgtype`` in SIGNAL_TYPES);
    inconsistent messages are a FormatError naming ``source``, the topic and the time."""
    clock = _Clock(time, msgtype in (JOINT_STATE, IMU))
    if msgtype == JOINT_STATE:
        signal = _joint_states(messages, clock, topic, source)
    elif msgtype == IMU:
        signal = _imu(messages, clock)
    else:
        signal = _numeric(messages, clock, topic, source)
    signal.facts["time"] = clock.used()
    if clock.log and msgtype in NUMERIC_TYPES:
        signal.facts["time_note"] = "bag receive (log) time: the messages have no header"
    return signal


def _when(stamp: int) -> str:
    return f"time {stamp} ns ({float(ns_to_seconds(np.int64(stamp))):.9f} s)"


@dataclass
class _Chunk:
    """Consecutive JointState rows naming the same joints in the same order."""

    row: int
    count: int
    group: int
    arrays: list[NDArray[np.float64]]  # per field (count, k), k = 0 or the names'


def _joint_states(messages: Iterable[tuple[int, Any]], clock: _Clock, topic: str,
                  source: object) -> Signal:
    """Map every message by name into the union of names (first-seen order). Messages
    naming the same joints in the same order share one column map (checked once); a run of
    them read at once (``fastjoint.Block``) is one chunk, filled into the fields at once."""
    index: dict[str, int] = {}
    orders: dict[tuple[str, ...], int] = {}
    columns: list[NDArray[np.intp]] = []
    stamps: list[NDArray[np.int64]] = []
    chunks: list[_Chunk] = []
    rows = 0
    for log_ns, message in messages:
        if isinstance(message, fastjoint.Block):
            when = clock.many(message.stamps_ns, message.log_ns)
            arrays = message.arrays
        else:
            when = np.array([clock(message, log_ns)], dtype=np.int64)
            arrays = [np.asarray(getattr(message, name), dtype=np.float64).reshape(1, -1)
                      for name in JOINT_FIELDS]
        given = message.name
        names = given if isinstance(given, tuple) else tuple(str(name) for name in given)
        group = orders.get(names)
        if group is None:
            if len(set(names)) != len(names):
                repeated = sorted({name for name in names if names.count(name) > 1})
                raise FormatError(f"{topic}: the JointState at {_when(int(when[0]))} repeats "
                                  f"joint name(s) {', '.join(repeated)}", str(source))
            group = orders[names] = len(columns)
            columns.append(np.array([index.setdefault(name, len(index)) for name in names],
                                    dtype=np.intp))
        for name, values in zip(JOINT_FIELDS, arrays, strict=True):
            if values.shape[1] not in (0, len(names)):
                raise FormatError(f"{topic}: the JointState at {_when(int(when[0]))} has "
                                  f"{values.shape[1]} {name} values for {len(names)} names",
                                  str(source))
        stamps.append(when)
        chunks.append(_Chunk(rows, when.size, group, arrays))
        rows += when.size
    return _joint_fields(index, columns, chunks, rows, stamps)


def _joint_fields(index: dict[str, int], columns: list[NDArray[np.intp]],
                  chunks: list[_Chunk], rows: int, stamps: list[NDArray[np.int64]]) -> Signal:
    """The fields of the chunks, NaN where a message lacks a joint or a field."""
    width = len(index)
    out = []
    for number, name in enumerate(JOINT_FIELDS):
        if not any(chunk.arrays[number].shape[1] for chunk in chunks):
            continue  # no message carries the field: no track (never zeros)
        data = np.full((rows, width), np.nan)
        for chunk in chunks:
            values = chunk.arrays[number]
            if values.shape[1]:
                data[chunk.row:chunk.row + chunk.count, columns[chunk.group]] = values
        out.append(Field("" if name == "position" else name, "value", data, list(index)))
    facts: dict[str, object] = {"names": list(index)}
    partial = sum(chunk.count for chunk in chunks if columns[chunk.group].size < width)
    if partial:
        facts["partial_messages"] = partial
    every = np.concatenate(stamps) if stamps else np.zeros(0, dtype=np.int64)
    return Signal(every.astype(np.int64), out, facts)


def _vector(value: Any, names: str) -> tuple[float, ...]:
    return tuple(float(getattr(value, name)) for name in names)


def _imu(messages: Iterable[tuple[int, Any]], clock: _Clock) -> Signal:
    """Orientation (x y z w), angular velocity, linear acceleration; a part whose
    covariance starts with -1 (sensor_msgs: "not provided") is left out as NaN."""
    parts: list[tuple[str, str, str, Callable[[Any], tuple[float, ...]]]] = [
        ("orientation", "quaternion", "orientation_covariance",
         lambda m: _vector(m.orientation, "xyzw")),
        ("angular_velocity", "vector3", "angular_velocity_covariance",
         lambda m: _vector(m.angular_velocity, "xyz")),
        ("linear_acceleration", "vector3", "linear_acceleration_covariance",
         lambda m: _vector(m.linear_acceleration, "xyz")),
    ]
    stamps: list[int] = []
    values: list[list[tuple[float, ...]]] = [[] for _ in parts]
    for log_ns, message in messages:
        stamps.append(clock(message, log_ns))
        for number, (_, kind, covariance, get) in enumerate(parts):
            absent = float(np.asarray(getattr(message, covariance)).reshape(-1)[0]) == -1.0
            width = 4 if kind == "quaternion" else 3
            values[number].append((np.nan,) * width if absent else get(message))
    fields = []
    for number, (name, kind, _, _) in enumerate(parts):
        data = np.asarray(values[number], dtype=np.float64).reshape(len(stamps), -1)
        if kind == "quaternion":
            data[~np.any(data != 0.0, axis=1)] = np.nan  # an all-zero orientation: none given
        if np.isfinite(data).any():
            fields.append(Field(name, kind, data))
    return Signal(np.asarray(stamps, dtype=np.int64), fields)


def _numeric(messages: Iterable[tuple[int, Any]], clock: _Clock, topic: str,
             source: object) -> Signal:
    """``data`` of every message, which must hold as many numbers each time."""
    stamps: list[NDArray[np.int64]] = []
    rows: list[NDArray[np.float64]] = []
    for log_ns, message in messages:
        if isinstance(message, fastarrays.Block):  # a run read at once
            when, block = clock.many(message.log_ns, message.log_ns), message.data
        else:
            when = np.array([clock(message, log_ns)], dtype=np.int64)
            block = np.asarray(message.data, dtype=np.float64).reshape(1, -1)
        if rows and block.shape[1] != rows[0].shape[1]:
            raise FormatError(f"{topic}: the message at {_when(int(when[0]))} holds "
                              f"{block.shape[1]} numbers, the first one {rows[0].shape[1]}",
                              str(source))
        stamps.append(when)
        rows.append(block)
    data = np.concatenate(rows) if rows else np.zeros((0, 0))
    every = np.concatenate(stamps) if stamps else np.zeros(0, dtype=np.int64)
    return Signal(every.astype(np.int64), [Field("", "value", data)])


def joint_state_holds() -> Holds:
    """What a JointState writer holds: ``joints`` (+ velocity, effort) labelled by joint
    name, and a free root's pose (as TF), on one timeline. The skeleton is held as a
    ``.seq`` holds it: by the joint names that tie the values to the user's model."""
    return Holds(tracks=tracks(root="pose", **dict.fromkeys(JOINT_TRACKS.values(), "value")),
                 skeleton=True, terrain=False, one_timeline=True, labels=True, attrs=False,
                 meta=frozenset(), root_required=False, namespace="rosbag")


def joint_state_losses(obj: Motion) -> list[str]:
    """Joint names a JointState writer would invent, fields it cannot put beside the
    positions (other names, other times)."""
    present = {field: obj.tracks[name] for field, name in JOINT_TRACKS.items()
               if name in obj.tracks}
    if not present:
        return []
    main = next(iter(present.values()))
    lost = []
    if main.labels is None:
        lost.append(f"joint names for track {main.name!r} (it has no labels: written as "
                    f"joint_0 … joint_{main.part_count - 1})")
    kept = [track for track in present.values() if not _unfit(main, track)]
    values = np.stack([np.asarray(t.data, dtype=np.float64) for t in kept])
    for column in np.flatnonzero(np.isnan(values).all(axis=(0, 1)) & (main.frames > 0)).tolist():
        label = main.labels[column] if main.labels else f"joint_{column}"
        lost.append(f"joint {label!r} of track {main.name!r} (no frame has a value for it: "
                    "no message would name it)")
    for track in present.values():
        lost.extend(_unfit(main, track))
    return lost


def _unfit(main: Track, track: Track) -> list[str]:
    """Why ``track`` cannot go beside ``main``'s positions in the messages (other times,
    other joints), as its loss; empty for one that can, and for ``main`` itself. The
    writer leaves out exactly the tracks this names."""
    if track is main:
        return []
    why = []
    if not track.timeline.same_as(main.timeline) or track.data.shape[:1] != main.data.shape[:1]:
        why.append("times")
    if sorted(track.labels or []) != sorted(main.labels or []) \
            or track.part_count != main.part_count:
        why.append("joints")
    return [f"track {track.name!r} (its {' and '.join(why)} differ from {main.name!r}'s: a "
            "message pairs each value with a position)"] if why else []


def joint_state_tracks(obj: Motion) -> dict[str, Track]:
    """The motion's JointState tracks by message field, each ``(frames, joints)``,
    without those :func:`joint_state_losses` names as lost (other times or joints)."""
    present = {field: obj.tracks[name] for field, name in JOINT_TRACKS.items()
               if name in obj.tracks}
    if not present:
        raise ConversionError(f"a JointState bag holds the tracks {', '.join(JOINT_TRACKS.values())}; "
                              f"this motion has: {', '.join(obj.tracks) or 'none'}")
    for track in present.values():
        if track.data.ndim != 2:
            raise ConversionError(f"track {track.name!r} has shape {track.data.shape}, not "
                                  "(frames, joints)")
    main = next(iter(present.values()))
    return {field: track for field, track in present.items() if not _unfit(main, track)}


def header(store: object, ros1: bool, seq: int, stamp: int, frame: str) -> object:
    """A ``std_msgs/Header`` at ``stamp`` ns (ROS1 headers also carry ``seq``) from a
    rosbags typestore."""
    types = cast(Any, store).types
    sec, nanosec = divmod(stamp, 1_000_000_000)
    time = types["builtin_interfaces/msg/Time"](sec=sec, nanosec=nanosec)
    if ros1:
        return types["std_msgs/msg/Header"](seq=seq, stamp=time, frame_id=frame)
    return types["std_msgs/msg/Header"](stamp=time, frame_id=frame)


def joint_state_messages(store: object, ros1: bool, frame: str, ns: NDArray[np.int64],
                         present: dict[str, Track]) -> Iterator[tuple[int, object]]:
    """One JointState per frame: the joints with a value in some field (a NaN-only joint
    is left out, as the reader makes it), each field empty where it has no value."""
    main = next(iter(present.values()))
    names = main.labels or [f"joint_{i}" for i in range(main.part_count)]
    columns = {field: np.asarray(track.data, dtype=np.float64)[
        :, [track.labels.index(name) for name in names] if track.labels and main.labels
        else slice(None)] for field, track in present.items()}
    stack = np.stack(list(columns.values()))
    given = np.asarray(~np.isnan(stack).all(axis=0), dtype=np.bool_)  # (frames, joints)
    joint_state = cast(Any, store).types[JOINT_STATE]
    empty = np.zeros(0)
    for frame_index, stamp in enumerate(ns.tolist()):
        keep = np.flatnonzero(given[frame_index])
        arrays = {}
        for name in JOINT_FIELDS:
            values = columns[name][frame_index, keep] if name in columns else empty
            arrays[name] = values if np.any(~np.isnan(values)) else empty
        yield stamp, joint_state(header=header(store, ros1, frame_index, stamp, frame),
                                 name=[names[i] for i in keep.tolist()], **arrays)

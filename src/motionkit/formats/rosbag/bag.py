"""ROS1 bags, ROS2 bag folders (sqlite3 or mcap) and bare ``.mcap`` files through ``rosbags``.

No ROS install is needed. A bag is addressed as ``run.bag`` (every supported topic, tracks
named by topic), ``run.bag:/topic`` (a pose topic as a trajectory; a JointState, Imu or
numeric topic as its tracks, see ``signals``), ``run.bag:tf:map->base_link`` (a chain
through ``/tf`` and ``/tf_static``, resolved by our own buffer), or several of these separated
by commas. Stamps come from ``header.stamp`` and stay integer nanoseconds (signal topics
without one, or with a zero stamp, use the log time). Writes the root pose (PoseStamped,
Odometry) or the joint tracks (JointState).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any, cast

import numpy as np
from numpy.typing import NDArray

from ..._io import atomic_write
from ...errors import ConversionError, FormatError, MotionkitError, choices, warn
from ...model import Motion, Timeline, Track
from ...model.timeline import NS_PER_SECOND, seconds_to_ns
from ...ops.sync import METHOD_ATTR, STATIC_ATTR
from ..loss import NOT_READ_META, Holds
from ..shared.poses import build_motion, normalized_quaternions, pose_holds, stamped_timeline
from . import fastarrays, fastjoint, signals
from .tf import TfBuffer

PathLike = str | os.PathLike[str]


POSE_TYPES = (
    "geometry_msgs/msg/PoseStamped",
    "geometry_msgs/msg/PoseWithCovarianceStamped",
    "geometry_msgs/msg/TransformStamped",
    "nav_msgs/msg/Odometry",
    "geometry_msgs/msg/PointStamped",
    "nav_msgs/msg/Path",
)
TF_TYPE = "tf2_msgs/msg/TFMessage"
_BAG_SUFFIXES = (".bag", ".mcap", ".db3")
DEFAULT_TOPIC = "/trajectory"
_ROS_SECONDS = 2**31  # rosbags writes header stamps' seconds as int32 (ROS1 and ROS2)


def claims(path: str) -> bool:
    """True for a ROS2 bag folder or an address: a bag plus a selector (``run.bag:/topic``,
    ``run.bag:tf:map->base_link``) where the bag exists and the whole text is no file."""
    if Path(path).is_dir():
        return True
    if Path(path).exists() or ":" not in path:
        return False
    base = Path(path.split(":", 1)[0])
    return base.exists() and (base.is_dir() or base.suffix.lower() in _BAG_SUFFIXES)


TWIST_TRACKS = ("twist_linear", "twist_angular")
#: The messages ``write`` writes (``message=``): the root pose, or the joint values.
MESSAGES = ("PoseStamped", "Odometry", "JointState")


def holds(message: str | None = None) -> Holds:
    """The root pose, and unless PoseStamped is asked for its twist (``twist_linear``,
    ``twist_angular``: Odometry). A twist's ``frame`` attribute is held as the message's
    child frame (``losses`` names one that differs)."""
    if message not in (None, *MESSAGES):
        raise ConversionError(f"message must be {', '.join(MESSAGES)}, not {message!r}")
    if message == "JointState":
        return signals.joint_state_holds()
    twist = {} if message == "PoseStamped" else {name: "vector3" for name in TWIST_TRACKS}
    return replace(pose_holds("rosbag", **twist), attrs=True, plain=lambda key, _: key == "frame")


def _message(message: str | None, obj: Motion) -> str:
    """The message type to write: as asked, else Odometry for a motion with a twist or read
    from Odometry messages (so Odometry round trips), else PoseStamped. JointState is
    written when asked (``message="JointState"``: a pose writer needs a root)."""
    if message is not None:
        return message
    extras = found if isinstance(found := obj.meta.get("rosbag"), dict) else {}
    odometry = any(name in obj.tracks for name in TWIST_TRACKS) or str(
        (extras or {}).get("msgtype", "")).endswith("Odometry")
    return "Odometry" if odometry else "PoseStamped"


def losses(obj: Motion, *, message: str | None = None, child_frame_id: str | None = None,
           **_: object) -> list[str]:
    """Frames a bag cannot keep as the motion has them, and twists it would invent (for
    JointState: names it would invent, fields labelled otherwise than the positions)."""
    if message == "JointState":
        return signals.joint_state_losses(obj)
    lost = []
    extras = found if isinstance(found := obj.meta.get("rosbag"), dict) else {}
    child = _name(child_frame_id, (extras or {}).get("child_frame_id"), "base_link")
    if "frame" in obj.tracks["root"].attrs:
        lost.append("the frame attribute of track 'root' (the header's frame_id is written)")
    for name in TWIST_TRACKS:
        track = obj.tracks.get(name)
        if track is not None and track.attrs.get("frame", child) != child:
            lost.append(f"the frame {track.attrs['frame']!r} of track {name!r} (Odometry twists "
                        f"are in the child frame, written as {child!r})")
    if _message(message, obj) == "Odometry":
        missing = [name for name in TWIST_TRACKS if name not in obj.tracks]
        if missing:
            lost.append(f"invented zeros for {' and '.join(missing)} (Odometry messages hold both)")
    return lost


def split_address(path: PathLike) -> tuple[Path, str | None]:
    """``run.bag:/topic`` -> (run.bag, "/topic"); a plain existing path -> (path, None)."""
    text = os.fspath(path)
    if Path(text).exists() or ":" not in text:
        return Path(text), None
    base, selector = text.split(":", 1)
    return Path(base), selector or None


def _bag_path(base: Path) -> Path:
    """ROS2 folders are read as folders; a ``.db3`` inside one means its folder."""
    if base.suffix.lower() == ".db3" and (base.parent / "metadata.yaml").exists():
        return base.parent
    return base


def _open(base: Path) -> Any:
    try:
        from rosbags.highlevel import AnyReader
        from rosbags.typesys import Stores, get_typestore
    except ImportError:
        raise MotionkitError("reading bags needs rosbags (a motionkit dependency that is "
                             "missing here): pip install rosbags") from None
    if not base.exists():
        raise FormatError("no such file or folder", base)
    reader = AnyReader([_bag_path(base)], default_typestore=get_typestore(Stores.ROS1_NOETIC))
    try:
        reader.open()
    except Exception as exc:  # rosbags raises its own family for broken or foreign files
        if "Could not parse" not in str(exc):
            raise _broken(base, "not a readable ROS bag", exc) from None
        return _TolerantReader(base)  # a message type rosbags cannot parse (service events)
    return reader


class _TolerantReader:
    """A bag whose connections include message types rosbags cannot parse (rosbag2's
    service events): those connections are left out with one warning naming them, and the
    rest are decoded with the standard types plus every definition that does parse. It
    offers what the readers here use of rosbags' AnyReader."""

    def __init__(self, base: Path) -> None:
        from rosbags.rosbag1 import Reader as Reader1
        from rosbags.rosbag2 import Reader as Reader2
        from rosbags.typesys import Stores, get_types_from_msg, get_typestore

        path = _bag_path(base)
        self.ros1 = path.is_file() and path.suffix.lower() == ".bag"
        self.reader = Reader1(path) if self.ros1 else Reader2(path)
        try:
            self.reader.open()
        except Exception as exc:
            raise _broken(base, "not a readable ROS bag", exc) from None
        self.store = get_typestore(Stores.ROS1_NOETIC if self.ros1 else Stores.ROS2_HUMBLE)
        known = set(self.store.types)
        kept, skipped = [], []
        for connection in self.reader.connections:
            if connection.msgtype not in known:
                try:
                    self.store.register(get_types_from_msg(connection.msgdef.data,
                                                           connection.msgtype))
                    known.add(connection.msgtype)
                except Exception:  # the very definitions rosbags could not parse
                    skipped.append(f"{connection.topic} ({connection.msgtype})")
                    continue
            kept.append(connection)
        self.connections = kept
        if skipped:
            warn(f"{base}: left out {len(skipped)} connection(s) whose message types cannot be "
                 f"parsed: {', '.join(sorted(set(skipped)))}")

    def messages(self, connections: list[Any]) -> Iterator[tuple[Any, int, bytes]]:
        return iter(self.reader.messages(connections=connections))

    def deserialize(self, raw: bytes, msgtype: str) -> Any:
        if self.ros1:
            return self.store.deserialize_ros1(raw, msgtype)
        return self.store.deserialize_cdr(raw, msgtype)

    def close(self) -> None:
        self.reader.close()


def _broken(base: Path, where: str, exc: BaseException) -> FormatError:
    """A FormatError naming the bag for what rosbags (or a message's fields) raised."""
    detail = " ".join(str(exc).split())[:200]  # one line, whatever rosbags said
    return FormatError(f"{where}: {type(exc).__name__}" + (f": {detail}" if detail else ""),
                       base)


def _messages(reader: Any, base: Path, connections: list[Any]) -> Iterator[tuple[Any, Any]]:
    """(connection, decoded message) for every message of ``connections``."""
    for connection, _, message in _logged(reader, base, connections):
        yield connection, message


def _logged(reader: Any, base: Path, connections: list[Any]) -> Iterator[tuple[Any, int, Any]]:
    """(connection, log time in ns, decoded message) for every message of ``connections``."""
    for index, (connection, log_ns, raw) in enumerate(_raw(reader, base, connections)):
        yield connection, log_ns, _deserialize(reader, base, connection, raw, index)


def _raw(reader: Any, base: Path, connections: list[Any]) -> Iterator[tuple[Any, int, bytes]]:
    """(connection, log time in ns, raw bytes) for every message of ``connections``.

    A broken bag makes rosbags raise almost anything (its ReaderErrors, AssertionError,
    KeyError, OSError, UnicodeDecodeError, struct errors …); each becomes a FormatError
    naming the bag (and, for decoding, ``_deserialize`` names the topic and message).
    """
    messages = iter(reader.messages(connections=connections))
    while True:
        try:
            connection, log_ns, raw = next(messages)
        except StopIteration:
            return
        except Exception as exc:  # rosbags' whole range, for a broken or truncated bag
            raise _broken(base, "broken bag: cannot read its messages", exc) from None
        yield connection, int(log_ns), raw


def _deserialize(reader: Any, base: Path, connection: Any, raw: bytes,
                 index: int | None) -> Any:
    """rosbags' decoding of one message; a FormatError naming topic and message number."""
    try:
        return reader.deserialize(raw, connection.msgtype)
    except Exception as exc:  # rosbags' decoders, for a corrupt message
        which = f"message {index}" if index is not None else "a message"
        raise _broken(base, f"broken bag: {which} on {connection.topic} cannot be decoded",
                      exc) from None


def _signal_messages(reader: Any, base: Path, connections: list[Any],
                     ) -> Iterator[tuple[int, object]]:
    """(log ns, message) of a signal topic: JointState through our own decoder
    (``fastjoint``, checked against rosbags on the first message), numeric messages in
    blocks after one rosbags decoded (``fastarrays``), Imu by rosbags."""
    definitions = {(getattr(c, "digest", None), getattr(getattr(c, "msgdef", None), "data", None))
                   for c in connections}
    msgtype, connection = connections[0].msgtype, connections[0]
    fast = msgtype == signals.JOINT_STATE or msgtype in signals.NUMERIC_TYPES
    if not fast or len(definitions) > 1:
        # (publishers with different definitions of the type: rosbags decodes each its way)
        return ((log_ns, msg) for _, log_ns, msg in _logged(reader, base, connections))
    raws = ((log_ns, raw) for _, log_ns, raw in _raw(reader, base, connections))

    def deserialize(raw: bytes) -> object:
        return _deserialize(reader, base, connection, raw, None)
    if msgtype in signals.NUMERIC_TYPES:
        return fastarrays.decode_all(raws, msgtype, deserialize)
    ros1 = bool(reader.ros1) if isinstance(reader, _TolerantReader) else not reader.is2
    return fastjoint.decode_all(raws, ros1, deserialize)


#: What a decoded message whose type definition in the bag differs from the standard one
#: raises when its fields are read (missing fields, wrong types, out-of-range numbers).
_FIELD_ERRORS = (AttributeError, TypeError, ValueError, OverflowError, IndexError)


def topics(path: PathLike) -> list[tuple[str, str, int]]:
    """(topic, message type, message count) for every topic of a bag."""
    reader = _open(split_address(path)[0])
    try:
        return [(c.topic, c.msgtype, c.msgcount) for c in reader.connections]
    finally:
        reader.close()


def read(path: PathLike, *, topic: str | None = None, sort: bool = False,
         dedupe: bool = False, time: str = "header") -> Motion:
    """Read one topic or TF chain, several of them, or every supported topic as tracks.

    The selector comes from the address (``bag:/topic``, ``bag:tf:parent->child``) or the
    ``topic`` option. A pose topic read alone is a trajectory (``root``); a signal topic
    (JointState, Imu, numeric arrays: ``signals``) read alone gives tracks named
    ``joints``, ``joints.velocity``, … Several selectors separated by commas
    (``bag:/joint_states,/tf:world->base_link,/cmd``), like a whole bag, give tracks named
    by topic, each on its own stamps (``motionkit.ops.sync`` puts them on one clock).
    ``time="log"`` stamps every message with the bag's log time instead of its header.
    """
    base, selector = split_address(path)
    selector = selector or topic
    reader = _open(base)
    try:
        if selector is not None and "," in selector:
            return _read_several(reader, base, selector, sort=sort, dedupe=dedupe, time=time)
        if selector is not None and (chain := _chain(selector)) is not None:
            return _read_tf(reader, base, chain)
        supported = [c for c in reader.connections if c.msgtype in POSE_TYPES]
        if selector is not None:
            wanted = _wanted(reader, base, selector)
            if wanted[0].msgtype in signals.SIGNAL_TYPES:
                return _read_signal(reader, base, wanted, sort=sort, dedupe=dedupe, time=time)
            if wanted[0].msgtype not in POSE_TYPES:
                raise FormatError(f"topic {selector!r} has type {wanted[0].msgtype}, not one "
                                  f"of {', '.join(POSE_TYPES + signals.SIGNAL_TYPES)}", base)
            return _read_topic(reader, base, wanted, sort=sort, dedupe=dedupe)
        tf = [c for c in reader.connections if c.msgtype == TF_TYPE]
        signal = sorted({c.topic for c in reader.connections
                         if c.msgtype in signals.SIGNAL_TYPES})
        if not supported and not signal:
            hint = ""
            if tf:
                edges = ", ".join(f"{a}->{b}" for a, b in _tf_buffer(reader, base, tf).edges)
                hint = f" (it has TF: address a chain as bag:tf:parent->child; edges: {edges})"
            if not hint:
                names = ", ".join(sorted(f"{c.topic} ({c.msgtype})" for c in reader.connections))
                hint = f" (its topics: {names or 'none'})"
            raise FormatError(f"no pose topics in the bag{hint}", base)
        topic_names = sorted({c.topic for c in supported})
        if len(topic_names) == 1:  # the trajectory, as ever, and any signal topics beside it
            motion = _read_topic(reader, base, supported, sort=sort, dedupe=dedupe)
            topic_names = []
        else:
            motion = Motion(meta={"name": base.stem, "rosbag": {
                "topics": topic_names + signal, "tf_topics": sorted({c.topic for c in tf})}})
        for name in topic_names:
            _add_pose(motion, name, _read_topic(reader, base, [c for c in supported
                                                              if c.topic == name],
                                                sort=sort, dedupe=dedupe))
        for name in signal:
            _add_signal(motion, reader, base, [c for c in reader.connections if c.topic == name],
                        sort=sort, dedupe=dedupe, time=time)
        _record_unread(motion, reader, {c.topic for c in supported} | set(signal))
        return motion
    finally:
        reader.close()


def _record_unread(motion: Motion, reader: Any, read: set[str]) -> None:
    """The topics a whole-bag read leaves out (cameras, TF, types it does not know), each
    with its type(s) and message count, in ``meta["not_read"]`` for the loss rule to name."""
    left: dict[str, tuple[set[str], int]] = {}
    for connection in reader.connections:
        if connection.topic not in read:
            types, count = left.get(connection.topic, (set(), 0))
            types.add(str(connection.msgtype))
            left[connection.topic] = (types, count + int(connection.msgcount))
    if left:
        motion.meta[NOT_READ_META] = [f"topic {topic} ({', '.join(sorted(types))}, {count} "
                                      "messages)" for topic, (types, count) in sorted(left.items())]


def _chain(selector: str) -> str | None:
    """``parent->child`` of a TF selector: ``tf:parent->child`` or, naming the TF topic,
    ``/tf:parent->child``; None for a topic."""
    head, colon, chain = selector.partition(":")
    return chain if colon and _is_tf_topic(head or "tf") else None


def _wanted(reader: Any, base: Path, selector: str) -> list[Any]:
    """The connections of topic ``selector`` (a leading slash optional on both sides)."""
    wanted = [c for c in reader.connections if c.topic.lstrip("/") == selector.lstrip("/")]
    if not wanted:
        names = choices(selector, sorted({c.topic for c in reader.connections}), "topics", 40)
        raise FormatError(f"no topic {selector!r} in the bag ({names})", base)
    return wanted


def _add_pose(motion: Motion, name: str, single: Motion) -> None:
    """A pose topic's trajectory as the track ``name``, its facts (topic, frames, …) in
    ``meta["rosbag"]["tracks"]``."""
    root = single.tracks["root"]
    motion.add(Track(name, "pose", root.data, root.timeline, attrs=dict(root.attrs)))
    _facts(motion, name, cast("dict[str, object]", single.meta["rosbag"]))


def _facts(motion: Motion, name: str, facts: dict[str, object]) -> None:
    """Record what a track of several was read from in ``meta["rosbag"]["tracks"]`` (the
    format's own namespace: no writer counts it lost, as it would attributes)."""
    extras = motion.meta.setdefault("rosbag", {})
    assert isinstance(extras, dict)
    extras.setdefault("tracks", {})[name] = facts


def _read_several(reader: Any, base: Path, selector: str, *, sort: bool, dedupe: bool,
                  time: str) -> Motion:
    """Each comma-separated selector's tracks, named by topic (a TF chain by
    ``parent->child``)."""
    parts = [part.strip() for part in selector.split(",") if part.strip()]
    motion = Motion(meta={"name": base.stem, "rosbag": {"selectors": parts}})
    for part in parts:
        before = set(motion.tracks)
        if (chain := _chain(part)) is not None:
            single = _read_tf(reader, base, chain)
            _add_pose(motion, chain.replace(" ", ""), single)
            facts = single.meta["rosbag"]
            if isinstance(facts, dict) and facts.get("static"):  # ops.sync holds it
                motion.tracks[chain.replace(" ", "")].attrs[STATIC_ATTR] = True
        else:
            wanted = _wanted(reader, base, part)
            if wanted[0].msgtype in signals.SIGNAL_TYPES:
                _add_signal(motion, reader, base, wanted, sort=sort, dedupe=dedupe, time=time)
            elif wanted[0].msgtype in POSE_TYPES:
                _add_pose(motion, wanted[0].topic,
                          _read_topic(reader, base, wanted, sort=sort, dedupe=dedupe))
            else:
                raise FormatError(f"topic {part!r} has type {wanted[0].msgtype}, not one of "
                                  f"{', '.join(POSE_TYPES + signals.SIGNAL_TYPES)}", base)
        if set(motion.tracks) == before:
            raise FormatError(f"selector {part!r} names tracks already read (or none)", base)
    return motion


def _signal_tracks(reader: Any, base: Path, connections: list[Any], name: str, *,
                   sort: bool, dedupe: bool, time: str) -> tuple[list[Track], dict[str, object]]:
    """The tracks of one signal topic (named from ``name`` by ``signals.track_name``) and
    its facts (topic, message type, which time was used, …)."""
    msgtype, topic_name = connections[0].msgtype, connections[0].topic
    try:
        signal = signals.decode(msgtype, _signal_messages(reader, base, connections),
                                topic_name, base, time)
    except _FIELD_ERRORS as exc:
        raise _broken(base, f"broken bag: a message on {topic_name} lacks the fields of "
                      f"{msgtype}", exc) from None
    if signal.stamps_ns.size == 0:
        raise FormatError(f"topic {topic_name} has no messages", base)
    source = f"{base}:{topic_name}"
    timeline, order = stamped_timeline(None, signal.stamps_ns, path=source,
                                       line_of=lambda row: row + 1, sort=sort, dedupe=dedupe)
    # a command is held (what the controller saw, spec 3.3): ops.sync's default, dropped there
    attrs = {METHOD_ATTR: "hold"} if msgtype in signals.NUMERIC_TYPES else {}
    tracks = []
    for item in signal.fields:
        data = item.data if order is None else item.data[order]
        if item.kind == "quaternion":
            given = np.isfinite(data).all(axis=1)
            data[given] = normalized_quaternions(data[given], source, lambda row: row + 1)
        tracks.append(Track(signals.track_name(name, item.name), item.kind,  # type: ignore[arg-type]
                            data, timeline, labels=item.labels, attrs=dict(attrs)))
    return tracks, {"topic": topic_name, "msgtype": msgtype, **signal.facts}


def _read_signal(reader: Any, base: Path, connections: list[Any], *, sort: bool,
                 dedupe: bool, time: str) -> Motion:
    """One signal topic read alone: tracks ``joints``/``imu.…``/``data``, facts in meta."""
    tracks, facts = _signal_tracks(reader, base, connections,
                                   signals.base_name(connections[0].msgtype), sort=sort,
                                   dedupe=dedupe, time=time)
    motion = Motion(meta={"name": connections[0].topic.lstrip("/") or base.stem,
                          "rosbag": facts})
    for track in tracks:
        motion.add(track)
    return motion


def _add_signal(motion: Motion, reader: Any, base: Path, connections: list[Any], *,
                sort: bool, dedupe: bool, time: str) -> None:
    """A signal topic's tracks named by its topic, its facts in ``meta["rosbag"]["tracks"]``."""
    tracks, facts = _signal_tracks(reader, base, connections, connections[0].topic,
                                   sort=sort, dedupe=dedupe, time=time)
    for track in tracks:
        motion.add(track)
        _facts(motion, track.name, {k: v for k, v in facts.items() if k != "names"})


def survey(path: PathLike) -> list[str]:
    """What ``info`` shows of a bag that ``read`` refuses because it has TF but no pose
    topic: each TF edge (static or how many transforms, over which span), and the chain
    address that reads one. [] for any other bag."""
    base, selector = split_address(path)
    if selector is not None:
        return []
    reader = _open(base)
    try:
        if any(c.msgtype in POSE_TYPES + signals.SIGNAL_TYPES for c in reader.connections):
            return []  # read gives these
        tf = [c for c in reader.connections if c.msgtype == TF_TYPE]
        if not tf:
            return []
        buffer = _tf_buffer(reader, base, tf)
    finally:
        reader.close()
    lines = [f"no pose topics; TF on {', '.join(sorted({c.topic for c in tf}))}: "
             f"{len(buffer.edges)} edge(s), read a chain as {base}:tf:PARENT->CHILD"]
    for (parent, child), edge in sorted(buffer.edges.items()):
        if edge.static:
            what = "static"
        else:
            span = (max(edge.stamps) - min(edge.stamps)) / NS_PER_SECOND
            what = f"{len(edge.stamps)} transforms over {span:.6g} s"
        lines.append(f"tf {parent} -> {child}: {what}")
    return lines


def _pose(pose: Any) -> tuple[float, ...]:
    p, q = pose.position, pose.orientation
    return tuple(float(v) for v in (p.x, p.y, p.z, q.x, q.y, q.z, q.w))


def _take(msg: Any, msgtype: str, stamps: list[int], poses: list[tuple[float, ...]],
          twists: list[tuple[float, ...]], frame_id: str | None,
          child_frame_id: str | None) -> tuple[str | None, str | None]:
    """Append one message's stamp, pose (and twist); return the frame ids seen so far."""
    if msgtype == "nav_msgs/msg/Path":  # the last path message holds the whole path
        stamps.clear()
        poses.clear()
        for item in msg.poses:
            stamps.append(signals.header_ns(item.header))
            poses.append(_pose(item.pose))
        return str(msg.header.frame_id), child_frame_id
    stamps.append(signals.header_ns(msg.header))
    frame_id = frame_id if frame_id is not None else str(msg.header.frame_id)
    if msgtype == "geometry_msgs/msg/PoseStamped":
        poses.append(_pose(msg.pose))
    elif msgtype == "geometry_msgs/msg/PoseWithCovarianceStamped":
        poses.append(_pose(msg.pose.pose))
    elif msgtype == "nav_msgs/msg/Odometry":
        poses.append(_pose(msg.pose.pose))
        lin, ang = msg.twist.twist.linear, msg.twist.twist.angular
        twists.append(tuple(float(v) for v in (lin.x, lin.y, lin.z, ang.x, ang.y, ang.z)))
        child_frame_id = str(msg.child_frame_id)
    elif msgtype == "geometry_msgs/msg/TransformStamped":
        t, r = msg.transform.translation, msg.transform.rotation
        poses.append(tuple(float(v) for v in (t.x, t.y, t.z, r.x, r.y, r.z, r.w)))
        child_frame_id = str(msg.child_frame_id)
    else:  # PointStamped
        p = msg.point
        poses.append((float(p.x), float(p.y), float(p.z), 0.0, 0.0, 0.0, 1.0))
    return frame_id, child_frame_id


def _read_topic(reader: Any, base: Path, connections: list[Any], *, sort: bool,
                dedupe: bool) -> Motion:
    msgtype = connections[0].msgtype
    topic_name = connections[0].topic
    stamps: list[int] = []
    poses: list[tuple[float, ...]] = []
    twists: list[tuple[float, ...]] = []
    frame_id = child_frame_id = None
    for index, (_, msg) in enumerate(_messages(reader, base, connections)):
        try:
            frame_id, child_frame_id = _take(msg, msgtype, stamps, poses, twists, frame_id,
                                             child_frame_id)
        except _FIELD_ERRORS as exc:
            raise _broken(base, f"broken bag: message {index} on {topic_name} lacks the "
                          f"fields of {msgtype}", exc) from None
    ns = np.asarray(stamps, dtype=np.int64)
    data = np.asarray(poses, dtype=np.float64).reshape(-1, 7)
    twist = np.asarray(twists, dtype=np.float64).reshape(-1, 6) if twists else None
    source = f"{base}:{topic_name}"
    timeline, order = stamped_timeline(None, ns, path=source,
                                              line_of=lambda row: row + 1, sort=sort,
                                              dedupe=dedupe)
    if order is not None:
        data = data[order]
        twist = twist[order] if twist is not None else None
    extras = {"topic": topic_name, "msgtype": msgtype, "frame_id": frame_id}
    if child_frame_id is not None:
        extras["child_frame_id"] = child_frame_id
    meta: dict[str, Any] = {"name": topic_name.lstrip("/") or base.stem, "epsg": 0,
                            "nframe": None, "rosbag": extras}
    quat = None if msgtype == "geometry_msgs/msg/PointStamped" else \
        normalized_quaternions(data[:, 3:], source, lambda row: row + 1)
    motion = build_motion(timeline, data[:, :3], quat, meta=meta)
    if twist is not None:
        timeline = motion.tracks["root"].timeline
        attrs: dict[str, object] = {"frame": child_frame_id}
        motion.add(Track("twist_linear", "vector3", twist[:, :3], timeline, attrs=attrs))
        motion.add(Track("twist_angular", "vector3", twist[:, 3:], timeline, attrs=dict(attrs)))
    return motion


def _tf_buffer(reader: Any, base: Path, connections: list[Any]) -> TfBuffer:
    """Every transform of the TF topics, static ones marked as such."""
    buffer = TfBuffer()
    for index, (connection, msg) in enumerate(_messages(reader, base, connections)):
        static = connection.topic.rstrip("/").endswith("tf_static")
        try:
            for item in msg.transforms:
                t, r = item.transform.translation, item.transform.rotation
                buffer.add(str(item.header.frame_id), str(item.child_frame_id),
                           signals.header_ns(item.header),
                           tuple(float(v) for v in (t.x, t.y, t.z, r.x, r.y, r.z, r.w)), static)
        except _FIELD_ERRORS as exc:
            raise _broken(base, f"broken bag: message {index} on {connection.topic} lacks "
                          f"the fields of {TF_TYPE}", exc) from None
    return buffer


def _read_tf(reader: Any, base: Path, chain: str) -> Motion:
    if "->" not in chain:
        raise FormatError(f"a TF address is tf:parent->child, got tf:{chain}", base)
    parent, child = (part.strip() for part in chain.split("->", 1))
    connections = [c for c in reader.connections if c.msgtype == TF_TYPE]
    if not connections:
        raise FormatError("the bag has no /tf or /tf_static messages", base)
    buffer = _tf_buffer(reader, base, connections)
    try:
        stamps, poses = buffer.lookup(parent, child)
    except FormatError as exc:
        raise FormatError(exc.message, base) from None
    facts: dict[str, object] = {"tf_chain": f"{parent}->{child}", "frame_id": parent,
                                "child_frame_id": child}
    if buffer.is_static(parent, child):
        facts["static"] = True  # /tf_static only: one pose for all time
    meta = {"name": f"{parent}->{child}", "epsg": 0, "nframe": None, "rosbag": facts}
    return build_motion(Timeline.from_nanoseconds(stamps), poses[:, :3], poses[:, 3:],
                               meta=meta)


def write(path: PathLike, obj: Motion, *, topic: str | None = None,
          frame_id: str | None = None, child_frame_id: str | None = None,
          message: str | None = None, storage: str | None = None) -> None:
    """Write the root pose as ``PoseStamped`` or ``Odometry`` messages (by default Odometry
    for a motion with a twist or read from Odometry, so those round trip), or with
    ``message="JointState"`` the ``joints`` track (+ ``joints.velocity``,
    ``joints.effort``) as ``sensor_msgs/JointState`` on ``/joint_states``, named by its
    labels, and a free root's pose on ``/tf``.

    ``.bag`` gives ROS1; a bare ``.mcap`` a ROS2 MCAP file; any other path a ROS2 bag
    folder (``storage`` sqlite3, the default, or mcap). Bag time = stamp; integer
    nanosecond stamps are written exactly.
    """
    message = _message(message, obj)
    extras = found if isinstance(found := obj.meta.get("rosbag"), dict) else {}
    target = Path(path)
    suffix = target.suffix.lower()
    ros1 = suffix == ".bag"
    storage_name = "mcap" if suffix == ".mcap" else (storage or "sqlite3").lower()
    if storage_name not in ("sqlite3", "mcap"):
        raise ConversionError(f"storage must be sqlite3 or mcap, not {storage!r}")
    streams: list[_Stream]
    if message == "JointState":
        streams = _joint_state_streams(obj, ros1, topic, frame_id, child_frame_id, extras)
    else:
        topic = _topic(topic, extras.get("topic"), message)
        frame = _name(frame_id, extras.get("frame_id"), "map")
        child = _name(child_frame_id, extras.get("child_frame_id"), "base_link")
        streams = [(topic, *_pose_source(obj, ros1, message, frame, child))]
    folder = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent or Path(".")))
    try:
        work = folder / ("out.bag" if ros1 else "out")
        _write_messages(work, ros1, storage_name, streams)
        if ros1 or suffix == ".mcap":
            produced = work if ros1 else next(work.glob("*.mcap"))
            with atomic_write(target, "wb") as handle, open(produced, "rb") as source:
                shutil.copyfileobj(source, handle)
        else:
            _replace_folder(work, target)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _is_tf_topic(name: str) -> bool:
    """``/tf`` and ``/tf_static``, also namespaced (``/robot1/tf``) or without the slash."""
    return name.rstrip("/").rsplit("/", 1)[-1] in ("tf", "tf_static")


def _topic(option: str | None, known: Any, message: str, default: str = DEFAULT_TOPIC) -> str:
    """The ``topic`` option (never a TF topic), else the source's topic when it is a usable
    one, else ``default``."""
    if option is not None:
        if not option.strip("/"):
            raise ConversionError(f"topic {option!r} is not a topic name")
        if _is_tf_topic(option):
            raise ConversionError(f"topic {option!r} is for tf2_msgs/TFMessage; {message} "
                                  "messages there would break TF consumers on replay: choose "
                                  "another topic")
        return option
    if isinstance(known, str) and known.strip("/") and not _is_tf_topic(known):
        return known
    return default


def _name(option: str | None, known: Any, default: str) -> str:
    """A frame id: the option when given (an empty one too), else the source's, else
    ``default``."""
    if option is not None:
        return option
    return known if isinstance(known, str) else default


def _ros_stamps(timeline: Timeline) -> NDArray[np.int64]:
    """The frames' stamps in integer nanoseconds (exact from float seconds too); ROS time
    holds 32-bit seconds, so a stamp outside [0, 2**31) s is a ConversionError."""
    seconds, ns = timeline.times, timeline.stamps_ns
    if ns is None:
        inside = (seconds >= 0) & (seconds < _ROS_SECONDS)  # NaN is outside too
    else:
        inside = (ns >= 0) & (ns < _ROS_SECONDS * NS_PER_SECOND)
    if not np.all(inside):
        frame = int(np.argmin(inside))
        raise ConversionError(f"frame {frame} has time stamp {float(seconds[frame])!r} s, "
                              "outside what ROS time holds: 0 <= t < 2**31 s (1970-01-01 to "
                              "2038-01-19 03:14:08 UTC)")
    return seconds_to_ns(seconds) if ns is None else ns


def _replace_folder(new: Path, target: Path) -> None:
    """Move a finished bag folder into place; an old one is removed only afterwards."""
    old = None
    if target.exists():
        if not (target / "metadata.yaml").exists():
            raise ConversionError(f"{target} exists and is not a ROS2 bag folder; not replaced")
        old = target.with_name(f".{target.name}.old")
        shutil.rmtree(old, ignore_errors=True)
        os.replace(target, old)
    os.replace(new, target)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


#: A topic, its message type, and its messages: ``messages(typestore)`` gives (bag time
#: ns, message) pairs.
_Stream = tuple[str, str, Callable[[Any], Iterator[tuple[int, Any]]]]


def _joint_state_streams(obj: Motion, ros1: bool, topic: str | None, frame_id: str | None,
                         child_frame_id: str | None, extras: dict[str, Any]) -> list[_Stream]:
    """JointState on ``/joint_states`` (``topic``), and a free root's pose on ``/tf``
    (``frame_id`` → ``child_frame_id``, by default ``world`` → the skeleton's root body),
    as ``robot_state_publisher`` users replay a floating-base robot."""
    known = extras.get("topic") if extras.get("msgtype") == signals.JOINT_STATE else None
    tracks = signals.joint_state_tracks(obj)
    ns = _ros_stamps(next(iter(tracks.values())).timeline)

    def joints(store: Any) -> Iterator[tuple[int, Any]]:
        return signals.joint_state_messages(store, ros1, "", ns, tracks)
    streams: list[_Stream] = [(_topic(topic, known, "JointState", signals.JOINT_STATES_TOPIC),
                               signals.JOINT_STATE, joints)]
    if "root" in obj.tracks:
        root = obj.tracks["root"]
        parent = _name(frame_id, None, "world")
        child = _name(child_frame_id, None, obj.skeleton.bodies[0].name
                      if obj.skeleton is not None and obj.skeleton.bodies else "base_link")
        stamps = _ros_stamps(root.timeline)

        def transforms(store: Any) -> Iterator[tuple[int, Any]]:
            return _tf_messages(store, ros1, parent, child, stamps, root.data)
        streams.append(("/tf", TF_TYPE, transforms))
    return streams


def _tf_messages(store: Any, ros1: bool, parent: str, child: str, ns: Any,
                 data: Any) -> Iterator[tuple[int, Any]]:
    """One ``tf2_msgs/TFMessage`` per pose of ``data``: ``parent`` → ``child``."""
    types = store.types
    vector, quaternion = types["geometry_msgs/msg/Vector3"], types["geometry_msgs/msg/Quaternion"]
    transform, stamped = types["geometry_msgs/msg/Transform"], \
        types["geometry_msgs/msg/TransformStamped"]
    for index, (stamp, row) in enumerate(zip(ns.tolist(), data.tolist(), strict=True)):
        item = stamped(header=signals.header(store, ros1, index, stamp, parent),
                       child_frame_id=child, transform=transform(
                           translation=vector(x=row[0], y=row[1], z=row[2]),
                           rotation=quaternion(x=row[3], y=row[4], z=row[5], w=row[6])))
        yield stamp, types[TF_TYPE](transforms=[item])


def _write_messages(work: Path, ros1: bool, storage: str, streams: list[_Stream]) -> None:
    """Write each stream's messages on its topic."""
    try:
        from rosbags.rosbag1 import Writer as Writer1
        from rosbags.rosbag2 import StoragePlugin
        from rosbags.rosbag2 import Writer as Writer2
        from rosbags.typesys import Stores, get_typestore
    except ImportError:
        raise MotionkitError("writing bags needs rosbags (a motionkit dependency that is "
                             "missing here): pip install rosbags") from None
    store = get_typestore(Stores.ROS1_NOETIC if ros1 else Stores.ROS2_HUMBLE)
    if TF_TYPE not in store.types and any(msgtype == TF_TYPE for _, msgtype, _ in streams):
        from rosbags.typesys import get_types_from_msg  # ROS1's store lacks tf2_msgs

        store.register(get_types_from_msg("geometry_msgs/TransformStamped[] transforms",
                                          TF_TYPE))
    writer: Any
    if ros1:
        writer = Writer1(work)
        serialize = store.serialize_ros1
    else:
        plugin = StoragePlugin.MCAP if storage == "mcap" else StoragePlugin.SQLITE3
        writer = Writer2(work, version=8, storage_plugin=plugin)
        serialize = store.serialize_cdr
    with contextlib.ExitStack() as stack:
        stack.enter_context(writer)
        for topic, msgtype, messages in streams:
            connection = writer.add_connection(topic, msgtype, typestore=store)
            for stamp, msg in messages(store):
                writer.write(connection, stamp, serialize(msg, msgtype))


def _pose_source(obj: Motion, ros1: bool, message: str, frame: str, child: str,
                 ) -> tuple[str, Callable[[Any], Iterator[tuple[int, Any]]]]:
    """The message type and messages of the root pose (and, for Odometry, its twist:
    zeros where the motion has none, which ``losses`` names)."""
    root = obj.tracks["root"]
    ns = _ros_stamps(root.timeline)
    twist = None
    if message == "Odometry":
        zeros = np.zeros((root.frames, 3))
        twist = np.hstack([obj.tracks[name].data if name in obj.tracks else zeros
                           for name in TWIST_TRACKS])
    msgtype = ("nav_msgs/msg/Odometry" if message == "Odometry"
               else "geometry_msgs/msg/PoseStamped")

    def messages(store: Any) -> Iterator[tuple[int, Any]]:
        return _pose_messages(store, ros1, message, frame, child, ns, root.data, twist)
    return msgtype, messages


def _pose_messages(store: Any, ros1: bool, message: str, frame: str, child: str, ns: Any,
                   data: Any, twist: Any) -> Iterator[tuple[int, Any]]:
    """PoseStamped or Odometry messages of the root poses ``data`` at stamps ``ns``."""
    types = store.types
    msgtype = "nav_msgs/msg/Odometry" if message == "Odometry" else "geometry_msgs/msg/PoseStamped"
    zero_cov = np.zeros(36)
    point, quaternion = types["geometry_msgs/msg/Point"], types["geometry_msgs/msg/Quaternion"]
    pose_type, vector = types["geometry_msgs/msg/Pose"], types["geometry_msgs/msg/Vector3"]
    for index, (stamp, row) in enumerate(zip(ns.tolist(), data.tolist(), strict=True)):
        header = signals.header(store, ros1, index, stamp, frame)
        pose = pose_type(position=point(x=row[0], y=row[1], z=row[2]),
                         orientation=quaternion(x=row[3], y=row[4], z=row[5], w=row[6]))
        if message == "Odometry":
            lin, ang = twist[index, :3], twist[index, 3:]
            msg = types[msgtype](
                header=header, child_frame_id=child,
                pose=types["geometry_msgs/msg/PoseWithCovariance"](pose=pose,
                                                                   covariance=zero_cov),
                twist=types["geometry_msgs/msg/TwistWithCovariance"](
                    twist=types["geometry_msgs/msg/Twist"](
                        linear=vector(x=lin[0], y=lin[1], z=lin[2]),
                        angular=vector(x=ang[0], y=ang[1], z=ang[2])),
                    covariance=zero_cov))
        else:
            msg = types[msgtype](header=header, pose=pose)
        yield stamp, msg


def describe(obj: Motion) -> list[str]:
    """``info`` lines for the signal topics read (JointState, Imu, numeric): message type,
    message count and median rate, which time stamps them, the joint names, the tracks."""
    extras = found if isinstance(found := obj.meta.get("rosbag"), dict) else {}
    topics: dict[str, tuple[dict[str, object], list[Track]]] = {}
    if extras.get("msgtype") in signals.SIGNAL_TYPES:  # one topic read alone
        topics[str(extras.get("topic"))] = (extras, list(obj.tracks.values()))
    else:
        read = found if isinstance(found := extras.get("tracks"), dict) else {}
        for name, facts in read.items():
            if isinstance(facts, dict) and facts.get("msgtype") in signals.SIGNAL_TYPES \
                    and name in obj.tracks:
                entry = topics.setdefault(str(facts.get("topic")), (facts, []))
                entry[1].append(obj.tracks[name])
    if not topics:
        return []
    lines = []
    for key in ("topics", "tf_topics", "selectors"):
        if extras.get(key):
            lines.append(f"{key.replace('_', ' ')}: {', '.join(map(str, extras[key]))}")
    for topic_name, (facts, tracks) in topics.items():
        timeline = tracks[0].timeline
        steps = np.diff(timeline.times)
        rate = f", {1.0 / float(np.median(steps)):.6g} Hz (median)" if steps.size and \
            float(np.median(steps)) > 0 else ""
        time = facts.get("time_note") or f"{facts.get('time')} time"
        lines.append(f"topic {topic_name}: {facts.get('msgtype')}, {timeline.count} messages"
                     f"{rate}, stamped by {time}; tracks {', '.join(t.name for t in tracks)}")
        names = tracks[0].labels if facts.get("msgtype") == signals.JOINT_STATE else None
        if names:
            lines.append(f"  {len(names)} joints: {', '.join(names)}")
        if facts.get("partial_messages"):
            lines.append(f"  {facts['partial_messages']} message(s) name only some joints "
                         "(the others are gaps, NaN)")
    return lines


def sniff(head: bytes) -> bool:
    """ROS1 bag magic or MCAP magic."""
    return head.startswith(b"#ROSBAG V2.0") or head.startswith(b"\x89MCAP")


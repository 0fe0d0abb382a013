"""Signal topics of bags: JointState (mapped by name, empty arrays as gaps, not zeros),
header-less numeric arrays on the log time, Imu as vector tracks; the corpus bags against
rosbags' own read-back (readback.jsonl), and bad messages refused naming topic and time;
JointState written back, read by rosbags (the peer) and by us, for any names and values."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import motionkit as mk
from conftest import corpus_file, require_peer
from motionkit.errors import ConversionError, FormatError, MotionkitError, MotionkitWarning
from motionkit.ops import sync

BAGS = ["joint_states_ros1.bag", "joint_states_ros2"]
NAMES = [f"panda_joint{i}" for i in range(1, 8)]


def _readback(topic: str) -> list[dict[str, Any]]:
    lines = corpus_file("episodes", "bags", "readback.jsonl").read_text().splitlines()
    return [row for row in map(json.loads, lines) if row["topic"] == topic]


@pytest.mark.parametrize("name", BAGS)
def test_joint_states_equal_rosbags_read_back_by_name(name: str) -> None:
    motion = mk.read(f"{corpus_file('episodes', 'bags', name)}:/joint_states")
    rows = _readback("/joint_states")
    assert list(motion.tracks) == ["joints", "joints.velocity", "joints.effort"]
    joints = motion.tracks["joints"]
    assert joints.labels == NAMES and joints.kind == "value"
    assert joints.timeline.stamps_ns is not None
    assert joints.timeline.stamps_ns.tolist() == [row["stamp_ns"] for row in rows]
    assert motion.meta["rosbag"]["time"] == "header"
    for field, track in (("position", "joints"), ("velocity", "joints.velocity"),
                         ("effort", "joints.effort")):
        expected = np.full((len(rows), 7), np.nan)
        for k, row in enumerate(rows):
            for joint, value in zip(row["name"], row[field], strict=False):
                expected[k, NAMES.index(joint)] = value
        np.testing.assert_array_equal(motion.tracks[track].data, expected)
    velocity, effort = motion.tracks["joints.velocity"].data, motion.tracks["joints.effort"].data
    assert np.isnan(velocity[100]).all() and np.isnan(velocity[150]).all()
    assert np.isnan(effort[150]).all() and np.isfinite(effort[100]).all()
    assert rows[50]["name"] == NAMES[::-1]  # reversed in the file, in name order here
    np.testing.assert_array_equal(joints.data[50], rows[50]["position"][::-1])


@pytest.mark.parametrize("name", BAGS)
def test_a_header_less_command_uses_the_log_time_and_says_so(name: str) -> None:
    motion = mk.read(f"{corpus_file('episodes', 'bags', name)}:/cmd")
    rows = _readback("/cmd")
    data = motion.tracks["data"]
    assert data.timeline.stamps_ns is not None
    assert data.timeline.stamps_ns.tolist() == [row["log_time_ns"] for row in rows]
    np.testing.assert_array_equal(data.data, [row["data"] for row in rows])
    assert motion.meta["rosbag"]["time"] == "log"
    assert "receive" in str(motion.meta["rosbag"]["time_note"])
    assert data.attrs == {"interpolation": "hold"}  # ops.sync holds a command


@pytest.mark.parametrize("name", BAGS)
def test_a_whole_bag_gives_every_signal_topic_by_name(name: str) -> None:
    motion = mk.read(corpus_file("episodes", "bags", name))
    assert list(motion.tracks) == ["/cmd", "/joint_states", "/joint_states.velocity",
                                   "/joint_states.effort"]
    read = motion.meta["rosbag"]["tracks"]
    assert read["/cmd"]["time"] == "log" and read["/joint_states.effort"]["time"] == "header"
    assert read["/cmd"]["topic"] == "/cmd" and read["/joint_states.velocity"]["msgtype"] == \
        "sensor_msgs/msg/JointState"
    assert motion.tracks["/cmd"].attrs == {"interpolation": "hold"}  # ops.sync's default
    assert motion.tracks["/joint_states"].attrs == {}
    assert motion.tracks["/joint_states"].labels == NAMES
    forced = mk.read(f"{corpus_file('episodes', 'bags', name)}:/joint_states", time="log")
    stamps = forced.tracks["joints"].timeline.stamps_ns
    assert stamps is not None and stamps.tolist() == [row["log_time_ns"]
                                                      for row in _readback("/joint_states")]
    assert forced.meta["rosbag"]["time"] == "log"
    with pytest.raises(MotionkitError, match="time must be one of header, log, not 'wall'"):
        mk.read(f"{corpus_file('episodes', 'bags', name)}:/joint_states", time="wall")


Message = tuple[int, dict[str, Any]]


def _write_bag(path: Path, msgtype: str, messages: Iterable[Message],
               build: Callable[[Any, dict[str, Any]], Any]) -> Path:
    """A ROS2 bag of one topic /s, each message built by ``build(store, fields)``."""
    from rosbags.rosbag2 import Writer
    from rosbags.typesys import Stores, get_typestore

    store = get_typestore(Stores.ROS2_HUMBLE)
    with Writer(path, version=8) as writer:
        connection = writer.add_connection("/s", msgtype, typestore=store)
        for log_ns, fields in messages:
            writer.write(connection, log_ns, store.serialize_cdr(build(store, fields), msgtype))
    return path


def _header(store: Any, stamp_ns: int) -> Any:
    types = store.types
    return types["std_msgs/msg/Header"](stamp=types["builtin_interfaces/msg/Time"](
        sec=stamp_ns // 10**9, nanosec=stamp_ns % 10**9), frame_id="")


def _joint_state(store: Any, fields: dict[str, Any]) -> Any:
    arrays = {key: np.asarray(fields.get(key, []), dtype=np.float64)
              for key in ("position", "velocity", "effort")}
    return store.types["sensor_msgs/msg/JointState"](
        header=_header(store, fields["stamp"]), name=list(fields["name"]), **arrays)


def test_repeated_names_and_short_arrays_are_refused_naming_topic_and_time(
        tmp_path: Path) -> None:
    good = {"stamp": 10**9, "name": ["a", "b"], "position": [1.0, 2.0]}
    repeated = {"stamp": 2 * 10**9, "name": ["a", "a"], "position": [1.0, 2.0]}
    path = _write_bag(tmp_path / "rep", "sensor_msgs/msg/JointState",
                      [(10**9, good), (2 * 10**9, repeated)], _joint_state)
    with pytest.raises(FormatError, match=r"/s: the JointState at time 2000000000 ns "
                                          r"\(2\.000000000 s\) repeats joint name\(s\) a"):
        mk.read(f"{path}:/s")
    short = {"stamp": 3 * 10**9, "name": ["a", "b"], "position": [1.0]}
    path = _write_bag(tmp_path / "short", "sensor_msgs/msg/JointState",
                      [(10**9, good), (3 * 10**9, short)], _joint_state)
    with pytest.raises(FormatError, match=r"/s: the JointState at time 3000000000 ns.*1 "
                                          r"position values for 2 names"):
        mk.read(f"{path}:/s")


def test_subsets_of_names_join_as_gaps_and_absent_fields_give_no_track(
        tmp_path: Path) -> None:
    messages = [(10**9, {"stamp": 10**9, "name": ["arm", "wrist"], "position": [1.0, 2.0]}),
                (2 * 10**9, {"stamp": 0, "name": ["gripper"], "position": [0.5]}),
                (3 * 10**9, {"stamp": 3 * 10**9, "name": ["wrist", "arm"],
                             "position": [4.0, 3.0]})]
    path = _write_bag(tmp_path / "subsets", "sensor_msgs/msg/JointState", messages,
                      _joint_state)
    motion = mk.read(f"{path}:/s")
    assert list(motion.tracks) == ["joints"]  # no message has velocity or effort
    joints = motion.tracks["joints"]
    assert joints.labels == ["arm", "wrist", "gripper"]
    np.testing.assert_array_equal(joints.data, [[1, 2, np.nan], [np.nan, np.nan, 0.5],
                                                [3, 4, np.nan]])
    # the zero stamp falls back to the log time (rosetta #2), and that is recorded
    assert joints.timeline.stamps_ns is not None
    assert joints.timeline.stamps_ns.tolist() == [10**9, 2 * 10**9, 3 * 10**9]
    assert motion.meta["rosbag"]["time"] == "header+log"
    assert motion.meta["rosbag"]["partial_messages"] == 3  # each lacks a joint


def _imu(store: Any, fields: dict[str, Any]) -> Any:
    types = store.types
    vector, quat = types["geometry_msgs/msg/Vector3"], types["geometry_msgs/msg/Quaternion"]
    unknown = np.full(9, -1.0) if fields.get("no_orientation") else np.zeros(9)
    return types["sensor_msgs/msg/Imu"](
        header=_header(store, fields["stamp"]), orientation=quat(x=0.0, y=0.0, z=0.6, w=0.8),
        orientation_covariance=unknown,
        angular_velocity=vector(x=0.1, y=0.2, z=fields["stamp"] / 1e9),
        angular_velocity_covariance=np.zeros(9),
        linear_acceleration=vector(x=0.0, y=0.0, z=9.81),
        linear_acceleration_covariance=np.zeros(9))


def test_imu_gives_vector_tracks_and_leaves_out_unknown_orientation(tmp_path: Path) -> None:
    stamps = [10**9 + k * 5_000_000 for k in range(4)]
    path = _write_bag(tmp_path / "imu", "sensor_msgs/msg/Imu",
                      [(s, {"stamp": s}) for s in stamps], _imu)
    motion = mk.read(f"{path}:/s")
    assert {n: t.kind for n, t in motion.tracks.items()} == {
        "imu.orientation": "quaternion", "imu.angular_velocity": "vector3",
        "imu.linear_acceleration": "vector3"}
    np.testing.assert_array_equal(motion.tracks["imu.orientation"].data[0], [0, 0, 0.6, 0.8])
    np.testing.assert_allclose(motion.tracks["imu.angular_velocity"].data[:, 2],
                               np.array(stamps) / 1e9)
    path = _write_bag(tmp_path / "imu2", "sensor_msgs/msg/Imu",
                      [(s, {"stamp": s, "no_orientation": True}) for s in stamps], _imu)
    assert "imu.orientation" not in mk.read(f"{path}:/s").tracks  # covariance -1: not given


def test_numeric_arrays_that_change_length_are_refused(tmp_path: Path) -> None:
    def build(store: Any, fields: dict[str, Any]) -> Any:
        return store.types["std_msgs/msg/Float64MultiArray"](
            layout=store.types["std_msgs/msg/MultiArrayLayout"](dim=[], data_offset=0),
            data=np.asarray(fields["data"], dtype=np.float64))

    path = _write_bag(tmp_path / "num", "std_msgs/msg/Float64MultiArray",
                      [(10**9, {"data": [1.0, 2.0]}), (2 * 10**9, {"data": [1.0]})], build)
    with pytest.raises(FormatError, match=r"/s: the message at time 2000000000 ns.*holds 1 "
                                          r"numbers, the first one 2"):
        mk.read(f"{path}:/s")


def _peer_messages(target: Path) -> list[tuple[int, Any]]:
    """Every message of the bag as rosbags' AnyReader decodes it (the peer)."""
    require_peer("rosbags")
    from rosbags.highlevel import AnyReader

    with AnyReader([target]) as reader:
        (connection,) = reader.connections
        assert connection.msgtype == "sensor_msgs/msg/JointState"
        assert connection.topic == "/joint_states"
        return [(t, reader.deserialize(raw, connection.msgtype))
                for _, t, raw in reader.messages()]


@pytest.mark.parametrize(("out", "storage"), [("out.bag", None), ("out.mcap", None),
                                              ("folder", "sqlite3"), ("mcap_folder", "mcap")])
def test_joint_states_written_back_read_by_rosbags_and_by_us(tmp_path: Path, out: str,
                                                             storage: str | None) -> None:
    source = mk.read(f"{corpus_file('episodes', 'bags', 'joint_states_ros1.bag')}:/joint_states")
    target = tmp_path / out
    mk.write(target, source, format="rosbag", message="JointState", storage=storage)
    rows = _readback("/joint_states")
    peer = _peer_messages(target)
    assert [t for t, _ in peer] == [row["stamp_ns"] for row in rows]  # bag time = stamp
    for (_, message), row in zip(peer, rows, strict=True):
        order = [row["name"].index(name) for name in NAMES]  # written in label order
        assert list(message.name) == NAMES
        for field in ("position", "velocity", "effort"):
            expected = [row[field][i] for i in order] if row[field] else []
            assert getattr(message, field).tolist() == expected  # empty stays empty
    again = mk.read(f"{target}:/joint_states")
    for name, track in source.tracks.items():
        np.testing.assert_array_equal(again.tracks[name].data, track.data)
        assert again.tracks[name].labels == NAMES
        assert np.array_equal(again.tracks[name].timeline.stamps_ns, track.timeline.stamps_ns)


def _joints(names: list[str] | None, values: np.ndarray, ns: np.ndarray) -> mk.Motion:
    motion = mk.Motion()
    motion.add(mk.Track("joints", "value", values, mk.Timeline.from_nanoseconds(ns),
                        labels=names))
    return motion


def test_unnamed_joints_and_stray_tracks_are_losses(tmp_path: Path) -> None:
    motion = _joints(None, np.zeros((3, 2)), np.arange(1, 4) * 10**9)
    with pytest.raises(ConversionError, match=r"joint names for track 'joints'.*joint_0 … "
                                              r"joint_1"):
        mk.write(tmp_path / "a.bag", motion, message="JointState")
    with pytest.warns(MotionkitWarning):
        mk.write(tmp_path / "a.bag", motion, message="JointState", lossy=True)
    assert mk.read(f"{tmp_path / 'a.bag'}:/joint_states").tracks["joints"].labels == [
        "joint_0", "joint_1"]
    named = _joints(["a", "b"], np.zeros((3, 2)), np.arange(1, 4) * 10**9)
    named.add(mk.Track("joints.velocity", "value", np.zeros((3, 2)),
                       mk.Timeline.from_nanoseconds(np.arange(1, 4) * 10**9), labels=["a", "c"]))
    with pytest.raises(ConversionError, match=r"'joints\.velocity' \(its joints differ"):
        mk.write(tmp_path / "b.bag", named, message="JointState")
    never = _joints(["a", "b"], np.array([[1.0, np.nan], [2.0, np.nan]]), np.arange(1, 3))
    with pytest.raises(ConversionError, match=r"joint 'b' of track 'joints' \(no frame has"):
        mk.write(tmp_path / "d.bag", never, message="JointState")
    with pytest.raises(ConversionError, match="message must be PoseStamped, Odometry, "
                                              "JointState"):
        mk.write(tmp_path / "c.bag", named, message="Joints")


@pytest.mark.parametrize(("labels", "frames", "shift"), [
    (["a", "c"], 3, 0),  # other joints
    (["a", "b", "c"], 3, 0),  # more joints: the main ones' columns once went out
    (["a", "b"], 2, 0),  # fewer frames
    (["b", "a"], 3, 5),  # the same frames at other times
])
def test_a_lossy_write_leaves_out_the_track_the_loss_names(
        tmp_path: Path, labels: list[str], frames: int, shift: int) -> None:
    ns = np.arange(1, 4) * 10**9
    motion = _joints(["a", "b"], np.arange(6.0).reshape(3, 2), ns)
    motion.add(mk.Track("joints.velocity", "value", np.ones((frames, len(labels))),
                        mk.Timeline.from_nanoseconds(ns[:frames] + shift), labels=labels))
    motion.add(mk.Track("joints.effort", "value", np.full((3, 2), 7.0),
                        mk.Timeline.from_nanoseconds(ns), labels=["a", "b"]))
    with pytest.warns(MotionkitWarning, match=r"dropped track 'joints\.velocity' \(its"):
        mk.write(tmp_path / "a.bag", motion, message="JointState", lossy=True)
    again = mk.read(f"{tmp_path / 'a.bag'}:/joint_states")
    assert "joints.velocity" not in again.tracks  # what the warning says: not written
    np.testing.assert_array_equal(again.tracks["joints"].data, motion.tracks["joints"].data)
    np.testing.assert_array_equal(again.tracks["joints.effort"].data, np.full((3, 2), 7.0))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(names=st.lists(st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]),
                              min_size=1, max_size=12), min_size=1, max_size=8, unique=True),
       frames=st.integers(1, 6), seed=st.integers(0, 2**32 - 1),
       suffix=st.sampled_from([".bag", ".mcap"]))
def test_any_names_and_values_round_trip(tmp_path: Path, names: list[str], frames: int,
                                         seed: int, suffix: str) -> None:
    rng = np.random.default_rng(seed)
    values = rng.normal(scale=10.0, size=(frames, len(names)))
    values[rng.random(values.shape) < 0.2] = np.nan  # joints missing from some messages
    values[0] = rng.normal(size=len(names))  # every joint is named somewhere
    ns = np.cumsum(rng.integers(1, 10**9, size=frames)) + 10**9
    motion = _joints(names, values, ns)
    target = tmp_path / f"p{seed}{suffix}"
    mk.write(target, motion, message="JointState")
    again = mk.read(f"{target}:/joint_states").tracks["joints"]
    assert again.labels == names
    np.testing.assert_array_equal(again.data, values)
    assert again.timeline.stamps_ns is not None and again.timeline.stamps_ns.tolist() == ns.tolist()
    peer = _peer_messages(target)
    for (_, message), row in zip(peer, values, strict=True):
        assert list(message.name) == [n for n, v in zip(names, row, strict=True) if v == v]
        assert message.velocity.size == 0 and message.effort.size == 0


@pytest.mark.parametrize("address", ["", ":/joint_states"])
def test_info_lists_signal_topics_with_names_and_rates(address: str) -> None:
    from motionkit.formats import registry

    path = corpus_file("episodes", "bags", "joint_states_ros2")
    lines = registry.by_name("rosbag").describe(mk.read(f"{path}{address}"))
    tracks = ("joints, joints.velocity, joints.effort" if address else
              "/joint_states, /joint_states.velocity, /joint_states.effort")
    assert ("topic /joint_states: sensor_msgs/msg/JointState, 200 messages, 100 Hz (median), "
            f"stamped by header time; tracks {tracks}") in lines
    assert f"  7 joints: {', '.join(NAMES)}" in lines
    if not address:
        assert ("topic /cmd: std_msgs/msg/Float64MultiArray, 100 messages, 50 Hz (median), "
                "stamped by bag receive (log) time: the messages have no header; tracks /cmd"
                ) in lines
    pose = corpus_file("evo", "ROS_example.bag")
    assert registry.by_name("rosbag").describe(mk.read(f"{pose}:groundtruth")) == []


def test_a_bag_with_one_pose_topic_keeps_its_root_beside_the_signals(tmp_path: Path) -> None:
    from rosbags.rosbag2 import Writer
    from rosbags.typesys import Stores, get_typestore

    store = get_typestore(Stores.ROS2_HUMBLE)
    types = store.types
    path = tmp_path / "mixed"
    with Writer(path, version=8) as writer:
        odom = writer.add_connection("/pose", "geometry_msgs/msg/PoseStamped", typestore=store)
        joints = writer.add_connection("/joint_states", "sensor_msgs/msg/JointState",
                                       typestore=store)
        for k in range(3):
            stamp = 10**9 + k * 10**8
            pose = types["geometry_msgs/msg/Pose"](
                position=types["geometry_msgs/msg/Point"](x=float(k), y=0.0, z=0.0),
                orientation=types["geometry_msgs/msg/Quaternion"](x=0.0, y=0.0, z=0.0, w=1.0))
            msg = types["geometry_msgs/msg/PoseStamped"](header=_header(store, stamp), pose=pose)
            writer.write(odom, stamp, store.serialize_cdr(msg, odom.msgtype))
            state = _joint_state(store, {"stamp": stamp, "name": ["a"], "position": [k / 2]})
            writer.write(joints, stamp, store.serialize_cdr(state, joints.msgtype))
    motion = mk.read(path)
    assert list(motion.tracks) == ["root", "/joint_states"]
    assert motion.meta["rosbag"]["topic"] == "/pose"
    np.testing.assert_array_equal(motion.tracks["root"].data[:, 0], [0, 1, 2])
    np.testing.assert_array_equal(motion.tracks["/joint_states"].data[:, 0], [0, 0.5, 1])
    both = mk.read(f"{path}:/pose,/joint_states")
    assert list(both.tracks) == ["/pose", "/joint_states"]
    with pytest.raises(FormatError, match="selector '/pose' names tracks already read"):
        mk.read(f"{path}:/pose,/joint_states,/pose")


def test_joint_states_beside_an_unparseable_connection(tmp_path: Path) -> None:
    """The tolerant reader (a bag with a type rosbags cannot parse) decodes JointState too."""
    from rosbags.rosbag2 import StoragePlugin, Writer
    from rosbags.typesys import Stores, get_typestore

    store = get_typestore(Stores.ROS2_HUMBLE)
    folder = tmp_path / "tolerant"
    with Writer(folder, version=8, storage_plugin=StoragePlugin.MCAP) as writer:
        joints = writer.add_connection("/joint_states", "sensor_msgs/msg/JointState",
                                       typestore=store)
        writer.add_connection("/add/_service_event", "example_interfaces/srv/AddTwoInts_Event",
                              msgdef="int64 a\nint64 b\n---\nint64 sum\n", rihs01="RIHS01_00")
        for k in range(3):
            state = _joint_state(store, {"stamp": 10**9 + k, "name": ["a", "b"],
                                         "position": [k, -k], "effort": [0.5, 0.25]})
            writer.write(joints, 10**9 + k, store.serialize_cdr(state, joints.msgtype))
    with pytest.warns(MotionkitWarning, match="AddTwoInts_Event"):
        motion = mk.read(f"{folder}:/joint_states")
    np.testing.assert_array_equal(motion.tracks["joints"].data, [[0, 0], [1, -1], [2, -2]])
    np.testing.assert_array_equal(motion.tracks["joints.effort"].data, [[0.5, 0.25]] * 3)
    assert "joints.velocity" not in motion.tracks


def test_a_static_transform_holds_on_every_synchronised_frame(tmp_path: Path) -> None:
    from rosbags.rosbag2 import Writer
    from rosbags.typesys import Stores, get_typestore

    store = get_typestore(Stores.ROS2_HUMBLE)
    types = store.types
    path = tmp_path / "static"
    with Writer(path, version=8) as writer:
        static = writer.add_connection("/tf_static", "tf2_msgs/msg/TFMessage", typestore=store)
        joints = writer.add_connection("/joint_states", "sensor_msgs/msg/JointState",
                                       typestore=store)
        transform = types["geometry_msgs/msg/TransformStamped"](
            header=_header(store, 5), child_frame_id="base_link",
            transform=types["geometry_msgs/msg/Transform"](
                translation=types["geometry_msgs/msg/Vector3"](x=1.0, y=2.0, z=3.0),
                rotation=types["geometry_msgs/msg/Quaternion"](x=0.0, y=0.0, z=0.0, w=1.0)))
        transform.header.frame_id = "world"
        message = types["tf2_msgs/msg/TFMessage"](transforms=[transform])
        writer.write(static, 5, store.serialize_cdr(message, static.msgtype))
        for k in range(11):
            stamp = 10**9 + k * 10**8
            state = _joint_state(store, {"stamp": stamp, "name": ["a"], "position": [k]})
            writer.write(joints, stamp, store.serialize_cdr(state, joints.msgtype))
    motion = mk.read(f"{path}:/joint_states,tf:world->base_link")
    assert motion.meta["rosbag"]["tracks"]["world->base_link"]["static"] is True
    synced = mk.ops.sync(motion, 5)
    chain = synced.tracks["world->base_link"]
    assert chain.frames == 6 and chain.attrs == {}
    np.testing.assert_array_equal(chain.data, [[1, 2, 3, 0, 0, 0, 1]] * 6)
    np.testing.assert_allclose(synced.tracks["/joint_states"].data[:, 0], [0, 2, 4, 6, 8, 10])
    assert synced.meta["sync"]["methods"]["world->base_link"] == "static"


def test_a_whole_bag_read_names_the_camera_topics_it_leaves_out(tmp_path: Path) -> None:
    """Issue 26: where a source has camera topics, the loss rule names them (every writer,
    the bag's own too: no motion read from the bag holds the images)."""
    from rosbags.rosbag2 import Writer
    from rosbags.typesys import Stores, get_typestore

    store = get_typestore(Stores.ROS2_HUMBLE)
    folder = tmp_path / "cam"
    with Writer(folder, version=8) as writer:
        joints = writer.add_connection("/joint_states", "sensor_msgs/msg/JointState",
                                       typestore=store)
        image = writer.add_connection("/camera/image_raw", "sensor_msgs/msg/Image",
                                      typestore=store)
        for k in range(4):
            stamp = 10**9 + k * 10**8
            state = _joint_state(store, {"stamp": stamp, "name": ["a"], "position": [k]})
            writer.write(joints, stamp, store.serialize_cdr(state, joints.msgtype))
            frame = store.types["sensor_msgs/msg/Image"](
                header=_header(store, stamp), height=1, width=1, encoding="mono8",
                is_bigendian=0, step=1, data=np.zeros(1, np.uint8))
            writer.write(image, stamp, store.serialize_cdr(frame, image.msgtype))
    motion = mk.read(folder)
    unread = "topic /camera/image_raw (sensor_msgs/msg/Image, 4 messages)"
    assert motion.meta["not_read"] == [unread]
    assert "not_read" not in mk.read(f"{folder}:/joint_states").meta  # the topic asked for
    synced = sync(motion, 10)  # what `convert --to lerobot --fps 10` does
    assert synced.meta["not_read"] == [unread]
    target = tmp_path / "dataset"
    with pytest.raises(ConversionError, match=re.escape(unread + " (not read")):
        mk.write(target, synced, format="lerobot", task="t")
    with pytest.warns(MotionkitWarning, match=re.escape(f"dropped {unread} (not read")):
        mk.write(target, synced, format="lerobot", task="t", lossy=True)
    assert "not_read" not in mk.read(target).meta  # the loss is not passed on

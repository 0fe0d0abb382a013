"""ROS bags: the corpus bag, every supported message type, TF chains, our writers read by
rosbags, evo and trajectopy, and exact nanosecond round trips."""

from __future__ import annotations

import shutil
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import motionkit as mk
from conftest import corpus_file, require_peer
from motionkit.errors import ConversionError, FormatError, MotionkitWarning
from motionkit.formats.rosbag import bag
from motionkit.formats.rosbag.tf import TfBuffer
from motionkit.model import Motion, Timeline, Track
from motionkit.spatial.quaternion import rotate

EXPECTED_TOPICS = {"groundtruth": 12765, "ORB-SLAM": 8362, "S-PTAM": 5439}


def test_corpus_bag_lists_every_topic() -> None:
    path = corpus_file("evo", "ROS_example.bag")
    motion = mk.read(path)
    assert {name: track.frames for name, track in motion.tracks.items()} == EXPECTED_TOPICS
    assert motion.meta["rosbag"]["topics"] == sorted(EXPECTED_TOPICS)
    assert {t for t, _, _ in bag.topics(path)} == set(EXPECTED_TOPICS)


def test_corpus_topic_matches_evo() -> None:
    path = corpus_file("evo", "ROS_example.bag")
    motion = mk.read(f"{path}:groundtruth")
    root = motion.tracks["root"]
    assert motion.meta["rosbag"]["frame_id"] == "groundtruth"
    assert root.timeline.stamps_ns is not None
    require_peer("evo")
    from evo.tools import file_interface
    from rosbags.rosbag1 import Reader

    with Reader(path) as reader:
        peer = file_interface.read_bag_trajectory(reader, "groundtruth")
    # evo adds sec + nanosec * 1e-9 in float64; we divide the exact integer ns once, so
    # the two differ by at most one float64 step at 1.5e9 s (2.4e-7 s)
    np.testing.assert_allclose(root.times, peer.timestamps, atol=2.5e-7, rtol=0)
    np.testing.assert_allclose(root.data[:, :3], peer.positions_xyz, atol=1e-12, rtol=0)
    np.testing.assert_allclose(root.data[:, 3:], peer.orientations_quat_wxyz[:, [1, 2, 3, 0]],
                               atol=1e-12, rtol=0)


def test_unknown_topic_and_bad_file(tmp_path: Path) -> None:
    path = corpus_file("evo", "ROS_example.bag")
    with pytest.raises(FormatError, match=r"no topic '/nope'.*groundtruth"):
        mk.read(f"{path}:/nope")
    broken = tmp_path / "broken.bag"
    broken.write_bytes(b"#ROSBAG V2.0\nnot really")
    with pytest.raises(FormatError, match="not a readable ROS bag"):
        mk.read(broken)


def _motion(frames: int = 5) -> Motion:
    ns = 1_700_000_000_000_000_000 + np.arange(frames, dtype=np.int64) * 33_333_333 + 7
    angle = np.linspace(0, 1, frames)
    pose = np.zeros((frames, 7))
    pose[:, 0] = np.arange(frames) * 0.5
    pose[:, 1] = -1.25
    pose[:, 5] = np.sin(angle / 2)
    pose[:, 6] = np.cos(angle / 2)
    motion = Motion(meta={"name": "w"})
    motion.add(Track("root", "pose", pose, Timeline.from_nanoseconds(ns)))
    return motion


@pytest.mark.parametrize(("name", "storage"), [("out.bag", None), ("out.mcap", None),
                                              ("out_folder", "sqlite3"),
                                              ("out_mcap_folder", "mcap")])
def test_write_read_exact_and_rosbags_reads_it(tmp_path: Path, name: str,
                                               storage: str | None) -> None:
    motion = _motion()
    target = tmp_path / name
    mk.write(target, motion, format="rosbag", topic="/pose", frame_id="odom", storage=storage)
    if storage == "mcap":
        assert list(target.glob("*.mcap"))
    again = mk.read(f"{target}:/pose")
    root = motion.tracks["root"]
    assert np.array_equal(again.tracks["root"].timeline.stamps_ns, root.timeline.stamps_ns)
    assert np.array_equal(again.tracks["root"].data, root.data)
    assert again.meta["rosbag"]["frame_id"] == "odom"
    require_peer("rosbags")
    from rosbags.highlevel import AnyReader

    with AnyReader([target]) as reader:
        (connection,) = reader.connections
        assert connection.msgtype == "geometry_msgs/msg/PoseStamped"
        stamps = [t for _, t, _ in reader.messages()]
        first = reader.deserialize(next(reader.messages())[2], connection.msgtype)
    assert stamps == root.timeline.stamps_ns.tolist()
    assert first.header.stamp.nanosec == 7 and first.pose.position.y == -1.25


def test_evo_and_trajectopy_read_our_bag(tmp_path: Path) -> None:
    motion = _motion()
    target = tmp_path / "out.bag"
    mk.write(target, motion)
    mk.write(target, motion)  # replacing an existing bag is fine (atomic)
    require_peer("evo")
    from evo.tools import file_interface
    from rosbags.rosbag1 import Reader

    with Reader(target) as reader:
        peer = file_interface.read_bag_trajectory(reader, "/trajectory")
    np.testing.assert_allclose(peer.positions_xyz, motion.tracks["root"].data[:, :3])
    require_peer("trajectopy")
    from trajectopy.io import rosbag as trajectopy_bag

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        found = trajectopy_bag.trajectories_from_rosbag(str(target))
    (peer2,) = found
    np.testing.assert_allclose(peer2.timestamps, motion.tracks["root"].times, atol=1e-9)
    np.testing.assert_allclose(peer2.positions.xyz, motion.tracks["root"].data[:, :3])


def test_odometry_round_trip_and_refusals(tmp_path: Path) -> None:
    motion = _motion()
    timeline = motion.tracks["root"].timeline
    motion.add(Track("twist_linear", "vector3", np.ones((5, 3)), timeline))
    with pytest.raises(ConversionError, match="twist_linear"):
        mk.write(tmp_path / "p.bag", motion, message="PoseStamped")
    with pytest.raises(ConversionError, match="invented zeros for twist_angular"):
        mk.write(tmp_path / "p.bag", motion)  # a twist makes Odometry the default
    with pytest.warns(MotionkitWarning, match="invented zeros for twist_angular"):
        mk.write(tmp_path / "o.bag", motion, child_frame_id="base", lossy=True)
    again = mk.read(tmp_path / "o.bag")
    assert again.meta["rosbag"]["child_frame_id"] == "base"
    np.testing.assert_array_equal(again.tracks["twist_linear"].data, np.ones((5, 3)))
    np.testing.assert_array_equal(again.tracks["twist_angular"].data, np.zeros((5, 3)))
    mk.write(tmp_path / "o2.bag", again)  # Odometry in, Odometry out, frames kept
    twice = mk.read(tmp_path / "o2.bag")
    assert twice.meta["rosbag"]["msgtype"].endswith("Odometry")
    assert twice.tracks["twist_linear"].attrs == {"frame": "base"}
    again.tracks["twist_angular"].attrs["frame"] = "imu"
    with pytest.raises(ConversionError, match="the frame 'imu' of track 'twist_angular'"):
        mk.write(tmp_path / "o3.bag", again)


def _stamp(types: Any, ns: int) -> Any:
    return types["builtin_interfaces/msg/Time"](sec=ns // 10**9, nanosec=ns % 10**9)


def _write_bag(path: Path, items: list[tuple[str, str, int, Any]], store: Any) -> None:
    from rosbags.rosbag2 import Writer

    with Writer(path, version=8) as writer:
        connections: dict[str, Any] = {}
        for topic, msgtype, ns, msg in items:
            if topic not in connections:
                connections[topic] = writer.add_connection(topic, msgtype, typestore=store)
            writer.write(connections[topic], ns, store.serialize_cdr(msg, msgtype))


def _geometry(types: Any, xyz: tuple[float, float, float], yaw: float) -> tuple[Any, Any]:
    point = types["geometry_msgs/msg/Point"](x=xyz[0], y=xyz[1], z=xyz[2])
    quat = types["geometry_msgs/msg/Quaternion"](x=0.0, y=0.0, z=np.sin(yaw / 2),
                                                 w=np.cos(yaw / 2))
    return point, quat


def test_every_message_type_and_tf_chain(tmp_path: Path) -> None:
    require_peer("rosbags")
    from rosbags.typesys import Stores, get_typestore

    store = get_typestore(Stores.ROS2_HUMBLE)
    types = store.types
    header_t = types["std_msgs/msg/Header"]
    pose_t = types["geometry_msgs/msg/Pose"]
    vec = types["geometry_msgs/msg/Vector3"]
    items: list[tuple[str, str, int, Any]] = []
    base = 1_600_000_000_000_000_000
    for i in range(4):
        ns = base + i * 100_000_000
        header = header_t(stamp=_stamp(types, ns), frame_id="map")
        point, quat = _geometry(types, (float(i), 0.0, 0.0), 0.1 * i)
        pose = pose_t(position=point, orientation=quat)
        cov = np.zeros(36)
        items += [
            ("/ps", "geometry_msgs/msg/PoseStamped", ns,
             types["geometry_msgs/msg/PoseStamped"](header=header, pose=pose)),
            ("/pwc", "geometry_msgs/msg/PoseWithCovarianceStamped", ns,
             types["geometry_msgs/msg/PoseWithCovarianceStamped"](
                 header=header, pose=types["geometry_msgs/msg/PoseWithCovariance"](
                     pose=pose, covariance=cov))),
            ("/pt", "geometry_msgs/msg/PointStamped", ns,
             types["geometry_msgs/msg/PointStamped"](header=header, point=point)),
            ("/ts", "geometry_msgs/msg/TransformStamped", ns,
             types["geometry_msgs/msg/TransformStamped"](
                 header=header, child_frame_id="base_link",
                 transform=types["geometry_msgs/msg/Transform"](
                     translation=vec(x=point.x, y=point.y, z=point.z), rotation=quat))),
        ]
        odom_tf = types["geometry_msgs/msg/TransformStamped"](
            header=header_t(stamp=_stamp(types, ns), frame_id="odom"),
            child_frame_id="base_link",
            transform=types["geometry_msgs/msg/Transform"](
                translation=vec(x=float(i), y=0.0, z=0.0), rotation=quat))
        items.append(("/tf", "tf2_msgs/msg/TFMessage", ns,
                      types["tf2_msgs/msg/TFMessage"](transforms=[odom_tf])))
    static = types["geometry_msgs/msg/TransformStamped"](
        header=header_t(stamp=_stamp(types, base), frame_id="map"), child_frame_id="odom",
        transform=types["geometry_msgs/msg/Transform"](
            translation=vec(x=0.0, y=10.0, z=0.0),
            rotation=types["geometry_msgs/msg/Quaternion"](x=0.0, y=0.0, z=np.sin(np.pi / 4),
                                                           w=np.cos(np.pi / 4))))
    items.insert(0, ("/tf_static", "tf2_msgs/msg/TFMessage", base,
                     types["tf2_msgs/msg/TFMessage"](transforms=[static])))
    path_msg = types["nav_msgs/msg/Path"](
        header=header_t(stamp=_stamp(types, base), frame_id="map"),
        poses=[types["geometry_msgs/msg/PoseStamped"](
            header=header_t(stamp=_stamp(types, base + k), frame_id="map"),
            pose=pose_t(position=_geometry(types, (k, k, 0.0), 0.0)[0],
                        orientation=_geometry(types, (0, 0, 0), 0.0)[1]))
            for k in range(3)])
    items.append(("/path", "nav_msgs/msg/Path", base, path_msg))
    folder = tmp_path / "ros2bag"
    _write_bag(folder, items, store)

    for topic in ("/ps", "/pwc", "/ts"):
        root = mk.read(f"{folder}:{topic}").tracks["root"]
        np.testing.assert_allclose(root.data[:, 0], [0, 1, 2, 3])
        np.testing.assert_allclose(root.data[3, 5:], [np.sin(0.15), np.cos(0.15)])
        assert root.timeline.stamps_ns[1] == base + 100_000_000
    point = mk.read(f"{folder}:/pt").tracks["root"]
    assert point.attrs["orientation"] is False
    path = mk.read(f"{folder}:/path").tracks["root"]
    np.testing.assert_allclose(path.data[:, :2], [[0, 0], [1, 1], [2, 2]])

    chain = mk.read(f"{folder}:tf:map->base_link")
    root = chain.tracks["root"]
    assert root.frames == 4
    # map->odom: +10 y and 90 deg yaw; odom->base_link: (i, 0, 0)
    np.testing.assert_allclose(root.data[:, :3], [[0, 10 + i, 0] for i in range(4)],
                               atol=1e-12)
    forward = rotate(root.data[2, 3:], [1.0, 0.0, 0.0])
    np.testing.assert_allclose(forward, [-np.sin(0.2), np.cos(0.2), 0], atol=1e-12)
    inverse = mk.read(f"{folder}:tf:base_link->map").tracks["root"]
    np.testing.assert_allclose(rotate(inverse.data[:, 3:], root.data[:, :3]),
                               -inverse.data[:, :3], atol=1e-9)
    with pytest.raises(FormatError, match="no TF chain"):
        mk.read(f"{folder}:tf:map->camera")
    listing = mk.read(folder)
    assert set(listing.tracks) == {"/ps", "/pwc", "/pt", "/ts", "/path"}
    assert listing.meta["rosbag"]["tf_topics"] == ["/tf", "/tf_static"]
    tf_only = tmp_path / "tf_only"
    _write_bag(tf_only, [item for item in items if item[0] in ("/tf", "/tf_static")], store)
    with pytest.raises(FormatError, match="odom->base_link"):
        mk.read(tf_only)


def test_tf_buffer_interpolates_between_stamps() -> None:
    buffer = TfBuffer()
    buffer.add("a", "b", 0, (0.0, 0, 0, 0, 0, 0, 1), static=False)
    buffer.add("a", "b", 10, (1.0, 0, 0, 0, 0, np.sin(0.5), np.cos(0.5)), static=False)
    buffer.add("b", "c", 5, (0.0, 0, 0, 0, 0, 0, 1), static=False)
    buffer.add("b", "c", 7, (0.0, 2, 0, 0, 0, 0, 1), static=False)
    stamps, poses = buffer.lookup("a", "c")
    assert stamps.tolist() == [5, 7]  # span covered by both dynamic edges
    np.testing.assert_allclose(poses[0, 3:], [0, 0, np.sin(0.25), np.cos(0.25)], atol=1e-12)
    np.testing.assert_allclose(poses[1, 0], 0.7 - 2 * np.sin(0.7), atol=1e-12)


def test_tf_buffer_normalises_static_and_single_sample_edges() -> None:
    buffer = TfBuffer()
    buffer.add("map", "odom", 0, (0.0, 0, 0, 0, 0, 0, 2.0), static=True)  # not unit
    buffer.add("odom", "base", 5, (1.0, 0, 0, 0, 0, 3.0, 0), static=False)  # single sample
    stamps, poses = buffer.lookup("map", "base")
    assert stamps.tolist() == [5]
    np.testing.assert_allclose(poses[0], [1, 0, 0, 0, 0, 1, 0], atol=1e-15)
    stamps, poses = buffer.lookup("base", "map")
    np.testing.assert_allclose(poses[0], [1, 0, 0, 0, 0, -1, 0], atol=1e-15)


def test_tf_buffer_refuses_zero_quaternion_and_disjoint_edges() -> None:
    buffer = TfBuffer()
    buffer.add("map", "odom", 7, (0.0, 0, 0, 0, 0, 0, 0), static=True)
    with pytest.raises(FormatError, match="TF map->odom: zero or invalid quaternion at stamp 7"):
        buffer.lookup("map", "odom")
    buffer = TfBuffer()
    for stamp in (0, 10):
        buffer.add("map", "odom", stamp, (0.0, 0, 0, 0, 0, 0, 1), static=False)
    for stamp in (20, 30):
        buffer.add("odom", "base", stamp, (1.0, 0, 0, 0, 0, 0, 1), static=False)
    with pytest.raises(FormatError, match=r"map->odom 0\.\.10 ns, odom->base 20\.\.30 ns"):
        buffer.lookup("map", "base")


def test_refused_folder_replacement(tmp_path: Path) -> None:
    target = tmp_path / "plain"
    target.mkdir()
    (target / "keep.txt").write_text("x")
    with pytest.raises(ConversionError, match="not a ROS2 bag folder"):
        mk.write(target, _motion(), format="rosbag")
    assert (target / "keep.txt").exists()
    shutil.rmtree(target)


def _tf_bag(path: Path, stamps: list[int]) -> None:
    """A ROS2 bag with one dynamic /tf edge map->base at ``stamps`` (x = index)."""
    require_peer("rosbags")
    from rosbags.typesys import Stores, get_typestore

    store = get_typestore(Stores.ROS2_HUMBLE)
    types = store.types
    items: list[tuple[str, str, int, Any]] = []
    for i, ns in enumerate(stamps):
        transform = types["geometry_msgs/msg/TransformStamped"](
            header=types["std_msgs/msg/Header"](stamp=_stamp(types, ns), frame_id="map"),
            child_frame_id="base",
            transform=types["geometry_msgs/msg/Transform"](
                translation=types["geometry_msgs/msg/Vector3"](x=float(i), y=0.0, z=0.0),
                rotation=_geometry(types, (0, 0, 0), 0.0)[1]))
        items.append(("/tf", "tf2_msgs/msg/TFMessage", ns,
                      types["tf2_msgs/msg/TFMessage"](transforms=[transform])))
    _write_bag(path, items, store)


def test_float_second_stamps_survive_a_bag_bit_for_bit(tmp_path: Path) -> None:
    times = np.array([1700000000.2216997, 1700000000.3, 1700000001.123456])
    motion = Motion()
    motion.add(Track("root", "pose", _motion(3).tracks["root"].data, Timeline.stamped(times)))
    mk.write(tmp_path / "f.bag", motion)
    root = mk.read(tmp_path / "f.bag").tracks["root"]
    # t * 1e9 in float64 wrote ...221699840 (125 ns off) and read back 1700000000.2217
    assert root.timeline.stamps_ns.tolist() == [1700000000221699715, 1700000000299999952,
                                                1700000001123456001]
    assert root.times.tolist() == times.tolist()


def test_tf_stamps_closer_than_float_seconds_resolve(tmp_path: Path) -> None:
    stamps = [1_700_000_000_000_000_000, 1_700_000_000_000_000_100, 1_700_000_000_010_000_000]
    _tf_bag(tmp_path / "close", stamps)
    root = mk.read(f"{tmp_path / 'close'}:tf:map->base").tracks["root"]  # was a raw ValueError
    assert root.timeline.stamps_ns.tolist() == stamps
    np.testing.assert_array_equal(root.data[:, 0], [0, 1, 2])


def test_stamps_beyond_ros_time_are_refused(tmp_path: Path) -> None:
    end = 2**31 * 10**9  # 2038-01-19 03:14:08 UTC; rosbags raised struct.error
    for name in ("late.bag", "late.mcap"):
        motion = _motion(2)
        last = Timeline.from_nanoseconds([end - 1001, end - 1])
        motion.tracks["root"] = motion.tracks["root"].with_data(motion.tracks["root"].data, last)
        mk.write(tmp_path / name, motion)
        assert mk.read(tmp_path / name).tracks["root"].timeline.stamps_ns.tolist() == \
            [end - 1001, end - 1]
        for stamps in ([end - 1000, end], [-5, 10]):
            motion.tracks["root"] = motion.tracks["root"].with_data(
                motion.tracks["root"].data, Timeline.from_nanoseconds(stamps))
            with pytest.raises(ConversionError, match=r"frame \d has .*0 <= t < 2\*\*31 s"):
                mk.write(tmp_path / name, motion)
        for times in ([1.0, 2.0**31], [-0.5, 1.0], [0.0, np.nan]):
            motion.tracks["root"] = motion.tracks["root"].with_data(
                motion.tracks["root"].data, Timeline.stamped(times, check=False))
            with pytest.raises(ConversionError, match="outside what ROS time holds"):
                mk.write(tmp_path / name, motion)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["late.bag", "late.mcap"]


def test_tf_chain_is_not_written_to_a_tf_topic(tmp_path: Path) -> None:
    _tf_bag(tmp_path / "tf", [1_700_000_000_000_000_000 + i * 10_000_000 for i in range(3)])
    mk.convert(f"{tmp_path / 'tf'}:tf:map->base", tmp_path / "out.bag")
    assert bag.topics(tmp_path / "out.bag") == [("/trajectory", "geometry_msgs/msg/PoseStamped",
                                                  3)]
    again = mk.read(tmp_path / "out.bag")
    assert again.meta["rosbag"]["frame_id"] == "map"
    motion = _motion()
    motion.meta["rosbag"] = {"topic": "/tf"}  # a source's TF topic is not reused either
    mk.write(tmp_path / "meta.bag", motion)
    assert bag.topics(tmp_path / "meta.bag")[0][0] == "/trajectory"
    for topic in ("/tf", "tf", "/tf_static", "/robot1/tf"):
        for message in ("PoseStamped", "Odometry"):
            with pytest.raises(ConversionError, match=f"topic '{topic}' is for tf2_msgs"), \
                    warnings.catch_warnings():  # root only: Odometry invents its twist
                warnings.simplefilter("ignore")
                mk.write(tmp_path / "x.bag", motion, topic=topic, message=message, lossy=True)
    with pytest.raises(ConversionError, match="not a topic name"):
        mk.write(tmp_path / "x.bag", motion, topic="")
    assert not (tmp_path / "x.bag").exists()


def test_empty_frame_ids_are_kept(tmp_path: Path) -> None:
    motion = _motion()
    motion.meta["rosbag"] = {"topic": "/p", "frame_id": "odom", "child_frame_id": "base"}
    with pytest.warns(MotionkitWarning, match="invented zeros"):  # root only: no twist
        mk.write(tmp_path / "e.bag", motion, frame_id="", child_frame_id="", message="Odometry",
                 lossy=True)
    again = mk.read(tmp_path / "e.bag")
    assert again.meta["rosbag"]["topic"] == "/p"
    assert again.meta["rosbag"]["frame_id"] == "" and again.meta["rosbag"]["child_frame_id"] == ""
    mk.write(tmp_path / "kept.bag", again, message="Odometry")  # read back: empty stays empty
    kept = mk.read(tmp_path / "kept.bag").meta["rosbag"]
    assert kept["frame_id"] == "" and kept["child_frame_id"] == ""


def test_unparseable_message_types_are_left_out_with_one_warning(tmp_path: Path) -> None:
    from rosbags.rosbag2 import StoragePlugin, Writer
    from rosbags.typesys import Stores, get_typestore

    store = get_typestore(Stores.ROS2_HUMBLE)
    types = store.types
    folder = tmp_path / "mixed"
    with Writer(folder, version=8, storage_plugin=StoragePlugin.MCAP) as writer:
        poses = writer.add_connection("/pose", "geometry_msgs/msg/PoseStamped", typestore=store)
        writer.add_connection("/add/_service_event", "example_interfaces/srv/AddTwoInts_Event",
                              msgdef="int64 a\nint64 b\n---\nint64 sum\n", rihs01="RIHS01_00")
        for k in range(3):
            ns = 1_700_000_000_000_000_000 + k * 10_000_000
            point, quat = _geometry(types, (float(k), 0.0, 0.0), 0.0)
            header = types["std_msgs/msg/Header"](stamp=_stamp(types, ns), frame_id="map")
            msg = types["geometry_msgs/msg/PoseStamped"](
                header=header, pose=types["geometry_msgs/msg/Pose"](position=point, orientation=quat))
            writer.write(poses, ns, store.serialize_cdr(msg, "geometry_msgs/msg/PoseStamped"))
    with pytest.warns(MotionkitWarning, match=r"left out 1 connection.*AddTwoInts_Event"):
        motion = mk.read(folder)
    np.testing.assert_array_equal(motion.tracks["root"].data[:, 0], [0.0, 1.0, 2.0])


def test_a_bag_without_pose_topics_names_its_topics() -> None:
    path = corpus_file("rosbag2", "topics_and_services.mcap")  # rosbag2's own test bag
    with pytest.warns(MotionkitWarning, match="cannot be parsed"), \
            pytest.raises(FormatError, match=r"no pose topics.*/rosout \(rcl_interfaces/msg/Log\)"):
        mk.read(path)

"""Two boundaries of the loss rule, from both sides.

A timeline that starts before 0: writers whose motions start at 0 (``Holds.start`` False)
refuse it by name, a ROS bag refuses it as outside ROS time, the others keep it exactly;
a start at exactly 0 is kept by all. A quaternion 1e-3 off unit length is bad (refused
where the writer cannot hold it, a warning on reading), one 1e-5 off is not: the
tolerance is 1e-4.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

import motionkit as mk
from motionkit.formats import registry

#: Every writer of motions with a time line (KITTI without a times file holds none).
WRITERS = {"seq": ".seq", "parc": ".pkl", "traj": ".traj", "tum": ".tum", "euroc": ".csv",
           "rosbag": ".bag", "mimickit": ".pkl", "gmr": ".pkl", "bvh": ".bvh"}
ROS_TIME = r"outside what ROS time holds: 0 <= t < 2\*\*31 s"


def _motion(writer: str, timeline: mk.Timeline, rotation: np.ndarray | None = None) -> mk.Motion:
    """A root pose every writer takes (+ PARC's 14 joint rotations); ``rotation`` replaces
    frame 3's root quaternion (PARC: its first joint's, a quaternion track)."""
    root = np.zeros((5, 7))
    root[:, 0] = np.arange(5)
    root[:, 6] = 1.0
    motion = mk.Motion(meta={"name": "m"})
    if writer == "parc":
        joints = np.zeros((5, 14, 4))
        joints[..., 3] = 1.0
        if rotation is not None:
            joints[3, 0] = rotation
        motion.add(mk.Track("joint_rotations", "quaternion", joints, timeline))
    elif rotation is not None:
        root[3, 3:] = rotation
    motion.add(mk.Track("root", "pose", root, timeline))
    return motion


def _quiet_read(path: Path, writer: str) -> mk.Motion:
    with warnings.catch_warnings():
        warnings.simplefilter("error", mk.MotionkitWarning)
        motion = mk.read(path, format=writer)
    assert isinstance(motion, mk.Motion)
    return motion


# ----------------------------------------------------------------------- start before 0
def test_the_writers_split_both_ways_on_a_start_time() -> None:
    """The test below checks both outcomes: some writers hold a start, some do not."""
    held = {name for name in WRITERS if registry.by_name(name).holds().start}
    assert held >= {"seq", "traj", "tum", "euroc", "rosbag"}
    assert set(WRITERS) - held >= {"parc", "mimickit", "gmr", "bvh"}


@pytest.mark.parametrize("start", [-0.5, -1e-9])
@pytest.mark.parametrize("writer", list(WRITERS))
def test_a_negative_start_is_kept_exactly_or_refused_by_name(
        tmp_path: Path, writer: str, start: float) -> None:
    motion = _motion(writer, mk.Timeline.uniform(10.0, 5, start=start))
    target = tmp_path / ("out" + WRITERS[writer])
    if writer == "rosbag":  # holds a start, but ROS time begins in 1970: refused even lossy
        for lossy in (False, True):
            with pytest.raises(mk.ConversionError, match=ROS_TIME):
                mk.write(target, motion, format=writer, lossy=lossy)
        assert not target.exists()
    elif not registry.by_name(writer).holds().start:
        with pytest.raises(mk.ConversionError, match=rf"start time {start:g} s of track 'root'"):
            mk.write(target, motion, format=writer)
        assert not target.exists()
        with pytest.warns(mk.MotionkitWarning, match=rf"dropped start time {start:g} s"):
            mk.write(target, motion, format=writer, lossy=True)
        assert _quiet_read(target, writer).tracks["root"].timeline.start == 0.0
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("error", mk.MotionkitWarning)
            mk.write(target, motion, format=writer)
        again = _quiet_read(target, writer).tracks["root"].timeline
        assert again.start < 0.0
        np.testing.assert_allclose(again.times, start + np.arange(5) / 10.0, rtol=0, atol=1e-12)


@pytest.mark.parametrize("start", [0.0, -0.0])
@pytest.mark.parametrize("writer", list(WRITERS))
def test_a_start_at_zero_is_kept_by_every_writer(tmp_path: Path, writer: str, start: float) -> None:
    target = tmp_path / ("out" + WRITERS[writer])
    with warnings.catch_warnings():
        warnings.simplefilter("error", mk.MotionkitWarning)
        mk.write(target, _motion(writer, mk.Timeline.uniform(10.0, 5, start=start)), format=writer)
    again = _quiet_read(target, writer).tracks["root"].timeline
    assert again.start == 0.0
    np.testing.assert_allclose(again.times, np.arange(5) / 10.0, rtol=0, atol=1e-12)


def test_a_bag_takes_stamps_from_exactly_zero_nanoseconds(tmp_path: Path) -> None:
    """Exact nanosecond stamps: 0 ns is the first ROS time, -1 ns is before it."""
    kept = [0, 100_000_000, 200_000_000, 300_000_000, 400_000_000]
    motion = _motion("rosbag", mk.Timeline.from_nanoseconds(kept))
    mk.write(tmp_path / "zero.bag", motion)
    stamps = _quiet_read(tmp_path / "zero.bag", "rosbag").tracks["root"].timeline.stamps_ns
    assert stamps is not None and stamps.tolist() == kept
    early = _motion("rosbag", mk.Timeline.from_nanoseconds([-1, *kept[1:]]))
    with pytest.raises(mk.ConversionError, match=r"frame 0 has time stamp .*" + ROS_TIME):
        mk.write(tmp_path / "early.bag", early)
    assert not (tmp_path / "early.bag").exists()


# ----------------------------------------------------------------------- unit quaternions
#: Norms either side of the 1e-4 tolerance (bad: flagged; good: taken as unit).
BAD_NORMS = [1.001, 0.999]
GOOD_NORMS = [1.0 + 1e-5, 1.0 - 1e-5]
ROTATION = np.array([0.0, 0.0, 0.6, 0.8])  # unit length


def _bad_rotation_writers() -> dict[str, list[str]]:
    """Writers by whether they hold bad quaternions as they are (a loss) or refuse them."""
    raw = {name: registry.by_name(name).holds().raw_rotations for name in ("tum", "seq", "parc")}
    assert raw == {"tum": False, "seq": True, "parc": True}  # both kinds are tested below
    return {"raw": ["seq", "parc"], "refused": ["tum"]}


@pytest.mark.parametrize("norm", BAD_NORMS)
def test_a_quaternion_1e3_off_unit_is_bad_on_writing_and_reading(tmp_path: Path, norm: float) -> None:
    rotation = ROTATION * norm
    writers = _bad_rotation_writers()
    for writer in writers["refused"]:  # refused, lossy or not: it would not read back
        target = tmp_path / ("out" + WRITERS[writer])
        for lossy in (False, True):
            with pytest.raises(mk.ConversionError, match=r"non-unit quaternions: track 'root' "
                                                         r"has 1 frame\(s\) of them, the first is frame 3"):
                mk.write(target, _motion(writer, mk.Timeline.uniform(10.0, 5), rotation), lossy=lossy)
        assert not target.exists()
    for writer in writers["raw"]:  # a loss named as such; lossy writes it as it is
        target = tmp_path / ("out" + WRITERS[writer])
        name = "joint_rotations" if writer == "parc" else "root"
        motion = _motion(writer, mk.Timeline.uniform(10.0, 5), rotation)
        with pytest.raises(mk.ConversionError, match=f"bad quaternions of track '{name}'"):
            mk.write(target, motion, format=writer)
        with pytest.warns(mk.MotionkitWarning, match=f"bad quaternions of track '{name}'"):
            mk.write(target, motion, format=writer, lossy=True)
        with pytest.warns(mk.MotionkitWarning, match=rf"track '{name}' has 1 frame\(s\) with a "
                                                     r"zero, non-finite or non-unit quaternion, "
                                                     r"the first is frame 3"):
            again = mk.read(target, format=writer)
        assert isinstance(again, mk.Motion)
        data = again.tracks[name].data
        stored = data[3, 3:] if name == "root" else data[3, 0]
        assert abs(np.linalg.norm(stored) - norm) < 1e-6  # kept as it was


@pytest.mark.parametrize("norm", GOOD_NORMS)
def test_a_quaternion_1e5_off_unit_is_taken_as_unit(tmp_path: Path, norm: float) -> None:
    rotation = ROTATION * norm
    writers = _bad_rotation_writers()
    for writer in writers["refused"] + writers["raw"]:
        target = tmp_path / ("out" + WRITERS[writer])
        with warnings.catch_warnings():
            warnings.simplefilter("error", mk.MotionkitWarning)
            mk.write(target, _motion(writer, mk.Timeline.uniform(10.0, 5), rotation), format=writer)
        again = _quiet_read(target, writer)  # no warning on reading either
        if writer in writers["raw"]:  # written as it is, and still not flagged
            name = "joint_rotations" if writer == "parc" else "root"
            data = again.tracks[name].data
            stored = data[3, 3:] if name == "root" else data[3, 0]
            assert abs(np.linalg.norm(stored) - norm) < 1e-6

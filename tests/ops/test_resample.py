"""Resampling: interpolation per kind, hold, nearest and Choreonoid's timed-frame rule."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation, Slerp

import motionkit as mk
from motionkit.ops import resample, sample


def stamped(name: str, kind: str, data: np.ndarray, times: list[float]) -> mk.Motion:
    motion = mk.Motion()
    motion.add(mk.Track(name, kind, data, mk.Timeline.stamped(times)))  # type: ignore[arg-type]
    return motion


def test_linear_values_on_a_ramp() -> None:
    motion = stamped("joints", "value", np.array([[0.0, 10.0], [1.0, 30.0], [3.0, 70.0]]),
                     [0.0, 0.1, 0.3])
    track = resample(motion, 10).tracks["joints"]
    assert track.timeline.is_uniform and track.timeline.rate == 10 and track.frames == 4
    assert np.allclose(track.data[:, 0], [0, 1, 2, 3])
    assert np.allclose(track.data[:, 1], [10, 30, 50, 70])


def test_samples_at_frame_times_are_the_frames_exactly() -> None:
    rng = np.random.default_rng(3)
    data = rng.normal(size=(20, 5))
    track = mk.Track("joints", "value", data, mk.Timeline.uniform(50, 20))
    assert sample(track, track.times).tobytes() == data.tobytes()


def test_pose_positions_lerp_and_rotations_slerp() -> None:
    rotations = Rotation.from_euler("xyz", [[0, 0, 0], [0.3, 1.2, -0.4]])
    data = np.zeros((2, 7))
    data[:, :3] = [[0, 0, 0], [2, 4, 6]]
    data[:, 3:] = rotations.as_quat()
    motion = stamped("root", "pose", data, [0.0, 1.0])
    out = resample(motion, 4).tracks["root"].data
    expected = Slerp([0, 1], rotations)([0, 0.25, 0.5, 0.75, 1.0]).as_quat()
    assert np.allclose(out[:, :3], np.outer([0, 0.25, 0.5, 0.75, 1], [2, 4, 6]))
    dots = np.abs(np.sum(out[:, 3:] * expected, axis=1))
    assert np.allclose(dots, 1, atol=1e-12)


def test_quaternion_tracks_slerp_per_part() -> None:
    a = Rotation.random(3, random_state=1).as_quat()
    b = Rotation.random(3, random_state=2).as_quat()
    motion = stamped("joint_rotations", "quaternion", np.stack([a, b]), [0.0, 2.0])
    out = resample(motion, 1).tracks["joint_rotations"].data
    for part in range(3):
        mid = Slerp([0, 1], Rotation.from_quat([a[part], b[part]]))(0.5).as_quat()
        assert abs(np.dot(out[1, part], mid)) == pytest.approx(1, abs=1e-12)


def test_hold_and_nearest() -> None:
    motion = stamped("joints", "value", np.array([[0.0], [1.0], [2.0]]), [0.0, 0.1, 0.3])
    assert resample(motion, 20, "hold").tracks["joints"].data.ravel().tolist() == \
        [0, 0, 1, 1, 1, 1, 2]
    assert resample(motion, 20, "nearest").tracks["joints"].data.ravel().tolist() == \
        [0, 1, 1, 1, 2, 2, 2]


def test_choreonoid_rule_matches_the_spec_example() -> None:
    times = [float(f"{i / 30:.9g}") for i in range(6)]
    motion = stamped("joints", "value", np.arange(6.0).reshape(6, 1), times)
    out = resample(motion, 30, "choreonoid").tracks["joints"]
    assert out.data.ravel().tolist() == [1, 1, 2, 4, 4, 5]
    assert out.timeline.start == 0


def test_unknown_method_and_bad_rate_are_clear_errors() -> None:
    motion = stamped("joints", "value", np.zeros((2, 1)), [0.0, 1.0])
    with pytest.raises(mk.MotionkitError, match="unknown resampling method"):
        resample(motion, 10, "cubic")
    with pytest.raises(mk.MotionkitError, match="positive"):
        resample(motion, 0)


def test_stamps_equal_in_float_seconds_take_the_later_sample() -> None:
    # 100 ns apart: distinct nanosecond stamps, the same float64 seconds
    ns = np.array([1_700_000_000_000_000_000, 1_700_000_000_500_000_000,
                   1_700_000_000_500_000_100], dtype=np.int64)
    timeline = mk.Timeline.from_nanoseconds(ns)
    assert timeline.times[1] == timeline.times[2]
    track = mk.Track("joints", "value", np.array([[0.0], [1.0], [5.0]]), timeline)
    values = sample(track, np.array([timeline.times[0], 1_700_000_000.25, timeline.times[2]]))
    assert values[:, 0].tolist() == [0.0, 0.5, 5.0]

"""MotionLib's slerp takes the short way: consecutive frames holding q and -q (one
rotation) sample as that rotation between them, and a turn through 180° crosses the
half-turn, not a 360° swing back; velocities agree."""

from __future__ import annotations

import numpy as np
import pytest

import motionkit as mk
from conftest import corpus_file
from motionkit.motionlib import MotionLib
from motionkit.spatial import quaternion as quat

RATE = 10.0
BLENDS = np.array([0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0])


def _about(axis: list[float], angle: float) -> np.ndarray:
    unit = np.asarray(axis) / np.linalg.norm(axis)
    return np.concatenate([unit * np.sin(angle / 2.0), [np.cos(angle / 2.0)]])


#: Consecutive rotations: frame 0 turned ``angle`` about ``axis``, frame 1 ``turn`` further,
#: written as -q where ``negated``; the short way between them turns uniformly by ``turn``.
#: A half turn has w = 0, so q and -q stay distinct after MotionLib makes w >= 0 (with
#: w != 0 they become equal there).
PAIRS = {  # axis, angle, turn, negated
    "half turn, q then -q": ([1.0, 2.0, 2.0], np.pi, 0.0, True),
    "q then -q with w != 0": ([0.0, 0.6, 0.8], 2.5, 0.0, True),
    "yaw through 180°": ([0.0, 0.0, 1.0], np.pi - 0.2, 0.4, False),
    "yaw through 180°, second negated": ([0.0, 0.0, 1.0], np.pi - 0.2, 0.4, True),
}


def _pair(name: str) -> tuple[np.ndarray, np.ndarray]:
    axis, angle, turn, negated = PAIRS[name]
    q0, q1 = _about(axis, angle), _about(axis, angle + turn)
    if name.startswith("half turn"):
        q0[3] = q1[3] = 0.0  # exactly
    return q0, (-q1 if negated else q1)


def _path(name: str, blend: np.ndarray) -> np.ndarray:
    """The rotations a fraction ``blend`` of the way from frame 0 to frame 1."""
    axis, angle, turn, _ = PAIRS[name]
    return np.stack([_about(axis, angle + b * turn) for b in blend])


def _motion(first: np.ndarray, second: np.ndarray, joints: int = 3) -> mk.Motion:
    """Four frames alternating between the two rotations, for the root and every joint."""
    rotations = np.stack([first, second, first, second])
    timeline = mk.Timeline.uniform(RATE, 4)
    root = np.zeros((4, 7))
    root[:, 0] = np.arange(4) * 0.1
    root[:, 3:] = rotations
    motion = mk.Motion(meta={"name": "flip"})
    motion.add(mk.Track("root", "pose", root, timeline))
    motion.add(mk.Track("joint_rotations", "quaternion",
                        np.repeat(rotations[:, None, :], joints, axis=1), timeline))
    return motion


def _apart(got: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """Per quaternion, the distance to ``expected`` or to ``-expected``, whichever is
    nearer: 0 for the same rotation, about half the angle between two rotations."""
    got = np.asarray(got, dtype=np.float64)
    return np.minimum(np.linalg.norm(got - expected, axis=-1),
                      np.linalg.norm(got + expected, axis=-1))


@pytest.mark.parametrize("pair", list(PAIRS))
def test_sampling_between_q_and_minus_q_takes_the_shortest_arc(pair: str) -> None:
    first, second = _pair(pair)
    lib = MotionLib([_motion(first, second)])
    ids = np.zeros(len(BLENDS), dtype=np.int64)
    for start, expected in ((0.0, _path(pair, BLENDS)), (1.0, _path(pair, 1.0 - BLENDS))):
        frames = lib.frames_at(ids, (start + BLENDS) / RATE)  # frame 0 to 1, then 1 to 2
        for got in (frames.root_rot, *np.moveaxis(frames.joint_rot, 1, 0)):
            np.testing.assert_allclose(np.linalg.norm(got, axis=-1), 1.0, atol=1e-6)
            assert _apart(got, expected).max() <= 1e-6
    # the turn between the frames is the short one: no 2 pi per frame of angular velocity
    speed = abs(PAIRS[pair][2]) * RATE
    at_first = lib.frames_at([0], [0.0])
    assert np.linalg.norm(at_first.root_ang_vel[0]) == pytest.approx(speed, abs=1e-4)
    np.testing.assert_allclose(np.linalg.norm(at_first.dof_vel.reshape(-1, 3), axis=-1), speed,
                               rtol=0, atol=1e-4)


def _straddling(series: np.ndarray, k: int) -> np.ndarray:
    """A fixed rotation R such that R·q of frames k and k+1 have w of opposite signs: R
    takes their midpoint to a half turn (w = 0), and w is linear in q."""
    mid = series[k] + np.sign(np.dot(series[k], series[k + 1])) * series[k + 1]
    return quat.multiply([0.0, 0.0, 1.0, 0.0], quat.conjugate(mid / np.linalg.norm(mid)))


@pytest.mark.corpus
def test_a_corpus_motion_turned_through_a_half_turn_samples_the_short_way() -> None:
    """PARC's sfu clip with every rotation series turned (R·q) so that frames 6 and 7 sit
    either side of w = 0: once MotionLib makes w >= 0 they are about -1 apart, and
    sampling must still give R·(the clip's own samples), velocities turned by R."""
    motion = mk.read(corpus_file("parc", "ms", "sfu.pkl"))
    assert isinstance(motion, mk.Motion)
    k = 6
    root, joints = motion.tracks["root"], motion.tracks["joint_rotations"]
    root_rot = np.asarray(root.data, dtype=np.float64)[:, 3:]
    joint_rot = np.asarray(joints.data, dtype=np.float64)
    turn = _straddling(root_rot, k)
    turns = np.stack([_straddling(joint_rot[:, j], k) for j in range(joint_rot.shape[1])])
    data = np.array(root.data, dtype=np.float64)
    data[:, 3:] = quat.multiply(turn, root_rot)
    turned = mk.Motion(meta={"name": "turned"})
    turned.add(mk.Track("root", "pose", data, root.timeline))
    turned.add(mk.Track("joint_rotations", "quaternion", quat.multiply(turns, joint_rot),
                        joints.timeline))
    assert data[k, 6] * data[k + 1, 6] < 0  # the pair straddles w = 0, as do most joints
    straddle = turned.tracks["joint_rotations"].data[k:k + 2, :, 3]
    assert np.count_nonzero(straddle[0] * straddle[1] < 0) >= joint_rot.shape[1] // 2
    original, rotated = MotionLib([motion]), MotionLib([turned])
    rate = root.timeline.rate
    assert rate is not None
    times = np.concatenate([(k + np.linspace(0.0, 1.0, 11)) / rate,
                            np.linspace(0.0, float(original.lengths[0]), 29)])
    ids = np.zeros(len(times), dtype=np.int64)
    a, b = original.frames_at(ids, times), rotated.frames_at(ids, times)
    assert _apart(b.root_rot, quat.multiply(turn, a.root_rot)).max() <= 1e-6
    assert _apart(b.joint_rot, quat.multiply(turns, a.joint_rot)).max() <= 1e-6
    np.testing.assert_allclose(b.root_ang_vel, quat.rotate(turn, a.root_ang_vel), rtol=0,
                               atol=1e-3)

"""``to_hinge_angle`` at the sign boundary: q and -q are one rotation, so a quaternion with
w < 0 gives the angle of its w > 0 twin, always inside [-pi, pi] (angles near ±pi too)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from motionkit.spatial import quaternion as quat

#: Angles at and next to the ends of [-pi, pi], where w = cos(angle / 2) is about 0.
NEAR_PI = [np.pi, -np.pi, np.pi - 1e-12, -np.pi + 1e-12, np.pi - 1e-6, -np.pi + 1e-6,
           np.nextafter(np.pi, 0.0), np.nextafter(-np.pi, 0.0), 3.0, -3.0]
AXES = [np.array([1.0, 0.0, 0.0]), np.array([0.0, 0.0, -1.0]), np.array([1.0, 2.0, -2.0]) / 3.0]


def _about(axis: np.ndarray, angle: float) -> np.ndarray:
    return np.concatenate([axis * np.sin(angle / 2.0), [np.cos(angle / 2.0)]])


def _wrapped(a: np.ndarray) -> np.ndarray:
    """An angle difference brought into [-pi, pi): ±pi are the same hinge angle."""
    return np.asarray((a + np.pi) % (2.0 * np.pi) - np.pi)


def _check(axis: np.ndarray, angle: float) -> None:
    q = _about(axis, angle)
    both = np.stack([q, -q])
    assert (both[:, 3] < 0).any() or q[3] == 0.0  # one of them has w < 0 (or w is zero)
    got = quat.to_hinge_angle(both, axis)
    assert np.all(got >= -np.pi) and np.all(got <= np.pi), got
    assert abs(_wrapped(got[0] - got[1])) <= 1e-12, got  # the same rotation, the same angle
    assert np.all(np.abs(_wrapped(got - angle)) <= 1e-9), (got, angle)


def test_hinge_angle_of_minus_q_equals_that_of_q_near_pi() -> None:
    for axis in AXES:
        for angle in NEAR_PI:
            _check(axis, angle)
    # away from ±pi the two agree exactly, not just modulo 2 pi
    q = _about(AXES[2], 2.5)
    assert quat.to_hinge_angle(-q, AXES[2]) == quat.to_hinge_angle(q, AXES[2])


def test_hinge_angle_of_a_half_turn_with_zero_w_stays_in_range() -> None:
    for q in ([0.0, 0.0, 1.0, 0.0], [0.0, 0.0, -1.0, -0.0], [0.0, 0.0, 1.0, -0.0]):
        angle = float(quat.to_hinge_angle(np.array(q), [0.0, 0.0, 1.0]))
        assert abs(angle) == np.pi  # +pi or -pi: one half turn either way


@settings(max_examples=200, deadline=None)
@given(angle=st.floats(-np.pi, np.pi), axis=st.sampled_from(range(len(AXES))))
def test_hinge_angle_ignores_the_quaternion_sign(angle: float, axis: int) -> None:
    _check(AXES[axis], angle)

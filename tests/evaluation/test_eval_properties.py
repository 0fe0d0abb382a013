"""Properties: a planted Sim(3) and clock offset are recovered, identical inputs have zero error,
and errors do not depend on the frame both inputs are expressed in."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from motionkit import evaluation as ev
from motionkit.spatial.quaternion import from_rpy, multiply, normalize, rotate, to_matrix

SEEDS = st.integers(0, 2**32 - 1)


def _path(rng: np.random.Generator, n: int = 300, rate: float = 10.0) -> ev.Poses:
    """A smooth 3-D path (sums of sines, yaw along the heading, some roll and pitch)."""
    t = 1000.0 + np.arange(n) / rate
    freq = rng.uniform(0.05, 0.4, size=(3, 3))
    amp = rng.uniform(1.0, 10.0, size=(3, 3))
    phase = rng.uniform(0, 2 * np.pi, size=(3, 3))
    pos = np.stack([(amp[k] * np.sin(np.outer(t - t[0], freq[k]) + phase[k])).sum(axis=1)
                    for k in range(3)], axis=1)
    heading = np.gradient(pos, t, axis=0)
    rpy = np.column_stack([0.1 * np.sin(t), 0.05 * np.cos(0.7 * t), np.arctan2(heading[:, 1], heading[:, 0])])
    return ev.Poses(t, pos, from_rpy(rpy))


def _transform(poses: ev.Poses, q: np.ndarray, t: np.ndarray, s: float = 1.0, shift: float = 0.0) -> ev.Poses:
    return ev.Poses(poses.times + shift, s * rotate(q, poses.positions) + t, multiply(q, poses.quaternions))


def _random_rotation(rng: np.random.Generator) -> np.ndarray:
    return normalize(rng.normal(size=4))


@settings(max_examples=15, deadline=None)
@given(SEEDS, st.floats(0.3, 3.0), st.floats(-0.25, 0.25))
def test_planted_sim3_and_offset_are_recovered(seed: int, scale: float, offset: float) -> None:
    rng = np.random.default_rng(seed)
    ref = _path(rng)
    q, t = _random_rotation(rng), rng.uniform(-50, 50, 3)
    est = _transform(ref, q, t, scale, shift=-offset)  # the estimate's clock is `offset` behind
    assert abs(ev.estimate_offset(ref, est, kind="sim3") - offset) < 1e-6
    result = ev.ape(ref, est, align="sim3", offset=offset)
    assert result.pairs == len(ref)
    assert result.stats["max"] < 1e-9 * scale * 100
    a = result.alignment
    assert abs(a.scale - 1 / scale) < 1e-9
    np.testing.assert_allclose(a.rotation, to_matrix(q).T, atol=1e-9)
    np.testing.assert_allclose(a.translation, -rotate(q * [-1, -1, -1, 1], t) / scale, atol=1e-7)
    assert ev.ape(ref, est, align="sim3", offset=offset, relation="rotation_angle").stats["max"] < 1e-6


@settings(max_examples=15, deadline=None)
@given(SEEDS, st.integers(1, 20), st.sampled_from(["translation", "rotation_angle", "full", "rotation"]))
def test_rpe_of_identical_trajectories_is_zero(seed: int, delta: int, relation: str) -> None:
    ref = _path(np.random.default_rng(seed))
    for all_pairs in (False, True):
        result = ev.rpe(ref, ref, delta=delta, relation=relation, all_pairs=all_pairs)  # type: ignore[arg-type]
        assert result.stats["max"] < 1e-6
    assert ev.rpe(ref, ref, delta=5, unit="m").stats["max"] < 1e-9


@settings(max_examples=15, deadline=None)
@given(SEEDS)
def test_errors_do_not_depend_on_the_common_frame(seed: int) -> None:
    rng = np.random.default_rng(seed)
    ref = _path(rng)
    noisy = ev.Poses(ref.times, ref.positions + rng.normal(0, 0.05, ref.positions.shape),
                     normalize(ref.quaternions + rng.normal(0, 0.01, ref.quaternions.shape)))
    est = _transform(noisy, _random_rotation(rng), rng.uniform(-5, 5, 3))
    q, t = _random_rotation(rng), rng.uniform(-1e3, 1e3, 3)
    ref2, est2 = _transform(ref, q, t), _transform(est, q, t)
    for kwargs in ({"align": "se3"}, {"align": "sim3"}, {"align": "none"},
                   {"align": "se3", "relation": "rotation_angle"}):
        a, b = ev.ape(ref, est, **kwargs).stats, ev.ape(ref2, est2, **kwargs).stats  # type: ignore[arg-type]
        assert all(abs(a[k] - b[k]) <= 1e-7 * max(1.0, abs(a[k])) for k in a), kwargs
    for relation in ("translation", "rotation_angle"):
        a, b = (ev.rpe(r, e, delta=3, relation=relation).stats  # type: ignore[arg-type]
                for r, e in ((ref, est), (ref2, est2)))
        assert all(abs(a[k] - b[k]) <= 1e-7 * max(1.0, abs(a[k])) for k in a)

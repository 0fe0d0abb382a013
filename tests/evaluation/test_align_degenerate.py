"""Umeyama at its two sign boundaries: a mirrored point set still gets a proper rotation
(det +1, never a reflection), and a planar set, whose third singular direction has an
arbitrary sign, still recovers a rigid motion of the plane exactly."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from motionkit import evaluation as ev
from motionkit.spatial.quaternion import from_matrix

#: Reflections: a mirror in the xy plane and one in a tilted plane (Householder).
_n = np.array([1.0, -2.0, 2.0]) / 3.0
MIRRORS = {"z": np.diag([1.0, 1.0, -1.0]), "tilted": np.eye(3) - 2.0 * np.outer(_n, _n)}


def _proper(rotation: np.ndarray) -> None:
    np.testing.assert_allclose(rotation @ rotation.T, np.eye(3), rtol=0, atol=1e-12)
    assert np.linalg.det(rotation) == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("mirror", list(MIRRORS))
@pytest.mark.parametrize("with_scale", [False, True])
def test_a_mirrored_point_set_gets_the_best_proper_rotation(mirror: str, with_scale: bool) -> None:
    rng = np.random.default_rng(7)
    x = rng.normal(size=(40, 3)) * [3.0, 2.0, 1.0]  # distinct spreads: one best rotation
    y = x @ MIRRORS[mirror].T + [1.0, -2.0, 0.5]
    rotation, translation, scale = ev.umeyama(x, y, with_scale=with_scale)
    _proper(rotation)
    xc, yc = x - x.mean(axis=0), y - y.mean(axis=0)
    # the least-squares rotation (Kabsch, proper by construction) is the same one
    best = Rotation.align_vectors(yc, xc)[0].as_matrix()
    np.testing.assert_allclose(rotation, best, rtol=0, atol=1e-9)
    if with_scale:  # the scale that is best for that rotation, below 1 (no exact fit)
        expected = float(np.sum(yc * (xc @ rotation.T)) / np.sum(xc * xc))
        assert scale == pytest.approx(expected, rel=1e-12) and 0.0 < scale < 1.0
    else:
        assert scale == 1.0
    np.testing.assert_allclose(translation, y.mean(axis=0) - scale * rotation @ x.mean(axis=0),
                               rtol=0, atol=1e-12)


@pytest.mark.parametrize("kind", ["se3", "sim3"])
def test_a_planar_point_set_is_aligned_exactly(kind: str) -> None:
    """Points in one (tilted) plane moved rigidly (and scaled for sim3): the motion comes
    back exactly, for many motions, so both signs of the SVD's third direction occur."""
    rng = np.random.default_rng(3)
    plane = Rotation.from_rotvec([0.3, -0.2, 0.9]).as_matrix()[:, :2]
    for seed in range(16):
        motion = Rotation.random(random_state=seed).as_matrix()
        shift, factor = rng.uniform(-5.0, 5.0, 3), (rng.uniform(0.5, 2.0) if kind == "sim3" else 1.0)
        x = rng.uniform(-3.0, 3.0, size=(12, 2)) @ plane.T + [0.0, 0.0, 4.0]
        assert np.linalg.matrix_rank(x - x.mean(axis=0), tol=1e-9) == 2  # coplanar
        y = factor * x @ motion.T + shift
        rotation, translation, scale = ev.umeyama(x, y, with_scale=kind == "sim3")
        _proper(rotation)
        np.testing.assert_allclose(rotation, motion, rtol=0, atol=1e-10, err_msg=str(seed))
        np.testing.assert_allclose(translation, shift, rtol=0, atol=1e-9)
        assert scale == pytest.approx(factor, rel=1e-12)
        # the same through align() on poses: the aligned estimate lies on the reference
        times = np.arange(len(x), dtype=float)
        identity = np.tile([0.0, 0.0, 0.0, 1.0], (len(x), 1))
        est = ev.Poses(times, x, identity)
        ref = ev.Poses(times, y, np.tile(from_matrix(motion), (len(x), 1)))
        aligned = ev.align(ref, est, kind).apply(est)  # type: ignore[arg-type]
        np.testing.assert_allclose(aligned.positions, y, rtol=0, atol=1e-9)

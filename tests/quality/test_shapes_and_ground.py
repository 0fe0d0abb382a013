"""The geometry of ``check``: segment, box and box-box gaps against brute force; PARC's
nearest-cell terrain; the pinned heights of the edited 717 clip; the ground options."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import motionkit as mk
from conftest import corpus_file
from motionkit.model.skeleton import Body, Joint, Shape, Skeleton
from motionkit.quality import ground as grounds
from motionkit.quality.check import resolve_ground
from motionkit.quality.shapes import NEAR, Collider, pair_gaps, segment_distance
from motionkit.spatial import quaternion

coords = st.floats(-1.0, 1.0, allow_nan=False)
point = st.tuples(coords, coords, coords)


def _closest_by_sampling(p1: np.ndarray, q1: np.ndarray, p2: np.ndarray, q2: np.ndarray) -> float:
    s = np.linspace(0, 1, 401)[:, None]
    a, b = p1 + s * (q1 - p1), p2 + s * (q2 - p2)
    return float(np.linalg.norm(a[:, None] - b[None], axis=-1).min())


@settings(max_examples=60, deadline=None)
@given(point, point, point, point)
def test_segment_distance_is_the_closest_approach(a: tuple[float, ...], b: tuple[float, ...],
                                                  c: tuple[float, ...], d: tuple[float, ...]
                                                  ) -> None:
    p1, q1, p2, q2 = (np.array(v) for v in (a, b, c, d))
    exact = float(segment_distance(p1[None], q1[None], p2[None], q2[None])[0])
    sampled = _closest_by_sampling(p1, q1, p2, q2)
    assert exact <= sampled + 1e-9  # never more than any pair of points
    assert exact >= sampled - 0.01  # and within the sampling's step of the least


def _two_bodies(first: Shape, second: Shape) -> Skeleton:
    """Two free bodies, not parent and child, one shape each."""
    bodies = [Body("root", Joint("root_joint", "free")),
              Body("a", Joint("a_joint", "weld"), parent=0, shapes=[first]),
              Body("b", Joint("b_joint", "weld"), parent=0, shapes=[second])]
    return Skeleton("pair", bodies)


def _posed(offset: np.ndarray, turn: np.ndarray) -> np.ndarray:
    poses = np.tile(np.eye(4), (1, 3, 1, 1))
    poses[0, 2, :3, :3] = quaternion.to_matrix(turn)
    poses[0, 2, :3, 3] = offset
    return poses


@settings(max_examples=40, deadline=None)
@given(point, st.tuples(coords, coords, coords, st.floats(0.1, 1.0)))
def test_capsule_to_box_gap_matches_sampled_points(offset: tuple[float, ...],
                                                   turn: tuple[float, ...]) -> None:
    box = Shape("box", {"size": np.array([0.4, 0.2, 0.1])}, role="collision")
    capsule = Shape("capsule", {"radius": 0.05, "height": 0.3}, role="collision")
    skeleton = _two_bodies(box, capsule)
    collider = Collider.of(skeleton)
    q = quaternion.normalize(np.array(turn))
    poses = _posed(np.array(offset) * 2, q)
    gap = float(pair_gaps(collider, collider.world(poses), np.array([[0, 1]]))[0, 0])
    # brute force: the segment's points against the box, in the box's frame
    t = np.linspace(-0.15, 0.15, 3001)[:, None]
    axis = poses[0, 2, :3, 2]
    points = poses[0, 2, :3, 3] + t * axis
    excess = np.abs(points) - np.array([0.2, 0.1, 0.05])
    distance = np.linalg.norm(np.maximum(excess, 0), axis=-1) + np.minimum(excess.max(-1), 0)
    expected = float(distance.min()) - 0.05
    if gap < NEAR:  # worked out exactly
        assert gap == pytest.approx(expected, abs=2e-4)
    else:  # far apart: the bounding balls' gap, never more than the true one
        assert gap <= expected + 1e-9


def test_box_box_gap_is_the_overlap_depth_and_the_face_distance() -> None:
    box = Shape("box", {"size": np.array([0.2, 0.2, 0.2])}, role="collision")
    collider = Collider.of(_two_bodies(box, box))
    for shift, expected in ((0.15, -0.05), (0.35, 0.15), (0.2, 0.0)):
        poses = _posed(np.array([shift, 0.0, 0.0]), np.array([0.0, 0.0, 0.0, 1.0]))
        gap = pair_gaps(collider, collider.world(poses), np.array([[0, 1]]))[0, 0]
        assert gap == pytest.approx(expected, abs=1e-12)


def test_parc_terrain_is_sampled_by_nearest_cell() -> None:
    terrain = mk.Terrain(np.array([[0.0, 0.0], [1.4, 1.4]]), np.array([0.0, 0.0]), 0.4)
    ground = grounds.from_terrain(terrain)
    # cell 1 (1.4 m) spans x in [0.2, 0.6): a foot at 0.21 stands on it, at 0.19 beside it
    assert ground.under(np.array([[0.21, 0.0], [0.19, 0.0]])).tolist() == [1.4, 0.0]


def test_the_717_clip_stands_on_the_heights_parc_pinned() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        motion = mk.read(corpus_file("parc", "ms", "dec2024_teaser_717_1_modified_opt.pkl"))
    assert isinstance(motion, mk.Motion) and motion.terrain is not None
    used, count, worst = grounds.pinned_surface(motion.terrain)
    assert count == 25 and worst == pytest.approx(0.2, abs=0.005)
    cell = (3, 10)  # under the feet in the last stance
    assert float(motion.terrain.heights[cell]) == pytest.approx(1.4)
    assert float(used.heights[cell]) == pytest.approx(1.2)
    assert "pinned heights are used" in resolve_ground(motion, None).source
    assert resolve_ground(motion, "hf").terrain is motion.terrain


def test_ground_options() -> None:
    motion = mk.Motion()
    assert resolve_ground(motion, 0.25).height == 0.25
    assert resolve_ground(motion, "-0.1").height == -0.1
    auto = resolve_ground(motion, "auto", np.array([0.3, 0.02, 0.01, 0.5, 0.4, 0.6, 0.7, 0.8,
                                                    0.9, 1.0, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6,
                                                    1.7, 1.8, 1.9, 2.0]))
    assert auto.height == pytest.approx(0.015) and "2 lowest frame(s)" in auto.source
    with pytest.raises(mk.ConversionError, match="no terrain"):
        resolve_ground(motion, "terrain")
    with pytest.raises(mk.ConversionError, match="finite"):
        resolve_ground(motion, float("nan"))

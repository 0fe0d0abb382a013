"""Terrain heightfield: PARC's cell-centre grid, lookups, validation."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import motionkit as mk
from conftest import corpus_file
from motionkit.model.terrain import Terrain


def _terrain() -> Terrain:
    heights = np.array([[0.0, 1.0, 2.0], [10.0, 11.0, 12.0]])
    return Terrain(heights, np.array([-1.0, 5.0]), 0.5)


def test_cell_centres_and_grid_to_world() -> None:
    terrain = _terrain()
    assert terrain.dy == 0.5 and terrain.shape == (2, 3)
    assert np.allclose(terrain.grid_to_world([1, 2]), [-0.5, 6.0])
    assert np.allclose(terrain.max_point, [-0.5, 6.0])
    assert terrain.world_to_grid([-0.5, 6.0]).tolist() == [1, 2]
    assert terrain.world_to_grid([[-0.7, 5.2], [100, -100]]).tolist() == [[1, 0], [1, 0]]
    assert terrain.world_to_grid([-0.8, 5.2], clamp=False).tolist() == [0, 0]


def test_height_lookups() -> None:
    terrain = _terrain()
    assert terrain.height_at([-1.0, 5.0]) == pytest.approx(0.0)
    assert terrain.height_at([-0.5, 6.0]) == pytest.approx(12.0)
    assert terrain.height_at([-0.75, 5.25]) == pytest.approx((0 + 1 + 10 + 11) / 4)
    assert terrain.height_at([-0.75, 5.25, 99.0]) == pytest.approx(5.5)  # z ignored
    assert terrain.height_at([-5.0, 5.0]) == pytest.approx(0.0)  # clamped at the border
    assert terrain.height_at([-0.7, 5.3], "nearest") == pytest.approx(11.0)
    assert terrain.height_at([-0.8, 5.3], "nearest") == pytest.approx(1.0)
    with pytest.raises(ValueError, match="method"):
        terrain.height_at([0, 0], "cubic")


@settings(max_examples=30, deadline=None)
@given(rows=st.integers(1, 6), cols=st.integers(1, 6), seed=st.integers(0, 2**31))
def test_bilinear_is_exact_on_cell_centres_and_planes(rows: int, cols: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    origin, dx = rng.normal(size=2), 0.1 + rng.random()
    terrain = Terrain(rng.normal(size=(rows, cols)), origin, dx)
    i, j = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")
    centres = terrain.grid_to_world(np.stack([i, j], axis=-1))
    assert np.allclose(terrain.height_at(centres), terrain.heights)
    a, b = rng.normal(size=2)
    plane = Terrain(a * i + b * j, origin, dx)
    inside = origin + rng.random((20, 2)) * (np.array([rows, cols]) - 1) * dx
    u = (inside - origin) / dx
    assert np.allclose(plane.height_at(inside), a * u[:, 0] + b * u[:, 1])


def test_validation() -> None:
    with pytest.raises(ValueError, match="2-D"):
        Terrain(np.zeros(3), np.zeros(2), 1.0)
    with pytest.raises(ValueError, match="origin"):
        Terrain(np.zeros((2, 2)), np.zeros(3), 1.0)
    with pytest.raises(ValueError, match="positive"):
        Terrain(np.zeros((2, 2)), np.zeros(2), 0.0)
    with pytest.raises(ValueError, match="positive finite"):  # no cell is found under a point
        Terrain(np.zeros((2, 2)), np.zeros(2), 1.0, np.inf)
    with pytest.raises(ValueError, match="origin must be finite"):
        Terrain(np.zeros((2, 2)), np.array([np.nan, 0.0]), 1.0)
    with pytest.raises(ValueError, match="bounds"):
        Terrain(np.zeros((2, 2)), np.zeros(2), 1.0, bounds=np.zeros((2, 2)))


def test_corpus_terrain_round_trips_unchanged(tmp_path) -> None:
    motion = mk.read(corpus_file("parc", "ms", "TEASER_TERRAIN.pkl"))
    terrain = motion.terrain
    assert terrain.describe()["shape"] == [102, 102]
    assert np.allclose(terrain.origin, [-0.4, -0.4])
    out = tmp_path / "t.pkl"
    mk.write(out, mk.model.motion.Motion(terrain=terrain))
    again = mk.read(out).terrain
    assert np.array_equal(again.heights, terrain.heights)
    assert np.array_equal(again.bounds, terrain.bounds)
    assert np.array_equal(again.origin, terrain.origin) and again.dx == terrain.dx

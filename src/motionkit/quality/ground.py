"""What a motion stands on: a flat plane at a height, or its terrain sampled PARC's way.

PARC's heightfield is a grid of flat cells: cell ``(i, j)`` is a ``dx`` square of height
``hf[i, j]`` centred at ``min_point + (i, j)·dx``, and a point's cell is
``round((p − min_point)/dx)`` clamped to the grid (its ``SubTerrain.get_hf_val_from_points``;
spec parc-ms §2.3). So the height under a point is its nearest cell's, never a blend of
four cell centres (a blend puts a slope where PARC has a step).

PARC's dataset preparation pins the cells the character touches: their ``hf_maxmin``
bounds are set to both equal the height the motion was made on. Where a file's ``hf``
differs from such a pinned value, the terrain was edited after the motion was made
(``dec2024_teaser_717_1_modified_opt.pkl``: the block under its last steps was raised
from 1.2 m to 1.4 m and some low cells lowered by 0.2 m; its feet stand at 1.200 m, on the
pinned height). ``surface="pinned"`` (the default) stands the motion on the pinned heights
there, and says how many cells differ; ``surface="hf"`` takes ``hf`` as it is.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..errors import ConversionError
from ..model.terrain import Terrain

Array = NDArray[np.float64]

#: ``--ground auto``: the ground is the mean lowest point of this share of the frames
#: (the lowest ones; at least one frame).
AUTO_SHARE = 0.1
#: A pinned cell differs from ``hf`` when they are further apart than this (m).
PIN_TOLERANCE = 1e-6
SURFACES = ("pinned", "hf")


@dataclass(frozen=True)
class Ground:
    """A flat plane at ``height``, or ``terrain`` (its heights as used); ``source`` says
    which and why, in words a report prints."""

    height: float = 0.0
    terrain: Terrain | None = None
    source: str = "flat plane z = 0 (no terrain in the file)"

    def under(self, xy: ArrayLike) -> Array:
        """The ground height under world points ``(..., 2)`` (or ``(..., 3)``); under a
        point whose x or y is not a finite number, not a number (no cell is nearest)."""
        points = np.asarray(xy, dtype=np.float64)
        if self.terrain is None:
            return np.full(points.shape[:-1], self.height)
        out: Array = self.height + self.terrain.height_at(points, method="nearest")
        known = np.isfinite(points[..., :2]).all(axis=-1)
        return out if known.all() else np.where(known, out, np.nan)

    def describe(self) -> dict[str, object]:
        out: dict[str, object] = {"source": self.source, "height": self.height}
        if self.terrain is not None:
            out["terrain"] = self.terrain.describe()
        return out


def pinned_surface(terrain: Terrain) -> tuple[Terrain, int, float]:
    """The terrain the motion was made on (pinned cells' heights where they differ from
    ``hf``), how many cells differ, and by how much at most (m)."""
    if terrain.bounds is None:
        return terrain, 0, 0.0
    bounds = np.asarray(terrain.bounds, dtype=np.float64)
    heights = np.asarray(terrain.heights, dtype=np.float64)
    pinned = bounds[..., 0] == bounds[..., 1]
    differ = pinned & (np.abs(bounds[..., 0] - heights) > PIN_TOLERANCE)
    if not differ.any():
        return terrain, 0, 0.0
    fixed = np.where(differ, bounds[..., 0], heights)
    out = Terrain(fixed, terrain.origin, terrain.dx, terrain.dy, terrain.bounds,
                  dict(terrain.attrs))
    return out, int(differ.sum()), float(np.abs(bounds[..., 0] - heights)[differ].max())


def from_terrain(terrain: Terrain, surface: str = "pinned") -> Ground:
    """The ground of a motion's own terrain (see the module's docstring)."""
    if surface not in SURFACES:
        raise ConversionError(f"terrain surface must be one of {', '.join(SURFACES)}, "
                              f"not {surface!r}")
    what = f"the file's terrain ({terrain.shape[0]}x{terrain.shape[1]} cells of " \
           f"{float(terrain.dx):g} m, nearest cell as PARC samples it)"
    if surface == "hf":
        return Ground(0.0, terrain, what + ", hf as stored")
    used, count, worst = pinned_surface(terrain)
    if count:
        what += (f"; {count} cell(s) of hf differ from the heights PARC pinned for the "
                 f"motion (by up to {worst:.3f} m): the pinned heights are used "
                 "(--ground hf: hf as stored)")
    return Ground(0.0, used, what)


def auto(lowest: Array) -> Ground:
    """The ground guessed from a clip's per-frame lowest points ``(frames,)``: the mean
    of the lowest :data:`AUTO_SHARE` of them."""
    if not len(lowest):
        raise ConversionError("--ground auto needs at least one frame")
    count = max(1, round(AUTO_SHARE * len(lowest)))
    height = float(np.sort(lowest)[:count].mean())
    return Ground(height, None, f"auto: flat plane z = {height:.4f} m, the mean lowest point "
                                f"of the clip's {count} lowest frame(s)")


def plane(height: float) -> Ground:
    """A flat plane at ``height`` (m)."""
    if not np.isfinite(height):
        raise ConversionError(f"the ground height must be a finite number, not {height!r}")
    return Ground(float(height), None, f"flat plane z = {float(height):g} m (given)")

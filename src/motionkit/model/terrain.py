"""Heightfield terrain: a grid of heights with PARC's cell-centre conventions.

Cell ``(i, j)`` holds the height at world ``origin + (i·dx, j·dy)``: axis 0 runs along
world x, axis 1 along world y, and ``origin`` is the *centre* of cell ``(0, 0)`` (PARC's
``min_point``). PARC stores a single cell size, so ``dy`` defaults to ``dx``.
``bounds`` is PARC's ``hf_maxmin``: per cell the highest (``[..., 0]``) and lowest
(``[..., 1]``) height terrain augmentation may use.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray


@dataclass(eq=False)
class Terrain:
    """Heights ``(X, Y)``, the world (x, y) of cell (0, 0)'s centre, cell sizes, bounds."""

    heights: NDArray[np.number]
    origin: NDArray[np.number]
    dx: float
    dy: float | None = None
    bounds: NDArray[np.number] | None = None
    attrs: dict[str, object] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.heights = np.asarray(self.heights)
        self.origin = np.asarray(self.origin)
        if self.heights.ndim != 2 or min(self.heights.shape) < 1:
            raise ValueError(f"terrain heights must be a non-empty 2-D grid, got shape "
                             f"{self.heights.shape}")
        if self.origin.shape != (2,):
            raise ValueError(f"terrain origin must be (x, y), got shape {self.origin.shape}")
        if self.dy is None:
            self.dy = self.dx
        if not (0 < float(self.dx) < np.inf and 0 < float(self.dy) < np.inf):
            raise ValueError("terrain cell size must be a positive finite number")
        if not np.isfinite(self.origin.astype(np.float64)).all():
            raise ValueError("terrain origin must be finite numbers")
        if self.bounds is not None:
            self.bounds = np.asarray(self.bounds)
            if self.bounds.shape != (*self.heights.shape, 2):
                raise ValueError(f"terrain bounds must have shape {(*self.heights.shape, 2)}, "
                                 f"got {self.bounds.shape}")

    @property
    def shape(self) -> tuple[int, int]:
        """Cells along x and y."""
        return int(self.heights.shape[0]), int(self.heights.shape[1])

    @property
    def cell(self) -> NDArray[np.float64]:
        """(dx, dy) in metres."""
        return np.array([float(self.dx), float(self.dy or self.dx)])

    @property
    def max_point(self) -> NDArray[np.float64]:
        """World (x, y) of the last cell's centre."""
        return self.origin.astype(np.float64) + (np.array(self.shape) - 1) * self.cell

    def grid_to_world(self, ij: ArrayLike) -> NDArray[np.float64]:
        """World (x, y) of cell indices ``(..., 2)`` (fractional indices allowed)."""
        return self.origin.astype(np.float64) + np.asarray(ij, dtype=np.float64) * self.cell

    def world_to_grid(self, xy: ArrayLike, clamp: bool = True) -> NDArray[np.int64]:
        """Nearest cell ``(..., 2)`` of world points, clamped to the grid as PARC does."""
        cells = np.round((np.asarray(xy, dtype=np.float64)[..., :2] - self.origin) / self.cell)
        if clamp:  # before the cast: a point far off the grid takes the edge cell (and
            # one that is not a number cell 0, as its cast did)
            cells = np.clip(np.where(np.isnan(cells), 0.0, cells), 0, np.array(self.shape) - 1)
        with np.errstate(invalid="ignore"):
            ij: NDArray[np.int64] = cells.astype(np.int64)
        return ij

    def height_at(self, xy: ArrayLike, method: str = "bilinear") -> NDArray[np.float64]:
        """Terrain height under world points ``(..., 2)`` (or ``(..., 3)``; z is ignored).

        ``bilinear`` blends the four surrounding cell centres (clamped at the border);
        ``nearest`` reads the cell PARC's ``world_to_grid`` picks.
        """
        points = np.asarray(xy, dtype=np.float64)[..., :2]
        grid = self.heights.astype(np.float64)
        if method == "nearest":
            ij = self.world_to_grid(points)
            return np.asarray(grid[ij[..., 0], ij[..., 1]])
        if method != "bilinear":
            raise ValueError(f"unknown height lookup method {method!r}")
        u = (points - self.origin) / self.cell
        size = np.array(self.shape)
        low = np.clip(np.floor(u), 0, np.maximum(size - 2, 0)).astype(np.int64)
        t = np.clip(u - low, 0.0, 1.0)
        high = np.minimum(low + 1, size - 1)
        i0, j0, i1, j1 = low[..., 0], low[..., 1], high[..., 0], high[..., 1]
        tx, ty = t[..., 0], t[..., 1]
        bottom = grid[i0, j0] * (1 - tx) + grid[i1, j0] * tx
        top = grid[i0, j1] * (1 - tx) + grid[i1, j1] * tx
        return np.asarray(bottom * (1 - ty) + top * ty)

    def describe(self) -> dict[str, object]:
        """A JSON-friendly summary."""
        return {
            "shape": list(self.shape),
            "origin": [float(v) for v in self.origin],
            "dx": float(self.dx),
            "dy": float(self.dy or self.dx),
            "height_range": [float(self.heights.min()), float(self.heights.max())],
            "bounds": self.bounds is not None,
        }

    def __repr__(self) -> str:
        return (f"Terrain({self.shape[0]}x{self.shape[1]}, dx={float(self.dx):g}, "
                f"origin=({float(self.origin[0]):g}, {float(self.origin[1]):g}))")

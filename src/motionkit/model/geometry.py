"""Triangle meshes of a model's primitive shapes, in the shape's own frame (long axis z), and
how a model is drawn where a file holds no colours: one place for the viewer and the glTF
writer, so both draw the same shapes, sticks and colours."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from .skeleton import Shape
from .terrain import Terrain

F32 = NDArray[np.float32]
U32 = NDArray[np.uint32]

#: Shape kinds drawn as meshes; other kinds (mesh files, planes, …) are left to the sticks.
DRAWN = ("box", "sphere", "ellipsoid", "cylinder", "capsule", "cone")

_AROUND = 20  # segments around a round shape
_RINGS = 10  # rings from pole to pole of a sphere


def _grid(rings: NDArray[np.float64], around: int) -> U32:
    """Faces joining consecutive rings of ``around`` vertices each (rings bottom to top,
    vertices counter-clockwise seen from above), wound counter-clockwise seen from outside."""
    faces = []
    for r in range(len(rings) - 1):
        for k in range(around):
            a, b = r * around + k, r * around + (k + 1) % around
            faces += [(a, b, a + around), (b, b + around, a + around)]
    return np.asarray(faces, dtype=np.uint32)


def _revolved(profile: NDArray[np.float64], low: float | None = None,
              high: float | None = None) -> tuple[F32, U32]:
    """A closed solid of revolution about z from ``(radius, z)`` pairs, bottom to top, closed by
    a vertex on the axis at ``low`` and ``high`` (default: the end rings' heights)."""
    angle = np.linspace(0, 2 * np.pi, _AROUND, endpoint=False)
    ring = np.stack([np.cos(angle), np.sin(angle)], axis=1)
    vertices = np.concatenate([np.column_stack([ring * r, np.full(_AROUND, z)]) for r, z in profile])
    faces = _grid(profile[:, 0], _AROUND)
    bottom, top = len(vertices), len(vertices) + 1
    ends = (profile[0, 1] if low is None else low, profile[-1, 1] if high is None else high)
    vertices = np.vstack([vertices, [0, 0, ends[0]], [0, 0, ends[1]]])
    last = (len(profile) - 1) * _AROUND
    caps = [(bottom, (k + 1) % _AROUND, k) for k in range(_AROUND)]
    caps += [(top, last + k, last + (k + 1) % _AROUND) for k in range(_AROUND)]
    return vertices.astype(np.float32), np.vstack([faces, np.asarray(caps, dtype=np.uint32)])


def mesh(shape: Shape) -> tuple[F32, U32] | None:
    """Vertices and faces of ``shape`` in its frame, or None for a kind drawn as sticks."""
    p = shape.params
    if shape.kind == "box":
        size = np.asarray(p.get("size", (0.1, 0.1, 0.1)), dtype=float).reshape(3) / 2
        corners = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)]) * size
        faces = np.array([[0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5], [0, 4, 5], [0, 5, 1],
                          [2, 3, 7], [2, 7, 6], [0, 2, 6], [0, 6, 4], [1, 5, 7], [1, 7, 3]])
        return corners.astype(np.float32), faces.astype(np.uint32)
    if shape.kind in ("sphere", "ellipsoid"):
        polar = np.linspace(np.pi, 0, _RINGS + 1)[1:-1]
        verts, faces = _revolved(np.column_stack([np.sin(polar), np.cos(polar)]), -1.0, 1.0)
        radii = (np.asarray(p["size"], dtype=float).reshape(3) / 2 if shape.kind == "ellipsoid"
                 else np.full(3, float(p.get("radius", 0.05))))
        return (verts * radii).astype(np.float32), faces
    if shape.kind == "capsule":
        r, h = float(p.get("radius", 0.05)), float(p.get("height", 0.1))
        polar = np.linspace(np.pi, np.pi / 2, _RINGS // 2 + 1)[1:]
        low = np.column_stack([r * np.sin(polar), r * np.cos(polar) - h / 2])
        high = np.column_stack([low[::-1, 0], -low[::-1, 1]])
        return _revolved(np.vstack([low, high]), -h / 2 - r, h / 2 + r)
    if shape.kind in ("cylinder", "cone"):
        r, h = float(p.get("radius", 0.05)), float(p.get("height", 0.1))
        top = r if shape.kind == "cylinder" else 1e-4
        return _revolved(np.array([[r, -h / 2], [top, h / 2]]))
    return None


def shape_colour(shape: Shape) -> tuple[int, int, int] | None:
    """The shape's RGB 0-255 (files give 0-1 or 0-255), or None."""
    if shape.color is None:
        return None
    rgb = np.asarray(shape.color, dtype=float).reshape(-1)[:3]
    if rgb.max() <= 1:
        rgb = rgb * 255
    r, g, b = (int(np.clip(round(float(c)), 0, 255)) for c in rgb)
    return r, g, b


#: Distinct colours per motion shown together (RGB 0-255).
PALETTE = ((31, 119, 180), (255, 127, 14), (44, 160, 44), (214, 39, 40), (148, 103, 189),
           (140, 86, 75), (227, 119, 194), (127, 127, 127))

#: The terrain's colour (RGB 0-255).
TERRAIN_COLOUR = (170, 160, 140)

#: Stick width in metres, on a skeleton with shapes and without (a stick joins a body to its
#: parent).
STICK_WITH_SHAPES, STICK_ALONE = 0.008, 0.02


def light(colour: tuple[int, int, int]) -> tuple[int, int, int]:
    """A paler shade of a motion's colour, for its shapes."""
    r, g, b = (int(c + (255 - c) * 0.45) for c in colour)
    return r, g, b


def terrain_mesh(terrain: Terrain, max_vertices: int) -> tuple[F32, U32]:
    """A heightfield as triangles (vertices in metres, faces), thinned to at most about
    ``max_vertices`` vertices (every k-th cell along both axes)."""
    heights = np.asarray(terrain.heights, dtype=float)
    nx, ny = heights.shape
    step = max(1, int(np.ceil(np.sqrt(nx * ny / max_vertices))))
    ii, jj = np.arange(0, nx, step), np.arange(0, ny, step)
    gi, gj = np.meshgrid(ii, jj, indexing="ij")
    x = float(terrain.origin[0]) + gi * float(terrain.dx)
    y = float(terrain.origin[1]) + gj * float(terrain.dy or terrain.dx)
    vertices = np.stack([x, y, heights[gi, gj]], axis=-1).reshape(-1, 3).astype(np.float32)
    a, b = len(ii), len(jj)
    base = (np.arange(a - 1)[:, None] * b + np.arange(b - 1)[None, :]).ravel()
    faces = np.concatenate([np.stack([base, base + b, base + 1], 1),
                            np.stack([base + 1, base + b, base + b + 1], 1)]).astype(np.uint32)
    return vertices, faces

"""Moments of inertia derived from shapes, the way dartpy 6.20 does when a body's
``<inertia>`` has a mass but no ``<moment_of_inertia>``: the mass is shared among all rigid
shapes in proportion to their volumes, and each shape's moment is moved to the body's
centre of mass (rotation by the shape pose, parallel-axis theorem)."""

from __future__ import annotations

import math
import os

import numpy as np
from numpy.typing import NDArray

from ...errors import warn
from ...model.skeleton import Shape

Array = NDArray[np.float64]


def _volume_and_unit_moment(shape: Shape) -> tuple[float, Array] | None:
    """Volume and moment of inertia per unit mass about the shape origin, or None."""
    p = shape.params
    if shape.kind == "box":
        x, y, z = np.asarray(p["size"], dtype=float)
        return x * y * z, np.diag([y * y + z * z, x * x + z * z, x * x + y * y]) / 12.0
    if shape.kind == "sphere":
        r = float(p["radius"])
        return 4.0 / 3.0 * math.pi * r**3, np.eye(3) * (0.4 * r * r)
    if shape.kind == "ellipsoid":
        a, b, c = np.asarray(p["size"], dtype=float) / 2.0
        return 4.0 / 3.0 * math.pi * a * b * c, np.diag([b * b + c * c, a * a + c * c,
                                                        a * a + b * b]) / 5.0
    if shape.kind == "cylinder":
        r, h = float(p["radius"]), float(p["height"])
        side = (3 * r * r + h * h) / 12.0
        return math.pi * r * r * h, np.diag([side, side, r * r / 2.0])
    if shape.kind == "capsule":
        r, h = float(p["radius"]), float(p["height"])
        v_cyl = math.pi * r * r * h
        v_sph = 4.0 / 3.0 * math.pi * r**3
        volume = v_cyl + v_sph
        m_cyl, m_sph = v_cyl / volume, v_sph / volume
        # two hemispheres: own moment about their COM (3/8 r from the flat face) moved out
        side = (m_cyl * (3 * r * r + h * h) / 12.0
                + m_sph * (0.4 * r * r + h * h / 4.0 + 3.0 * h * r / 8.0))
        axial = m_cyl * r * r / 2.0 + m_sph * 0.4 * r * r
        return volume, np.diag([side, side, axial])
    if shape.kind == "cone":  # DART's moment is about the centre of the base
        r, h = float(p["radius"]), float(p["height"])
        side = 3.0 / 20.0 * r * r + h * h / 10.0
        return math.pi * r * r * h / 3.0, np.diag([side, side, 0.3 * r * r])
    box = _bounding_box(shape)
    if box is not None:  # DART uses the bounding box for multi-spheres and meshes
        x, y, z = box
        return x * y * z, np.diag([y * y + z * z, x * x + z * z, x * x + y * y]) / 12.0
    return None


def _bounding_box(shape: Shape) -> Array | None:
    """Edge lengths of the axis-aligned bounding box of a multi-sphere or an OBJ mesh."""
    p = shape.params
    if shape.kind == "multi_sphere" and p.get("spheres"):
        lo = np.min([np.asarray(c) - r for r, c in p["spheres"]], axis=0)
        hi = np.max([np.asarray(c) + r for r, c in p["spheres"]], axis=0)
        return np.asarray(hi - lo, dtype=float)
    if shape.kind == "mesh" and str(p.get("file_name", "")).lower().endswith(".obj"):
        path = os.path.join(str(p.get("base", "")), str(p["file_name"]))
        try:
            with open(path, "rb") as handle:
                points = [line.split()[1:4] for line in handle if line.startswith(b"v ")]
            vertices = np.array(points, dtype=float) * np.asarray(p["scale"], dtype=float)
        except (OSError, ValueError):
            return None
        if len(vertices):
            return np.asarray(vertices.max(axis=0) - vertices.min(axis=0), dtype=float)
    return None


def derived_moment(shapes: list[Shape], mass: float, com: Array) -> Array:
    """The composite moment about ``com`` of ``mass`` spread over ``shapes`` by volume."""
    parts = []
    for shape in shapes:
        found = _volume_and_unit_moment(shape)
        if found is None:
            if shape.kind != "plane":
                warn(f"inertia of a {shape.kind} shape could not be computed; it is "
                     "left out of the derived moment of inertia")
            continue
        parts.append((shape, *found))
    total = sum(volume for _, volume, _ in parts)
    moment = np.zeros((3, 3))
    if total <= 0.0:
        return np.eye(3) if not parts else moment
    for shape, volume, unit in parts:
        m = mass * volume / total
        rot = shape.transform[:3, :3]
        d = shape.transform[:3, 3] - com
        moment += m * (rot @ unit @ rot.T) + m * (float(d @ d) * np.eye(3) - np.outer(d, d))
    return moment

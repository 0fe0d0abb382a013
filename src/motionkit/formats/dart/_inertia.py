"""Moments of inertia derived from shapes exactly as dartpy 6.20 derives them, when a body's
``<inertia>`` has a mass but no ``<moment_of_inertia>`` (``specs/dart-skel-addendum.md`` §1).

Every rigid shape of the body counts (a shape written as visual and as collision counts
twice). The mass is shared in proportion to DART's volumes, where a volume that is zero or
not finite weighs 1.0 (a multi-sphere's volume is always 0 in DART, and a plane's too).
Each share is a body at the shape origin with the shape's own moment, moved to the body's
centre of mass. Sizes DART's setters refuse (not positive and finite) take DART's
defaults; a mass ≤ 0, no shapes, or a non-finite result leave the identity.
"""

from __future__ import annotations

import math
import os

import numpy as np
from numpy.typing import NDArray

from ...errors import warn
from ...model.skeleton import Shape

Array = NDArray[np.float64]


class MeshUnavailable(Exception):
    """A mesh DART would need to load (it crashes when it cannot)."""


def _valid(value: object) -> bool:
    number = float(value)  # type: ignore[arg-type]
    return math.isfinite(number) and number > 0.0


def _size(params: dict[str, object], key: str = "size") -> Array:
    size = np.asarray(params[key], dtype=float).reshape(3)
    return size if all(_valid(v) for v in size) else np.ones(3)


def _scalar(params: dict[str, object], key: str) -> float:
    return float(params[key]) if _valid(params[key]) else 1.0  # type: ignore[arg-type]


def _box(x: float, y: float, z: float) -> Array:
    return np.diag([y * y + z * z, x * x + z * z, x * x + y * y]) / 12.0


def volume_and_unit_moment(shape: Shape, body: str) -> tuple[float, Array]:
    """DART's volume of ``shape`` and its moment per unit mass about the shape origin
    (a pyramid's moment is DART's unscaled identity, applied in :func:`derived_moment`)."""
    p = shape.params
    kind = shape.kind
    if kind == "box":
        x, y, z = _size(p)
        return x * y * z, _box(x, y, z)
    if kind == "sphere":
        r = _scalar(p, "radius")
        return 4.0 / 3.0 * math.pi * r**3, np.eye(3) * (0.4 * r * r)
    if kind == "ellipsoid":
        a, b, c = _size(p)  # diameters
        return math.pi / 6.0 * a * b * c, np.diag([b * b + c * c, a * a + c * c,
                                                   a * a + b * b]) / 20.0
    if kind in ("cylinder", "capsule", "cone"):
        r, h = _scalar(p, "radius"), _scalar(p, "height")
        if kind == "cylinder":
            side = (3 * r * r + h * h) / 12.0
            return math.pi * r * r * h, np.diag([side, side, r * r / 2.0])
        if kind == "cone":  # about the centre of the base, as DART uses it
            side = 3.0 / 20.0 * r * r + h * h / 10.0
            return math.pi * r * r * h / 3.0, np.diag([side, side, 0.3 * r * r])
        v_cyl, v_sph = math.pi * r * r * h, 4.0 / 3.0 * math.pi * r**3
        m_cyl, m_sph = v_cyl / (v_cyl + v_sph), v_sph / (v_cyl + v_sph)
        side = (m_cyl * (3 * r * r + h * h) / 12.0
                + m_sph * (0.4 * r * r + h * h / 4.0 + 3.0 * h * r / 8.0))
        return v_cyl + v_sph, np.diag([side, side, m_cyl * r * r / 2.0 + m_sph * 0.4 * r * r])
    if kind == "plane":
        return 0.0, np.zeros((3, 3))
    if kind == "pyramid":
        w, d, h = (_scalar(p, k) for k in ("base_width", "base_depth", "height"))
        return w * d * h / 3.0, np.eye(3)
    if kind == "multi_sphere":
        spheres = p.get("spheres") or []
        if not spheres:
            return 0.0, np.full((3, 3), np.nan)
        lo = np.min([np.asarray(c, dtype=float) - r for r, c in spheres], axis=0)
        hi = np.max([np.asarray(c, dtype=float) + r for r, c in spheres], axis=0)
        return 0.0, _box(*(hi - lo))  # DART's cached volume is 0 at load time
    if kind == "mesh":
        extent = mesh_extent(shape, body)
        return float(np.prod(extent)), _box(*extent)
    raise MeshUnavailable(f"body {body!r}: DART has no inertia for a {kind} shape")


def mesh_extent(shape: Shape, body: str) -> Array:
    """Bounding-box edge lengths of a mesh as DART gets it from Assimp (float32 vertices of
    the faces, times ``<scale>``). Only Wavefront OBJ is read here."""
    p = shape.params
    name = str(p.get("file_name", ""))
    path = os.path.join(str(p.get("base", "")), name)
    if not name.lower().endswith(".obj"):
        raise MeshUnavailable(f"body {body!r}: the bounding box of mesh {name!r} (not OBJ) is "
                              "not computed by motionkit")
    try:
        with open(path, "rb") as handle:
            lines = handle.read().splitlines()
    except OSError as exc:
        raise MeshUnavailable(f"body {body!r}: mesh {name!r} cannot be read "
                              f"({exc.strerror}); DART crashes deriving this inertia") from None
    vertices: list[list[str]] = []
    used: set[int] = set()
    for line in lines:
        parts = line.split()
        if not parts:
            continue
        if parts[0] == b"v" and len(parts) >= 4:
            vertices.append([t.decode("ascii", "replace") for t in parts[1:4]])
        elif parts[0] == b"f" and len(parts) >= 4:  # points and lines are dropped
            for item in parts[1:]:
                index = int(item.split(b"/")[0])
                used.add(index - 1 if index > 0 else len(vertices) + index)
    if not used:
        raise MeshUnavailable(f"body {body!r}: mesh {name!r} has no faces")
    points = np.array([vertices[i] for i in sorted(used)], dtype=np.float32).astype(np.float64)
    scaled = points * np.asarray(p.get("scale", np.ones(3)), dtype=float)
    return np.asarray(scaled.max(axis=0) - scaled.min(axis=0), dtype=float)


def derived_moment(shapes: list[Shape], mass: float, com: Array, body: str = "") -> Array:
    """The moment about ``com`` DART derives for ``mass`` spread over ``shapes``.

    Raises MeshUnavailable when a mesh cannot be read (DART crashes there). A mesh format
    other than OBJ is left out with a warning naming the body.
    """
    if not mass > 0.0 or not shapes:
        return np.eye(3)
    parts: list[tuple[Shape, float, Array]] = []
    for shape in shapes:
        try:
            volume, unit = volume_and_unit_moment(shape, body)
        except MeshUnavailable as exc:
            if "not computed" not in str(exc):
                raise
            warn(f"{exc}; it is left out of the derived moment of inertia (DART counts it)")
            continue
        parts.append((shape, volume, unit))
    if not parts:
        return np.eye(3)
    weights = [v if math.isfinite(v) and v > 0.0 else 1.0 for _, v, _ in parts]
    total = sum(weights)
    moment = np.zeros((3, 3))
    for (shape, _, unit), weight in zip(parts, weights, strict=True):
        m = mass * weight / total
        own = np.eye(3) if shape.kind == "pyramid" else m * unit  # DART: unscaled identity
        rot = shape.transform[:3, :3]
        d = shape.transform[:3, 3] - com
        moment += rot @ own @ rot.T + m * (float(d @ d) * np.eye(3) - np.outer(d, d))
    return moment if np.isfinite(moment).all() else np.eye(3)

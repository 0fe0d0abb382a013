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
from collections.abc import Mapping

import numpy as np
from numpy.typing import NDArray

from ...errors import FormatError, warn
from ...model.skeleton import Shape
from ..shared.xml import Node, parse

Array = NDArray[np.float64]


class MeshUnavailable(Exception):
    """A mesh DART would need to load (it crashes when it cannot)."""


class MeshNotComputed(MeshUnavailable):
    """A mesh format whose bounding box motionkit does not compute (DART can)."""


def _valid(value: object) -> bool:
    number = float(value)  # type: ignore[arg-type]
    return math.isfinite(number) and number > 0.0


def _size(params: Mapping[str, object], key: str = "size") -> Array:
    size = np.asarray(params[key], dtype=float).reshape(3)
    return size if all(_valid(v) for v in size) else np.ones(3)


def _scalar(params: Mapping[str, object], key: str) -> float:
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
    suffix = os.path.splitext(name)[1].lower()
    if suffix not in (".obj", ".dae"):
        raise MeshNotComputed(f"body {body!r}: the bounding box of mesh {name!r} (not OBJ or "
                              "COLLADA) is not computed by motionkit")
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        raise MeshUnavailable(f"body {body!r}: mesh {name!r} cannot be read "
                              f"({exc.strerror}); DART crashes deriving this inertia") from None
    try:
        points = (collada_points(data, path, body) if suffix == ".dae"
                  else _obj_points(data, name, body))
    except (FormatError, KeyError, StopIteration, ValueError, IndexError) as exc:
        raise MeshUnavailable(f"body {body!r}: mesh {name!r} cannot be read ({type(exc).__name__}"
                              "); DART crashes deriving this inertia") from None
    scaled = points.astype(np.float64) * np.asarray(p.get("scale", np.ones(3)), dtype=float)
    return np.asarray(scaled.max(axis=0) - scaled.min(axis=0), dtype=float)


def _obj_points(data: bytes, name: str, body: str) -> NDArray[np.float32]:
    """Vertices of an OBJ file's faces, as float32 (Assimp's precision)."""
    lines = data.splitlines()
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
    return np.array([vertices[i] for i in sorted(used)], dtype=np.float32)


def collada_points(data: bytes, path: str, body: str) -> NDArray[np.float32]:
    """Vertices of a COLLADA file's polygons as Assimp gives them to DART: every geometry
    instance of the visual scene moved by its nodes' transforms (``matrix``, ``translate``,
    ``rotate``, ``scale`` in order) and the ``<unit meter>`` factor, in float32; lines and
    points dropped; ``up_axis`` ignored (DART resets the root transform)."""
    root = parse(data, path)  # the safe parser: no entity is expanded or fetched
    everything = _walk(root)
    ids = {n.attrib["id"]: n for n in everything if "id" in n.attrib}
    unit = np.float32(1.0)
    for n in everything:
        if _local(n.tag) == "unit" and "meter" in n.attrib:
            unit = np.float32(float(n.attrib["meter"]))
    scenes = [n for n in everything if _local(n.tag) == "visual_scene"]
    if not scenes:
        raise MeshUnavailable(f"body {body!r}: mesh {path!r} has no visual scene")
    start = np.diag([unit, unit, unit, np.float32(1.0)]).astype(np.float32)
    parts: list[NDArray[np.float32]] = []
    stack = [(child, start) for child in scenes[0].children if _local(child.tag) == "node"]
    while stack:
        node, outer = stack.pop()
        here = (outer @ _node_transform(node)).astype(np.float32)
        for item in node.children:
            if _local(item.tag) == "instance_geometry":
                geometry = ids.get(item.attrib.get("url", "").lstrip("#"))
                if geometry is not None:
                    parts.append(_apply(here, _geometry_points(geometry, ids)))
            elif _local(item.tag) == "node":
                stack.append((item, here))
    if not parts or not sum(len(x) for x in parts):
        raise MeshUnavailable(f"body {body!r}: mesh {path!r} has no polygons")
    return np.concatenate(parts)


def _local(tag: str) -> str:
    """A COLLADA tag without its namespace prefix."""
    return tag.rsplit(":", 1)[-1]


def _walk(node: Node) -> list[Node]:
    """``node`` and every element below it, in document order (a loop: no recursion limit)."""
    out, stack = [], [node]
    while stack:
        item = stack.pop()
        out.append(item)
        stack.extend(reversed(item.children))
    return out


def _floats(node: Node) -> NDArray[np.float32]:
    """An element's numbers in float32 (Assimp's precision)."""
    return np.array(node.text.split(), dtype=np.float32)


def _geometry_points(geometry: Node, ids: dict[str, Node]) -> NDArray[np.float32]:
    """The vertices of a ``<geometry>``'s triangles, polylists and polygons."""
    found: list[NDArray[np.float32]] = []
    for mesh in (c for c in geometry.children if _local(c.tag) == "mesh"):
        for prim in mesh.children:
            if _local(prim.tag) in ("triangles", "polylist", "polygons"):
                found.extend(_primitive_points(prim, ids))
    return np.concatenate(found) if found else np.zeros((0, 3), np.float32)


def _primitive_points(prim: Node, ids: dict[str, Node]) -> list[NDArray[np.float32]]:
    """The vertices each ``<p>`` of a primitive indexes, through its VERTEX input."""
    inputs = [c for c in prim.children if _local(c.tag) == "input"]
    stride = max(int(i.attrib.get("offset", "0")) for i in inputs) + 1
    vertex = next(i for i in inputs if i.attrib.get("semantic") == "VERTEX")
    offset = int(vertex.attrib.get("offset", "0"))
    verts = ids[vertex.attrib["source"].lstrip("#")]
    position = next(c for c in verts.children if _local(c.tag) == "input"
                    and c.attrib.get("semantic") == "POSITION")
    source = ids[position.attrib["source"].lstrip("#")]
    array = next(c for c in _walk(source) if _local(c.tag) == "float_array")
    coords = _floats(array).reshape(-1, 3)
    return [coords[np.array(p_node.text.split(), dtype=np.int64)[offset::stride]]
            for p_node in prim.children if _local(p_node.tag) == "p"]


def _node_transform(node: Node) -> NDArray[np.float32]:
    """The product, in order, of a scene node's ``matrix``, ``translate``, ``rotate`` and
    ``scale`` children, in float32."""
    out = np.eye(4, dtype=np.float32)
    for item in node.children:
        kind = _local(item.tag)
        if kind in ("matrix", "translate", "rotate", "scale"):
            out = (out @ _step(kind, _floats(item))).astype(np.float32)
    return out


def _step(kind: str, values: NDArray[np.float32]) -> NDArray[np.float32]:
    """One transform element as a 4×4 float32 matrix."""
    step = np.eye(4, dtype=np.float32)
    if kind == "matrix":
        return values.reshape(4, 4)
    if kind == "translate":
        step[:3, 3] = values[:3]
    elif kind == "scale":
        step = np.diag(np.append(values[:3], np.float32(1.0))).astype(np.float32)
    else:
        step[:3, :3] = _rotation(values)
    return step


def _rotation(values: NDArray[np.float32]) -> NDArray[np.float32]:
    """The 3×3 float32 rotation of a ``<rotate>`` (axis x y z, angle in degrees)."""
    axis = values[:3] / np.linalg.norm(values[:3])
    angle = np.float32(values[3] * np.float32(np.pi / 180.0))
    c, s_, t = np.cos(angle), np.sin(angle), np.float32(1.0) - np.cos(angle)
    x, y, z = axis
    return np.array([[t * x * x + c, t * x * y - s_ * z, t * x * z + s_ * y],
                     [t * x * y + s_ * z, t * y * y + c, t * y * z - s_ * x],
                     [t * x * z - s_ * y, t * y * z + s_ * x, t * z * z + c]], dtype=np.float32)


def _apply(matrix: NDArray[np.float32], points: NDArray[np.float32]) -> NDArray[np.float32]:
    """``matrix · point`` per point in float32, summed left to right as Assimp does."""
    x, y, z = points[:, 0], points[:, 1], points[:, 2]
    rows = [((matrix[i, 0] * x + matrix[i, 1] * y) + matrix[i, 2] * z) + matrix[i, 3]
            for i in range(3)]
    return np.stack(rows, axis=1).astype(np.float32)


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
        except MeshNotComputed as exc:
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

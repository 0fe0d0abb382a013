"""Shapes of ``.skel`` bodies: ``<visualization_shape>``, ``<collision_shape>`` and
``<soft_shape>`` with their ``<geometry>``, read as DART reads them."""

from __future__ import annotations

import os

import numpy as np

from ...model.skeleton import Shape, ShapeParams, SoftShape
from ..shared.xml import Node
from ._values import ValueReader

#: Geometries in the order DART looks for them (the first one present is the shape).
RIGID_KINDS = ("sphere", "box", "ellipsoid", "cylinder", "capsule", "cone", "pyramid", "plane",
               "multi_sphere", "mesh")
SOFT_KINDS = ("sphere", "box", "ellipsoid", "cylinder")


class ShapeReader:
    """Rigid and soft shapes of one ``.skel`` file."""

    def __init__(self, values: ValueReader) -> None:
        self.values = values

    def shape(self, node: Node, role: str) -> Shape | None:
        """A rigid shape (``role`` visual or collision); None for an unknown geometry."""
        values = self.values
        found = self.geometry(node)
        if found is None:
            return None
        kind, params = found
        shape = Shape(kind, params, values.transform(node.find("transformation")), role)
        color = node.find("color")
        if color is not None:
            numbers = color.text.split()
            if len(numbers) in (3, 4):
                shape.color = np.array([values.number(color, v) for v in numbers])
            else:
                values.warn(color, "<color> needs 3 or 4 numbers; ignored, as in DART")
        collidable = node.find("collidable")
        if collidable is not None and role == "collision":
            shape.collidable = values.number(collidable) != 0.0
        return shape

    def soft_shape(self, node: Node) -> SoftShape | None:
        """A body's soft shape; None for an unknown geometry (its total mass is still
        required, as in DART)."""
        found = self.geometry(node, soft=True)
        total = self.values.child_number(node, "total_mass")
        if found is None:
            return None
        soft = SoftShape(found[0], found[1], self.values.transform(node.find("transformation")),
                         total)
        for tag in ("kv", "ke", "damp"):
            value = node.find(tag)
            if value is not None:
                setattr(soft, tag, self.values.number(value))
        return soft

    def geometry(self, node: Node, soft: bool = False) -> tuple[str, ShapeParams] | None:
        """The kind and parameters of ``node``'s ``<geometry>``; None (with a warning) when
        it holds no geometry DART knows."""
        geometry = self.values.child(node, "geometry")
        for kind in SOFT_KINDS if soft else RIGID_KINDS:
            found = geometry.find(kind)
            if found is None:
                continue
            params = self._params(kind, found)
            if soft:
                self._soft_params(kind, found, params)
            return kind, params
        inner = geometry.children[0].tag if geometry.children else "nothing"
        self.values.warn(geometry, f"unknown geometry <{inner}>; the shape is ignored (DART "
                         "leaves it empty)")
        return None

    def _params(self, kind: str, node: Node) -> ShapeParams:
        if kind == "plane":
            return self._plane(node)
        if kind == "multi_sphere":
            return {"spheres": [(self.values.child_number(sphere, "radius"),
                                 self.values.vector(self.values.child(sphere, "position"), 3))
                                for sphere in node.findall("sphere")]}
        if kind == "mesh":
            return {"file_name": self.values.child(node, "file_name").text,
                    "base": os.path.dirname(os.path.abspath(self.values.path)),
                    "scale": self.values.vector(self.values.child(node, "scale"), 3)}
        return self._primitive(kind, node)

    def _primitive(self, kind: str, node: Node) -> ShapeParams:
        """Sizes of a box, ellipsoid, sphere, cylinder, capsule, cone or pyramid."""
        values = self.values
        params: ShapeParams = {}
        if kind in ("box", "ellipsoid"):
            params["size"] = values.vector(values.child(node, "size"), 3)
        if kind in ("sphere", "cylinder", "capsule", "cone"):
            params["radius"] = values.child_number(node, "radius")
        if kind in ("cylinder", "capsule", "cone", "pyramid"):
            params["height"] = values.child_number(node, "height")
        if kind == "pyramid":
            params["base_width"] = values.child_number(node, "base_width")
            params["base_depth"] = values.child_number(node, "base_depth")
        return params

    def _plane(self, node: Node) -> ShapeParams:
        """A plane's normal and offset (from the deprecated ``<point>`` or 0 when absent)."""
        values = self.values
        normal = values.vector(values.child(node, "normal"), 3)
        offset, point = node.find("offset"), node.find("point")
        if offset is not None:
            return {"normal": normal, "offset": values.number(offset)}
        if point is not None:
            values.warn(point, "<plane><point> is deprecated; converted to <offset>")
            unit = normal / np.linalg.norm(normal)
            return {"normal": normal, "offset": float(unit @ values.vector(point, 3))}
        values.warn(node, "<plane> without <offset>: 0 is used, as in DART")
        return {"normal": normal, "offset": 0.0}

    def _soft_params(self, kind: str, node: Node, params: ShapeParams) -> None:
        """What a soft shape adds: a box's ``<frags>`` and the tessellation counts."""
        values = self.values
        if kind == "box":
            frags = values.child(node, "frags")
            values.vector(frags, 3)  # the count
            params["frags"] = np.array([values.integer(frags, t) for t in frags.text.split()])
        for tag in ("num_slices", "num_stacks", "num_rings"):
            found = node.find(tag)
            if found is not None:
                params[tag] = values.integer(found)

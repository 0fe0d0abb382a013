"""Bodies of a ``.skel`` skeleton: pose, gravity flag, shapes, inertia and markers.

A body's ``<inertia>`` without a ``<moment_of_inertia>`` gets the moment DART derives from
the body's shapes (:mod:`._inertia`); so does a first body that a second one of the same
name adds its shapes to.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from ...model.skeleton import Body, Inertia, Joint, Marker
from ..shared.xml import Node
from ._inertia import MeshUnavailable, derived_moment
from ._shapes import ShapeReader
from ._values import ValueReader

Array = NDArray[np.float64]
_MOMENT_TAGS = ("ixx", "iyy", "izz", "ixy", "ixz", "iyz")


class BodyReader:
    """The ``<body>`` elements of one ``.skel`` file."""

    def __init__(self, values: ValueReader) -> None:
        self.values = values
        self.shapes = ShapeReader(values)

    def body(self, node: Node, frame: Array) -> Body:
        """A body at rest in the skeleton's ``frame``, with a placeholder free joint (the
        skeleton attaches its real one)."""
        values = self.values
        name = node.attrib.get("name")
        if name is None:
            values.warn(node, "<body> without a name")
            name = ""
        body = Body(name, Joint("root", "free"), rest_pose=frame @ values.transform(
            node.find("transformation")))
        gravity = node.find("gravity")
        if gravity is not None:
            body.gravity = values.boolean(gravity)
        for tag, role in (("visualization_shape", "visual"), ("collision_shape", "collision")):
            for shape_node in node.findall(tag):
                shape = self.shapes.shape(shape_node, role)
                if shape is not None:
                    body.shapes.append(shape)
        inertia_node = node.find("inertia")
        if inertia_node is not None:
            body.inertia = self._inertia(node, inertia_node, body)
        for marker_node in node.findall("marker"):
            offset = marker_node.find("offset")
            body.markers.append(Marker(marker_node.attrib.get("name", ""),
                                       values.vector(offset, 3) if offset is not None
                                       else np.zeros(3)))
        soft = node.find("soft_shape")
        if soft is not None:
            body.soft_shape = self.shapes.soft_shape(soft)
        return body

    def _inertia(self, node: Node, inertia_node: Node, body: Body) -> Inertia:
        """Mass, centre of mass and moment of ``<inertia>``; the moment derived from the
        body's shapes when it is not given."""
        values = self.values
        mass = values.child_number(inertia_node, "mass")
        if not math.isfinite(mass):
            values.warn(inertia_node, f"body {body.name!r}: mass {mass} is not finite; DART "
                        "keeps its default 1")
            mass = 1.0
        offset = inertia_node.find("offset")
        com = values.vector(offset, 3) if offset is not None else np.zeros(3)
        moi = inertia_node.find("moment_of_inertia")
        if moi is not None:
            v = {k: values.child_number(moi, k) for k in _MOMENT_TAGS}
            return Inertia(mass, com, np.array([[v["ixx"], v["ixy"], v["ixz"]],
                                                [v["ixy"], v["iyy"], v["iyz"]],
                                                [v["ixz"], v["iyz"], v["izz"]]]))
        try:
            moment = derived_moment(body.shapes, mass, com, body.name)
        except MeshUnavailable as exc:
            raise values.error(node, str(exc)) from None
        return Inertia(mass, com, moment, True)

    def merge_duplicate(self, node: Node, first: Body, duplicate: Body, skeleton: str) -> None:
        """A second body named like ``first``: DART ignores it but puts its shapes on the
        first one, whose moment a mass-only ``<inertia>`` of the second derives again."""
        self.values.warn(node, f"skeleton {skeleton!r} has a second body named "
                         f"{duplicate.name!r}; DART ignores it but puts its shapes on the first one")
        first.shapes.extend(duplicate.shapes)
        if duplicate.inertia.derived:
            inertia = first.inertia
            try:
                inertia.moment = derived_moment(first.shapes, inertia.mass, inertia.com,
                                                first.name)
            except MeshUnavailable as exc:
                raise self.values.error(node, str(exc)) from None
            inertia.derived = True

"""Joints of a ``.skel`` skeleton: type, actuator, parent and child, axes (or Euler order
or plane), DOF limits, initial state and ``<dof>`` settings, read as DART reads them."""

from __future__ import annotations

import math
import os

import numpy as np
from numpy.typing import NDArray

from ...errors import warn
from ...model.skeleton import ACTUATORS, JOINT_DOFS, Body, Dof, Joint, default_dof_names
from ..shared.xml import Node
from ._values import ValueReader

Array = NDArray[np.float64]
#: Joint types with axes in ``<axis>`` (and ``<axis2>``) elements.
_AXIS_TYPES = ("revolute", "prismatic", "screw", "universal")
_DYNAMICS = ("damping", "friction", "spring_rest_position", "spring_stiffness")
#: ``<dof>`` children: (tag, prefix of the Dof's limit fields, the Dof's initial field).
_DOF_VALUES = (("position", "", "position"), ("velocity", "velocity_", "velocity"),
               ("acceleration", "acceleration_", "acceleration"), ("force", "force_", "force"))


class JointReader:
    """The ``<joint>`` elements of one ``.skel`` file.

    Remembers what is reported or used once every skeleton is read: the lines of legacy
    ``<axis><damping>`` elements, and which DOFs a ``<dof name>`` named.
    """

    def __init__(self, values: ValueReader) -> None:
        self.values = values
        self.legacy_damping: list[int] = []
        self.explicit_dofs: dict[int, set[int]] = {}  # id(joint) → DOFs named by <dof name>

    def joint(self, node: Node, bodies: dict[str, tuple[Node, Body]]
              ) -> tuple[Joint, str | None, str]:
        """The joint, its parent body's name (None for the world) and its child's."""
        name = node.attrib.get("name") or "default"
        type_ = self._type(node, name)
        actuator = self._actuator(node, name)
        parent = self._parent(node, name, bodies)
        child_node = self.values.child(node, "child")
        child = child_node.text
        if child not in bodies:
            raise self.values.error(child_node, f"joint {name!r}: no body named {child!r} (the "
                                    "child)")
        joint = Joint(name, type_, child_to_joint=self.values.transform(node.find(
            "transformation")), actuator=actuator)
        if type_ in _AXIS_TYPES:
            self._axes(node, joint)
        elif type_ == "euler":
            self._axis_order(node, joint)
        elif type_ in ("planar", "translational2d"):
            self._plane(node, joint)
        joint.dofs = [Dof(n) for n in default_dof_names(name, type_, joint.axis_order,
                                                        joint.plane)]
        self._dof_settings(node, joint)
        return joint, parent, child

    def report_legacy_damping(self) -> None:
        """One warning for every legacy ``<axis><damping>`` read (the first lines named)."""
        if not self.legacy_damping:
            return
        lines = ", ".join(str(n) for n in self.legacy_damping[:5])
        more = "…" if len(self.legacy_damping) > 5 else ""
        warn(f"{os.fspath(self.values.path)}: legacy <axis><damping> (lines {lines}{more}) "
             "read as <axis><dynamics><damping>, as DART does")

    # ------------------------------------------------------------------ header
    def _type(self, node: Node, name: str) -> str:
        type_ = node.attrib.get("type")
        if type_ not in JOINT_DOFS:
            raise self.values.error(node, f"joint {name!r}: unknown joint type {type_!r} (DART "
                                    f"discards it and may crash); known: {', '.join(JOINT_DOFS)}")
        if type_ in ("screw", "translational2d"):
            self.values.warn(node, f"joint {name!r}: DART's .skel reader cannot build {type_} "
                             "joints (dartpy stops loading there)")
        return type_

    def _actuator(self, node: Node, name: str) -> str:
        actuator = node.attrib.get("actuator", "force")
        if actuator not in ACTUATORS:
            self.values.warn(node, f"joint {name!r}: invalid actuator {actuator!r}; 'force' is "
                             "used, as in DART")
            return "force"
        return actuator

    def _parent(self, node: Node, name: str, bodies: dict[str, tuple[Node, Body]]) -> str | None:
        """The parent body's name; None for the world (named, or no ``<parent>`` at all)."""
        parent_node = node.find("parent")
        if parent_node is None:
            self.values.warn(node, f"joint {name!r} has no <parent>; attached to the world, as "
                             "in DART")
            return None
        parent = parent_node.text
        if parent == "world" and "world" not in bodies:
            return None
        if parent not in bodies:
            raise self.values.error(parent_node, f"joint {name!r}: no body named {parent!r} "
                                    "(the parent)")
        return parent

    # -------------------------------------------------------------- geometry
    def _axes(self, node: Node, joint: Joint) -> None:
        """Unit axes of a revolute, prismatic, screw or universal joint (z where one is
        missing), and a screw's pitch."""
        axes = []
        for tag in ("axis", "axis2")[: 2 if joint.type == "universal" else 1]:
            axis_node = node.find(tag)
            xyz = axis_node.find("xyz") if axis_node is not None else None
            if xyz is None:
                self.values.warn(node, f"joint {joint.name!r} is missing <{tag}><xyz>; z is used")
                axes.append(np.array([0.0, 0.0, 1.0]))
                continue
            axes.append(self._unit_axis(xyz, joint))
        joint.axes = np.array(axes)
        if joint.type == "screw":
            axis_node = node.find("axis")
            if axis_node is not None and axis_node.find("pitch") is not None:
                joint.pitch = self.values.child_number(axis_node, "pitch")

    def _unit_axis(self, xyz: Node, joint: Joint) -> Array:
        axis = self.values.vector(xyz, 3)
        norm = float(np.linalg.norm(axis))
        if norm == 0.0:
            raise self.values.error(xyz, f"joint {joint.name!r}: zero axis")
        if joint.type == "universal" and abs(norm - 1.0) > 1e-9:
            self.values.warn(xyz, f"joint {joint.name!r}: universal axis is not unit; it is "
                             "normalised (DART keeps it and then uses the identity rotation)")
        return axis / norm

    def _axis_order(self, node: Node, joint: Joint) -> None:
        order_node = self.values.child(node, "axis_order")
        order = order_node.text
        if order not in ("xyz", "zyx"):
            self.values.warn(order_node, f"joint {joint.name!r}: Euler axis order {order!r} is "
                             "not xyz or zyx; xyz is used, as in DART")
            order = "xyz"
        joint.axis_order = order

    def _plane(self, node: Node, joint: Joint) -> None:
        """The plane of a planar or translational2d joint: xy, yz, zx, or arbitrary with its
        two translation axes."""
        plane = node.find("plane")
        kind = "xy"
        if plane is None:
            self.values.warn(node, f"joint {joint.name!r} has no <plane>; the XY plane is used, "
                             "as in DART")
        else:
            kind = plane.attrib.get("type", "")
            if kind == "arbitrary":
                joint.axes = np.array([self._plane_axis(plane, tag, joint.name) for tag in
                                       ("translation_axis1", "translation_axis2")])
                if np.linalg.norm(np.cross(*joint.axes)) == 0.0:
                    raise self.values.error(plane, f"joint {joint.name!r}: the plane's "
                                            "translation axes are parallel")
            elif kind not in ("xy", "yz", "zx"):
                self.values.warn(plane, f"joint {joint.name!r}: unknown plane type {kind!r}; xy "
                                 "is used")
                kind = "xy"
        joint.plane = kind

    def _plane_axis(self, plane: Node, tag: str, joint: str) -> Array:
        xyz = self.values.child(self.values.child(plane, tag), "xyz")
        axis = self.values.vector(xyz, 3)
        if not np.linalg.norm(axis) > 0.0:
            raise self.values.error(xyz, f"joint {joint!r}: zero <{tag}>")
        return axis

    # ------------------------------------------------------------------- DOFs
    def _dof_settings(self, node: Node, joint: Joint) -> None:
        """Limits and dynamics of each axis, ``init_pos``/``init_vel``, then ``<dof>``."""
        count = joint.dof_count
        if joint.type not in ("ball", "free", "weld"):
            for i, tag in enumerate(("axis", "axis2", "axis3")[:count]):
                axis_node = node.find(tag)
                if axis_node is not None:
                    self._axis_limits(axis_node, joint.dofs[i])
        for tag, attr in (("init_pos", "position"), ("init_vel", "velocity")):
            found = node.find(tag)
            if found is not None and count:  # a weld's is not read, as in DART
                values = (np.array([self.values.number(found)]) if count == 1
                          else self.values.vector(found, count))
                for dof, value in zip(joint.dofs, values, strict=True):
                    setattr(dof, attr, float(value))
        for dof_node in node.findall("dof"):
            self._dof(dof_node, joint)

    def _axis_limits(self, node: Node, dof: Dof) -> None:
        limit = node.find("limit")
        if limit is not None:
            dof.lower = self.values.child_number(limit, "lower", -math.inf)
            dof.upper = self.values.child_number(limit, "upper", math.inf)
        legacy = node.find("damping")
        if legacy is not None:
            self.legacy_damping.append(legacy.line)
            dof.damping = self.values.number(legacy)
        dynamics = node.find("dynamics")
        if dynamics is not None:
            self._dynamics(dynamics, dof)

    def _dynamics(self, node: Node, dof: Dof) -> None:
        for tag in _DYNAMICS:
            found = node.find(tag)
            if found is not None:
                setattr(dof, tag, self.values.number(found))

    def _dof(self, node: Node, joint: Joint) -> None:
        """One ``<dof>``: its name, limits and initial values, and dynamics."""
        index = self._dof_index(node, joint)
        if index is None:
            return
        dof = joint.dofs[index]
        if "name" in node.attrib:
            dof.name = node.attrib["name"]
            self.explicit_dofs.setdefault(id(joint), set()).add(index)
        for tag, prefix, initial in _DOF_VALUES:
            found = node.find(tag)
            if found is None:
                continue
            for attr, field_name in (("lower", f"{prefix}lower"), ("upper", f"{prefix}upper"),
                                     ("initial", initial)):
                if attr in found.attrib:
                    setattr(dof, field_name, self.values.number(found, found.attrib[attr]))
        self._dynamics(node, dof)

    def _dof_index(self, node: Node, joint: Joint) -> int | None:
        """The DOF a ``<dof>`` sets (``local_index``, or 0 for a one-DOF joint); None, with
        a warning, when it names none."""
        raw = node.attrib.get("local_index")
        if raw is None:
            if joint.dof_count != 1:
                self.values.warn(node, f"<dof> of joint {joint.name!r} without local_index; "
                                 "ignored")
                return None
            return 0
        try:
            index = int(raw)
        except ValueError:
            self.values.warn(node, f"<dof> local_index {raw!r} is not an integer; ignored")
            return None
        if not 0 <= index < joint.dof_count:
            self.values.warn(node, f"<dof> local_index {index} is out of range for joint "
                             f"{joint.name!r}; ignored")
            return None
        return index

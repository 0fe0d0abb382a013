"""DART ``.skel`` (XML) reader and writer → :class:`~motionkit.model.skeleton.World`.

Follows DART's real ``SkelParser`` (see ``specs/dart-skel.md``) where it differs from the
seed document: ``<mobile>``, cylinder ``<height>``, actuator ``force``, rotation-vector
ball/free joints, body transforms as poses at q = 0 and joint transforms in the child
frame. Strict where DART crashes or hangs (orphan bodies, cycles, unknown bodies or joint
types, missing required elements, wrong number counts): one FormatError with the line.
Lenient where DART is lenient, with a MotionkitWarning.
"""

from __future__ import annotations

import math
import os
import re

import numpy as np
from numpy.typing import NDArray
from scipy.spatial.transform import Rotation

from ..._io import read_bytes
from ...errors import FormatError, warn
from ...model.skeleton import (
    ACTUATORS,
    JOINT_DOFS,
    Body,
    Dof,
    Inertia,
    Joint,
    Marker,
    Shape,
    ShapeParams,
    Skeleton,
    SoftShape,
    World,
    default_dof_names,
)
from ..shared.xml import Node, parse
from ._inertia import MeshUnavailable, derived_moment
from ._numbers import NumberError, stod, tokens
from .skel_write import WRITES, losses, write

__all__ = ["WRITES", "losses", "read", "sniff", "write"]


Array = NDArray[np.float64]
_LEGACY = re.compile(rb"^\s*(dofs|mass|node|handles|primitive)\s*\{", re.MULTILINE)


def sniff(head: bytes) -> bool:
    """True for a ``.skel`` XML document (``<skel`` root)."""
    return b"<skel" in head[:4096]


def read(path: str | os.PathLike[str]) -> World:
    """Read a ``.skel`` file into a World (``<world>`` or sibling ``<skeleton>`` form)."""
    data = read_bytes(path)
    stripped = data.lstrip(b"\xef\xbb\xbf \t\r\n")
    if not stripped.startswith(b"<") and _LEGACY.search(data[:65536]):
        raise FormatError("this is the legacy DART text .skel format (pre-2013, blocks like "
                          "'dofs { ... }'); it is not supported — only the XML .skel format is",
                          path, 1, 1)
    root = parse(data, path)
    return _Reader(path).world(root)


class NameManager:
    """DART's name manager: an empty name becomes the default; a taken one ``name(1)``,
    ``name(2)``… (the first free one)."""

    def __init__(self, default: str) -> None:
        self.default = default
        self.taken: set[str] = set()

    def issue(self, name: str) -> str:
        """Register ``name`` and return the name DART gives it."""
        base = name or self.default
        issued, count = base, 0
        while issued in self.taken:
            count += 1
            issued = f"{base}({count})"
        self.taken.add(issued)
        return issued


class _Reader:
    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = path
        self.legacy_damping: list[int] = []
        self.explicit_dofs: dict[int, set[int]] = {}  # id(joint) → DOFs named by <dof name>

    # ----------------------------------------------------------------- helpers
    def error(self, node: Node, message: str) -> FormatError:
        return FormatError(message, self.path, node.line, node.column)

    def warn(self, node: Node, message: str) -> None:
        warn(f"{os.fspath(self.path)}:{node.line}: {message}")

    def child(self, node: Node, tag: str) -> Node:
        found = node.find(tag)
        if found is None:
            raise self.error(node, f"<{node.tag}> needs a <{tag}> element")
        return found

    def number(self, node: Node, text: str | None = None) -> float:
        """A scalar as DART's ``std::stod`` reads it; a warning where text is ignored."""
        raw = node.text if text is None else text
        try:
            value, whole = stod(raw)
        except NumberError as exc:
            raise self.error(node, f"<{node.tag}>: {exc} (DART fails to load)") from None
        if not whole:
            self.warn(node, f"<{node.tag}>: {raw.strip()[:40]!r} read as {value!r}, as DART "
                      "does (the rest of the text is ignored)")
        return value

    def integer(self, node: Node, text: str | None = None) -> int:
        value = self.number(node, text)
        if not math.isfinite(value) or value != math.floor(value):
            raw = (node.text if text is None else text).strip()
            raise self.error(node, f"<{node.tag}>: {raw!r} is not a whole number")
        return int(value)

    def vector(self, node: Node, count: int, short: str = "warn") -> Array:
        """``count`` numbers as DART reads a vector: extra tokens ignored (warning), missing
        ones zero — silently for a ``<transformation>`` (``short="zero"``), with a warning
        elsewhere (DART reads uninitialised memory there; real files give 0)."""
        parts = tokens(node.text)
        if len(parts) > count:
            self.warn(node, f"<{node.tag}> has {len(parts)} numbers; DART reads the first "
                      f"{count}")
        elif len(parts) < count:
            if short == "error" or not parts:
                raise self.error(node, f"<{node.tag}> needs {count} numbers, got {len(parts)}")
            if short == "warn":
                self.warn(node, f"<{node.tag}> has {len(parts)} of {count} numbers; the rest "
                          "read as 0 (DART reads uninitialised memory there)")
        values = np.zeros(count)
        for i, token in enumerate(parts[:count]):
            values[i] = self.number(node, token)
        return values

    def child_number(self, node: Node, tag: str, default: float | None = None) -> float:
        found = node.find(tag)
        if found is None:
            if default is None:
                raise self.error(node, f"<{node.tag}> needs a <{tag}> element")
            return default
        return self.number(found)

    def boolean(self, node: Node) -> bool:
        raw = node.text.strip().lower()
        if raw in ("true", "1"):
            return True
        if raw in ("false", "0"):
            return False
        self.warn(node, f"<{node.tag}>: {node.text.strip()!r} is not a boolean; read as false "
                  "(as DART does)")
        return False

    def transform(self, node: Node | None) -> Array:
        out = np.eye(4)
        if node is None:
            return out
        values = self.vector(node, 6, short="zero")
        out[:3, :3] = Rotation.from_euler("XYZ", values[3:]).as_matrix()
        out[:3, 3] = values[:3]
        return out

    # ------------------------------------------------------------------- world
    def world(self, root: Node) -> World:
        if root.tag != "skel":
            raise self.error(root, f"the root element is <{root.tag}>, not <skel>")
        world_node = root.find("world")
        world = World()
        container = root
        if world_node is not None:
            container = world_node
            world.name = world_node.attrib.get("name", "world")
            physics = world_node.find("physics")
            if physics is not None:
                world.time_step = self.child_number(physics, "time_step", 0.001)
                gravity = physics.find("gravity")
                if gravity is not None:
                    world.gravity = self.vector(gravity, 3)
                detector = physics.find("collision_detector")
                if detector is not None:
                    world.collision_detector = detector.text
                world.attrs["physics"] = True
        else:
            world.attrs["sibling_form"] = True
            if root.find("skeleton") is None:
                raise self.error(root, "<skel> has neither a <world> nor a <skeleton>")
        names = NameManager("skeleton")
        for node in container.findall("skeleton"):
            skeleton = self.skeleton(node)
            issued = names.issue(skeleton.name)
            if issued != skeleton.name:
                self.warn(node, f"a second skeleton named {skeleton.name!r}; renamed {issued!r}, "
                          "as DART does")
                skeleton.attrs["skel_name"] = skeleton.name
                skeleton.name = issued
            world.skeletons.append(skeleton)
        if self.legacy_damping:
            lines = ", ".join(str(n) for n in self.legacy_damping[:5])
            more = "…" if len(self.legacy_damping) > 5 else ""
            warn(f"{os.fspath(self.path)}: legacy <axis><damping> (lines {lines}{more}) "
                 "read as <axis><dynamics><damping>, as DART does")
        return world

    # ---------------------------------------------------------------- skeleton
    def skeleton(self, node: Node) -> Skeleton:
        name = node.attrib.get("name", "")
        frame = self.transform(node.find("transformation"))
        mobile_node = node.find("mobile")
        mobile = True if mobile_node is None else self.boolean(mobile_node)
        bodies: dict[str, tuple[Node, Body]] = {}
        for body_node in node.findall("body"):
            body = self.body(body_node, frame)
            if body.name in bodies:
                first = bodies[body.name][1]
                self.warn(body_node, f"skeleton {name!r} has a second body named {body.name!r};"
                          " DART ignores it but puts its shapes on the first one")
                first.shapes.extend(body.shapes)
                if body.inertia.derived:  # its mass-only <inertia> re-derives the first's
                    inertia = first.inertia
                    try:
                        inertia.moment = derived_moment(first.shapes, inertia.mass,
                                                        inertia.com, first.name)
                    except MeshUnavailable as exc:
                        raise self.error(body_node, str(exc)) from None
                    inertia.derived = True
                continue
            bodies[body.name] = (body_node, body)
        joints: dict[str, tuple[Node, Joint, str | None]] = {}  # child name -> joint
        order: list[str] = []
        for joint_node in node.findall("joint"):
            parsed = self.joint(joint_node, bodies)
            if parsed is None:
                continue
            joint, parent, child = parsed
            if child in joints:
                self.warn(joint_node, f"body {child!r} already has a parent joint; joint "
                          f"{joint.name!r} is ignored, as DART does")
                continue
            joints[child] = (joint_node, joint, parent)
            order.append(child)
        built = self.assemble(node, name, bodies, joints, order)
        self.name_joints(node, built)
        skeleton = Skeleton(name, built, mobile=mobile)
        if not np.array_equal(frame, np.eye(4)):
            skeleton.attrs["frame"] = frame
        return skeleton

    def name_joints(self, node: Node, built: list[Body]) -> None:
        """Joint and DOF names as DART issues them, in build order: a taken name gets
        ``(1)``, ``(2)``…; generated DOF names come from the final joint name; a planar
        joint's rotation DOF has no name, so it becomes ``default``."""
        joint_names = NameManager("default")
        dof_names = NameManager("default")
        for body in built:
            joint = body.joint
            issued = joint_names.issue(joint.name)
            if issued != joint.name:
                self.warn(node, f"a second joint named {joint.name!r} in skeleton "
                          f"{node.attrib.get('name', '')!r}; renamed {issued!r}, as DART does")
                joint.attrs["skel_name"] = joint.name
            generated = default_dof_names(issued, joint.type, joint.axis_order, joint.plane)
            if joint.type == "planar":
                generated[2] = ""
            explicit = self.explicit_dofs.get(id(joint), set())
            for index, dof in enumerate(joint.dofs):
                dof.name = dof_names.issue(dof.name if index in explicit else generated[index])
            joint.name = issued

    def assemble(self, node: Node, name: str, bodies: dict[str, tuple[Node, Body]],
                 joints: dict[str, tuple[Node, Joint, str | None]],
                 order: list[str]) -> list[Body]:
        """Order bodies as DART builds them and fill parent indices and parent→joint frames."""
        index: dict[str, int] = {}
        out: list[Body] = []
        parents_needed = {parent for _, _, parent in joints.values() if parent is not None}
        for child in order:
            self._place(child, bodies, joints, index, out)
        for body_name, (body_node, _) in bodies.items():
            if body_name not in index:
                if body_name in parents_needed:
                    continue
                raise self.error(body_node, f"body {body_name!r} of skeleton {name!r} has no "
                                 "joint (an orphan body: DART crashes or drops it); attach it "
                                 "with a <joint>, e.g. type=\"weld\" to world")
        return out

    def _place(self, child: str, bodies: dict[str, tuple[Node, Body]],
               joints: dict[str, tuple[Node, Joint, str | None]], index: dict[str, int],
               out: list[Body]) -> None:
        """Place ``child`` after its unplaced ancestors, walking up in a loop (not by
        recursion: a valid chain listed child-first can be thousands of bodies deep)."""
        chain: list[str] = []
        on_chain: set[str] = set()
        name: str | None = child
        while name is not None and name not in index:
            if name in on_chain:
                raise self.error(joints[name][0], "joint cycle: " + " -> ".join([*chain, name])
                                 + " (DART never finishes loading this)")
            chain.append(name)
            on_chain.add(name)
            name = joints[name][2] if name in joints else None
        for name in reversed(chain):
            body_node, body = bodies[name]
            if name not in joints:  # a parent body without a joint: DART gives it a free joint
                body.joint = Joint("root", "free", parent_to_joint=body.rest_pose.copy())
                self.warn(body_node, f"body {name!r} is a parent but has no joint; it gets a "
                          "free joint named 'root', as in DART")
                parent_index = -1
            else:
                _, joint, parent = joints[name]
                parent_index = -1
                parent_pose = np.eye(4)
                if parent is not None:
                    parent_index = index[parent]
                    parent_pose = bodies[parent][1].rest_pose
                joint.parent_to_joint = np.linalg.inv(parent_pose) @ body.rest_pose @ \
                    joint.child_to_joint
                body.joint = joint
            body.parent = parent_index
            index[name] = len(out)
            out.append(body)

    # -------------------------------------------------------------------- body
    def body(self, node: Node, frame: Array) -> Body:
        name = node.attrib.get("name")
        if name is None:
            self.warn(node, "<body> without a name")
            name = ""
        body = Body(name, Joint("root", "free"), rest_pose=frame @ self.transform(
            node.find("transformation")))
        gravity = node.find("gravity")
        if gravity is not None:
            body.gravity = self.boolean(gravity)
        for tag, role in (("visualization_shape", "visual"), ("collision_shape", "collision")):
            for shape_node in node.findall(tag):
                shape = self.shape(shape_node, role)
                if shape is not None:
                    body.shapes.append(shape)
        inertia_node = node.find("inertia")
        if inertia_node is not None:
            mass = self.child_number(inertia_node, "mass")
            if not math.isfinite(mass):
                self.warn(inertia_node, f"body {name!r}: mass {mass} is not finite; DART keeps "
                          "its default 1")
                mass = 1.0
            offset = inertia_node.find("offset")
            com = self.vector(offset, 3) if offset is not None else np.zeros(3)
            moi = inertia_node.find("moment_of_inertia")
            if moi is not None:
                v = {k: self.child_number(moi, k) for k in
                     ("ixx", "iyy", "izz", "ixy", "ixz", "iyz")}
                moment = np.array([[v["ixx"], v["ixy"], v["ixz"]],
                                   [v["ixy"], v["iyy"], v["iyz"]],
                                   [v["ixz"], v["iyz"], v["izz"]]])
                body.inertia = Inertia(mass, com, moment)
            else:
                try:
                    moment = derived_moment(body.shapes, mass, com, name)
                except MeshUnavailable as exc:
                    raise self.error(node, str(exc)) from None
                body.inertia = Inertia(mass, com, moment, True)
        for marker_node in node.findall("marker"):
            offset = marker_node.find("offset")
            body.markers.append(Marker(marker_node.attrib.get("name", ""),
                                       self.vector(offset, 3) if offset is not None
                                       else np.zeros(3)))
        soft = node.find("soft_shape")
        if soft is not None:
            body.soft_shape = self.soft_shape(soft)
        return body

    def geometry(self, node: Node, soft: bool = False) -> tuple[str, ShapeParams] | None:
        geometry = self.child(node, "geometry")
        kinds = (("sphere", "box", "ellipsoid", "cylinder") if soft else
                 ("sphere", "box", "ellipsoid", "cylinder", "capsule", "cone", "pyramid",
                  "plane", "multi_sphere", "mesh"))
        for kind in kinds:
            g = geometry.find(kind)
            if g is None:
                continue
            params: ShapeParams = {}
            if kind in ("box", "ellipsoid"):
                params["size"] = self.vector(self.child(g, "size"), 3)
            if kind in ("sphere", "cylinder", "capsule", "cone"):
                params["radius"] = self.child_number(g, "radius")
            if kind in ("cylinder", "capsule", "cone", "pyramid"):
                params["height"] = self.child_number(g, "height")
            if kind == "pyramid":
                params["base_width"] = self.child_number(g, "base_width")
                params["base_depth"] = self.child_number(g, "base_depth")
            if kind == "plane":
                params["normal"] = self.vector(self.child(g, "normal"), 3)
                offset, point = g.find("offset"), g.find("point")
                if offset is not None:
                    params["offset"] = self.number(offset)
                elif point is not None:
                    self.warn(point, "<plane><point> is deprecated; converted to <offset>")
                    normal = params["normal"] / np.linalg.norm(params["normal"])
                    params["offset"] = float(normal @ self.vector(point, 3))
                else:
                    self.warn(g, "<plane> without <offset>: 0 is used, as in DART")
                    params["offset"] = 0.0
            if kind == "multi_sphere":
                params["spheres"] = [(self.child_number(s, "radius"),
                                      self.vector(self.child(s, "position"), 3))
                                     for s in g.findall("sphere")]
            if kind == "mesh":
                params["file_name"] = self.child(g, "file_name").text
                params["base"] = os.path.dirname(os.path.abspath(self.path))
                params["scale"] = self.vector(self.child(g, "scale"), 3)
            if soft:
                if kind == "box":
                    frags = self.child(g, "frags")
                    self.vector(frags, 3)  # the count
                    params["frags"] = np.array([self.integer(frags, t) for t in frags.text.split()])
                for tag in ("num_slices", "num_stacks", "num_rings"):
                    found = g.find(tag)
                    if found is not None:
                        params[tag] = self.integer(found)
            return kind, params
        inner = geometry.children[0].tag if geometry.children else "nothing"
        self.warn(geometry, f"unknown geometry <{inner}>; the shape is ignored (DART leaves it "
                  "empty)")
        return None

    def shape(self, node: Node, role: str) -> Shape | None:
        found = self.geometry(node)
        if found is None:
            return None
        kind, params = found
        shape = Shape(kind, params, self.transform(node.find("transformation")), role)
        color = node.find("color")
        if color is not None:
            values = color.text.split()
            if len(values) in (3, 4):
                shape.color = np.array([self.number(color, v) for v in values])
            else:
                self.warn(color, "<color> needs 3 or 4 numbers; ignored, as in DART")
        collidable = node.find("collidable")
        if collidable is not None and role == "collision":
            shape.collidable = self.number(collidable) != 0.0
        return shape

    def soft_shape(self, node: Node) -> SoftShape | None:
        found = self.geometry(node, soft=True)
        total = self.child_number(node, "total_mass")
        if found is None:
            return None
        soft = SoftShape(found[0], found[1], self.transform(node.find("transformation")), total)
        for tag in ("kv", "ke", "damp"):
            value = node.find(tag)
            if value is not None:
                setattr(soft, tag, self.number(value))
        return soft

    # ------------------------------------------------------------------- joint
    def joint(self, node: Node, bodies: dict[str, tuple[Node, Body]]
              ) -> tuple[Joint, str | None, str] | None:
        type_ = node.attrib.get("type")
        name = node.attrib.get("name") or "default"
        if type_ not in JOINT_DOFS:
            raise self.error(node, f"joint {name!r}: unknown joint type {type_!r} (DART "
                             f"discards it and may crash); known: {', '.join(JOINT_DOFS)}")
        if type_ in ("screw", "translational2d"):
            self.warn(node, f"joint {name!r}: DART's .skel reader cannot build {type_} joints "
                      "(dartpy stops loading there)")
        actuator = node.attrib.get("actuator", "force")
        if actuator not in ACTUATORS:
            self.warn(node, f"joint {name!r}: invalid actuator {actuator!r}; 'force' is used, "
                      "as in DART")
            actuator = "force"
        parent_node = node.find("parent")
        parent: str | None
        if parent_node is None:
            self.warn(node, f"joint {name!r} has no <parent>; attached to the world, as in DART")
            parent = None
        else:
            parent = parent_node.text
            if parent == "world" and "world" not in bodies:
                parent = None
            elif parent not in bodies:
                raise self.error(parent_node, f"joint {name!r}: no body named {parent!r} "
                                 "(the parent)")
        child_node = self.child(node, "child")
        child = child_node.text
        if child not in bodies:
            raise self.error(child_node, f"joint {name!r}: no body named {child!r} (the child)")
        joint = Joint(name, type_, child_to_joint=self.transform(node.find("transformation")),
                      actuator=actuator)
        count = joint.dof_count
        if type_ in ("revolute", "prismatic", "screw", "universal"):
            axes = []
            for tag in ("axis", "axis2")[: 2 if type_ == "universal" else 1]:
                axis_node = node.find(tag)
                xyz = axis_node.find("xyz") if axis_node is not None else None
                if xyz is None:
                    self.warn(node, f"joint {name!r} is missing <{tag}><xyz>; z is used")
                    axes.append(np.array([0.0, 0.0, 1.0]))
                    continue
                axis = self.vector(xyz, 3)
                norm = float(np.linalg.norm(axis))
                if norm == 0.0:
                    raise self.error(xyz, f"joint {name!r}: zero axis")
                if type_ == "universal" and abs(norm - 1.0) > 1e-9:
                    self.warn(xyz, f"joint {name!r}: universal axis is not unit; it is "
                              "normalised (DART keeps it and then uses the identity rotation)")
                axes.append(axis / norm)
            joint.axes = np.array(axes)
            if type_ == "screw":
                axis_node = node.find("axis")
                if axis_node is not None and axis_node.find("pitch") is not None:
                    joint.pitch = self.child_number(axis_node, "pitch")
        elif type_ == "euler":
            order_node = self.child(node, "axis_order")
            order = order_node.text
            if order not in ("xyz", "zyx"):
                self.warn(order_node, f"joint {name!r}: Euler axis order {order!r} is not xyz "
                          "or zyx; xyz is used, as in DART")
                order = "xyz"
            joint.axis_order = order
        elif type_ in ("planar", "translational2d"):
            plane = node.find("plane")
            kind = "xy"
            if plane is None:
                self.warn(node, f"joint {name!r} has no <plane>; the XY plane is used, as in "
                          "DART")
            else:
                kind = plane.attrib.get("type", "")
                if kind == "arbitrary":
                    joint.axes = np.array([self.plane_axis(plane, tag, name) for tag in
                                           ("translation_axis1", "translation_axis2")])
                    if np.linalg.norm(np.cross(*joint.axes)) == 0.0:
                        raise self.error(plane, f"joint {name!r}: the plane's translation "
                                         "axes are parallel")
                elif kind not in ("xy", "yz", "zx"):
                    self.warn(plane, f"joint {name!r}: unknown plane type {kind!r}; xy is used")
                    kind = "xy"
            joint.plane = kind
        joint.dofs = [Dof(n) for n in default_dof_names(name, type_, joint.axis_order,
                                                        joint.plane)]
        if type_ not in ("ball", "free", "weld"):
            for i, tag in enumerate(("axis", "axis2", "axis3")[:count]):
                axis_node = node.find(tag)
                if axis_node is not None:
                    self.axis_limits(axis_node, joint.dofs[i])
        for tag, attr in (("init_pos", "position"), ("init_vel", "velocity")):
            found = node.find(tag)
            if found is not None and count:  # a weld's is not read, as in DART
                values = (np.array([self.number(found)]) if count == 1
                          else self.vector(found, count))
                for dof, value in zip(joint.dofs, values, strict=True):
                    setattr(dof, attr, float(value))
        for dof_node in node.findall("dof"):
            self.dof(dof_node, joint)
        return joint, parent, child

    def plane_axis(self, plane: Node, tag: str, joint: str) -> Array:
        xyz = self.child(self.child(plane, tag), "xyz")
        axis = self.vector(xyz, 3)
        if not np.linalg.norm(axis) > 0.0:
            raise self.error(xyz, f"joint {joint!r}: zero <{tag}>")
        return axis

    def axis_limits(self, node: Node, dof: Dof) -> None:
        limit = node.find("limit")
        if limit is not None:
            dof.lower = self.child_number(limit, "lower", -math.inf)
            dof.upper = self.child_number(limit, "upper", math.inf)
        legacy = node.find("damping")
        if legacy is not None:
            self.legacy_damping.append(legacy.line)
            dof.damping = self.number(legacy)
        dynamics = node.find("dynamics")
        if dynamics is not None:
            for tag in ("damping", "friction", "spring_rest_position", "spring_stiffness"):
                found = dynamics.find(tag)
                if found is not None:
                    setattr(dof, tag, self.number(found))

    def dof(self, node: Node, joint: Joint) -> None:
        raw = node.attrib.get("local_index")
        if raw is None:
            if joint.dof_count != 1:
                self.warn(node, f"<dof> of joint {joint.name!r} without local_index; ignored")
                return
            index = 0
        else:
            try:
                index = int(raw)
            except ValueError:
                self.warn(node, f"<dof> local_index {raw!r} is not an integer; ignored")
                return
            if not 0 <= index < joint.dof_count:
                self.warn(node, f"<dof> local_index {index} is out of range for joint "
                          f"{joint.name!r}; ignored")
                return
        dof = joint.dofs[index]
        if "name" in node.attrib:
            dof.name = node.attrib["name"]
            self.explicit_dofs.setdefault(id(joint), set()).add(index)
        for tag, prefix, initial in (("position", "", "position"),
                                     ("velocity", "velocity_", "velocity"),
                                     ("acceleration", "acceleration_", "acceleration"),
                                     ("force", "force_", "force")):
            found = node.find(tag)
            if found is None:
                continue
            for attr, field_name in (("lower", f"{prefix}lower"), ("upper", f"{prefix}upper"),
                                     ("initial", initial)):
                if attr in found.attrib:
                    setattr(dof, field_name, self.number(found, found.attrib[attr]))
        for tag in ("damping", "friction", "spring_rest_position", "spring_stiffness"):
            found = node.find(tag)
            if found is not None:
                setattr(dof, tag, self.number(found))


"""Write a World or Skeleton as a ``.skel`` file that dartpy 6.x loads.

Rules (``specs/dart-skel.md`` §17): bodies parent-first, every body with its joint, body
``<transformation>`` = pose at q = 0 (computed from the joint frames, so any model writes
consistently), joint ``<transformation>`` = child→joint, full inertia always, floats with
17 significant digits. What DART cannot build (screw and translational2d joints, Euler
orders other than xyz/zyx, invalid actuator names, duplicate names, meshes DART cannot
load) is listed by ``losses``: the registry refuses it unless ``lossy=True``, and the
nearest DART form is written. A world that names no collision detector but collides with
shapes DART's default (FCL) does not support (capsules, multi-spheres: a character's limbs)
is written with ``<collision_detector>bullet</collision_detector>``, which dartpy 6.20
builds every shape kind with.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from typing import cast
from xml.sax.saxutils import escape, quoteattr

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..._io import atomic_write
from ...model.skeleton import (
    ACTUATORS,
    Body,
    Dof,
    Joint,
    Shape,
    Skeleton,
    SoftShape,
    World,
    default_dof_names,
)
from ...spatial.euler import euler_xyz
from ..shared.textcolumns import exact, exact_vector

#: What ``write`` takes; what DART's .skel cannot express is listed by ``losses``.
WRITES = (World, Skeleton)

Array = NDArray[np.float64]


def losses(obj: World | Skeleton, **_: object) -> list[str]:
    """What DART would load differently (written in the nearest form DART knows)."""
    problems: list[str] = []
    _Writer(problems, os.getcwd()).world(_world(obj))
    return problems


def write(path: str | os.PathLike[str], obj: World | Skeleton) -> None:
    """Write ``obj`` (a World, or one Skeleton wrapped in a default world) to ``path``."""
    text = _Writer([], os.path.dirname(os.path.abspath(path))).world(_world(obj))
    with atomic_write(path, "w") as handle:
        handle.write(text)


def _world(obj: World | Skeleton) -> World:
    if isinstance(obj, World):
        return obj
    return World([obj], gravity=np.array([0.0, 0.0, -9.81]))


def transformation(matrix: Array) -> str:
    """The six numbers ``x y z a b c`` of a 4×4 transform."""
    return exact_vector(np.concatenate([matrix[:3, 3], euler_xyz(matrix[:3, :3])]))


#: Collision shapes DART's default detector (FCL) replaces by a sphere, with an error at
#: every step (dartpy 6.20); Bullet supports them and every other kind written here.
FCL_UNSUPPORTED = ("capsule", "multi_sphere")
#: The detector named for a world that has such shapes and names none.
DETECTOR = "bullet"


def collision_detector(world: World) -> str | None:
    """The detector to name in ``<physics>``: the world's own, else :data:`DETECTOR` when
    a collision shape needs it, else none (DART's default)."""
    if world.collision_detector:
        return world.collision_detector
    needs = any(shape.role == "collision" and shape.kind in FCL_UNSUPPORTED
                for skeleton in world.skeletons for body in skeleton.bodies
                for shape in body.shapes)
    return DETECTOR if needs else None


#: Mesh files dartpy 6.20 loads as an empty shape (checked: a VRML box gives no shape).
_UNLOADABLE_MESHES = frozenset([".wrl", ".wrz", ".vrml", ".scen"])


class _Writer:
    def __init__(self, problems: list[str], folder: str) -> None:
        self.problems = problems
        self.folder = folder
        self.lines: list[str] = []
        self.mesh_problems: list[str] = []  # summarised: real models have hundreds

    def add(self, depth: int, text: str) -> None:
        self.lines.append("  " * depth + text)

    def world(self, world: World) -> str:
        self.add(0, '<?xml version="1.0" ?>')
        self.add(0, '<skel version="1.0">')
        self.add(1, f"<world name={quoteattr(world.name or 'world')}>")
        self.add(2, "<physics>")
        self.add(3, f"<time_step>{exact(world.time_step)}</time_step>")
        self.add(3, f"<gravity>{exact_vector(world.gravity)}</gravity>")
        detector = collision_detector(world)
        if detector:
            self.add(3, f"<collision_detector>{escape(detector)}</collision_detector>")
        self.add(2, "</physics>")
        names = [s.name for s in world.skeletons]
        for name in sorted({n for n in names if names.count(n) > 1}):
            self.problems.append(f"two skeletons named {name!r} (DART renames the second)")
        for skeleton in world.skeletons:
            self.skeleton(skeleton)
        if self.mesh_problems:
            more = len(self.mesh_problems) - 3
            self.problems.append("; ".join(self.mesh_problems[:3]) +
                                 (f"; … {more} more mesh shapes" if more > 0 else "") +
                                 " (left out)")
        self.add(1, "</world>")
        self.add(0, "</skel>")
        return "\n".join(self.lines) + "\n"

    def skeleton(self, skeleton: Skeleton) -> None:
        self.add(2, f"<skeleton name={quoteattr(skeleton.name)}>")
        if not skeleton.mobile:
            self.add(3, "<mobile>false</mobile>")
        names = [b.name for b in skeleton.bodies]
        for name in sorted({n for n in names if names.count(n) > 1}):
            self.problems.append(f"skeleton {skeleton.name!r} has two bodies named {name!r}")
        if "world" in names:
            self.problems.append(f"skeleton {skeleton.name!r} has a body named 'world', which "
                                 "DART confuses with the world frame")
        for body, pose in zip(skeleton.bodies, skeleton.rest_poses(), strict=True):
            self.body(body, pose)
        for body in skeleton.bodies:
            parent = "world" if body.parent < 0 else skeleton.bodies[body.parent].name
            self.joint(body.joint, parent, body.name)
        self.add(2, "</skeleton>")

    # ------------------------------------------------------------------ bodies
    def body(self, body: Body, pose: Array) -> None:
        self.add(3, f"<body name={quoteattr(body.name)}>")
        if not body.gravity:
            self.add(4, "<gravity>false</gravity>")
        self.add(4, f"<transformation>{transformation(pose)}</transformation>")
        inertia = body.inertia
        m = inertia.moment
        self.add(4, "<inertia>")
        self.add(5, f"<mass>{exact(inertia.mass)}</mass>")
        self.add(5, f"<offset>{exact_vector(inertia.com)}</offset>")
        self.add(5, "<moment_of_inertia>")
        for tag, value in (("ixx", m[0, 0]), ("iyy", m[1, 1]), ("izz", m[2, 2]),
                           ("ixy", m[0, 1]), ("ixz", m[0, 2]), ("iyz", m[1, 2])):
            self.add(6, f"<{tag}>{exact(value)}</{tag}>")
        self.add(5, "</moment_of_inertia>")
        self.add(4, "</inertia>")
        for shape in body.shapes:
            problem = self.mesh_problem(body, shape) if shape.kind == "mesh" else None
            if problem is not None:
                self.mesh_problems.append(problem)
                continue
            self.shape(shape)
        for marker in body.markers:
            self.add(4, f"<marker name={quoteattr(marker.name)}><offset>{exact_vector(marker.offset)}"
                     "</offset></marker>")
        if body.soft_shape is not None:
            self.soft(body.soft_shape)
        self.add(3, "</body>")

    def geometry(self, kind: str, params: Mapping[str, object], depth: int) -> None:
        self.add(depth, "<geometry>")
        self.add(depth + 1, f"<{kind}>")
        inner = depth + 2
        if kind == "mesh":  # DART needs exactly a file and a scale; other keys are ours
            scale = np.asarray(params.get("scale", np.ones(3)), dtype=float).reshape(3)
            self.add(inner, f"<file_name>{escape(self.mesh_path(params))}</file_name>")
            self.add(inner, f"<scale>{exact_vector(scale)}</scale>")
            params = {}
        for key, value in params.items():
            if key == "spheres":
                for radius, position in value:  # type: ignore[attr-defined]
                    self.add(inner, f"<sphere><radius>{exact(radius)}</radius><position>"
                             f"{exact_vector(position)}</position></sphere>")
            elif key == "file_name":
                self.add(inner, f"<file_name>{escape(self.mesh_path(params))}</file_name>")
            elif key == "base":
                continue
            elif key in ("frags", "num_slices", "num_stacks", "num_rings"):
                ints = " ".join(str(int(v)) for v in np.atleast_1d(value))  # type: ignore[call-overload]
                self.add(inner, f"<{key}>{ints}</{key}>")
            else:
                self.add(inner, f"<{key}>{exact_vector(cast(ArrayLike, value))}</{key}>")
        self.add(depth + 1, f"</{kind}>")
        self.add(depth, "</geometry>")

    def mesh_path(self, params: Mapping[str, object]) -> str:
        """A mesh path that still finds the file from the folder being written to."""
        name = str(params["file_name"])
        base = params.get("base")
        if base is None or "://" in name or os.path.isabs(name):
            return name
        target = os.path.normpath(os.path.join(str(base), name))
        return os.path.relpath(target, self.folder).replace(os.sep, "/")

    def mesh_problem(self, body: Body, shape: Shape) -> str | None:
        """Why DART could not load this mesh shape (None when it can)."""
        name = shape.params.get("file_name")
        if not name:
            inline = shape.params.get("inline")
            if inline:
                return f"body {body.name!r}: inline {inline} geometry has no mesh file"
            return f"body {body.name!r}: mesh {shape.params.get('mesh', '')!r} has no file"
        text = str(name)
        if text.startswith("${") or ("://" in text and not text.startswith("file://")):
            return f"body {body.name!r}: mesh {text!r} is a URI DART cannot resolve"
        if os.path.splitext(text)[1].lower() in _UNLOADABLE_MESHES:
            return (f"body {body.name!r}: DART (Assimp) cannot load the mesh {text!r} "
                    "(VRML or a Choreonoid scene file)")
        path = self.mesh_path(shape.params)
        full = path if os.path.isabs(path) else os.path.join(self.folder, path)
        if not os.path.isfile(full):
            return f"body {body.name!r}: mesh file {text!r} does not exist"
        return None

    def shape(self, shape: Shape) -> None:
        tag = "collision_shape" if shape.role == "collision" else "visualization_shape"
        self.add(4, f"<{tag}>")
        self.add(5, f"<transformation>{transformation(shape.transform)}</transformation>")
        self.geometry(shape.kind, shape.params, 5)
        if shape.color is not None and shape.role != "collision":
            self.add(5, f"<color>{exact_vector(shape.color)}</color>")
        if shape.role == "collision" and not shape.collidable:
            self.add(5, "<collidable>0</collidable>")
        self.add(4, f"</{tag}>")

    def soft(self, soft: SoftShape) -> None:
        self.add(4, "<soft_shape>")
        self.add(5, f"<total_mass>{exact(soft.total_mass)}</total_mass>")
        self.add(5, f"<transformation>{transformation(soft.transform)}</transformation>")
        self.geometry(soft.kind, soft.params, 5)
        for tag in ("kv", "ke", "damp"):
            value = getattr(soft, tag)
            if value is not None:
                self.add(5, f"<{tag}>{exact(value)}</{tag}>")
        self.add(4, "</soft_shape>")

    # ------------------------------------------------------------------ joints
    def joint(self, joint: Joint, parent: str, child: str) -> None:
        type_ = joint.type
        order = joint.axis_order
        if type_ in ("screw", "translational2d"):
            self.problems.append(f"joint {joint.name!r} is a {type_} joint, which DART's .skel "
                                 "reader cannot build (written as is)")
        if type_ == "euler" and order not in ("xyz", "zyx"):
            self.problems.append(f"joint {joint.name!r} has Euler order {order!r}; DART knows "
                                 "only xyz and zyx (written as a ball joint)")
            type_ = "ball"
        actuator = joint.actuator
        if actuator not in ACTUATORS:
            self.problems.append(f"joint {joint.name!r} has actuator {actuator!r} (written as "
                                 "'force')")
            actuator = "force"
        head = f"<joint type={quoteattr(type_)} name={quoteattr(joint.name)}"
        if actuator != "force":
            head += f" actuator={quoteattr(actuator)}"
        self.add(3, head + ">")
        self.add(4, f"<parent>{escape(parent)}</parent>")
        self.add(4, f"<child>{escape(child)}</child>")
        self.add(4, f"<transformation>{transformation(joint.child_to_joint)}</transformation>")
        dofs = joint.dofs
        if type_ == "euler":
            self.add(4, f"<axis_order>{order}</axis_order>")
        if type_ in ("planar", "translational2d"):
            if joint.plane in ("xy", "yz", "zx"):
                self.add(4, f'<plane type="{joint.plane}"/>')
            else:
                self.add(4, '<plane type="arbitrary">')
                self.add(5, f"<translation_axis1><xyz>{exact_vector(joint.axes[0])}</xyz>"
                         "</translation_axis1>")
                self.add(5, f"<translation_axis2><xyz>{exact_vector(joint.axes[1])}</xyz>"
                         "</translation_axis2>")
                self.add(4, "</plane>")
        axis_tags = ("axis", "axis2", "axis3")
        if type_ not in ("ball", "free", "weld"):
            for i, dof in enumerate(dofs):
                axis = joint.axes[i] if (type_ in ("revolute", "prismatic", "screw",
                                                   "universal")) else None
                self.axis(axis_tags[i], axis, dof, joint.pitch if type_ == "screw" else None)
        if dofs:
            positions = np.array([d.position for d in dofs])
            velocities = np.array([d.velocity for d in dofs])
            if np.any(positions):
                self.add(4, f"<init_pos>{exact_vector(positions)}</init_pos>")
            if np.any(velocities):
                self.add(4, f"<init_vel>{exact_vector(velocities)}</init_vel>")
        defaults = default_dof_names(joint.name, joint.type, order, joint.plane)
        for i, dof in enumerate(dofs):
            self.dof(i, dof, defaults[i] if i < len(defaults) else "",
                     limits_in_dof=type_ in ("ball", "free"))
        self.add(3, "</joint>")

    def axis(self, tag: str, axis: Array | None, dof: Dof, pitch: float | None) -> None:
        body: list[str] = []
        if axis is not None:
            body.append(f"<xyz>{exact_vector(axis)}</xyz>")
        if pitch is not None:
            body.append(f"<pitch>{exact(pitch)}</pitch>")
        if math.isfinite(dof.lower) or math.isfinite(dof.upper):
            limit = "<limit>"
            if math.isfinite(dof.lower):
                limit += f"<lower>{exact(dof.lower)}</lower>"
            if math.isfinite(dof.upper):
                limit += f"<upper>{exact(dof.upper)}</upper>"
            body.append(limit + "</limit>")
        dyn = "".join(f"<{k}>{exact(getattr(dof, k))}</{k}>" for k in
                      ("damping", "friction", "spring_rest_position", "spring_stiffness")
                      if getattr(dof, k) != 0.0)
        if dyn:
            body.append(f"<dynamics>{dyn}</dynamics>")
        if body:
            self.add(4, f"<{tag}>" + "".join(body) + f"</{tag}>")

    def dof(self, index: int, dof: Dof, default_name: str, limits_in_dof: bool) -> None:
        parts: list[str] = []
        groups = [("velocity", "velocity_lower", "velocity_upper", None),
                  ("acceleration", "acceleration_lower", "acceleration_upper", "acceleration"),
                  ("force", "force_lower", "force_upper", "force")]
        if limits_in_dof:
            groups.insert(0, ("position", "lower", "upper", None))
        for tag, lo, hi, initial in groups:
            attrs = ""
            if math.isfinite(getattr(dof, lo)):
                attrs += f' lower="{exact(getattr(dof, lo))}"'
            if math.isfinite(getattr(dof, hi)):
                attrs += f' upper="{exact(getattr(dof, hi))}"'
            if initial is not None and getattr(dof, initial) != 0.0:
                attrs += f' initial="{exact(getattr(dof, initial))}"'
            if attrs:
                parts.append(f"<{tag}{attrs}/>")
        if limits_in_dof:
            for k in ("damping", "friction", "spring_rest_position", "spring_stiffness"):
                if getattr(dof, k) != 0.0:
                    parts.append(f"<{k}>{exact(getattr(dof, k))}</{k}>")
        named = dof.name != default_name
        if parts or named:
            name = f" name={quoteattr(dof.name)}" if named else ""
            self.add(4, f'<dof local_index="{index}"{name}>' + "".join(parts) + "</dof>")

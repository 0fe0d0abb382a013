"""MuJoCo MJCF models: read any (the shared parser's general reading,
:mod:`motionkit.formats.shared.mjcf.model`, §4.8 of ``specs/character-bridges.md``) and
write a World or Skeleton (§5.5).

Reading ``.xml`` picks the PARC character reader (``parc-character``) for the files it
accepts (PARC/MimicKit characters) and this general reader for every other MuJoCo model
(``format="mjcf"`` / ``--from mjcf`` always reads with it). Writing: the registry picks this
module for ``.xml`` targets. Angles are radians
(``<compiler angle="radian" autolimits="true">``), ``inertiafromgeom="false"`` so geoms
never change the written masses. A body with neutral joint frames ``P`` (parent → joint)
and ``C`` (child → joint) is placed at ``P·C⁻¹``; its joints sit at ``t_C`` with axes
``R_C·a``, which is the neutral rule ``P·Q·C⁻¹`` exactly. Joint mapping: revolute →
hinge, prismatic → slide, ball → ball, euler → three hinges in its order, universal →
two hinges, translational → three slides, planar → two slides and a hinge, a root free
joint → ``<freejoint>``, a free joint below the root → three slides and a ball, weld → no
joint; markers become sites. Screw joints, limits on ball or free rotations, massless
moving leaves, meshes MuJoCo cannot load and shapes it has no geom for are listed by ``losses``.

Nothing MuJoCo refuses is written: a geom dimension of zero (a flat plate ``box``) becomes
:data:`MIN_SIZE`, and a range whose ends are equal (what urdfdom reads for a URDF
``<limit effort velocity/>`` without ``lower``/``upper``; MuJoCo's own URDF import makes
that joint unlimited) is left out; both are named losses. A geom size that is NaN,
infinite or negative has no nearest form: it is refused, even under ``lossy``.
"""

from __future__ import annotations

import math
import os
from xml.sax.saxutils import quoteattr

import numpy as np
from numpy.typing import NDArray
from scipy.spatial.transform import Rotation

from ..._io import atomic_write
from ...errors import ConversionError
from ...model import Motion
from ...model.skeleton import Body, Joint, Shape, Skeleton, World
from ..shared.chains import (
    MODEL_WRITES,
    MOTION_HOLDS,
    dof_losses,
    extras,
    grouped,
    mesh_file,
    model_of,
    refuse_repeats,
    require_finite,
)
from ..shared.mjcf.model import describe, q_to_qpos, qpos_size, qpos_to_q, read
from ..shared.mjcf.parse import sniff
from ..shared.textcolumns import exact, exact_vector

WRITES, HOLDS = MODEL_WRITES, MOTION_HOLDS

__all__ = ["HOLDS", "WRITES", "describe", "losses", "q_to_qpos", "qpos_size", "qpos_to_q",
           "read", "sniff", "write"]

Array = NDArray[np.float64]

#: Written for the infinite side of a one-sided limit (a range needs both).
BIG = 1e16
#: Mesh files MuJoCo loads.
MESH_EXTENSIONS = (".stl", ".obj", ".msh")
_NO_GEOM = ("cone", "pyramid", "plane")
#: Written for a geom half-size of zero (MuJoCo refuses sizes that are not positive).
MIN_SIZE = 1e-6


def losses(obj: World | Skeleton | Motion, **_: object) -> list[str]:
    """What MuJoCo cannot express or would refuse (the nearest form under ``lossy``)."""
    world = _world(model_of(obj))
    found: list[str] = []
    problems: dict[str, list[str]] = {}
    for skeleton in world.skeletons:
        _require_writable(skeleton)
        lacking = dof_losses(skeleton.joints, ("initial positions", "initial velocities",
                                               "velocity limits", "force limits",
                                               "acceleration limits"))
        for what, names in {**extras(skeleton, markers=False), **lacking}.items():
            problems.setdefault(what, []).extend(names)
    bodies = [b for s in world.skeletons for b in s.bodies]
    joints = [n for s in world.skeletons for b in s.bodies for n in _joint_names(b.joint)]
    sites = [m.name for b in bodies for m in b.markers]
    if "world" in [b.name for b in bodies]:
        found.append("a body named 'world' (MuJoCo's name for the world body)")
    for kind, names in (("bodies", [b.name for b in bodies]), ("joints", joints),
                        ("markers", sites)):
        refuse_repeats(kind, names, "MJCF")
    for skeleton in world.skeletons:
        for body in skeleton.bodies:
            joint = body.joint
            if joint.type == "screw":
                problems.setdefault("screw joints (written as hinges)", []).append(joint.name)
            if joint.type in ("ball", "free") and any(
                    math.isfinite(d.lower) or math.isfinite(d.upper) for d in joint.dofs[:3]):
                problems.setdefault("ball/free rotation limits (left out)", []).append(
                    joint.name)
            if body.inertia.mass > 0 and not _positive(body.inertia.moment):
                problems.setdefault("inertias that are not positive definite (eigenvalues "
                                    "raised to 1e-9)", []).append(body.name)
            elif body.inertia.mass > 0 and not _balanced(body.inertia.moment):
                problems.setdefault("inertias breaking the triangle inequality (written with "
                                    "balanceinertia)", []).append(body.name)
            for number, dof in enumerate(joint.dofs):
                if dof.lower > dof.upper:
                    problems.setdefault("inverted ranges (left out)", []).append(dof.name)
                elif dof.lower == dof.upper and _ranged(joint, number):
                    problems.setdefault("ranges of zero width (MuJoCo refuses them; written "
                                        "unlimited, as MuJoCo reads such a URDF joint)",
                                        []).append(dof.name)
            if joint.type != "weld" and body.inertia.mass <= 0:
                problems.setdefault("massless moving bodies (written with 1e-6 kg)",
                                    []).append(body.name)
            for shape in body.shapes:
                if shape.kind in _GEOM and np.any(_half_sizes(shape) == 0):
                    problems.setdefault(f"zero {shape.kind} sizes (written as {MIN_SIZE:g} m, "
                                        "MuJoCo refuses 0)", []).append(body.name)
                if shape.kind in _NO_GEOM:
                    problems.setdefault(f"{shape.kind} shapes (left out)", []).append(body.name)
                elif shape.kind == "mesh" and _mesh_problem(shape):
                    problems.setdefault("meshes MuJoCo cannot load (left out)", []).append(
                        body.name)
    return found + grouped(problems)


#: Shapes written as one geom with a ``size`` (multi-spheres: one sphere each).
_GEOM = ("box", "ellipsoid", "sphere", "cylinder", "capsule", "multi_sphere")


def _half_sizes(shape: Shape) -> Array:
    """The ``size`` numbers of a shape's geom (half sizes, radii; every sphere's radius
    for a multi-sphere)."""
    p = shape.params
    if shape.kind in ("box", "ellipsoid"):
        return np.asarray(p["size"], dtype=float).reshape(3) / 2
    if shape.kind == "sphere":
        return np.array([float(p["radius"])])
    if shape.kind in ("cylinder", "capsule"):
        return np.array([float(p["radius"]), float(p["height"]) / 2])
    return np.array([float(radius) for radius, _ in p["spheres"]])


def _sizes(shape: Shape) -> str:
    """The geom's ``size`` text, a zero raised to :data:`MIN_SIZE` (:func:`_require_writable`
    refused every other size that is not positive)."""
    half = _half_sizes(shape)
    return exact_vector(np.where(half == 0, MIN_SIZE, half))


def _nonnegative(values: Array) -> bool:
    """True when every value is finite and at least zero."""
    return bool(np.all(np.isfinite(values) & (values >= 0)))


def _require_writable(skeleton: Skeleton) -> None:
    """:func:`require_finite`, and refuse (ConversionError, even under ``lossy``) shape sizes
    that are NaN, infinite or negative: no geom has a nearest form for them."""
    require_finite(skeleton)
    bad = [f"{body.name!r} ({shape.kind})" for body in skeleton.bodies for shape in body.shapes
           if shape.kind in _GEOM and not _nonnegative(_half_sizes(shape))]
    if bad:
        shown = ", ".join(bad[:3]) + (" …" if len(bad) > 3 else "")
        raise ConversionError(f"skeleton {skeleton.name!r}: shape sizes that are NaN, infinite "
                              f"or negative on {shown}; MuJoCo has no geom for them")


def _ranged(joint: Joint, number: int) -> bool:
    """True when coordinate ``number`` has a limit on either side and is one the writer
    gives a range (ball and free rotations get none; their loss is named apart)."""
    dof = joint.dofs[number]
    rotation = joint.type in ("ball", "free") and number < 3
    return not rotation and (math.isfinite(dof.lower) or math.isfinite(dof.upper))


def write(path: str | os.PathLike[str], obj: World | Skeleton | Motion) -> None:
    """Write ``obj`` (every skeleton of a world side by side) to ``path`` as MJCF."""
    folder = os.path.dirname(os.path.abspath(path))
    world = _world(model_of(obj))
    for skeleton in world.skeletons:
        _require_writable(skeleton)
    text = _Writer(folder).document(world)
    with atomic_write(path, "w") as handle:
        handle.write(text)


def _world(obj: World | Skeleton) -> World:
    return obj if isinstance(obj, World) else World([obj], name=obj.name)


def _quat(rotation: Array) -> str:
    """MuJoCo's ``quat`` (w x y z) of a rotation matrix."""
    x, y, z, w = Rotation.from_matrix(rotation).as_quat()
    return exact_vector(np.array([w, x, y, z]))


def _joint_names(joint: Joint) -> list[str]:
    """The MuJoCo joint names of a neutral joint (its coordinates' names)."""
    if joint.type == "weld":
        return []
    if joint.dof_count == 1 or joint.type == "ball":
        return [joint.name]
    if joint.type == "free":
        return [d.name for d in joint.dofs[3:]] + [joint.name]
    return [d.name for d in joint.dofs]


def _positive(moment: Array) -> bool:
    """True for a symmetric positive-definite inertia (MuJoCo refuses the rest)."""
    return bool(np.allclose(moment, moment.T, rtol=0.0, atol=1e-12)
                and np.linalg.eigvalsh(moment).min() > 1e-12)


def _raised(moment: Array) -> Array:
    """The nearest inertia MuJoCo accepts: symmetric, eigenvalues at least 1e-9."""
    values, vectors = np.linalg.eigh((moment + moment.T) / 2)
    out: Array = (vectors * np.maximum(values, 1e-9)) @ vectors.T
    return out


def _balanced(moment: Array) -> bool:
    """True when the principal moments satisfy A + B ≥ C (MuJoCo refuses the rest)."""
    a, b, c = np.sort(np.linalg.eigvalsh((moment + moment.T) / 2))
    return bool(a + b >= c)


def _mesh_problem(shape: Shape) -> bool:
    name = shape.params.get("file_name")
    if not name:
        return True
    text = str(name)
    if "://" in text or os.path.splitext(text)[1].lower() not in MESH_EXTENSIONS:
        return True
    base = shape.params.get("base")
    full = text if os.path.isabs(text) or base is None else os.path.join(str(base), text)
    return not os.path.isfile(full)


class _Writer:
    def __init__(self, folder: str) -> None:
        self.folder = folder
        self.meshes: list[str] = []
        self.lines: list[str] = []

    def add(self, depth: int, text: str) -> None:
        self.lines.append("  " * depth + text)

    def document(self, world: World) -> str:
        balance = any(b.inertia.mass > 0 and not _balanced(_raised(b.inertia.moment))
                      for s in world.skeletons for b in s.bodies)
        self.add(1, "<worldbody>")
        for skeleton in world.skeletons:
            for root in skeleton.children(-1):
                self.body(skeleton, root, 2)
        self.add(1, "</worldbody>")
        body = self.lines
        head = ['<?xml version="1.0"?>',
                f"<mujoco model={quoteattr(world.name or 'model')}>",
                '  <compiler angle="radian" autolimits="true" inertiafromgeom="false"'
                + (' balanceinertia="true"/>' if balance else "/>"),
                f'  <option timestep="{exact(world.time_step)}" gravity="{exact_vector(world.gravity)}"/>']
        if self.meshes:
            head += ["  <asset>", *self.meshes, "  </asset>"]
        return "\n".join(head + body + ["</mujoco>"]) + "\n"

    def body(self, skeleton: Skeleton, index: int, depth: int) -> None:
        body = skeleton.bodies[index]
        joint = body.joint
        place = joint.parent_to_joint @ np.linalg.inv(joint.child_to_joint)
        self.add(depth, f"<body name={quoteattr(body.name)} pos=\"{exact_vector(place[:3, 3])}\" "
                        f'quat="{_quat(place[:3, :3])}">')
        inner = depth + 1
        if joint.type == "free" and body.parent < 0:
            self.add(inner, f"<freejoint name={quoteattr(joint.name)}/>")
        else:
            self.joints(joint, inner)
        self.inertial(body, joint.type != "weld", inner)
        for number, shape in enumerate(body.shapes):
            self.geom(body, number, shape, inner)
        for marker in body.markers:
            self.add(inner, f"<site name={quoteattr(marker.name)} pos=\"{exact_vector(marker.offset)}\"/>")
        for child in skeleton.children(index):
            self.body(skeleton, child, inner)
        self.add(depth, "</body>")

    def joints(self, joint: Joint, depth: int) -> None:
        c_mat = joint.child_to_joint
        tilt, pos = c_mat[:3, :3], c_mat[:3, 3]
        t, dofs = joint.type, joint.dofs
        eye = np.eye(3)
        names = _joint_names(joint)
        items: list[tuple[str, Array | None, int | None]] = []  # (type, axis, dof index)
        if t in ("revolute", "screw"):
            items = [("hinge", joint.axes[0], 0)]
        elif t == "prismatic":
            items = [("slide", joint.axes[0], 0)]
        elif t == "universal":
            items = [("hinge", joint.axes[i], i) for i in range(2)]
        elif t == "euler":
            items = [("hinge", eye["xyz".index(c)], i) for i, c in enumerate(joint.axis_order)]
        elif t == "translational":
            items = [("slide", eye[i], i) for i in range(3)]
        elif t in ("planar", "translational2d"):
            a1, a2, n = joint.plane_axes()
            items = [("slide", a1, 0), ("slide", a2, 1)]
            if t == "planar":
                items.append(("hinge", n, 2))
        elif t == "ball":
            items = [("ball", None, None)]
        elif t == "free":
            items = [("slide", eye[i], 3 + i) for i in range(3)] + [("ball", None, None)]
        for name, (kind, axis, k) in zip(names, items, strict=True):
            text = f"<joint name={quoteattr(name)} type=\"{kind}\" pos=\"{exact_vector(pos)}\""
            if axis is not None:
                unit = tilt @ (np.asarray(axis, dtype=float) / np.linalg.norm(axis))
                text += f' axis="{exact_vector(unit)}"'
            dof = dofs[k] if k is not None else None
            if dof is not None and dof.lower < dof.upper and (
                    math.isfinite(dof.lower) or math.isfinite(dof.upper)):
                lower = dof.lower if math.isfinite(dof.lower) else -BIG
                upper = dof.upper if math.isfinite(dof.upper) else BIG
                text += f' limited="true" range="{exact(lower)} {exact(upper)}"'
            if dof is not None and dof.damping:
                text += f' damping="{exact(dof.damping)}"'
            if dof is not None and dof.friction:
                text += f' frictionloss="{exact(dof.friction)}"'
            if dof is not None and dof.spring_stiffness:
                text += (f' stiffness="{exact(dof.spring_stiffness)}" '
                         f'springref="{exact(dof.spring_rest_position)}"')
            self.add(depth, text + "/>")

    def inertial(self, body: Body, moving: bool, depth: int) -> None:
        """Mass properties; a massless moving body gets 1e-6 kg (MuJoCo refuses none)."""
        inertia = body.inertia
        mass, moment = inertia.mass, inertia.moment
        if mass <= 0:
            if not moving:
                return
            mass, moment = 1e-6, np.eye(3) * 1e-9
        elif not _positive(moment):
            moment = _raised(moment)
        m = moment
        full = np.array([m[0, 0], m[1, 1], m[2, 2], m[0, 1], m[0, 2], m[1, 2]])
        self.add(depth, f'<inertial pos="{exact_vector(inertia.com)}" mass="{exact(mass)}" '
                        f'fullinertia="{exact_vector(full)}"/>')

    def geom(self, body: Body, number: int, shape: Shape, depth: int) -> None:
        p = shape.params
        kind = shape.kind
        frame = f'pos="{exact_vector(shape.transform[:3, 3])}" quat="{_quat(shape.transform[:3, :3])}"'
        role = ' contype="0" conaffinity="0" group="1"' if shape.role != "collision" else ""
        if kind in ("box", "ellipsoid", "sphere", "cylinder", "capsule"):
            size = _sizes(shape)
        elif kind == "multi_sphere":
            radii = _sizes(shape).split()
            for radius, (_, position) in zip(radii, p["spheres"], strict=True):
                at = shape.transform[:3, :3] @ np.asarray(position) + shape.transform[:3, 3]
                self.add(depth, f'<geom type="sphere" size="{radius}" pos="{exact_vector(at)}"'
                                f"{role}/>")
            return
        elif kind == "mesh" and not _mesh_problem(shape):
            name = f"{body.name}__mesh{number}"
            scale = np.asarray(p.get("scale", np.ones(3)), dtype=float).reshape(3)
            self.meshes.append(f"    <mesh name={quoteattr(name)} "
                               f"file={quoteattr(mesh_file(p, self.folder) or '')} "
                               f'scale="{exact_vector(scale)}"/>')
            self.add(depth, f"<geom type=\"mesh\" mesh={quoteattr(name)} {frame}{role}/>")
            return
        else:
            return
        self.add(depth, f'<geom type="{kind}" size="{size}" {frame}{role}/>')

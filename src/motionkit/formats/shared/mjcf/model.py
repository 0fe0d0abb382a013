"""Read any MuJoCo MJCF model into neutral skeletons (``specs/character-bridges.md`` §4.8,
``mode="mujoco"``), the exact inverse of the writer's rule (§5.5).

Every MJCF body is one neutral body. Its joints, applied in order about their own ``pos``
and ``axis`` in the body frame ``B``, become one neutral joint where they fit a type:

* none → ``weld``; 1 hinge → ``revolute``; 1 slide → ``prismatic``; ball → ``ball``;
  free → ``free`` (parent_to_joint = the XML pose, so q = 0 is the XML's rest pose);
* 2 hinges at one point → ``universal``; 3 hinges at one point along orthonormal,
  right-handed axes → ``euler`` in their order, the joint frame turned onto them
  (``child_to_joint = [R_C | p]``, the writer's rule inverted); 3 such slides in x, y, z
  order → ``translational``; those slides then a ball (how the writer writes a free joint
  below the root) → ``free``; slide, slide, hinge about the slides' normal → ``planar``;
* anything else → a chain of zero-mass neutral bodies ``<body>__<joint>``, one MuJoCo joint
  each, the real body holding the last one.

A joint at ``pos = p`` gets ``parent_to_joint = B·T(p)``, ``child_to_joint = T(p)``, axis as
written (normalised). Hinge and slide coordinates are ``q = qpos − ref``: limits and spring
rest positions shift by ``ref`` too, and ``joint.attrs["mujoco"]`` keeps the MuJoCo joint
names ("" where unnamed), kinds and refs (:func:`qpos_to_q` / :func:`q_to_qpos` convert).
Ball ``range`` is a cone limit (``joint.attrs["cone_limit"]``). ``<inertial>`` gives mass,
COM and the inertia tensor (``diaginertia`` or ``fullinertia`` M11 M22 M33 M12 M13 M23,
turned by the inertial frame); without one (``inertiafromgeom="auto"``, or always with
``"true"``) mass properties come from the geoms as MuJoCo infers them (solid primitives,
``mass`` over ``density``, ``inertiagrouprange``; mesh geoms from their files by the
mesh's ``inertia`` rule, :mod:`.mesh`; a mesh that cannot be read is left out with a warning
and noted in ``body.attrs["inertia"]``). Sites become markers.

One top-level body gives a Skeleton; several give a World with one skeleton per top-level
body (the writer writes a World's skeletons side by side, so that round-trips), named after
its body.
"""

from __future__ import annotations

import itertools
import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast
from xml.etree.ElementTree import Element

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ....errors import ConversionError, warn
from ....model.skeleton import Body, Dof, Inertia, Joint, Marker, Shape, Skeleton, World
from ....spatial import quaternion
from .mesh import Meshes, MeshMass, MeshOverBudget, MeshUnreadable
from .parse import MjBody, MjTree, parse_tree

Array = NDArray[np.float64]

_KINDS = ("hinge", "slide", "ball", "free")
_EYE = np.eye(4)
#: Geoms with no neutral shape (skipped).
_SKIPPED_GEOMS = ("hfield", "sdf")


def read(path: str | os.PathLike[str]) -> Skeleton | World:
    """Read an MJCF model: a Skeleton, or a World when ``<worldbody>`` holds several bodies."""
    return model_of(parse_tree(path))


def model_of(tree: MjTree) -> Skeleton | World:
    """The neutral model of a parsed MJCF tree (see :func:`read`)."""
    static = [attrs.get("name") or f"a {attrs.get('type', 'sphere')}"
              for _, attrs, _ in tree.world.geoms]
    if static:
        shown = ", ".join(repr(name[:40]) for name in static[:3])
        more = f" and {len(static) - 3} more" if len(static) > 3 else ""
        warn(f"{tree.xml.path}: geoms of <worldbody> itself ({shown}{more}) are not read: the "
             "neutral model has bodies only")
    tops = [i for i, b in enumerate(tree.bodies) if b.parent < 0]
    skeletons = []
    qpos_start = 0
    for top in tops:
        name = tree.name if len(tops) == 1 else tree.bodies[top].name
        skeleton = _Builder(tree, name).skeleton(top)
        skeleton.attrs["mujoco_qpos_start"] = qpos_start
        qpos_start += qpos_size(skeleton)
        skeletons.append(skeleton)
    if len(skeletons) == 1:
        return skeletons[0]
    world = World(skeletons, name=tree.name, time_step=0.002)
    option = tree.root.find("option")
    if option is not None:
        step = tree.numbers(dict(option.attrib), "timestep", option)
        gravity = tree.numbers(dict(option.attrib), "gravity", option)
        if step is not None and step.size == 1:
            world.time_step = float(step[0])
        if gravity is not None and gravity.size == 3:
            world.gravity = gravity
    return world


def describe(obj: object) -> list[str]:
    """``info`` lines: how the MuJoCo joints map onto the neutral ones."""
    skeletons = obj.skeletons if isinstance(obj, World) else [obj] if isinstance(
        obj, Skeleton) else []
    lines = []
    for skeleton in skeletons:
        chained = [b.name for b in skeleton.bodies if b.attrs.get("mujoco_chain")]
        if chained:
            lines.append(f"{skeleton.name}: {len(chained)} intermediate bodies for joints that "
                         f"fit no single neutral type ({', '.join(chained[:5])}"
                         + (", …)" if len(chained) > 5 else ")"))
        refs = [j.name for j in skeleton.joints
                if any(r != 0 for r in _mujoco_record(j).get("ref", []))]
        if refs:
            lines.append(f"{skeleton.name}: joints with ref (q = qpos - ref): {', '.join(refs)}")
    return lines


@dataclass(eq=False)
class _MjJoint:
    """One MuJoCo joint as compiled: kind, name, pos and unit axis (body frame), ref and
    range in qpos units (radians for angles)."""

    element: Element
    kind: str
    name: str
    pos: Array
    axis: Array
    ref: float
    range: Array | None
    attrs: dict[str, str]

    def dof(self, tree: MjTree, name: str) -> Dof:
        """The neutral coordinate of a hinge or slide (q = qpos - ref)."""
        dof = Dof(name)
        if self.range is not None and self.kind in ("hinge", "slide"):
            dof.lower, dof.upper = float(self.range[0]) - self.ref, float(self.range[1]) - self.ref
        for key, target in (("damping", "damping"), ("frictionloss", "friction"),
                            ("stiffness", "spring_stiffness")):
            value = tree.numbers(self.attrs, key, self.element)
            if value is not None and value.size:
                setattr(dof, target, float(value[0]))
        spring = tree.numbers(self.attrs, "springref", self.element)
        if spring is not None and spring.size:
            rest = float(tree.compiler.angle(spring[:1])[0]) if self.kind == "hinge" \
                else float(spring[0])
            dof.spring_rest_position = rest - self.ref
        return dof


#: ``<compiler>`` settings with which MuJoCo changes the masses and inertias it reads.
_MASS_CHANGES = ("settotalmass", "boundmass", "boundinertia", "balanceinertia")


class _Builder:
    def __init__(self, tree: MjTree, name: str) -> None:
        self.tree = tree
        self.name = name
        self.bodies: list[Body] = []
        self.index: dict[int, int] = {}  # MjTree body index → neutral body index
        self.body_names: set[str] = set()
        self.static: set[int] = set()  # MjTree bodies welded to the world
        self.joint_names: set[str] = set()
        self.infer, self.groups = "auto", (0, 5)
        self.mesh_masses: dict[str, MeshMass | None] = {}  # by asset name, each read once
        self.meshes = Meshes()  # by file and placement, within the model's budget
        self.over_budget = False  # warned once
        for node in tree.root.iter("compiler"):
            self.infer = node.get("inertiafromgeom", self.infer)
            text = node.get("inertiagrouprange")
            if text is not None:
                values = tree.numbers({"g": text}, "g", node)
                if values is None or values.size != 2:
                    raise tree.error(node, "<compiler inertiagrouprange=...>: needs 2 numbers")
                self.groups = (int(values[0]), int(values[1]))
        if self.infer not in ("auto", "true", "false"):
            raise tree.error(next(iter(tree.root.iter("compiler"))),
                             "<compiler inertiafromgeom=...>: auto, true or false")
        changed = sorted({key for node in tree.root.iter("compiler") for key in node.attrib
                          if key in _MASS_CHANGES})
        if any(geom.get("shellinertia") == "true" for geom in tree.root.iter("geom")):
            changed.append("geom shellinertia")
        if changed:
            warn(f"{tree.xml.path}: masses and inertias are read without MuJoCo's "
                 f"{', '.join(changed)} (not applied)")

    def skeleton(self, top: int) -> Skeleton:
        tree = self.tree
        for number in range(top, len(tree.bodies)):
            mj = tree.bodies[number]
            if mj.top != top:
                break
            self.body(number, mj)
        skeleton = Skeleton(self.name, self.bodies)
        for body, pose in zip(skeleton.bodies, skeleton.rest_poses(), strict=True):
            body.rest_pose = pose
        skeleton.attrs["mjcf"] = {"model": tree.name}
        return skeleton

    # ------------------------------------------------------------------ names
    def unique(self, name: str, taken: set[str]) -> str:
        out, number = name, 2
        while out in taken:
            out, number = f"{name}__{number}", number + 1
        taken.add(out)
        return out

    # ------------------------------------------------------------------ joints
    def joint(self, element: Element, attrs: dict[str, str], body: MjBody,
              number: int) -> _MjJoint:
        tree = self.tree
        kind = attrs.get("type", "hinge")
        if kind not in _KINDS:
            raise tree.error(element, f"<joint type=\"{kind[:40]}\">: hinge, slide, ball or free")
        if kind == "free" and body.parent >= 0:
            raise tree.error(element, f"body {body.name[:40]!r}: a free joint must be in a "
                                      "top-level body (MuJoCo refuses it elsewhere)")
        name = attrs.get("name") or (body.name if len(body.found.every_joint) == 1
                                     else f"{body.name}__joint{number}")
        pos = tree.numbers(attrs, "pos", element)
        if pos is None or kind == "free":
            pos = np.zeros(3)
        elif pos.size != 3:
            raise tree.error(element, "<joint pos=...>: needs 3 numbers")
        axis = tree.numbers(attrs, "axis", element)
        axis = np.array([0.0, 0.0, 1.0]) if axis is None else axis
        if axis.size != 3:
            raise tree.error(element, f"<joint axis=...>: needs 3 numbers, got {axis.size}")
        length = float(np.linalg.norm(axis))
        if kind in ("hinge", "slide") and length < 1e-14:
            raise tree.error(element, f"body {body.name[:40]!r}: zero joint axis")
        ref = 0.0
        if kind in ("hinge", "slide"):
            values = tree.numbers(attrs, "ref", element)
            if values is not None:
                if values.size != 1:
                    raise tree.error(element, "<joint ref=...>: needs 1 number")
                ref = float(tree.compiler.angle(values)[0]) if kind == "hinge" \
                    else float(values[0])
        limits = tree.range(attrs, element, angular=kind != "slide") if kind != "free" else None
        return _MjJoint(element, kind, name, pos, axis / max(length, 1e-300), ref, limits,
                        attrs)

    def body(self, number: int, mj: MjBody) -> None:
        joints = [self.joint(e, a, mj, k) for k, (e, a) in enumerate(mj.found.every_joint)]
        for before, after in itertools.pairwise(joints):  # the rules MuJoCo compiles by
            if before.kind == "ball" and after.kind in ("hinge", "ball"):
                raise self.tree.error(after.element, f"body {mj.name[:40]!r}: a ball joint is "
                                                     "followed by a rotation")
        if not joints and (mj.parent < 0 or mj.parent in self.static):
            self.static.add(number)
        parent = self.index.get(mj.parent, -1)
        place = mj.local
        single = self.single(mj, joints, place)
        if single is None:  # a chain: one neutral body per MuJoCo joint but the last
            for k, item in enumerate(joints[:-1]):
                frame = place if k == 0 else _EYE
                neutral = self.one(mj, [item], frame)
                assert neutral is not None
                name = self.unique(f"{mj.name}__{item.name}", self.body_names)
                self.bodies.append(Body(name, neutral, parent=parent,
                                        inertia=Inertia(0.0, np.zeros(3), np.zeros((3, 3))),
                                        attrs={"mujoco_chain": mj.name}))
                parent = len(self.bodies) - 1
            single = self.one(mj, joints[-1:], _EYE)
            assert single is not None
        name = self.unique(mj.name, self.body_names)
        shapes = self.shapes(mj)
        for _, attrs, geom in shapes:
            size = self.tree.numbers(attrs, "size", geom)
            if size is not None and np.any(size < 0):
                raise self.tree.error(geom, "<geom size=...>: sizes must be ≥ 0")
            if attrs.get("type") == "plane" and number not in self.static:
                raise self.tree.error(geom, "a plane geom belongs to a body that does not move")
        body = Body(name, single, parent=parent, inertia=self.inertia(mj),
                    shapes=[shape for shape, _, _ in shapes], markers=self.markers(mj))
        if self.from_geoms(mj):
            inertia, missing = _geom_inertia(shapes, self.tree, self.groups, self.mesh_mass)
            body.inertia = inertia
            if missing:
                body.attrs["inertia"] = "from geoms (mesh geoms not counted)"
        self.index[number] = len(self.bodies)
        self.bodies.append(body)

    def mesh_mass(self, name: str) -> MeshMass | None:
        """The mass properties of mesh asset ``name`` per unit density, or None (with one
        warning) when its file cannot be read or computed."""
        if name in self.mesh_masses:
            return self.mesh_masses[name]
        asset = self.tree.meshes[name]
        try:
            found: MeshMass | None = self.meshes.mass(asset.file, asset.scale, asset.inertia,
                                                      asset.refpos, asset.refquat)
        except MeshUnreadable as exc:
            found = None
            where = self.tree.error(asset.element, "")
            place = f":{where.line}" if where.line else ""
            over = isinstance(exc, MeshOverBudget)
            if not (over and self.over_budget):
                warn(f"{os.fspath(where.path or '')}{place}: mesh {name[:40]!r} "
                     f"({os.path.basename(asset.file)[:80]}): {exc}; the masses of the "
                     f"bodies with its geoms leave it out{', and every later one' if over else ''}")
            self.over_budget |= over
        self.mesh_masses[name] = found
        return found

    def single(self, mj: MjBody, joints: list[_MjJoint], place: Array) -> Joint | None:
        """The one neutral joint the body's MuJoCo joints make, or None (a chain)."""
        if len(joints) <= 1:
            return self.one(mj, joints, place)
        kinds = [j.kind for j in joints]
        pos = joints[-1].pos
        same = all(np.array_equal(j.pos, joints[0].pos) for j in joints)
        axes = np.array([j.axis for j in joints])
        eye = np.eye(3)
        neutral: tuple[str, dict[str, Any]] | None = None
        tilt = np.eye(3)  # R_C: the joint frame's turn in the body frame
        if kinds == ["hinge", "hinge"] and same:
            neutral = ("universal", {"axes": axes})
        elif kinds == ["hinge"] * 3 and same:
            found = _frame_of(axes, [j.name for j in joints])
            if found is not None:
                order, tilt = found
                neutral = ("euler", {"axis_order": order})
        elif kinds == ["slide"] * 3:
            found = _frame_of(axes)
            if found is not None and found[0] == "xyz":
                tilt = found[1]
                neutral = ("translational", {})
                pos = np.zeros(3)
        elif kinds == ["slide"] * 3 + ["ball"] and mj.parent >= 0:  # the writer's inner free
            found = _frame_of(axes[:3])
            if found is not None and found[0] == "xyz":
                tilt = found[1]
                neutral = ("free", {})
        elif kinds == ["slide", "slide", "hinge"] and abs(float(axes[0] @ axes[1])) < 1e-12 \
                and np.allclose(np.cross(axes[0], axes[1]), axes[2], rtol=0, atol=1e-12):
            plane = next((p for p, (a, b) in (("xy", (0, 1)), ("yz", (1, 2)), ("zx", (2, 0)))
                          if np.array_equal(axes[0], eye[a]) and np.array_equal(axes[1], eye[b])),
                         "arbitrary")
            neutral = ("planar", {"axes": axes[:2], "plane": plane})
        if neutral is None:
            return None
        kind, extra = neutral
        names = [j.name for j in joints]
        if kind == "free":  # rotation vector, then the three slides
            name = self.unique(joints[3].name, self.joint_names)
            dofs = [Dof(f"{name}_rot_{c}") for c in "xyz"] + [
                j.dof(self.tree, j.name) for j in joints[:3]]
            pos = joints[3].pos
        else:
            prefix = _common_prefix(names).rstrip("_")
            name = self.unique(prefix if prefix and prefix not in names else mj.name,
                               self.joint_names)
            dofs = [j.dof(self.tree, j.name) for j in joints]
        child = _translation(pos)
        child[:3, :3] = tilt
        return Joint(name, kind, parent_to_joint=place @ child, child_to_joint=child,
                     dofs=dofs, attrs={"mujoco": _record(joints)}, **extra)

    def one(self, mj: MjBody, joints: list[_MjJoint], place: Array) -> Joint | None:
        """The neutral joint of no or one MuJoCo joint at frame ``place``."""
        if not joints:
            return Joint(self.unique(mj.name, self.joint_names), "weld", parent_to_joint=place)
        item = joints[0]
        name = self.unique(item.name, self.joint_names)
        record: dict[str, Any] = {"mujoco": _record(joints)}
        at = _translation(item.pos)
        if item.kind == "free":
            return Joint(name, "free", parent_to_joint=place, attrs=record)
        if item.kind == "ball":
            if item.range is not None:
                record["cone_limit"] = float(item.range[1])
            return Joint(name, "ball", parent_to_joint=place @ at, child_to_joint=at,
                         attrs=record)
        kind = "revolute" if item.kind == "hinge" else "prismatic"
        return Joint(name, kind, parent_to_joint=place @ at, child_to_joint=at,
                     axes=item.axis[None, :], dofs=[item.dof(self.tree, name)], attrs=record)

    # ------------------------------------------------------------------ body contents
    def inertia(self, mj: MjBody) -> Inertia:
        tree = self.tree
        if mj.found.inertial is None:
            return Inertia(0.0, np.zeros(3), np.zeros((3, 3)))
        element, attrs, outer = mj.found.inertial
        frame = outer @ tree.frame(attrs, element)
        mass = tree.numbers(attrs, "mass", element)
        if mass is None or mass.size != 1 or mass[0] < 0:
            raise tree.error(element, "<inertial mass=...>: needs one number ≥ 0")
        diagonal = tree.numbers(attrs, "diaginertia", element)
        full = tree.numbers(attrs, "fullinertia", element)
        if full is not None:
            if full.size != 6:
                raise tree.error(element, "<inertial fullinertia=...>: needs 6 numbers")
            a, b, c, xy, xz, yz = full
            moment = np.array([[a, xy, xz], [xy, b, yz], [xz, yz, c]])
        elif diagonal is not None:
            if diagonal.size != 3:
                raise tree.error(element, "<inertial diaginertia=...>: needs 3 numbers")
            moment = np.diag(diagonal)
        else:
            raise tree.error(element, "<inertial> needs diaginertia or fullinertia")
        if np.any(np.diag(moment) < 0):  # MuJoCo refuses them too
            raise tree.error(element, "<inertial>: moments of inertia must be ≥ 0")
        turn = frame[:3, :3]
        return Inertia(float(mass[0]), frame[:3, 3].copy(), turn @ moment @ turn.T)

    def shapes(self, mj: MjBody) -> list[tuple[Shape, dict[str, str], Element]]:
        return [(self.tree.shape(geom, attrs, frame), attrs, geom)
                for geom, attrs, frame in mj.found.geoms
                if attrs.get("type", "sphere") not in _SKIPPED_GEOMS]

    def from_geoms(self, mj: MjBody) -> bool:
        """MuJoCo's ``inertiafromgeom``: ``auto`` infers where no ``<inertial>`` is given."""
        return self.infer == "true" or (self.infer == "auto" and mj.found.inertial is None)

    def markers(self, mj: MjBody) -> list[Marker]:
        out = []
        for number, (site, attrs, frame) in enumerate(mj.found.sites):
            local = frame @ self.tree.frame(attrs, site)
            out.append(Marker(attrs.get("name") or f"{mj.name}__site{number}",
                              local[:3, 3].copy()))
        return out


def _geom_inertia(shapes: list[tuple[Shape, dict[str, str], Element]], tree: MjTree,
                  groups: tuple[int, int],
                  mesh_mass: Callable[[str], MeshMass | None]) -> tuple[Inertia, bool]:
    """A body's mass properties from its geoms as MuJoCo infers them (``mass`` over
    ``density`` × volume, solid primitives and meshes; geoms outside ``inertiagrouprange``
    left out). Returns the inertia and whether mesh geoms were left out (unreadable)."""
    masses: list[float] = []
    centres: list[Array] = []
    moments: list[Array] = []  # each geom's, about its centre, in the body's axes
    missing = False
    for shape, attrs, geom in shapes:
        group = tree.numbers(attrs, "group", geom)
        given = tree.numbers(attrs, "mass", geom)
        density = tree.numbers(attrs, "density", geom)
        for values in (group, given, density):
            if values is not None and values.size != 1:
                raise tree.error(geom, "<geom group/mass/density=...>: needs one number")
        if any(values is not None and values[0] < 0 for values in (given, density)):
            raise tree.error(geom, "<geom mass/density=...>: must be ≥ 0")
        if (group is not None and not groups[0] <= group[0] <= groups[1]) or \
                shape.kind == "plane":
            continue
        turn = shape.transform[:3, :3]
        if shape.kind == "mesh":
            found = mesh_mass(str(shape.params.get("mesh", "")))
            if found is None:
                missing = True
                continue
            volume = found.volume
            centre = turn @ found.com + shape.transform[:3, 3]
            unit = turn @ found.inertia @ turn.T / found.volume
        else:
            volume, principal = _solid(shape)
            centre, unit = shape.transform[:3, 3], turn @ np.diag(principal) @ turn.T
        mass = float(given[0]) if given is not None else \
            (1000.0 if density is None else float(density[0])) * volume
        masses.append(mass)
        centres.append(centre)
        moments.append(mass * unit)
    total = sum(masses)
    if total <= 0:
        return Inertia(0.0, np.zeros(3), np.zeros((3, 3))), missing
    each = np.array(masses)
    com = each @ np.array(centres) / total
    d = np.array(centres) - com
    # each geom's own moment plus its parallel-axis term
    moment = np.sum(moments, axis=0) + float(each @ np.einsum("ni,ni->n", d, d)) * np.eye(3) \
        - np.einsum("n,ni,nj->ij", each, d, d)
    return Inertia(total, com, moment, derived=True), missing


def _solid(shape: Shape) -> tuple[float, tuple[float, float, float]]:
    """A solid primitive's volume and principal moments per unit mass (its own axes)."""
    p = shape.params
    if shape.kind == "sphere":
        r = float(p["radius"])
        return 4 / 3 * math.pi * r**3, (0.4 * r * r,) * 3
    if shape.kind in ("box", "ellipsoid"):
        a, b, c = (float(v) / 2 for v in p["size"])
        squares = (b * b + c * c, a * a + c * c, a * a + b * b)
        if shape.kind == "box":
            return 8 * a * b * c, (squares[0] / 3, squares[1] / 3, squares[2] / 3)
        return 4 / 3 * math.pi * a * b * c, (squares[0] / 5, squares[1] / 5, squares[2] / 5)
    r, height = float(p["radius"]), float(p["height"])
    if shape.kind == "cylinder":
        side = (3 * r * r + height * height) / 12
        return math.pi * r * r * height, (side, side, r * r / 2)
    # capsule: a cylinder and two half spheres at its ends
    volume = math.pi * r * r * height + 4 / 3 * math.pi * r**3
    ball = (4 / 3 * r) / (height + 4 / 3 * r)  # the spheres' share of the volume
    cyl = 1 - ball
    side = cyl * (3 * r * r + height * height) / 12 + ball * (
        0.4 * r * r + height * (3 * r + 2 * height) / 8)
    return volume, (side, side, cyl * r * r / 2 + ball * 0.4 * r * r)


def _frame_of(axes: Array, names: list[str] | None = None) -> tuple[str, Array] | None:
    """For three orthonormal unit axes: an axis order and the proper rotation ``R`` with
    ``axes[k] = R·e_{order[k]}`` (None when they are not orthonormal or left-handed).
    Several orders fit turned axes; preferred: the one with ``R = I``, else the one the
    joint names spell (``wrist_z``, ``wrist_x``, ``wrist_y`` → ``zxy``), else the first."""
    if not np.allclose(axes @ axes.T, np.eye(3), rtol=0, atol=1e-12):
        return None
    fits: dict[str, Array] = {}
    for order in ("xyz", "xzy", "yxz", "yzx", "zxy", "zyx"):
        turn = np.zeros((3, 3))
        for axis, letter in zip(axes, order, strict=True):
            turn[:, "xyz".index(letter)] = axis
        if np.linalg.det(turn) > 0:
            fits[order] = turn
    if not fits:
        return None
    for order, turn in fits.items():
        if np.array_equal(turn, np.eye(3)):
            return order, np.eye(3)
    spelled = "".join(n[-1] for n in names or [] if len(n) > 1 and n[-2] == "_")
    if spelled in fits:
        return spelled, fits[spelled]
    order = next(iter(fits))
    return order, fits[order]


def _common_prefix(names: list[str]) -> str:
    """The longest common start of the names (a joint's name from its coordinates')."""
    first = min(names)
    last = max(names)
    size = 0
    while size < min(len(first), len(last)) and first[size] == last[size]:
        size += 1
    return first[:size]


def _translation(pos: Array) -> Array:
    out = np.eye(4)
    out[:3, 3] = pos
    return out


def _record(joints: list[_MjJoint]) -> dict[str, list[Any]]:
    return {"joints": [j.attrs.get("name", "") for j in joints],
            "kinds": [j.kind for j in joints],
            "ref": [j.ref for j in joints]}


# ---------------------------------------------------------------------- qpos <-> q

_QPOS = {"hinge": 1, "slide": 1, "ball": 4, "free": 7}


def qpos_size(skeleton: Skeleton) -> int:
    """Length of the MuJoCo ``qpos`` part of a skeleton read from MJCF."""
    return sum(_QPOS[k] for j in skeleton.joints for k in _mujoco(j)["kinds"])


def _mujoco(joint: Joint) -> dict[str, list[Any]]:
    record = joint.attrs.get("mujoco")
    if record is None:
        if joint.type == "weld":
            return {"joints": [], "kinds": [], "ref": []}
        raise ConversionError(f"joint {joint.name!r} was not read from MJCF")
    return _mujoco_record(joint)


def _mujoco_record(joint: Joint) -> dict[str, list[Any]]:
    """The MuJoCo joints a neutral joint stands for, as :func:`_record` kept them (empty
    for a joint not read from MJCF)."""
    return cast("dict[str, list[Any]]", joint.attrs.get("mujoco", {}))


def qpos_to_q(skeleton: Skeleton, qpos: ArrayLike) -> Array:
    """Neutral coordinates ``(..., dof_count)`` of MuJoCo ``qpos`` ``(..., nq)`` of the model
    this skeleton was read from (its part starts at ``attrs["mujoco_qpos_start"]``)."""
    qpos = np.asarray(qpos, dtype=np.float64)
    out = np.zeros((*qpos.shape[:-1], skeleton.dof_count))
    at = int(cast(int, skeleton.attrs.get("mujoco_qpos_start", 0)))
    for joint in skeleton.joints:
        record = _mujoco(joint)
        start = joint.dof_offset
        tilt = joint.child_to_joint[:3, :3]
        if joint.type == "free" and record["kinds"] != ["free"]:  # three slides and a ball
            out[..., start + 3:start + 6] = qpos[..., at:at + 3] - np.array(record["ref"][:3])
            out[..., start:start + 3] = _rotvec(tilt.T @ _matrix(qpos[..., at + 3:at + 7])
                                                @ tilt)
            at += 7
        elif joint.type == "free":
            pose = np.zeros((*qpos.shape[:-1], 4, 4))
            pose[..., :3, :3] = _matrix(qpos[..., at + 3:at + 7])
            pose[..., :3, 3] = qpos[..., at:at + 3]
            pose[..., 3, 3] = 1.0
            local = np.asarray(np.linalg.inv(joint.parent_to_joint) @ pose, dtype=np.float64)
            out[..., start:start + 3] = _rotvec(local[..., :3, :3])
            out[..., start + 3:start + 6] = local[..., :3, 3]
            at += 7
        elif joint.type == "ball":
            out[..., start:start + 3] = _rotvec(tilt.T @ _matrix(qpos[..., at:at + 4]) @ tilt)
            at += 4
        else:
            for k, ref in enumerate(record["ref"]):
                out[..., start + k] = qpos[..., at] - ref
                at += 1
    return out


def q_to_qpos(skeleton: Skeleton, q: ArrayLike, qpos: ArrayLike | None = None) -> Array:
    """MuJoCo ``qpos`` of neutral coordinates (inverse of :func:`qpos_to_q`); the skeleton's
    part is written into ``qpos`` (a copy; zeros of this skeleton's length when None)."""
    q = np.asarray(q, dtype=np.float64)
    at = int(cast(int, skeleton.attrs.get("mujoco_qpos_start", 0)))
    if qpos is None:
        out = np.zeros((*q.shape[:-1], at + qpos_size(skeleton)))
    else:
        out = np.array(qpos, dtype=np.float64)
    for joint in skeleton.joints:
        record = _mujoco(joint)
        values = q[..., joint.dof_slice]
        tilt = joint.child_to_joint[:3, :3]
        if joint.type == "free" and record["kinds"] != ["free"]:  # three slides and a ball
            out[..., at:at + 3] = values[..., 3:6] + np.array(record["ref"][:3])
            out[..., at + 3:at + 7] = _wxyz(tilt @ _rotation(values[..., :3]) @ tilt.T)
            at += 7
        elif joint.type == "free":
            local = np.zeros((*q.shape[:-1], 4, 4))
            local[..., :3, :3] = _rotation(values[..., :3])
            local[..., :3, 3] = values[..., 3:6]
            local[..., 3, 3] = 1.0
            pose = joint.parent_to_joint @ local
            out[..., at:at + 3] = pose[..., :3, 3]
            out[..., at + 3:at + 7] = _wxyz(pose[..., :3, :3])
            at += 7
        elif joint.type == "ball":
            out[..., at:at + 4] = _wxyz(tilt @ _rotation(values) @ tilt.T)
            at += 4
        else:
            for k, ref in enumerate(record["ref"]):
                out[..., at] = values[..., k] + ref
                at += 1
    return out


# MuJoCo writes quaternions w first; the shared conversions take them w last.
def _matrix(wxyz: Array) -> Array:
    return quaternion.to_matrix(quaternion.wxyz_to_xyzw(wxyz))


def _wxyz(matrix: Array) -> Array:
    return quaternion.xyzw_to_wxyz(quaternion.from_matrix(matrix))


def _rotvec(matrix: Array) -> Array:
    return quaternion.to_exp_map(quaternion.from_matrix(matrix))


def _rotation(rotvec: Array) -> Array:
    return quaternion.to_matrix(quaternion.from_exp_map(rotvec))

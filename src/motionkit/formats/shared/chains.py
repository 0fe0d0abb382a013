"""A Skeleton as a tree of one-coordinate joints (URDF and Choreonoid ``.body`` alike).

URDF and Choreonoid share a frame rule: a link's frame *is* its joint's frame, each joint
moves one coordinate about or along one axis, and nothing offsets a child from its joint.
Every neutral joint therefore becomes a chain of steps (``specs/character-bridges.md``
§5.2): ``revolute``/``prismatic`` one step; ``universal`` two revolute steps; ``ball``
three revolute steps about x, y, z (values = intrinsic XYZ Euler angles); ``euler`` three
in its axis order (values copied); ``translational`` three prismatic; ``planar`` two
prismatic and a revolute about the normal; a ``free`` joint below the root three
prismatic then three revolute; ``weld`` one fixed step. The links between steps are
dummies ``BODY__1``, ``BODY__2``…; a child offset ``C ≠ I`` adds a link ``BODY__joint`` and
a fixed joint ``BODY__offset`` (origin ``C⁻¹``) to the real body. Multi-coordinate joints
name their steps after the neutral coordinates, so values map by name
(:func:`step_values`).
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy.spatial.transform import Rotation

from ...errors import ConversionError
from ...model import Motion
from ...model.skeleton import Body, Dof, Joint, Skeleton, World
from ...spatial.euler import euler_xyz
from ..loss import Holds

Array = NDArray[np.float64]

#: Generated links and joints carry this infix (never in a source name we keep).
INFIX = "__"
_EYE3 = np.eye(3)


@dataclass(eq=False)
class Step:
    """One generated joint: ``kind`` is ``fixed``, ``revolute`` or ``prismatic``.

    ``origin`` is the parent link frame → joint frame (= child link frame at q = 0);
    ``axis`` is a unit vector in the joint frame; ``dof`` the neutral coordinate it
    carries (limits, dynamics), ``None`` for fixed steps and rotations of ball/free
    joints, whose Euler values have no neutral limits.
    """

    name: str
    kind: str
    parent: str
    child: str
    origin: Array
    axis: Array
    dof: Dof | None
    source: str  # the neutral joint's name


@dataclass(eq=False)
class Link:
    """A generated link: the real body, or ``None`` for a massless dummy."""

    name: str
    body: Body | None


@dataclass(eq=False)
class Tree:
    """The expanded tree: links parent-first, steps in the same order, the root link."""

    root: str
    links: list[Link]
    steps: list[Step]
    notes: list[str]  # how neutral joints map to steps (for a file comment)


def _unit(v: Array) -> Array:
    return np.asarray(v, dtype=float) / float(np.linalg.norm(v))


def _roots(skeleton: Skeleton) -> list[int]:
    return [i for i, b in enumerate(skeleton.bodies) if b.parent < 0]


def base_is_body(skeleton: Skeleton, weld_too: bool) -> bool:
    """True when the one root body becomes the root link (a free root, or with
    ``weld_too`` a welded one); else a ``world`` link holds every root joint."""
    roots = _roots(skeleton)
    allowed = ("free", "weld") if weld_too else ("free",)
    return len(roots) == 1 and skeleton.bodies[roots[0]].joint.type in allowed


def expand(skeleton: Skeleton, *, weld_root: bool = False, floating: bool = False,
           world: str = "world") -> Tree:
    """The step tree of ``skeleton`` (see the module doc); ``weld_root`` keeps a welded
    root body as the root link (Choreonoid), else it hangs from ``world`` (URDF);
    ``floating`` hangs free roots from ``world`` by one URDF ``floating`` step."""
    bodies = skeleton.bodies
    own_root = base_is_body(skeleton, weld_root) and not floating
    root = link_name(skeleton, 0) if own_root else world
    tree = Tree(root, [] if own_root else [Link(world, None)], [], [])
    for index, body in enumerate(bodies):
        if own_root and index == 0:
            tree.links.append(Link(link_name(skeleton, 0), body))
            tree.notes.append(f"{joint_name(skeleton, 0)} ({body.joint.type}): the root link "
                              f"{link_name(skeleton, 0)} itself")
            continue
        parent = world if body.parent < 0 else link_name(skeleton, body.parent)
        name, jname = link_name(skeleton, index), joint_name(skeleton, index)
        if floating and body.parent < 0 and body.joint.type == "free":
            _floating_step(tree, body, parent, name, jname)
        else:
            _joint_steps(tree, body, parent, name, jname)
    return tree


def _floating_step(tree: Tree, body: Body, parent: str, name: str, jname: str) -> None:
    """A free root as one ``floating`` step at ``P`` (its value: the pose ``P⁻¹·W``)."""
    c_mat = body.joint.child_to_joint
    offset = not np.array_equal(c_mat, np.eye(4))
    last = f"{name}{INFIX}joint" if offset else name
    tree.steps.append(Step(jname, "floating", parent, last, body.joint.parent_to_joint,
                           np.zeros(3), None, jname))
    tree.links.append(Link(last, body if last == name else None))
    if offset:
        tree.steps.append(Step(f"{name}{INFIX}offset", "fixed", last, name,
                               np.asarray(np.linalg.inv(c_mat), dtype=float), np.zeros(3),
                               None, jname))
        tree.links.append(Link(name, body))
    tree.notes.append(f"{jname} (free): floating joint {jname}")


def link_name(skeleton: Skeleton, index: int) -> str:
    """The link name of a body: its own, or ``__bodyN`` for a body without one."""
    return skeleton.bodies[index].name or f"{INFIX}body{index}"


def joint_name(skeleton: Skeleton, index: int) -> str:
    """The name of a body's joint: its own, or ``__jointN`` for a joint without one."""
    return skeleton.bodies[index].joint.name or f"{INFIX}joint{index}"


def _joint_steps(tree: Tree, body: Body, parent: str, name: str, jname: str) -> None:
    joint = body.joint
    c_mat = joint.child_to_joint
    if joint.type == "weld":
        origin = joint.parent_to_joint @ np.linalg.inv(c_mat)
        tree.steps.append(Step(jname, "fixed", parent, name, origin, np.zeros(3),
                               None, jname))
        tree.links.append(Link(name, body))
        tree.notes.append(f"{jname} (weld): fixed joint {jname}")
        return
    axes = _axes(joint)
    offset = not np.array_equal(c_mat, np.eye(4))
    last = f"{name}{INFIX}joint" if offset else name
    names = _step_names(joint, jname)
    current = parent
    for k, (kind, axis, dof) in enumerate(axes):
        child = last if k == len(axes) - 1 else f"{name}{INFIX}{k + 1}"
        origin = joint.parent_to_joint if k == 0 else np.eye(4)
        tree.steps.append(Step(names[k], kind, current, child, origin, axis, dof, jname))
        tree.links.append(Link(child, body if child == name else None))
        current = child
    if offset:
        tree.steps.append(Step(f"{name}{INFIX}offset", "fixed", last, name,
                               np.asarray(np.linalg.inv(c_mat), dtype=float), np.zeros(3), None, jname))
        tree.links.append(Link(name, body))
    tree.notes.append(f"{jname} ({joint.type}{_value_note(joint)}): "
                      + ", ".join(names))


def _value_note(joint: Joint) -> str:
    if joint.type == "ball":
        return "; values = intrinsic XYZ Euler angles of its rotation"
    if joint.type == "free":
        return "; values = translation, then intrinsic XYZ Euler angles of its rotation"
    if joint.type == "screw":
        return "; written as its rotation only"
    return ""


def _step_names(joint: Joint, name: str) -> list[str]:
    if joint.dof_count == 1:
        return [name]
    if joint.type in ("ball", "free"):  # Euler steps: not the rotation-vector coordinates
        names = [f"{name}{INFIX}r{c}" for c in "xyz"]
        if joint.type == "free":
            names = [dof.name for dof in joint.dofs[3:]] + names
        return names
    return [dof.name for dof in joint.dofs]


def _axes(joint: Joint) -> list[tuple[str, Array, Dof | None]]:
    """(kind, unit axis, dof) of each step of a moving joint."""
    t, dofs = joint.type, joint.dofs
    units = {c: _EYE3[i] for i, c in enumerate("xyz")}
    if t in ("revolute", "screw"):
        return [("revolute", _unit(joint.axes[0]), dofs[0])]
    if t == "prismatic":
        return [("prismatic", _unit(joint.axes[0]), dofs[0])]
    if t == "universal":
        return [("revolute", _unit(joint.axes[i]), dofs[i]) for i in range(2)]
    if t == "euler":
        return [("revolute", units[c], dofs[i]) for i, c in enumerate(joint.axis_order)]
    if t == "ball":
        return [("revolute", units[c], None) for c in "xyz"]
    if t == "translational":
        return [("prismatic", units[c], dofs[i]) for i, c in enumerate("xyz")]
    if t in ("planar", "translational2d"):
        a1, a2, n = joint.plane_axes()
        steps: list[tuple[str, Array, Dof | None]] = [("prismatic", a1, dofs[0]),
                                                      ("prismatic", a2, dofs[1])]
        if t == "planar":
            steps.append(("revolute", n, dofs[2]))
        return steps
    if t == "free":
        return ([("prismatic", units[c], dofs[3 + i]) for i, c in enumerate("xyz")]
                + [("revolute", units[c], None) for c in "xyz"])
    raise ValueError(f"joint {joint.name!r}: unknown type {t!r}")


def losses(skeleton: Skeleton, target: str, floating: bool = False) -> list[str]:
    """What the step form cannot express: screw joints, limits on ball or free-joint
    rotations (their Euler steps have none), duplicate names. ``floating``: as
    :func:`expand`."""
    found: list[str] = []
    problems: dict[str, list[str]] = {}
    for body in skeleton.bodies:
        joint = body.joint
        if joint.type == "screw":
            problems.setdefault("screw joints (written as revolute joints, their translation "
                                "lost)", []).append(joint.name)
        if joint.type in ("ball", "free") and any(
                math.isfinite(d.lower) or math.isfinite(d.upper) for d in joint.dofs[:3]):
            problems.setdefault(f"rotation limits of ball/free joints (their {target} Euler "
                                "joints are left unlimited)", []).append(joint.name)
    tree = expand(skeleton, weld_root=target == "Choreonoid", floating=floating)
    for kind, names in (("link", [link.name for link in tree.links]),
                        ("joint", [step.name for step in tree.steps])):
        refuse_repeats(kind + "s", names, target)
    return found + grouped(problems)


def refuse_repeats(kind: str, names: Sequence[str], target: str) -> None:
    """ConversionError for names used twice: no file the target's loaders read holds them,
    so not even ``lossy`` writes them."""
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        shown = ", ".join(repr(n) for n in repeated[:3]) + (" …" if len(repeated) > 3 else "")
        raise ConversionError(f"a {target} file needs unique names; two {kind} would be named "
                              f"{shown} (rename them)")


def step_values(skeleton: Skeleton, q: Sequence[float] | Array) -> dict[str, float]:
    """The value of every moving step for the neutral coordinates ``q`` (one frame), by
    step name: how a neutral motion drives the exported model."""
    coords = np.asarray(q, dtype=float).reshape(skeleton.dof_count)
    tree = expand(skeleton)
    out: dict[str, float] = {}
    for index, body in enumerate(skeleton.bodies):
        joint = body.joint
        if joint.type == "weld" or (index == 0 and tree.root == link_name(skeleton, 0)):
            continue
        values = coords[joint.dof_slice]
        if joint.type == "ball":
            values = _euler(values)
        elif joint.type == "free":
            values = np.concatenate([values[3:], _euler(values[:3])])
        for name, value in zip(_step_names(joint, joint_name(skeleton, index)), values,
                               strict=True):
            out[name] = float(value)
    return out


def _euler(rotation_vector: Array) -> Array:
    """Intrinsic XYZ Euler angles of the rotation ``exp(rotation_vector)``."""
    return euler_xyz(Rotation.from_rotvec(rotation_vector).as_matrix())


def single(obj: World | Skeleton, target: str) -> tuple[Skeleton, list[str]]:
    """The one skeleton a single-robot file holds, and the loss when a world has more."""
    if isinstance(obj, Skeleton):
        return obj, []
    if not obj.skeletons:
        raise ConversionError(f"the world has no skeleton to write as {target}")
    first = obj.skeletons[0]
    lost = world_losses(obj)
    if len(obj.skeletons) == 1:
        return first, lost
    rest = ", ".join(repr(s.name) for s in obj.skeletons[1:])
    return first, [*lost, f"skeletons {rest} (a {target} file holds one robot; {first.name!r} "
                          "is written)"]


def world_losses(world: World) -> list[str]:
    """A world's gravity and time step, where they are not the usual ones (a robot file
    has no place for them)."""
    usual = World([])
    if world.time_step == usual.time_step and np.array_equal(world.gravity, usual.gravity):
        return []
    return [f"the world's gravity {world.gravity.tolist()} and time step {world.time_step:g} s"]


def mesh_file(params: Mapping[str, object], folder: str) -> str | None:
    """A shape's mesh path as seen from ``folder`` (the file being written), or None
    when the shape names no file."""
    name = params.get("file_name")
    if not name:
        return None
    text = str(name)
    base = params.get("base")
    if base is None or "://" in text or os.path.isabs(text):
        return text
    target = os.path.normpath(os.path.join(str(base), text))
    return os.path.relpath(target, folder).replace(os.sep, "/")


def grouped(problems: dict[str, list[str]]) -> list[str]:
    """One loss line per kind of problem, naming at most three bodies."""
    out = []
    for what, named in problems.items():
        names = list(dict.fromkeys(named))
        shown = ", ".join(repr(n) for n in names[:3])
        more = f" and {len(names) - 3} more" if len(names) > 3 else ""
        out.append(f"{what} on {shown}{more}")
    return out


def extras(skeleton: Skeleton, *, markers: bool = True) -> dict[str, list[str]]:
    """Parts of a skeleton that URDF and MJCF have no element for, by what they are:
    devices (sensors), soft bodies and, with ``markers``, markers."""
    found = physics_losses(skeleton)
    for device in skeleton.devices:
        found.setdefault("devices (left out)", []).append(device.name)
    for body in skeleton.bodies:
        if markers and body.markers:
            found.setdefault("markers (left out)", []).append(body.name)
        if body.soft_shape is not None:
            found.setdefault("soft bodies (left out)", []).append(body.name)
    return found


#: Characters no XML 1.0 file holds and that break a YAML line: C0 and C1 controls (but
#: the tab), non-characters, lone surrogates.
_UNWRITABLE = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")


def physics_losses(skeleton: Skeleton) -> dict[str, list[str]]:
    """DART's simulation switches no model file here has a place for: an immobile
    skeleton, bodies gravity does not act on."""
    found: dict[str, list[str]] = {}
    if not skeleton.mobile:
        found["immobility (written as a mobile robot)"] = [skeleton.name]
    off = [body.name for body in skeleton.bodies if not body.gravity]
    if off:
        found["bodies gravity does not act on (it will)"] = off
    return found


def require_finite(skeleton: Skeleton) -> None:
    """Refuse (ConversionError) what no model file has a nearest form for: joint frames,
    axes or mass properties holding inf or NaN, a moving joint with a zero axis, and names
    with characters a file cannot hold (control characters, line breaks)."""
    names = [skeleton.name, *(b.name for b in skeleton.bodies), *(j.name for j in skeleton.joints),
             *(d.name for j in skeleton.joints for d in j.dofs), *(d.name for d in skeleton.devices)]
    odd = [name for name in names if _UNWRITABLE.search(name)]
    if odd:
        raise ConversionError(f"skeleton {skeleton.name!r}: the name(s) {', '.join(map(repr, odd[:3]))} "
                              "hold control characters or line breaks a model file cannot hold")
    zero = [body.joint.name for body in skeleton.bodies if body.joint.dof_count
            and body.joint.type in ("revolute", "prismatic", "screw", "universal")
            and not np.all(np.linalg.norm(np.atleast_2d(body.joint.axes), axis=1) > 0)]
    if zero:
        raise ConversionError(f"skeleton {skeleton.name!r}: joint(s) {', '.join(map(repr, zero[:3]))} "
                              "have a zero axis; no model file has a direction for them")
    bad = [body.name for body in skeleton.bodies
           if not all(np.all(np.isfinite(v)) for v in (
               body.joint.parent_to_joint, body.joint.child_to_joint, body.joint.axes,
               body.inertia.com, body.inertia.moment, [body.inertia.mass]))]
    if bad:
        shown = ", ".join(repr(n) for n in bad[:3]) + (" …" if len(bad) > 3 else "")
        raise ConversionError(f"skeleton {skeleton.name!r}: non-finite joint frames, axes or "
                              f"mass properties on {shown}; a model file cannot hold them")


#: What the model writers keep of a motion: its skeleton only (its frames are a loss, so
#: ``convert walk.bvh walk.urdf --lossy`` writes the BVH's skeleton).
#: What the model writers take: a World (one skeleton for URDF and .body, or the rest is a
#: loss), a Skeleton, or a Motion, which gives its skeleton.
MODEL_WRITES = (World, Skeleton, Motion)
MOTION_HOLDS = Holds(tracks={}, terrain=False, times=False, stamps=False, ns_stamps=False,
                     labels=False, attrs=False, meta=frozenset())


def model_of(obj: World | Skeleton | Motion) -> World | Skeleton:
    """The model to write: ``obj`` itself, or a motion's skeleton."""
    if not isinstance(obj, Motion):
        return obj
    if not isinstance(obj.skeleton, Skeleton):
        raise ConversionError("this motion has no skeleton to write as a model")
    return obj.skeleton


def _finite(low: float, high: float) -> bool:
    return math.isfinite(low) or math.isfinite(high)


def _asymmetric(low: float, high: float) -> bool:
    return _finite(low, high) and low != -high


_DOF_PARTS: dict[str, Callable[[Dof], bool]] = {
    "velocity limits": lambda d: _finite(d.velocity_lower, d.velocity_upper),
    "force limits": lambda d: _finite(d.force_lower, d.force_upper),
    "acceleration limits": lambda d: _finite(d.acceleration_lower, d.acceleration_upper),
    "lower velocity limits other than -upper": lambda d: _asymmetric(d.velocity_lower,
                                                                      d.velocity_upper),
    "lower force limits other than -upper": lambda d: _asymmetric(d.force_lower, d.force_upper),
    "initial positions": lambda d: d.position != 0.0,
    "initial velocities": lambda d: d.velocity != 0.0,
    "springs": lambda d: d.spring_stiffness != 0.0,
    "damping": lambda d: d.damping != 0.0,
    "friction": lambda d: d.friction != 0.0,
}


def dof_losses(joints: Iterable[Joint], parts: Iterable[str]) -> dict[str, list[str]]:
    """Coordinates whose ``parts`` (keys of the table above) are set but the target has
    no place for: ``{"springs (left out)": [coordinate names]}``."""
    dofs = [dof for joint in joints for dof in joint.dofs]
    found: dict[str, list[str]] = {}
    for part in parts:
        names = [dof.name for dof in dofs if _DOF_PARTS[part](dof)]
        if names:
            found[f"{part} (left out)"] = names
    return found

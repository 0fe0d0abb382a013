"""Write a Skeleton as URDF 1.0 (``specs/character-bridges.md`` §5.1–5.4).

Joints become chains of one-coordinate URDF joints (:mod:`.chain`); a free root is the
root link itself (loaders add their own floating base, at the origin: the root's starting
pose is a named loss), or with ``floating_base="world"`` hangs from a ``world`` link by a
``floating`` joint whose origin keeps that pose; any other root hangs from a ``world``
link. Limits are never ``inf`` (urdfdom refuses it): a revolute joint without
limits is ``continuous``, an infinite side of any other limit is written as ±1e16.
Dummy links carry mass 1e-6 kg and inertia 1e-9 (MuJoCo refuses massless moving links,
DART would give a link without ``<inertial>`` 1 kg). URDF has no capsule: a capsule is
written as a cylinder plus two end spheres in ``<collision>`` and a cylinder in
``<visual>``, and listed as a loss; ellipsoids, cones, pyramids, planes and meshes
without a file are left out (also listed). Numbers are written with ``repr``.
"""

from __future__ import annotations

import math
import os
import re
from xml.sax.saxutils import escape, quoteattr

import numpy as np
from numpy.typing import NDArray

from ..._io import atomic_write
from ...errors import ConversionError, option_hint
from ...model import Motion
from ...model.skeleton import Body, Dof, Shape, Skeleton, World
from ...spatial.euler import euler_xyz
from ..shared.chains import (
    MODEL_WRITES,
    MOTION_HOLDS,
    Link,
    Step,
    base_is_body,
    dof_losses,
    expand,
    extras,
    grouped,
    link_name,
    mesh_file,
    model_of,
    require_finite,
    single,
)
from ..shared.chains import losses as chain_losses
from ..shared.textcolumns import exact, exact_vector

WRITES, HOLDS = MODEL_WRITES, MOTION_HOLDS

Array = NDArray[np.float64]

#: Written for an infinite side of a limit (urdfdom rejects ``inf``).
BIG = 1e16
#: ``<limit effort velocity>`` when the coordinate has no finite bound (0 reads as "none"
#: in some simulators).
PLACEHOLDER = 1e3
DUMMY_MASS = 1e-6
DUMMY_INERTIA = 1e-9
_DROPPED = ("ellipsoid", "cone", "pyramid", "plane")


def losses(obj: World | Skeleton | Motion, floating_base: str = "root") -> list[str]:
    """What URDF cannot express (written in the nearest form under ``lossy``)."""
    skeleton, found = single(model_of(obj), "URDF")
    require_finite(skeleton)
    floating = _floating(floating_base)
    found += chain_losses(skeleton, "URDF", floating)
    if not floating:
        found += _start_pose_loss(skeleton)
    problems = extras(skeleton)
    problems.update(dof_losses(skeleton.joints, (
        "initial positions", "initial velocities", "springs", "acceleration limits",
        "lower velocity limits other than -upper", "lower force limits other than -upper")))
    for body in skeleton.bodies:
        for shape in body.shapes:
            if shape.kind == "capsule":
                problems.setdefault("capsules (written as cylinder + spheres)", []).append(
                    body.name)
            elif shape.kind in _DROPPED:
                problems.setdefault(f"{shape.kind} shapes (left out)", []).append(body.name)
            elif shape.kind == "mesh" and not shape.params.get("file_name"):
                problems.setdefault("meshes without a file (left out)", []).append(body.name)
    return found + grouped(problems)


def write(path: str | os.PathLike[str], obj: World | Skeleton | Motion, *,
          floating_base: str = "root") -> None:
    """Write ``obj`` (one skeleton) to ``path`` as URDF. ``floating_base="world"`` hangs a
    free root from a ``world`` link by a ``floating`` joint (what pinocchio and DART read
    as a free joint; yourdfpy never moves it) instead of making it the root link."""
    skeleton, _ = single(model_of(obj), "URDF")
    require_finite(skeleton)
    folder = os.path.dirname(os.path.abspath(path))
    text = to_text(skeleton, folder, _floating(floating_base))
    with atomic_write(path, "w") as handle:
        handle.write(text)


def _start_pose_loss(skeleton: Skeleton) -> list[str]:
    """The starting pose of a free root that is the root link itself (URDF loaders put a
    root link at the origin), when it is not the origin."""
    if not base_is_body(skeleton, False):
        return []
    from ...kinematics import forward

    pose = forward(skeleton, skeleton.initial_positions)[0]
    angle = 2.0 * math.degrees(math.atan2(float(np.linalg.norm(pose[3:6])), abs(float(pose[6]))))
    if np.abs(pose[:3]).max() <= 1e-12 and angle <= 1e-10:
        return []
    turned = f", turned {angle:.6g}°" if angle > 1e-10 else ""
    return [f"the starting pose of the free root link {link_name(skeleton, 0)!r} (at "
            f"{' '.join(f'{v + 0.0:.6g}' for v in pose[:3])} m{turned}; a URDF root link is at the "
            f"origin: {option_hint('floating_base', 'world', 'write')} keeps it)"]


def _floating(floating_base: str) -> bool:
    if floating_base not in ("root", "world"):
        raise ConversionError(f"floating_base must be 'root' or 'world', not {floating_base!r}")
    return floating_base == "world"


def origin(matrix: Array) -> str:
    """``<origin xyz rpy>`` of a transform (rpy: R = Rz(y)·Ry(p)·Rx(r))."""
    # Rᵀ = Rx(-r)·Ry(-p)·Rz(-y): the intrinsic XYZ angles of Rᵀ, negated
    rpy = -euler_xyz(matrix[:3, :3].T)
    return f'<origin xyz="{exact_vector(matrix[:3, 3])}" rpy="{exact_vector(rpy + 0.0)}"/>'


def to_text(skeleton: Skeleton, folder: str, floating: bool = False) -> str:
    """The URDF document of ``skeleton``; mesh paths relative to ``folder``."""
    tree = expand(skeleton, floating=floating)
    lines = ['<?xml version="1.0"?>',
             "<!-- written by motionkit; generated names contain '__'. Neutral joints as URDF "
             "joints:"]
    lines += [f"  {_comment(note)}" for note in tree.notes]
    lines.append("-->")
    lines.append(f"<robot name={quoteattr(skeleton.name or 'robot')}>")
    for link in tree.links:
        lines += _link(link, folder, link.name == tree.root)
    for step in tree.steps:
        lines += _joint(step)
    lines.append("</robot>")
    return "\n".join(lines) + "\n"


def _comment(text: str) -> str:
    """Text safe inside an XML comment: no ``--`` anywhere, no ``-`` at the end."""
    return re.sub("-(?=-|$)", "- ", escape(text))


def _link(link: Link, folder: str, root: bool) -> list[str]:
    body = link.body
    if root and body is None:  # the world: no mass, DART and urdfdom drop it
        return [f"  <link name={quoteattr(link.name)}/>"]
    out = [f"  <link name={quoteattr(link.name)}>"]
    out += _inertial(body)
    if body is not None:
        for shape in body.shapes:
            out += _shape(shape, folder)
    out.append("  </link>")
    return out


def _inertial(body: Body | None) -> list[str]:
    if body is None:
        mass, com, m = DUMMY_MASS, np.zeros(3), np.eye(3) * DUMMY_INERTIA
    else:
        mass, com, m = body.inertia.mass, body.inertia.com, body.inertia.moment
    return ["    <inertial>",
            f'      <origin xyz="{exact_vector(com)}" rpy="0 0 0"/>',
            f'      <mass value="{exact(mass)}"/>',
            f'      <inertia ixx="{exact(m[0, 0])}" ixy="{exact(m[0, 1])}" ixz="{exact(m[0, 2])}" '
            f'iyy="{exact(m[1, 1])}" iyz="{exact(m[1, 2])}" izz="{exact(m[2, 2])}"/>',
            "    </inertial>"]


def _shape(shape: Shape, folder: str) -> list[str]:
    tag = "collision" if shape.role == "collision" else "visual"
    p = shape.params
    parts: list[tuple[Array, str]] = []
    if shape.kind == "box":
        parts.append((shape.transform, f'<box size="{exact_vector(p["size"])}"/>'))
    elif shape.kind == "sphere":
        parts.append((shape.transform, f'<sphere radius="{exact(p["radius"])}"/>'))
    elif shape.kind in ("cylinder", "capsule"):
        radius, height = float(p["radius"]), float(p["height"])
        parts.append((shape.transform,
                      f'<cylinder radius="{exact(radius)}" length="{exact(height)}"/>'))
        if shape.kind == "capsule" and tag == "collision":
            for sign in (-1.0, 1.0):
                end = np.eye(4)
                end[2, 3] = sign * height / 2
                parts.append((shape.transform @ end, f'<sphere radius="{exact(radius)}"/>'))
    elif shape.kind == "multi_sphere":
        for radius, position in p["spheres"]:
            at = np.eye(4)
            at[:3, 3] = position
            parts.append((shape.transform @ at, f'<sphere radius="{exact(radius)}"/>'))
    elif shape.kind == "mesh":
        name = mesh_file(p, folder)
        if name is not None:
            scale = np.asarray(p.get("scale", np.ones(3)), dtype=float).reshape(3)
            parts.append((shape.transform, f"<mesh filename={quoteattr(name)} "
                                           f'scale="{exact_vector(scale)}"/>'))
    out = []
    for transform, geometry in parts:
        out += [f"    <{tag}>", f"      {origin(transform)}",
                f"      <geometry>{geometry}</geometry>", f"    </{tag}>"]
    return out


def _joint(step: Step) -> list[str]:
    kind = step.kind
    dof = step.dof
    if kind == "revolute" and (dof is None or (math.isinf(dof.lower) and math.isinf(dof.upper))):
        kind = "continuous"
    out = [f"  <joint name={quoteattr(step.name)} type={quoteattr(kind)}>",
           f"    <parent link={quoteattr(step.parent)}/>",
           f"    <child link={quoteattr(step.child)}/>",
           f"    {origin(step.origin)}"]
    if kind not in ("fixed", "floating"):
        out.append(f'    <axis xyz="{exact_vector(step.axis)}"/>')
        out += _limit(kind, dof)
    if dof is not None and (dof.damping or dof.friction):
        out.append(f'    <dynamics damping="{exact(dof.damping)}" friction="{exact(dof.friction)}"/>')
    out.append("  </joint>")
    return out


def _limit(kind: str, dof: Dof | None) -> list[str]:
    effort = velocity = PLACEHOLDER
    if dof is not None:
        effort = dof.force_upper if math.isfinite(dof.force_upper) else PLACEHOLDER
        velocity = dof.velocity_upper if math.isfinite(dof.velocity_upper) else PLACEHOLDER
    text = f'    <limit effort="{exact(effort)}" velocity="{exact(velocity)}"'
    if kind != "continuous":
        lower = -BIG if dof is None or not math.isfinite(dof.lower) else dof.lower
        upper = BIG if dof is None or not math.isfinite(dof.upper) else dof.upper
        text += f' lower="{exact(lower)}" upper="{exact(upper)}"'
    return [text + "/>"]

"""Write a Skeleton as a Choreonoid ``.body`` file (``specs/choreonoid-body.md`` §8.4).

What Choreonoid's ``StdBodyWriter`` writes, with its advice applied: ``format_version:
2.0``, ``angle_unit: degree``, a ``links`` listing with the root first and ``root_link``
named, snake_case keys, ``joint_range`` with ``unlimited`` for an infinite side, ``mass``,
``center_of_mass`` and ``inertia`` (9 numbers) on every link, numbers with ``repr``.
Choreonoid's frame rule is URDF's (the link frame is the joint frame), so joints expand
into the same chains of revolute/prismatic links (:mod:`..urdf.chain`); dummy links are
massless. A free or welded root is the root link (its rest pose is its initial pose);
other roots hang from a fixed ``world`` link. Shapes go to ``Visual``/``Collision``
groups, Z-axis primitives turned back to Choreonoid's Y axis.
"""

from __future__ import annotations

import json
import math
import os
from typing import cast

import numpy as np
from numpy.typing import NDArray
from scipy.spatial.transform import Rotation

from ..._io import atomic_write
from ...model import Motion
from ...model.skeleton import Body, Device, Dof, Shape, Skeleton, World
from ..shared.chains import (
    MODEL_WRITES,
    MOTION_HOLDS,
    Step,
    Tree,
    base_is_body,
    dof_losses,
    expand,
    grouped,
    mesh_file,
    model_of,
    physics_losses,
    require_finite,
    single,
)
from ..shared.chains import losses as chain_losses
from ..shared.textcolumns import exact

WRITES, HOLDS = MODEL_WRITES, MOTION_HOLDS

Array = NDArray[np.float64]

#: A Z-axis primitive pose → Choreonoid's Y-axis pose (inverse of the reader's Rx(-90°)).
_Z_TO_Y = np.array([[1.0, 0.0, 0.0, 0.0], [0.0, 0.0, -1.0, 0.0], [0.0, 1.0, 0.0, 0.0],
                    [0.0, 0.0, 0.0, 1.0]])
_DROPPED = ("ellipsoid", "pyramid", "plane")


def losses(obj: World | Skeleton | Motion, **_: object) -> list[str]:
    """What a ``.body`` file cannot express (the nearest form under ``lossy``)."""
    skeleton, found = single(model_of(obj), "Choreonoid")
    require_finite(skeleton)
    found += chain_losses(skeleton, "Choreonoid")
    problems = dof_losses(skeleton.joints, (
        "initial velocities", "springs", "damping", "friction", "acceleration limits",
        "lower velocity limits other than -upper", "lower force limits other than -upper"))
    problems.update(physics_losses(skeleton))
    problems.update(dof_losses([j for j in skeleton.joints if j.type in ("ball", "free")],
                               ("initial positions",)))
    for device in skeleton.devices:
        linear = device.transform[:3, :3]
        if not np.allclose(linear.T @ linear, np.eye(3), rtol=0.0, atol=1e-12):
            problems.setdefault("scaled device frames (scale left out)", []).append(device.name)
    for body in skeleton.bodies:
        if body.markers:
            problems.setdefault("markers (left out)", []).append(body.name)
        if body.soft_shape is not None:
            problems.setdefault("soft bodies (left out)", []).append(body.name)
        for shape in body.shapes:
            if shape.kind in _DROPPED:
                problems.setdefault(f"{shape.kind} shapes (left out)", []).append(body.name)
            elif shape.kind == "mesh" and not shape.params.get("file_name"):
                problems.setdefault("meshes without a file (left out)", []).append(body.name)
    return found + grouped(problems)


def write(path: str | os.PathLike[str], obj: World | Skeleton | Motion) -> None:
    """Write ``obj`` (one skeleton) to ``path`` as a Choreonoid body model."""
    skeleton, _ = single(model_of(obj), "Choreonoid")
    require_finite(skeleton)
    folder = os.path.dirname(os.path.abspath(path))
    text = to_text(skeleton, folder)
    with atomic_write(path, "w") as handle:
        handle.write(text)


def _vec(values: Array) -> str:
    return "[ " + ", ".join(exact(v) for v in np.asarray(values, dtype=float).ravel()) + " ]"


def _text(value: str) -> str:
    """A YAML double-quoted string (JSON's escapes are YAML's)."""
    return json.dumps(value)


def _placement(matrix: Array, indent: str) -> list[str]:
    """``translation`` and degree axis-angle ``rotation`` lines (when not zero)."""
    out = []
    if np.any(matrix[:3, 3]):
        out.append(f"{indent}translation: {_vec(matrix[:3, 3])}")
    rotvec = Rotation.from_matrix(matrix[:3, :3]).as_rotvec()
    angle = float(np.linalg.norm(rotvec))
    if angle > 0.0:
        out.append(f"{indent}rotation: {_vec(np.append(rotvec / angle, math.degrees(angle)))}")
    return out


def to_text(skeleton: Skeleton, folder: str) -> str:
    """The ``.body`` document of ``skeleton``; mesh paths relative to ``folder``."""
    tree = expand(skeleton, weld_root=True)
    ids = _joint_ids(skeleton, tree)
    lines = ["format: ChoreonoidBody", "format_version: 2.0", "angle_unit: degree",
             f"name: {_text(skeleton.name or 'body')}", f"root_link: {_text(tree.root)}",
             "# written by motionkit; generated names contain '__'. Neutral joints as links:"]
    lines += [f"#   {note}" for note in tree.notes]  # names cannot break the line: require_finite
    lines += ["", "links:"]
    first = tree.links[0]
    if base_is_body(skeleton, True):
        root = skeleton.bodies[0]
        lines += [f"  - name: {_text(first.name)}"]
        lines += _placement(skeleton.rest_poses()[0], "    ")
        lines += [f"    joint_name: {_text(root.joint.name)}",
                  f"    joint_type: {'free' if root.joint.type == 'free' else 'fixed'}"]
    else:
        lines += [f"  - name: {_text(first.name)}", "    joint_type: fixed"]
    devices: dict[int, list[Device]] = {}
    for device in skeleton.devices:
        devices.setdefault(device.body, []).append(device)
    index = {id(body): number for number, body in enumerate(skeleton.bodies)}

    def mounted(body: Body | None) -> list[Device]:
        return [] if body is None else devices.get(index[id(body)], [])

    lines += _mass(first.body)
    lines += _elements(first.body, mounted(first.body), folder)
    for step, link in zip(tree.steps, tree.links[1:], strict=True):
        body = link.body if link.name == step.child else None
        lines += _link(step, body, ids, folder)
        lines += _elements(body, mounted(body), folder)
    return "\n".join(lines) + "\n"


def _joint_ids(skeleton: Skeleton, tree: Tree) -> dict[str, int]:
    """Joint IDs by step name: the source's IDs when it has any, else moving steps in order."""
    kept = {j.name: int(cast(int, j.attrs["joint_id"])) for j in skeleton.joints
            if "joint_id" in j.attrs and j.dof_count == 1}
    if kept:
        return {s.name: kept[s.source] for s in tree.steps
                if s.source in kept and s.name == s.source}
    moving = [s.name for s in tree.steps if s.kind != "fixed"]
    return {name: number for number, name in enumerate(moving)}


def _link(step: Step, body: Body | None, ids: dict[str, int], folder: str) -> list[str]:
    out = [f"  - name: {_text(step.child)}", f"    parent: {_text(step.parent)}"]
    out += _placement(step.origin, "    ")
    out += [f"    joint_name: {_text(step.name)}", f"    joint_type: {step.kind}"]
    if step.kind != "fixed":
        out.append(f"    joint_axis: {_vec(step.axis)}")
    if step.name in ids:
        out.append(f"    joint_id: {ids[step.name]}")
    if step.dof is not None:
        out += _ranges(step.kind, step.dof)
    out += _mass(body)
    return out


def _ranges(kind: str, dof: Dof) -> list[str]:
    out = []
    scale = math.degrees(1.0) if kind == "revolute" else 1.0
    if dof.position != 0.0:
        out.append(f"    joint_displacement: {exact(dof.position * scale)}")
    if math.isfinite(dof.lower) or math.isfinite(dof.upper):
        sides = [exact(v * scale) if math.isfinite(v) else "unlimited"
                 for v in (dof.lower, dof.upper)]
        out.append(f"    joint_range: [ {sides[0]}, {sides[1]} ]")
    if math.isfinite(dof.velocity_upper) and dof.velocity_lower == -dof.velocity_upper:
        out.append(f"    max_joint_velocity: {exact(dof.velocity_upper * scale)}")
    if math.isfinite(dof.force_upper) and dof.force_lower == -dof.force_upper:
        out.append(f"    max_joint_effort: {exact(dof.force_upper)}")
    return out


def _mass(body: Body | None) -> list[str]:
    if body is None:
        mass, com, moment = 0.0, np.zeros(3), np.zeros((3, 3))
    else:
        mass, com, moment = body.inertia.mass, body.inertia.com, body.inertia.moment
    return [f"    mass: {exact(mass)}", f"    center_of_mass: {_vec(com)}",
            f"    inertia: {_vec(moment)}"]


def _elements(body: Body | None, devices: list[Device], folder: str) -> list[str]:
    """The link's ``elements``: Visual and Collision groups, then its devices."""
    if body is None:
        return []
    groups = []
    for role, tag in (("visual", "Visual"), ("collision", "Collision")):
        nodes = [line for shape in body.shapes if (shape.role == "collision") == (role == "collision")
                 for line in _shape(shape, folder)]
        if nodes:
            groups += [f"      - type: {tag}", "        elements:",
                       *("          " + line for line in nodes)]
    for device in devices:
        groups += ["      " + line for line in _device(device)]
    return ["    elements:", *groups] if groups else []


#: Device keys written from the device itself, not copied from what the reader kept.
_OWN_KEYS = frozenset(["type", "name", "id", "translation", "rotation", "scale"])


def _device(device: Device) -> list[str]:
    """A device node: type, name, id, pose, then the keys the reader kept, quoted."""
    info = device.attrs.get("info")
    kept = info if isinstance(info, dict) else {}
    out = [f"- type: {_text(str(device.attrs.get('type', device.kind)))}",
           f"  name: {_text(device.name)}"]
    if isinstance(number := device.attrs.get("id"), int) and number >= 0:
        out.append(f"  id: {device.attrs['id']}")
    pose = device.transform.copy()
    pose[:3, :3] = Rotation.from_matrix(pose[:3, :3]).as_matrix()  # scale dropped (a loss)
    out += _placement(pose, "  ")
    out += [f"  {_text(str(key))}: {_flow(value)}" for key, value in kept.items()
            if key not in _OWN_KEYS]
    return out


def _flow(value: object) -> str:
    """Plain data kept by the reader (str / list / dict) as quoted YAML flow text
    (Choreonoid ignores quoting, so every scalar can be quoted)."""
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{_text(str(k))}: {_flow(v)}" for k, v in value.items()) + " }"
    if isinstance(value, list):
        return "[ " + ", ".join(_flow(v) for v in value) + " ]"
    return _text("" if value is None else str(value))


def _shape(shape: Shape, folder: str) -> list[str]:
    """One or more element nodes (lines relative to the list's indent)."""
    p = shape.params
    kind = shape.kind
    pose = shape.transform
    if kind in ("cylinder", "capsule", "cone"):
        pose = pose @ _Z_TO_Y
    if kind == "box":
        geometry = f"{{ type: Box, size: {_vec(p['size'])} }}"
    elif kind == "sphere":
        geometry = f"{{ type: Sphere, radius: {exact(p['radius'])} }}"
    elif kind in ("cylinder", "capsule", "cone"):
        geometry = (f"{{ type: {kind.capitalize()}, radius: {exact(p['radius'])}, "
                    f"height: {exact(p['height'])} }}")
    elif kind == "multi_sphere":
        out = []
        for radius, position in p["spheres"]:
            at = np.eye(4)
            at[:3, 3] = position
            out += _node(pose @ at, f"{{ type: Sphere, radius: {exact(radius)} }}")
        return out
    elif kind == "mesh" and mesh_file(p, folder) is not None:
        node = ["- type: Resource", f"  uri: {_text(mesh_file(p, folder) or '')}"]
        node += _placement(pose, "  ")
        scale = np.asarray(p.get("scale", np.ones(3)), dtype=float).reshape(3)
        if not np.allclose(scale, 1.0, rtol=0.0, atol=0.0):
            node.append(f"  scale: {_vec(scale)}")
        return node
    else:
        return []
    return _node(pose, geometry)


def _node(pose: Array, geometry: str) -> list[str]:
    return ["- type: Shape", *_placement(pose, "  "), f"  geometry: {geometry}"]

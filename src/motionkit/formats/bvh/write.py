"""BVH writing from any Skeleton and the joint values that pose it.

One BVH joint per body, in depth-first order (``specs/character-bridges.md`` §3.7). A
body whose joint only rotates about the principal axes, with no rest rotation and no
child frame (every skeleton read from BVH, most hinges of a robot), gets one channel per
coordinate, written from the coordinates themselves: exact, so read → write → read gives
the same numbers. By default (``hinge_channels=3``) every joint then has 0 or 3 rotation
channels, one about each axis, as Blender's importer demands (it refuses 1 or 2): a hinge
gets its angle in its axis's channel and zeros in the two others (a joint whose axes
repeat one is written from forward kinematics); ``hinge_channels=1`` keeps one channel
per coordinate. Any other body gets three rotation channels in ``order`` holding its
local rotation from forward kinematics (rest rotations baked in); a body whose child frame
is offset gets an extra joint ``<name>__joint`` at its joint frame. The root has six
channels (position, then rotation). Joints that translate (prismatic, screw, planar, inner
free joints) have no BVH equivalent and are refused by the registry (``losses``) unless
lossy; then their translation is left out.
"""

from __future__ import annotations

import math
import os
import re
import warnings
from dataclasses import dataclass, field
from typing import cast

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..._io import atomic_write
from ...errors import ConversionError
from ...model import Motion, Skeleton
from ...spatial import quaternion
from ..loss import Holds, tracks, written_rate
from ..shared.textcolumns import Fixed, exact, shortest, write_rows
from ._axes import AXES, RADIANS, invert, rate_of, to_file, unit_scale

Array = NDArray[np.float64]

#: Joint types whose motion is a translation (their translation is what BVH cannot hold).
TRANSLATING = ("prismatic", "screw", "translational", "translational2d", "planar", "free")
_ROTATING = ("weld", "revolute", "universal", "euler")

#: A root pose, the joint values and (derived) local rotations, at a fixed rate from 0.
HOLDS = Holds(tracks=tracks(root="pose", joints="value", joint_rotations="quaternion"),
              terrain=False, stamps=False, start=False, frame_numbers=False,
              position_only=False, one_timeline=True, attrs=False, meta=frozenset(),
              namespace="bvh")


def holds(unit: str | float = "cm", up: str = "y", order: str = "zxy",
          precision: int | None = None, hinge_channels: int = 3) -> Holds:
    """:data:`HOLDS`, once the writer's options are known to be good (a ConversionError
    naming a bad one comes before any loss is weighed)."""
    try:
        unit_scale(unit)
        to_file(up)
    except ValueError as exc:
        raise ConversionError(str(exc)) from None
    if sorted(str(order).lower()) != ["x", "y", "z"]:
        raise ConversionError(f"order must be a permutation of xyz, got {order!r}")
    if precision is not None and (isinstance(precision, bool) or not isinstance(precision, int)
                                  or not 0 <= precision <= 17):
        raise ConversionError(f"precision must be a whole number of decimals from 0 to 17, "
                              f"not {precision!r}")
    if hinge_channels not in (1, 3) or isinstance(hinge_channels, bool):
        raise ConversionError(f"hinge_channels must be 3 (every joint 0 or 3 rotation channels, "
                              f"as Blender reads) or 1 (one per coordinate), not {hinge_channels!r}")
    return HOLDS


@dataclass
class _Node:
    """One BVH joint to write: where it hangs and where its channel values come from."""

    name: str
    parent: int  # node index, -1 for the root
    body: int  # skeleton body whose frame this joint is
    offset: Array
    #: direct channels: (coordinate column, model axis, sign); None: rotation from FK
    direct: list[tuple[int, int, float]] | None = None
    child_frame: bool = False  # the joint frame of a body with an offset child frame
    zeros: str = ""  # file axes of the zero rotation channels after the direct ones
    end_sites: list[Array] = field(default_factory=list)


def losses(obj: Motion, **_: object) -> list[str]:
    """What BVH cannot hold that only this writer sees: joints that translate, a second
    tree, a skeleton without joint values, joint rotations without a skeleton."""
    lost = []
    root = obj.tracks.get("root")
    if root is not None and root.frames == 0:
        raise ConversionError("a BVH motion needs at least one frame")
    if root is not None and root.labels:
        lost.append("the labels of track 'root'")
    skeleton = obj.skeleton
    if skeleton is None:
        if "joint_rotations" in obj.tracks or "joints" in obj.tracks:
            name = "joint_rotations" if "joint_rotations" in obj.tracks else "joints"
            lost.append(f"track {name!r} (no skeleton gives the joints their offsets: "
                        "character=... or model=...)")
        return lost
    if not _has_joint_values(skeleton, obj) and _posed_by_joints(skeleton):
        lost.append(f"the skeleton {skeleton.name!r} (no joint values to pose it)")
        if "joint_rotations" in obj.tracks:
            lost.append("track 'joint_rotations' (not rotations of this skeleton's joints)")
        return lost
    roots = [b.name for b in skeleton.bodies if b.parent < 0]
    if len(roots) > 1:
        more = "…" if len(roots) > 4 else ""
        lost.append(f"the bodies from {', '.join(map(repr, roots[1:4]))}{more} on (a second "
                    "tree: BVH holds one root)")
    moving = [f"{b.joint.name!r} ({b.joint.type})" for i, b in enumerate(skeleton.bodies)
              if b.joint.type in TRANSLATING and b.parent >= 0 and not _bvh_translation(skeleton, i)]
    if moving:
        lost.append(f"the translation of joint(s) {', '.join(moving)} (BVH joints only rotate)")
    return lost


def _has_joint_values(skeleton: Skeleton, motion: Motion) -> bool:
    """True when the motion poses the skeleton: a ``joints`` track, or joint rotations the
    skeleton's character maps to its DOFs (as forward kinematics takes them)."""
    from ...kinematics.motion import joints_from_rotations

    return "joints" in motion.tracks or joints_from_rotations(skeleton, motion) is not None


def _posed_by_joints(skeleton: Skeleton) -> bool:
    """True when a body other than the root has coordinates (a skeleton that needs a
    ``joints`` track; without one it is dropped, the loss named by :func:`losses`)."""
    return any(body.joint.dof_count for body in skeleton.bodies if body.parent >= 0)


def describe(obj: Motion) -> list[str]:
    """The BVH layout facts ``info`` shows."""
    info = obj.meta.get("bvh")
    if not isinstance(info, dict):
        return []
    rate = "snapped to a whole rate" if info.get("rate_snapped") else "not a whole rate"
    return [f"BVH: frame time {info.get('frame_time')} ({rate}), read as unit "
            f"{info.get('unit')} with {info.get('up')} up"]


def write(path: str | os.PathLike[str], obj: Motion, *, unit: str | float = "cm",
          up: str = "y", order: str = "zxy", precision: int | None = None,
          hinge_channels: int = 3) -> None:
    """Write a BVH file in ``unit`` with ``up`` as the up axis; ``order``: the rotation
    channel order (file axes, ``zxy`` = Zrotation Xrotation Yrotation) of joints written
    from forward kinematics; ``precision``: fixed decimals
    (default: every digit, so the numbers read back exactly); ``hinge_channels``: 3 pads
    every joint to 0 or 3 rotation channels (Blender), 1 writes one per coordinate."""
    scale, file_axes = unit_scale(unit), to_file(up)
    if sorted(order.lower()) != ["x", "y", "z"]:
        raise ValueError(f"order must be a permutation of xyz, got {order!r}")
    order = order.lower()
    # the registry makes sure there is one; pose tracks hold floats (float32 from PARC)
    root_pose = cast("NDArray[np.floating]", obj.tracks["root"].data)
    timeline = obj.tracks["root"].timeline
    frames = timeline.count
    skeleton = obj.skeleton
    if skeleton is None or (not _has_joint_values(skeleton, obj) and _posed_by_joints(skeleton)):
        skeleton = Skeleton(str(obj.meta.get("name") or "root"), [])
    q = _coordinates(skeleton, obj) if skeleton.bodies else np.zeros((frames, 0))
    nodes = _layout(skeleton, q, file_axes)
    if hinge_channels != 1:
        _pad(nodes, file_axes, order)
    columns, header = _channels(nodes, skeleton, q, root_pose, frames, scale, file_axes, order)
    rate = written_rate(timeline)
    frame_time = _frame_time(obj, rate)
    with atomic_write(path, "w") as handle:
        handle.write(_hierarchy(nodes, header, scale, file_axes, skeleton))
        handle.write(f"MOTION\nFrames: {frames}\nFrame Time: {frame_time}\n")
        number = shortest if precision is None else Fixed(precision)
        write_rows(handle, [(column, number) for column in columns], " ", frames)


def _bvh_translation(skeleton: Skeleton, index: int) -> bool:
    """True for the ``<name>__translation`` body the BVH reader makes for position channels
    (written back as that joint's position channels)."""
    body = skeleton.bodies[index]
    if body.joint.type != "translational" or not body.name.endswith("__translation"):
        return False
    kids = np.flatnonzero(skeleton.parents == index)
    return (len(kids) == 1 and skeleton.bodies[kids[0]].name + "__translation" == body.name
            and np.array_equal(body.joint.parent_to_joint[:3, :3], np.eye(3))
            and np.array_equal(body.joint.child_to_joint, np.eye(4))
            and np.array_equal(skeleton.bodies[kids[0]].joint.parent_to_joint, np.eye(4)))


def _direct(skeleton: Skeleton, index: int) -> list[tuple[int, int, float]] | None:
    """(column, model axis, sign) per coordinate of a joint that rotates about principal
    axes only, with no rest rotation and no child frame; None otherwise."""
    joint = skeleton.bodies[index].joint
    if joint.type not in _ROTATING or not np.array_equal(joint.child_to_joint, np.eye(4)) \
            or not np.array_equal(joint.parent_to_joint[:3, :3], np.eye(3)):
        return None
    start = joint.dof_offset
    if joint.type == "euler":
        return [(start + k, AXES.index(c), 1.0) for k, c in enumerate(joint.axis_order)]
    out = []
    for k, axis in enumerate(joint.axes[:joint.dof_count]):
        nonzero = np.flatnonzero(axis)
        if len(nonzero) != 1:
            return None
        out.append((start + k, int(nonzero[0]), float(np.sign(axis[nonzero[0]]))))
    return out


def _layout(skeleton: Skeleton, q: Array, file_axes: tuple[tuple[int, float], ...]) -> list[_Node]:
    """The BVH joints of the first tree, depth first (a translation body the BVH reader
    made becomes the position channels of its child)."""
    bodies = skeleton.bodies
    moving = {index: tuple(int(k) for k in np.flatnonzero(np.any(q[:, body.joint.dof_slice], axis=0)))
              for index, body in enumerate(bodies) if body.joint.type == "translational"}
    if not bodies:
        return []
    kids: dict[int, list[int]] = {}
    for index, body in enumerate(bodies):
        kids.setdefault(body.parent, []).append(index)
    nodes: list[_Node] = []
    used: set[str] = set()
    stack = [(kids[-1][0], -1)]
    while stack:
        index, parent = stack.pop()
        body = bodies[index]
        joint = body.joint
        if parent >= 0 and _bvh_translation(skeleton, index):
            child = kids[index][0]
            node = _Node(_name(bodies[child].name, used), parent, child,
                         joint.parent_to_joint[:3, 3].copy(), _direct(skeleton, child))
            moves = _position_axes(bodies[child].attrs, node.offset, moving.get(index, ()),
                                   file_axes)
            node.direct = None if node.direct is None else \
                [(joint.dof_offset + k, k, 0.0) for k in moves] + node.direct
            nodes.append(node)
            stack.extend((grandchild, len(nodes) - 1) for grandchild in reversed(kids.get(child, [])))
            _end_sites(node, bodies[child].attrs, kids.get(child))
            continue
        offset = joint.parent_to_joint[:3, 3].copy()
        if parent < 0 and "bvh_channels" not in body.attrs:
            offset = np.zeros(3)  # the root's position channels carry its place
        if parent >= 0 and np.any(joint.child_to_joint[:3, 3]):
            nodes.append(_Node(_name(body.name + "__joint", used), parent, index, offset,
                               child_frame=True))
            parent = len(nodes) - 1
            inverse = np.linalg.inv(joint.child_to_joint)
            offset = inverse[:3, 3]
            direct = None
        else:
            direct = _direct(skeleton, index)
        node = _Node(_name(body.name, used), parent, index, offset, direct)
        nodes.append(node)
        _end_sites(node, body.attrs, kids.get(index))
        stack.extend((child, len(nodes) - 1) for child in reversed(kids.get(index, [])))
    return nodes


def _pad(nodes: list[_Node], file_axes: tuple[tuple[int, float], ...], order: str) -> None:
    """Give every direct joint 0 or 3 rotation channels about distinct axes: the missing
    axes (in ``order``) as zero channels; a joint whose axes repeat goes to FK."""
    for node in nodes:
        if node.direct is None:
            continue
        used = [AXES[file_axes[axis][0]] for _, axis, sign in node.direct if sign != 0.0]
        if len(set(used)) != len(used):
            node.direct = None
        elif used:
            node.zeros = "".join(c for c in order if c not in used)


def _position_axes(attrs: dict[str, object], offset: Array, moving: tuple[int, ...],
                   file_axes: tuple[tuple[int, float], ...]) -> list[int]:
    """The model axes that get a position channel: those the source file had (when the
    offset is zero there, as the reader leaves it), else every axis the joint moves along
    or whose offset is zero; those that move are always among them."""
    model_of = {file_axis: axis for axis, (file_axis, _) in enumerate(file_axes)}
    names = attrs.get("bvh_channels")
    before = [model_of["XYZ".index(name[0])] for name in names if name.endswith("position")] \
        if isinstance(names, list) and all(isinstance(n, str) and n[:1] in "XYZ" for n in names) else []
    if before and all(offset[k] == 0.0 for k in before):
        return before + [k for k in moving if k not in before]
    return sorted({k for k in range(3) if offset[k] == 0.0} | set(moving),
                  key=lambda k: file_axes[k][0])


def _end_sites(node: _Node, attrs: dict[str, object], children: list[int] | None) -> None:
    sites = attrs.get("end_sites")
    if isinstance(sites, list) and sites:
        node.end_sites = [np.asarray(site, dtype=float).reshape(3) for site in sites]
    elif not children and "bvh_channels" not in attrs:  # read from BVH: as the file was
        node.end_sites = [np.zeros(3)]


def _name(name: str, used: set[str]) -> str:
    """A one-token joint name (whitespace and braces become '_'), unique in the file."""
    clean = re.sub(r"[\s{}]", "_", name) or "joint"
    unique, count = clean, 1
    while unique in used:
        count += 1
        unique = f"{clean}_{count}"
    used.add(unique)
    return unique


def _coordinates(skeleton: Skeleton, motion: Motion) -> Array:
    from ...kinematics.motion import coordinates

    q, _ = coordinates(skeleton, motion)
    return q


def _channels(nodes: list[_Node], skeleton: Skeleton, q: Array, root_pose: NDArray[np.floating],
              frames: int, scale: float, file_axes: tuple[tuple[int, float], ...],
              order: str) -> tuple[list[Array], list[list[str]]]:
    """Every channel's numbers (file units, degrees) and each joint's channel names."""
    columns: list[Array] = []
    header: list[list[str]] = []
    world: Array | None = None
    if nodes and nodes[0].direct is not None and not _same_rotation(
            _direct_quaternion(nodes[0].direct, q), root_pose[:, 3:]):
        nodes[0].direct = None
    if any(node.direct is None for node in nodes[1:]) or (nodes and nodes[0].direct is None):
        world = _world(skeleton, q, root_pose)
    names = ["Xposition", "Yposition", "Zposition"]  # the root's position, then rotation
    position = np.zeros((frames, 3))
    for axis in range(3):
        file_axis, sign = file_axes[axis]
        position[:, file_axis] = invert(sign * root_pose[:, axis], scale)
    columns.extend(position.T)
    if not nodes:
        quat = root_pose[:, 3:]
        names += [f"{c.upper()}rotation" for c in order]
        columns.extend(_euler(quat, order, file_axes))
        return columns, [names]
    for index, node in enumerate(nodes):
        own = names if index == 0 else []
        if node.direct is not None:
            for column, axis, sign in node.direct:
                file_axis, file_sign = file_axes[axis]
                if sign == 0.0:  # a position channel of a BVH translation body: it
                    own.append(f"{'XYZ'[file_axis]}position")  # replaces the offset
                    value = q[:, column] + node.offset[axis] if node.offset[axis] else q[:, column]
                    columns.append(invert(file_sign * value, scale))
                else:
                    own.append(f"{'XYZ'[file_axis]}rotation")
                    columns.append(invert(file_sign * sign * q[:, column], RADIANS))
            own += [f"{c.upper()}rotation" for c in node.zeros]
            columns.extend(np.zeros(frames) for _ in node.zeros)
        else:
            assert world is not None
            mine = _node_quaternion(nodes, index, skeleton, world)
            if node.parent >= 0:
                mine = quaternion.multiply(
                    quaternion.conjugate(_node_quaternion(nodes, node.parent, skeleton, world)),
                    mine)
            own += [f"{c.upper()}rotation" for c in order]
            columns.extend(_euler(mine, order, file_axes))
        header.append(own)
    return columns, header


def _node_quaternion(nodes: list[_Node], index: int, skeleton: Skeleton, world: Array) -> Array:
    node = nodes[index]
    quat = world[:, node.body, 3:]
    if node.child_frame:
        joint_rot = quaternion.from_matrix(skeleton.bodies[node.body].joint.child_to_joint[:3, :3])
        quat = quaternion.multiply(quat, joint_rot)
    return quat


def _direct_quaternion(direct: list[tuple[int, int, float]], q: Array) -> Array:
    quat = np.zeros((len(q), 4))
    quat[:, 3] = 1.0
    for column, axis, sign in direct:
        if sign == 0.0:
            continue
        vector = np.zeros(3)
        vector[axis] = sign
        quat = quaternion.multiply(quat, quaternion.from_axis_angle(vector, q[:, column]))
    return quat


def _same_rotation(a: Array, b: ArrayLike) -> bool:
    """True when every frame's rotations differ by less than about 1e-9 rad."""
    between = quaternion.multiply(quaternion.conjugate(quaternion.normalize(a)),
                                  quaternion.normalize(b))
    return bool(np.all(np.linalg.norm(between[:, :3], axis=1) < 5e-10))


def _world(skeleton: Skeleton, q: Array, root_pose: ArrayLike) -> Array:
    """World poses of every body, with joint translations BVH cannot hold left out."""
    from ...kinematics import forward

    frozen = q.copy()
    for index, body in enumerate(skeleton.bodies):
        joint = body.joint
        if body.parent < 0 or joint.type not in TRANSLATING or _bvh_translation(skeleton, index):
            continue
        if joint.type == "free":
            frozen[:, joint.dof_offset + 3:joint.dof_offset + 6] = 0.0
        elif joint.type == "planar":
            frozen[:, joint.dof_offset:joint.dof_offset + 2] = 0.0
        else:
            frozen[:, joint.dof_slice] = 0.0
    return forward(skeleton, frozen, root_pose)


def _euler(quat: NDArray[np.floating], order: str,
           file_axes: tuple[tuple[int, float], ...]) -> list[Array]:
    """Intrinsic Euler angles in degrees about the file's axes in ``order`` (file letters)
    of model-frame quaternions."""
    from scipy.spatial.transform import Rotation

    turned = np.empty_like(quat)
    for axis in range(3):
        file_axis, sign = file_axes[axis]
        turned[:, file_axis] = sign * quat[:, axis]
    turned[:, 3] = quat[:, 3]
    with warnings.catch_warnings():  # at a middle angle of ±90° SciPy picks one of the
        warnings.filterwarnings("ignore", "Gimbal lock")  # triples: the same rotation
        angles = Rotation.from_quat(quaternion.normalize(turned)).as_euler(order.upper())
    return list(np.degrees(angles).T)


def _frame_time(motion: Motion, rate: float | None) -> str:
    """The source's frame time text when it gives this rate back, else repr(1 / rate)."""
    if rate is None or not rate > 0:
        raise ValueError("a BVH file needs a fixed frame rate")
    info = motion.meta.get("bvh")
    text = info.get("frame_time") if isinstance(info, dict) else None
    if isinstance(text, str):
        try:
            if rate_of(float(text))[0] == rate:
                return text
        except ValueError:
            pass
    return repr(1.0 / rate)


def _hierarchy(nodes: list[_Node], header: list[list[str]], scale: float,
               file_axes: tuple[tuple[int, float], ...], skeleton: Skeleton) -> str:
    """The HIERARCHY text, one line per statement, tabs for nesting."""
    lines = ["HIERARCHY"]
    if not nodes:
        name = _name(skeleton.name, set())
        lines += [f"ROOT {name}", "{", "\tOFFSET 0 0 0",
                  f"\tCHANNELS {len(header[0])} {' '.join(header[0])}",
                  "\tEnd Site", "\t{", "\t\tOFFSET 0 0 0", "\t}", "}"]
        return "\n".join(lines) + "\n"
    depth: list[int] = []
    open_nodes: list[int] = []
    for index, node in enumerate(nodes):
        while open_nodes and open_nodes[-1] != node.parent:
            _close(lines, nodes, open_nodes.pop(), len(open_nodes), scale, file_axes)
        level = len(open_nodes)
        depth.append(level)
        pad = "\t" * level
        lines.append(f"{pad}{'ROOT' if index == 0 else 'JOINT'} {node.name}")
        lines.append(f"{pad}{{")
        lines.append(f"{pad}\tOFFSET {_vector(node.offset, scale, file_axes)}")
        lines.append(f"{pad}\tCHANNELS {len(header[index])} {' '.join(header[index])}".rstrip())
        open_nodes.append(index)
    while open_nodes:
        _close(lines, nodes, open_nodes.pop(), len(open_nodes), scale, file_axes)
    return "\n".join(lines) + "\n"


def _close(lines: list[str], nodes: list[_Node], index: int, level: int, scale: float,
           file_axes: tuple[tuple[int, float], ...]) -> None:
    pad = "\t" * level
    for site in nodes[index].end_sites:
        lines += [f"{pad}\tEnd Site", f"{pad}\t{{",
                  f"{pad}\t\tOFFSET {_vector(site, scale, file_axes)}", f"{pad}\t}}"]
    lines.append(f"{pad}}}")


def _vector(model: Array, scale: float, file_axes: tuple[tuple[int, float], ...]) -> str:
    """An offset in file units, each number as :func:`_offset_text` writes it."""
    out = np.zeros(3)
    for axis in range(3):
        file_axis, sign = file_axes[axis]
        out[file_axis] = sign * model[axis]
    return " ".join(_offset_text(float(v), scale) for v in out)


def _offset_text(metres: float, scale: float) -> str:
    """The shortest text that reads back to ``metres`` bit for bit through the reader's
    arithmetic (``float(text) * scale``): ``17.6``, not ``17.599999999999998``, wherever
    both read back alike, and every digit a number read from BVH needs. Where no file
    number reads back exactly (a model from elsewhere), the nearest one's 17 digits;
    zero is ``0`` (never ``-0.0``)."""
    if metres == 0.0:
        return "0"
    value = float(invert(np.array([metres]), scale)[0])
    # every file number that reads back exactly: a run of at most a few neighbours
    below, above = math.nextafter(value, -math.inf), math.nextafter(value, math.inf)
    exact_ones = [x for x in (value, below, above, math.nextafter(below, -math.inf),
                              math.nextafter(above, math.inf)) if x * scale == metres]
    for digits in range(1, 18):  # 17 digits name any float
        for x in exact_ones:
            shorter = float(f"{x:.{digits}g}")
            if shorter * scale == metres:
                return exact(shorter)
    return exact(value)

"""BeyondMimic (whole_body_tracking) and mjlab motion ``.npz``.

Keys as both ``csv_to_npz`` scripts save them: ``fps`` (shape (1,)), ``joint_pos`` and
``joint_vel`` (N, J), ``body_pos_w``, ``body_quat_w`` (**w x y z**), ``body_lin_vel_w`` and
``body_ang_vel_w`` (N, B, ·), world frame, Z-up, metres. Their files name no joint and no
body: the order is the simulator's — Isaac Lab/PhysX lists the links breadth-first with
fixed links merged (30 G1 bodies), MuJoCo depth-first with every body (33) — and a file
read in the wrong order tracks the wrong bodies without any error (mjlab PR#781). So a
file without ``body_names``/``joint_names`` is refused unless the robot's MJCF
(``character=``) and ``order=mujoco|isaac`` are given; the counts must then fit that
order. Files motionkit writes always carry ``joint_names`` and ``body_names`` (which both
loaders ignore) and the conventions in ``motionkit_conventions``.

Model mapping: ``root`` (body 0), ``joints`` (joint_pos, named), ``links`` (body poses,
named), ``joint_velocities``, ``link_linear_velocities``, ``link_angular_velocities``; the
skeleton with ``character``. Writing: joints in the chosen order, bodies from ``links`` or
by FK through ``character``; velocities kept where the motion has them for the same names,
else central differences (one-sided at the ends; ``torch.gradient`` as the scripts use for
the root and joints) and world angular velocity rotvec(q[t+1]·q[t−1]⁻¹)/(2·dt). The
scripts' resampling (30 → 50 fps by lerp and slerp) is ``ops.resample`` before writing
(``convert --rate 50``): it gives the same frames, except that when the last input instant
falls exactly on an output frame the scripts leave that frame out.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ...errors import ConversionError, FormatError
from ...kinematics import link_poses
from ...model import Motion, Timeline, Track
from ...model.character import Character, CharacterSource
from ...spatial import quaternion as quat
from ..loss import Holds, root_labels, tracks, written_rate
from ..shared.mjcf.character import load_character
from . import _derive, _npz

Array = NDArray[np.float64]
KEYS = ("fps", "joint_pos", "joint_vel", "body_pos_w", "body_quat_w", "body_lin_vel_w",
        "body_ang_vel_w")
ORDERS = ("mujoco", "isaac")
HELD = tracks(root="pose", joints="value", links="pose", joint_velocities="value",
              link_linear_velocities="vector3", link_angular_velocities="vector3")


def holds(character: CharacterSource | None = None, order: str = "mujoco") -> Holds:
    """Root, named joints and bodies and their velocities; the skeleton only by reference."""
    return Holds(tracks=HELD, skeleton=character is not None, terrain=False, stamps=False,
                 start=False, one_timeline=True, ns_stamps=False, frame_numbers=False,
                 position_only=False, meta=frozenset(), namespace="beyondmimic")


sniff = _npz.sniff


def accepts(path: str) -> bool:
    """An ``.npz`` with ``joint_pos`` and ``body_quat_w``."""
    return {"joint_pos", "body_quat_w"} <= _npz.members(path)


def orders(char: Character, order: str) -> tuple[list[str], list[str]]:
    """Body and joint names of ``char`` in a simulator's order: ``mujoco`` (depth-first,
    every body) or ``isaac`` (breadth-first by depth, ties in file order, bodies without a
    joint merged into their parent, as PhysX does)."""
    if order not in ORDERS:
        raise ConversionError(f"order must be mujoco or isaac, not {order!r}")
    moving = [i for i, kind in enumerate(char.kinds) if kind in ("root", "hinge")]
    if any(kind == "spherical" for kind in char.kinds):
        raise ConversionError(f"character {char.name!r} has three-hinge bodies; BeyondMimic "
                              "robots have one hinge per body")
    if order == "mujoco":
        bodies = list(char.body_names)
        return bodies, [char.joint_names[i] for i in moving if char.kinds[i] == "hinge"]
    depth = [0] * char.body_count
    for i in range(1, char.body_count):
        depth[i] = depth[int(char.parents[i])] + (1 if char.kinds[i] != "fixed" else 0)
    ranked = sorted(moving, key=lambda i: depth[i])  # stable: file order within a depth
    bodies = [char.body_names[i] for i in ranked]
    return bodies, [char.joint_names[i] for i in ranked if char.kinds[i] == "hinge"]


# ============================================================================ reading


def read(path: str | os.PathLike[str], character: CharacterSource | None = None,
         order: str | None = None) -> Motion:
    """Read a BeyondMimic/mjlab motion. Without name arrays in the file, ``character`` (the
    robot's MJCF) and ``order`` (``mujoco`` or ``isaac``) are required."""
    arrays = _npz.load(path)
    missing = [key for key in KEYS if key not in arrays]
    if missing:
        raise FormatError(f"not a BeyondMimic/mjlab motion: no {', '.join(missing)}", path)
    rate = _npz.rate(arrays, "fps", path)
    joints = _npz.numbers(arrays, "joint_pos", 2, path)
    frames, width = joints.shape
    positions = _npz.numbers(arrays, "body_pos_w", 3, path)
    count = positions.shape[1]
    if count == 0:
        raise FormatError("no bodies: the root pose is body 0", path)
    shapes = {"joint_vel": (frames, width), "body_pos_w": (frames, count, 3),
              "body_quat_w": (frames, count, 4), "body_lin_vel_w": (frames, count, 3),
              "body_ang_vel_w": (frames, count, 3)}
    got = {key: _npz.numbers(arrays, key, len(shape), path) for key, shape in shapes.items()}
    for key, shape in shapes.items():
        if got[key].shape != shape:
            raise FormatError(f"{key} must be {shape}, got {got[key].shape}", path)
    char = load_character(character) if character is not None else None
    body_names, joint_names, source = _names(arrays, char, order, count, width, path)
    rotations = quat.wxyz_to_xyzw(got["body_quat_w"])
    timeline = Timeline.uniform(rate, frames)
    motion = Motion(meta={"name": Path(path).stem, "beyondmimic": {
        "names": source, "order": order, "fps_shape": list(arrays["fps"].shape)}})
    motion.add(Track("root", "pose", np.concatenate([positions[:, 0], rotations[:, 0]], 1),
                     timeline))
    motion.add(Track("joints", "value", joints, timeline, joint_names))
    motion.add(Track("links", "pose", np.concatenate([positions, rotations], 2), timeline,
                     body_names))
    motion.add(Track("joint_velocities", "value", got["joint_vel"], timeline, joint_names))
    motion.add(Track("link_linear_velocities", "vector3", got["body_lin_vel_w"], timeline,
                     body_names, {"frame": "world"}))
    motion.add(Track("link_angular_velocities", "vector3", got["body_ang_vel_w"], timeline,
                     body_names, {"frame": "world"}))
    if char is not None:
        motion.skeleton = char.to_skeleton()
    return motion


def _names(arrays: dict[str, NDArray[np.generic]], char: Character | None, order: str | None,
           bodies: int, joints: int, path: Any) -> tuple[list[str], list[str], str]:
    if "body_names" in arrays and "joint_names" in arrays:
        return (_npz.names(arrays, "body_names", bodies, path),
                _npz.names(arrays, "joint_names", joints, path), "stored")
    if char is None or order is None:
        raise FormatError("the file names no bodies or joints, so their order is ambiguous "
                          "(Isaac Lab lists them breadth-first, MuJoCo depth-first): give the "
                          "robot's MJCF (character=... / --character) and order=mujoco or "
                          "order=isaac (-O order=...)", path)
    try:
        body_names, joint_names = orders(char, order)
    except ConversionError as exc:
        raise FormatError(str(exc), path) from None
    if (len(body_names), len(joint_names)) != (bodies, joints):
        other = [o for o in ORDERS if o != order and tuple(map(len, orders(char, o)))
                 == (bodies, joints)]
        raise FormatError(f"the file holds {bodies} bodies and {joints} joints; the {order} "
                          f"order of {char.name!r} has {len(body_names)} and "
                          f"{len(joint_names)}" + (f" (the {other[0]} order fits)" if other
                                                   else ""), path)
    return body_names, joint_names, f"{order} order of {char.name}"


def describe(obj: object) -> list[str]:
    """Where the names came from (stored, or assumed from a robot and an order)."""
    meta = obj.meta.get("beyondmimic") if isinstance(obj, Motion) else None
    if not isinstance(meta, dict):
        return []
    source = meta["names"]
    return ["conventions: quaternions w x y z in the file, world frame, Z-up, metres",
            "body and joint names: " + ("stored in the file" if source == "stored"
                                        else f"assumed from the {source} (not stored)")]


# ============================================================================ writing


def losses(obj: Motion, **_: object) -> list[str]:
    """The root's labels (the file names bodies and joints, never the root part)."""
    return root_labels(obj)



def write(path: str | os.PathLike[str], obj: Motion, character: CharacterSource | None = None,
          order: str = "mujoco") -> None:
    """Write a BeyondMimic/mjlab motion, names always included. Joints (and, by FK through
    ``character``, bodies) in ``order``; a ``links`` track keeps its own body order."""
    arrays = encode(obj, character, order)
    _npz.save(path, arrays, {
        "format": "beyondmimic", "quaternion_order": "wxyz", "up_axis": "z", "units": "m, rad",
        "frame": "world", "fps": float(arrays["fps"][0]), "order": order,
        "body_names": arrays["body_names"].tolist(), "joint_names": arrays["joint_names"].tolist()})


def encode(obj: Motion, character: CharacterSource | None = None,
           order: str = "mujoco") -> dict[str, NDArray[np.generic]]:
    """The arrays of the file for ``obj`` (see :func:`write`)."""
    char = load_character(character) if character is not None else None
    root = obj.tracks["root"]
    timeline = root.timeline
    rate = written_rate(timeline)  # stamps: named by the loss check, their mean rate
    dt = 1.0 / rate
    joints = obj.tracks.get("joints")
    if joints is None or not joints.labels:
        raise ConversionError("BeyondMimic files hold named joint positions: the motion has "
                              "no named 'joints' track")
    values = np.asarray(joints.data, dtype=np.float64).reshape(joints.frames, -1)
    joint_names = list(joints.labels)
    body_order: list[str] | None = None
    if char is not None:
        body_order, joint_names = orders(char, order)
        missing = [name for name in joint_names if name not in joints.labels]
        if missing:
            raise ConversionError(f"'joints' lacks the robot's joints {missing[:4]}")
        values = values[:, [joints.labels.index(name) for name in joint_names]]
    links = obj.tracks.get("links")
    if links is not None and links.labels:
        poses, body_names = np.asarray(links.data, dtype=np.float64), list(links.labels)
        if body_order is not None and set(body_order) <= set(body_names):
            poses = poses[:, [body_names.index(name) for name in body_order]]
            body_names = body_order
    elif char is not None and body_order is not None:
        poses = _fk(char, obj, body_order)
        body_names = body_order
    else:
        raise ConversionError("BeyondMimic files hold every body's pose: give a named 'links' "
                              "track or the robot's MJCF for FK (character=...)")
    stored = [obj.tracks.get(n) for n in ("joint_velocities", "link_linear_velocities",
                                          "link_angular_velocities")]
    if all(t is not None for t in stored) and stored[0] is not None \
            and stored[0].labels == joint_names \
            and all(t is not None and t.labels == body_names for t in stored[1:]):
        joint_vel, lin, ang = (np.asarray(t.data, dtype=np.float64) for t in stored if t)
    else:
        joint_vel = _derive.rate_of_change(values, dt)
        lin = _derive.rate_of_change(poses[..., :3], dt)
        ang = _derive.angular_velocity(poses[..., 3:], dt)
    f4 = np.float32
    fps = np.array([round(rate)] if rate.is_integer() else [rate])
    return {"fps": fps, "joint_pos": values.astype(f4), "joint_vel": joint_vel.astype(f4),
            "body_pos_w": poses[..., :3].astype(f4),
            "body_quat_w": quat.xyzw_to_wxyz(quat.positive_w(poses[..., 3:])).astype(f4),
            "body_lin_vel_w": lin.astype(f4), "body_ang_vel_w": ang.astype(f4),
            "joint_names": np.array(joint_names, dtype=str),
            "body_names": np.array(body_names, dtype=str)}


def _fk(char: Character, obj: Motion, bodies: list[str]) -> Array:
    """World poses of ``bodies`` by FK of the motion's root and named joints through
    ``char`` (its skeleton's coordinates matched by joint name)."""
    skeleton = char.to_skeleton()
    poses = np.asarray(link_poses(skeleton, obj).data, dtype=np.float64)
    names = [body.name for body in skeleton.bodies]
    return poses[:, [names.index(name) for name in bodies]]

"""Isaac Lab AMP motion ``.npz`` (the ``humanoid_amp`` MotionLoader's files).

Keys: ``fps`` (int64 0-d), ``dof_names`` (D,), ``body_names`` (B,), ``dof_positions`` and
``dof_velocities`` (N, D), ``body_positions`` (N, B, 3), ``body_rotations`` (N, B, 4),
``body_linear_velocities`` and ``body_angular_velocities`` (N, B, 3), float32. Conventions
(containers spec §2): world Z-up, metres, radians; rotations **w x y z**; bodies in the
order ``body_names`` lists them (the Isaac Lab humanoid's is MJCF depth-first); each 3-DOF
group (``abdomen_x/y/z``) is the **rotation vector** of the joint's local rotation, not
three Euler angles.

Model mapping: ``root`` (body 0), ``joints`` (dof_positions by dof_names), ``links`` (body
poses, labels = body_names), ``joint_velocities``, ``link_linear_velocities`` and
``link_angular_velocities`` (world frame); with ``character`` (an MJCF whose DOF names are
the file's) also ``joint_rotations`` and the skeleton.

Writing: DOFs from ``joints`` (named) or from ``joint_rotations`` through ``character``;
body arrays from ``links`` (named), else by FK through ``character`` in its depth-first
body order. Velocities kept where the motion has them (an AMP file read back), else
computed as the loader uses them — it only interpolates the stored arrays (linearly, and
slerp for rotations), so each must be the time derivative at its frame: central
differences of the stored DOF values and body positions (one-sided at the ends), and
world angular velocity rotvec(q[t+1]·q[t−1]⁻¹)/(2·dt). The conventions go to the side key
``motionkit_conventions``, which the loader never reads.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ...errors import ConversionError, FormatError
from ...kinematics import character_poses
from ...model import Motion, Timeline, Track
from ...model.character import Character, CharacterSource
from ...spatial import quaternion as quat
from ..loss import Holds, root_labels, tracks, written_rate
from ..shared.mjcf.character import load_character
from . import _derive, _npz

Array = NDArray[np.float64]
KEYS = ("fps", "dof_names", "body_names", "dof_positions", "dof_velocities",
        "body_positions", "body_rotations", "body_linear_velocities", "body_angular_velocities")
VELOCITIES = {"joint_velocities": "dof_velocities",
              "link_linear_velocities": "body_linear_velocities",
              "link_angular_velocities": "body_angular_velocities"}
HELD = tracks(root="pose", joints="value", joint_rotations="quaternion", links="pose",
              joint_velocities="value", link_linear_velocities="vector3",
              link_angular_velocities="vector3")
CONVENTIONS = {"format": "isaaclab-amp", "quaternion_order": "wxyz", "up_axis": "z",
               "units": "m, rad, s", "spherical_dofs": "rotation vector per 3-DOF group",
               "velocities": "world frame; central differences (one-sided at the ends)"}


def holds(character: CharacterSource | None = None) -> Holds:
    """Root, joints, body poses and their velocities; the skeleton only by reference."""
    return Holds(tracks=HELD, skeleton=character is not None, terrain=False, stamps=False,
                 start=False, one_timeline=True, ns_stamps=False, frame_numbers=False,
                 position_only=False, meta=frozenset(), namespace="isaaclab_amp")


sniff = _npz.sniff


def accepts(path: str) -> bool:
    """An ``.npz`` with ``dof_names`` and ``body_rotations``."""
    return {"dof_names", "body_rotations"} <= _npz.members(path)


# ============================================================================ reading


def read(path: str | os.PathLike[str], character: CharacterSource | None = None) -> Motion:
    """Read an AMP motion; ``character`` (MJCF) adds joint rotations and the skeleton."""
    arrays = _npz.load(path)
    missing = [key for key in KEYS if key not in arrays]
    if missing:
        raise FormatError(f"not an Isaac Lab AMP motion: no {', '.join(missing)}", path)
    rate = _npz.rate(arrays, "fps", path)
    dofs = _npz.numbers(arrays, "dof_positions", 2, path)
    frames, width = dofs.shape
    dof_names = _npz.names(arrays, "dof_names", width, path)
    bodies = _npz.checked(arrays, "body_positions", 3, path).shape[1]
    body_names = _npz.names(arrays, "body_names", bodies, path)
    shapes = {"dof_velocities": (frames, width), "body_positions": (frames, bodies, 3),
              "body_rotations": (frames, bodies, 4),
              "body_linear_velocities": (frames, bodies, 3),
              "body_angular_velocities": (frames, bodies, 3)}
    got = {key: _npz.checked(arrays, key, len(shape), path) for key, shape in shapes.items()}
    for key, shape in shapes.items():
        if got[key].shape != shape:
            raise FormatError(f"{key} must be {shape}, got {got[key].shape}", path)
    if bodies == 0:
        raise FormatError("no bodies: the root pose is body 0", path)
    links = np.empty((frames, bodies, 7))  # x y z, then w x y z → x y z w, as float64
    links[..., :3] = got["body_positions"]
    links[..., 3:6] = got["body_rotations"][..., 1:4]
    links[..., 6] = got["body_rotations"][..., 0]
    timeline = Timeline.uniform(rate, frames)
    fps = arrays["fps"]
    motion = Motion(meta={"name": Path(path).stem, "isaaclab_amp": {
        "fps_dtype": str(fps.dtype), "fps_shape": list(fps.shape),
        "dtype": str(arrays["dof_positions"].dtype)}})
    motion.add(Track("root", "pose", links[:, 0].copy(), timeline))
    motion.add(Track("joints", "value", dofs, timeline, dof_names,
                     {"spherical": "rotation vector per 3-DOF group"}))
    motion.add(Track("links", "pose", links, timeline, body_names))
    motion.add(Track("joint_velocities", "value", got["dof_velocities"].astype(np.float64),
                     timeline, dof_names))
    for name in ("link_linear_velocities", "link_angular_velocities"):
        motion.add(Track(name, "vector3", got[VELOCITIES[name]].astype(np.float64), timeline,
                         body_names, {"frame": "world"}))
    if character is not None:
        char = load_character(character)
        motion.add(Track("joint_rotations", "quaternion",
                         char.dofs_to_quats(_by_name(dofs, dof_names, char.dof_names, path)),
                         timeline, char.joint_labels, {"derived_from": "joints"}))
        motion.skeleton = char.to_skeleton()
    return motion


def _by_name(values: Array, names: list[str], wanted: list[str], path: Any) -> Array:
    missing = [name for name in wanted if name not in names]
    if missing:
        raise FormatError(f"the character's DOFs {missing[:5]} are not in dof_names", path)
    return values[..., [names.index(name) for name in wanted]]


def describe(obj: object) -> list[str]:
    """The conventions ``info`` shows (all stated by the file's layout, none assumed)."""
    if not isinstance(obj, Motion) or "isaaclab_amp" not in obj.meta:
        return []
    links = obj.tracks.get("links")
    order = ", ".join((links.labels or [])[:4]) + ", …" if links is not None else "?"
    return ["conventions: quaternions w x y z in the file, Z-up, metres, radians; 3-DOF "
            "groups are rotation vectors",
            f"body order as named in the file: {order}"]


# ============================================================================ writing


def losses(obj: Motion, **_: object) -> list[str]:
    """The root's labels (the file names bodies and joints, never the root part)."""
    return root_labels(obj)



def write(path: str | os.PathLike[str], obj: Motion,
          character: CharacterSource | None = None) -> None:
    """Write an Isaac Lab AMP motion (float32 arrays, int64 ``fps`` when whole)."""
    arrays, names = encode(obj, character)
    _npz.save(path, arrays, {**CONVENTIONS, "fps": float(arrays["fps"]),
                             "body_order": names, "dof_names": arrays["dof_names"].tolist()})


def encode(obj: Motion, character: CharacterSource | None = None
           ) -> tuple[dict[str, NDArray[np.generic]], list[str]]:
    """The arrays of the AMP file for ``obj`` and its body order (see :func:`write`)."""
    char = load_character(character) if character is not None else None
    root = obj.tracks["root"]
    timeline = root.timeline
    rate = written_rate(timeline)  # stamps: named by the loss check, their mean rate
    dt = 1.0 / rate
    dofs, dof_names = _dofs(obj, char)
    links = obj.tracks.get("links")
    if links is not None:
        if not links.labels:
            raise ConversionError("track 'links' has no body names (AMP files name every body)")
        poses, body_names = np.asarray(links.data, dtype=np.float64), list(links.labels)
    elif char is not None:
        rotations = obj.tracks.get("joint_rotations")
        joint_rot = (rotations.data if rotations is not None
                     else char.dofs_to_quats(_by_name(dofs, dof_names, char.dof_names, None)))
        data = np.asarray(root.data, dtype=np.float64)
        pos, rot = character_poses(char, data[:, :3], data[:, 3:7], joint_rot)
        poses, body_names = np.concatenate([pos, rot], axis=-1), list(char.body_names)
    else:
        raise ConversionError("AMP files hold every body's pose: give the motion a 'links' "
                              "track or the character (MJCF) for FK (character=...)")
    stored = {name: obj.tracks[name] for name in VELOCITIES if name in obj.tracks}
    same = (stored.get("joint_velocities") is not None
            and stored["joint_velocities"].labels == dof_names
            and all(stored.get(n) is not None and stored[n].labels == body_names
                    for n in ("link_linear_velocities", "link_angular_velocities")))
    if same:
        velocities = {VELOCITIES[n]: np.asarray(t.data, dtype=np.float64)
                      for n, t in stored.items()}
    else:
        velocities = {"dof_velocities": _derive.rate_of_change(dofs, dt),
                      "body_linear_velocities": _derive.rate_of_change(poses[..., :3], dt),
                      "body_angular_velocities": _derive.angular_velocity(poses[..., 3:], dt)}
    f4 = np.float32
    arrays: dict[str, NDArray[np.generic]] = {
        "fps": np.array(round(rate), dtype=np.int64) if rate.is_integer() else np.array(rate),
        "dof_names": np.array(dof_names, dtype=str), "body_names": np.array(body_names, dtype=str),
        "dof_positions": dofs.astype(f4), "dof_velocities": velocities["dof_velocities"].astype(f4),
        "body_positions": poses[..., :3].astype(f4),
        "body_rotations": quat.xyzw_to_wxyz(quat.positive_w(poses[..., 3:])).astype(f4),
        "body_linear_velocities": velocities["body_linear_velocities"].astype(f4),
        "body_angular_velocities": velocities["body_angular_velocities"].astype(f4)}
    return arrays, body_names


def _dofs(obj: Motion, char: Character | None) -> tuple[Array, list[str]]:
    joints = obj.tracks.get("joints")
    if joints is not None and joints.labels and (
            joints.attrs.get("spherical") == "rotation vector per 3-DOF group" or char is None):
        data = np.asarray(joints.data, dtype=np.float64).reshape(joints.frames, -1)
        if char is None:
            return data, list(joints.labels)
        return _by_name(data, list(joints.labels), char.dof_names, None), char.dof_names
    rotations = obj.tracks.get("joint_rotations")
    if rotations is not None and char is not None:
        return char.quats_to_dofs(rotations.data), char.dof_names
    raise ConversionError("AMP files hold named DOF values (3-DOF groups as rotation "
                          "vectors): give a named 'joints' track from an AMP file, or joint "
                          "rotations and the character (character=...)")

"""GMR robot motion pickles: ``fps``, ``root_pos``, ``root_rot``, ``dof_pos``,
``local_body_pos``, ``link_body_list``.

GMR (General Motion Retargeting) saves the MuJoCo ``qpos`` of a robot per frame:
``root_pos`` = qpos[0:3], ``root_rot`` = qpos[3:7] reordered to x y z w, ``dof_pos`` =
qpos[7:] (the robot MJCF's joints in document order), and optionally body positions from
its own FK with the root at the origin. The file does not name the robot: its MJCF comes
with ``character=``.

Model mapping: ``root`` pose, ``joints`` (dof_pos; labelled with the MJCF's joint names and
completed by ``joint_rotations`` and the skeleton when a character is given),
``body_positions`` (vector3, labels = ``link_body_list``), ``meta["gmr"]`` = {fps (as
stored), fps_key, key_order, protocol, numpy_module}. The writer uses the SMPL-X scripts'
key order and NumPy 1.x global names (:mod:`motionkit.formats.shared.pickles.writepickle`), which
both NumPy generations load.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..._io import atomic_write, read_bytes
from ..._limits import MAX_FPS, MIN_FPS
from ...errors import ConversionError, FormatError, warn
from ...model import Motion, Timeline, Track
from ...model.character import Character, CharacterSource
from ...spatial import quaternion as quat
from ..loss import Holds, tracks
from ..shared.mjcf.character import load_character
from ..shared.pickles import safepickle, writepickle
from .motion import rotations_beside_joints

#: The keys in the order GMR's SMPL-X scripts write them.
KEYS = ("fps", "root_pos", "root_rot", "dof_pos", "local_body_pos", "link_body_list")
REQUIRED = ("root_pos", "root_rot", "dof_pos")
#: What ``body_positions`` is relative to.
BODY_FRAME = "root (root at origin, identity orientation)"
DEFAULT_FPS = 30
#: Bytes of a GMR pickle's opening that hold its first keys (``fps``, ``root_pos``).
OPENING = 64
#: Root quaternions further than this from unit length are reported.
UNIT_TOLERANCE = 1e-6
#: The tracks a file holds (joint rotations through the robot's MJCF).
HELD = tracks(root="pose", joints="value", joint_rotations="quaternion",
              body_positions="vector3")


def holds(character: CharacterSource | None = None) -> Holds:
    """Root pose, joint values and body positions; the skeleton only by reference."""
    return Holds(tracks=HELD,
                 skeleton=character is not None, terrain=False, stamps=False, start=False,
                 one_timeline=True, ns_stamps=False, frame_numbers=False, position_only=False,
                 meta=frozenset(), namespace="gmr",
                 plain=lambda key, value: key == "frame" and value == BODY_FRAME)


def sniff(head: bytes) -> bool:
    """A pickle (protocol 2+) naming ``root_pos``, ``root_rot`` and ``dof_pos``; or one that
    opens with GMR's ``root_pos`` (after ``fps`` or first), for a long motion whose arrays
    fill the head before the other keys. MimicKit and PARC keys rule the second form out."""
    if len(head) < 2 or head[0] != 0x80 or head[1] < 2:
        return False
    if all(key.encode() in head for key in REQUIRED):
        return True
    return (b"root_pos" in head[:OPENING] and b"loop_mode" not in head and b"frames" not in head
            and not any(key.encode() in head[:OPENING * 4] for key in safepickle.MS_KEYS))


# ============================================================================ reading


def read(path: str | os.PathLike[str], character: CharacterSource | None = None) -> Motion:
    """Read a GMR robot motion; ``character`` (the robot's MJCF) labels the joint values."""
    data = read_bytes(path)
    values = safepickle.loads(data, path, "file", allowed=safepickle.NUMPY_GLOBALS)
    if not isinstance(values, dict):
        raise FormatError(f"not a GMR motion (the pickle holds a "
                          f"{safepickle.type_name(values)}, not a dict)", path)
    missing = [key for key in REQUIRED if key not in values]
    if missing:
        raise FormatError(f"not a GMR motion: no {', '.join(missing)}", path)
    char = load_character(character) if character is not None else None
    try:
        return _motion(values, data, path, char)
    except FormatError:
        raise
    except (*safepickle.DATA_ERRORS, ConversionError) as exc:
        raise FormatError(f"unreadable data ({safepickle.describe_error(exc)})",
                          path) from None


def _array(value: Any, field: str, path: Any, ndim: int) -> NDArray[np.floating[Any]]:
    """A finite float array of ``ndim`` axes (float32 and float64 kept, integers made float64)."""
    if not isinstance(value, np.ndarray) or value.dtype.kind not in "iuf":
        raise FormatError(f"{field} must be a numeric array, got a "
                          f"{safepickle.type_name(value)}", path)
    if value.ndim != ndim:
        raise FormatError(f"{field} must have {ndim} axes, got shape {value.shape}", path)
    array = np.array(value, dtype=np.float64 if value.dtype.kind != "f" else value.dtype)
    if not np.isfinite(array).all():
        raise FormatError(f"{field} holds non-finite numbers", path)
    return array


def _fps(values: dict[Any, Any], path: Any) -> tuple[float, int | float, str | None]:
    key = "fps" if "fps" in values else "mocap_frame_rate" if "mocap_frame_rate" in values \
        else None
    if key is None:
        warn(f"{os.fspath(path)}: no fps; using {DEFAULT_FPS} (as GMR does)")
        return float(DEFAULT_FPS), DEFAULT_FPS, None
    value = values[key]
    if (isinstance(value, np.ndarray) and value.shape == ()) or isinstance(value, np.generic):
        value = value[()].item() if isinstance(value, np.ndarray) else value.item()
    if type(value) not in (int, float) or (type(value) is int and abs(value) > 1 << 1000):
        raise FormatError(f"{key} must be a number, got a {safepickle.type_name(value)}", path)
    rate = float(value)
    if not (math.isfinite(rate) and MIN_FPS <= rate <= MAX_FPS):
        raise FormatError(f"{key} must be between {MIN_FPS:g} and {MAX_FPS:g}, got {rate:g}",
                          path)
    return rate, value, key


def _motion(values: dict[Any, Any], data: bytes, path: Any, char: Character | None) -> Motion:
    root_pos = _array(values["root_pos"], "root_pos", path, 2)
    root_rot = _array(values["root_rot"], "root_rot", path, 2)
    dof_pos = _array(values["dof_pos"], "dof_pos", path, 2)
    if root_pos.shape[1] != 3 or root_rot.shape[1] != 4:
        raise FormatError(f"root_pos must be (frames, 3) and root_rot (frames, 4), got "
                          f"{root_pos.shape} and {root_rot.shape}", path)
    frames = root_pos.shape[0]
    for name, array in (("root_rot", root_rot), ("dof_pos", dof_pos)):
        if array.shape[0] != frames:
            raise FormatError(f"{name} has {array.shape[0]} frames but root_pos has {frames}",
                              path)
    norms = np.linalg.norm(root_rot, axis=1)
    if frames and np.abs(norms - 1.0).max() > UNIT_TOLERANCE:
        warn(f"{os.fspath(path)}: root_rot holds quaternions up to "
             f"{np.abs(norms - 1.0).max():.2g} from unit length (kept as stored)")
    rate, fps, fps_key = _fps(values, path)
    extra = [k for k in values if k not in (*KEYS, "mocap_frame_rate")]
    if extra:
        warn(f"{os.fspath(path)}: keys {safepickle.key_names(extra)} ignored")
    timeline = Timeline.uniform(rate, frames)
    root = np.concatenate([root_pos, root_rot], axis=1).astype(np.float64)
    motion = Motion(meta={"name": Path(path).stem, "gmr": {"fps": fps, "fps_key": fps_key,
                                  "key_order": [str(k)[:40] for k in values][:20],
                                  "protocol": data[1] if data[:1] == b"\x80" else 0,
                                  "numpy_module": _numpy_module(data)}})
    motion.add(Track("root", "pose", root, timeline))
    if char is not None:
        _check_robot(char, dof_pos.shape[1], path)
    motion.add(Track("joints", "value", dof_pos, timeline,
                     qpos_names(char) if char is not None else None))
    if char is not None:
        qpos = np.concatenate([root_pos, quat.xyzw_to_wxyz(root_rot), dof_pos], axis=1)
        rotations = char.from_qpos(qpos)[2]
        motion.add(Track("joint_rotations", "quaternion", rotations, timeline,
                         char.joint_labels, {"derived_from": "joints"}))
        motion.skeleton = char.to_skeleton()
    bodies = _bodies(values, frames, path)
    if bodies is not None:
        motion.add(Track("body_positions", "vector3", bodies[0], timeline, bodies[1],
                         {"frame": BODY_FRAME}))
    return motion


def _numpy_module(data: bytes) -> str | None:
    """Which NumPy generation's names the arrays were pickled under."""
    if b"numpy._core" in data:
        return "numpy._core"
    return "numpy.core" if b"numpy.core" in data else None


def _check_robot(char: Character, width: int, path: Any) -> None:
    if char.qpos_size - 7 != width:
        raise FormatError(f"GMR dof_pos has {width} columns, robot {char.name!r} has "
                          f"nq - 7 = {char.qpos_size - 7}", path)


def qpos_names(char: Character) -> list[str]:
    """Names of ``qpos[7:]`` of a character's MJCF: hinge joint names, and for a three-hinge
    body its name with ``_hinge0`` … ``_hinge2`` (the three angles, in document order)."""
    names: list[str] = []
    for kind, joint in zip(char.kinds, char.joint_names, strict=True):
        if kind == "hinge":
            names.append(joint)
        elif kind == "spherical":
            names.extend(f"{joint}_hinge{k}" for k in range(3))
    return names


def _bodies(values: dict[Any, Any], frames: int, path: Any) -> tuple[NDArray[Any],
                                                                     list[str] | None] | None:
    positions, names = values.get("local_body_pos"), values.get("link_body_list")
    if positions is None:
        if names is not None:
            warn(f"{os.fspath(path)}: link_body_list without local_body_pos; ignored")
        return None
    array = _array(positions, "local_body_pos", path, 3)
    if array.shape[0] != frames or array.shape[2] != 3:
        raise FormatError(f"local_body_pos must be ({frames}, bodies, 3), got {array.shape}", path)
    if names is None:
        return array, None
    if type(names) not in (list, tuple) or any(type(name) is not str for name in names):
        raise FormatError("link_body_list must be a list of body names", path)
    if len(names) != array.shape[1]:
        raise FormatError(f"link_body_list names {len(names)} bodies, local_body_pos holds "
                          f"{array.shape[1]}", path)
    return array, list(names)


# ============================================================================ writing


def losses(obj: Motion, character: CharacterSource | None = None) -> list[str]:
    """Labels a GMR file does not hold, joint values whose meaning it cannot tell, and
    joint rotations it would not write."""
    char = load_character(character) if character is not None else None
    lost: list[str] = []
    expected = {"joints": qpos_names(char) if char else None,
                "joint_rotations": char.joint_labels if char else None}
    for name, track in obj.tracks.items():
        if name not in HELD:
            continue  # the registry names the tracks the file does not hold
        if track.labels is not None and name != "body_positions" \
                and track.labels != expected.get(name):
            lost.append(f"the labels of track {name!r}")
    if "joints" in obj.tracks and char is None and obj.meta.get("source_format") != "gmr":
        lost.append("the meaning of track 'joints' (not known to be MuJoCo qpos: give the "
                    "robot's MJCF as character=...)")
    if rotations_beside_joints(obj):
        lost.append("track 'joint_rotations' (dof_pos is written from 'joints')")
    return lost


def write(path: str | os.PathLike[str], obj: Motion, character: CharacterSource | None = None) -> None:
    """Write a GMR robot motion (protocol 4, NumPy 1.x names).

    ``dof_pos`` comes from ``joints``, or from ``joint_rotations`` through the ``character``
    (MuJoCo qpos: three-hinge bodies as intrinsic Euler angles).
    """
    with atomic_write(path, "wb") as handle:
        handle.write(encode(obj, character))


def encode(motion: Motion, character: CharacterSource | None = None) -> bytes:
    """The bytes of the GMR file for ``motion`` (the rules of :func:`write`)."""
    char = load_character(character) if character is not None else None
    root = motion.tracks["root"]
    frames = root.frames
    for name, track in motion.tracks.items():
        if track.frames != frames:
            raise ConversionError(f"track {name!r} has {track.frames} frames but the root has "
                                  f"{frames}; resample it onto the root's frames first")
    data = np.asarray(root.data, dtype=np.float64)
    bodies = motion.tracks.get("body_positions")
    timeline = root.timeline
    rate = timeline.rate if timeline.is_uniform and timeline.rate is not None else (
        (timeline.count - 1) / max(timeline.duration, 1e-12))
    values = {
        "fps": int(rate) if float(rate).is_integer() else float(rate),
        "root_pos": np.ascontiguousarray(data[:, :3]),
        "root_rot": np.ascontiguousarray(data[:, 3:7]),
        "dof_pos": np.ascontiguousarray(_dof_pos(motion, char), dtype=np.float64),
        "local_body_pos": (np.ascontiguousarray(bodies.data, dtype=np.float32)
                           if bodies is not None else None),
        "link_body_list": (list(bodies.labels) if bodies is not None and bodies.labels
                           else None),
    }
    return writepickle.dumps(values)


def _dof_pos(motion: Motion, char: Character | None) -> NDArray[np.float64]:
    root = motion.tracks["root"]
    joints = motion.tracks.get("joints")
    if joints is not None:
        dofs = np.asarray(joints.data, dtype=np.float64).reshape(root.frames, -1)
        if char is None:
            return dofs
        names = qpos_names(char)
        if joints.labels and set(names) <= set(joints.labels):
            return dofs[:, [joints.labels.index(name) for name in names]]
        if dofs.shape[1] != len(names):
            raise ConversionError(f"'joints' has {dofs.shape[1]} values per frame but robot "
                                  f"{char.name!r} has nq - 7 = {len(names)}")
        return dofs
    rotations = motion.tracks.get("joint_rotations")
    if rotations is not None:
        if char is None:
            raise ConversionError("joint rotations need the robot's MJCF to become GMR dof_pos; "
                                  "pass character=... (--character robot.xml)")
        data = np.asarray(root.data, dtype=np.float64)
        return np.asarray(char.to_qpos(data[:, :3], data[:, 3:7], rotations.data)[:, 7:])
    return np.zeros((root.frames, 0))

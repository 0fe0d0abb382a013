"""AMASS ``.npz`` (SMPL+H and SMPL-X layouts): axis-angle poses, translation, shape.

Layout (see the containers spec §1): ``poses`` (N, 156) for SMPL+H (root, 21 body joints,
15 + 15 finger joints) or (N, 165) for SMPL-X (root, 21 body, jaw, two eyes, 15 + 15
fingers); SMPL-X files may instead (or also) hold the split keys ``root_orient``,
``pose_body``, ``pose_jaw``, ``pose_eye``, ``pose_hand``. ``trans`` in metres, Z-up world;
the SMPL body frame is Y-up. The frame rate is ``mocap_framerate`` or ``mocap_frame_rate``
(kept as the float it is); ``gender`` is bytes or text. A width other than 156 or 165, or a
``surface_model_type`` that contradicts the width, is refused: the layout is never guessed.

Model mapping without a character: ``root`` pose (``trans`` + root axis-angle as a
quaternion, SMPL body axes; attrs ``axes="smpl"``), ``joint_rotations`` (every non-root
joint of the layout, SMPL order, labelled with SMPL joint names). With ``character`` (an
MJCF of ProtoMotions' SMPL humanoids, the user's own copy, or a stand-in with the same
names): ProtoMotions' mapping (``convert_amass_to_motion``) — joints taken by name in the
model's depth-first order (hands zero where the file has none), every world rotation
right-multiplied by C = xyz-Euler(−90°, −90°, 0), so the root becomes the MJCF pelvis
(attrs ``axes="mjcf"``) and each local rotation C⁻¹·R·C — and the skeleton, so FK gives
the MJCF's body poses. No joint values are stored: MuJoCo's ``qpos`` for the three hinges
is the intrinsic XYZ Euler triple (``Character.to_qpos``), *not* the exponential map
ProtoMotions writes as ``dof_pos`` (4-6 cm off in MuJoCo), and the skeleton's ball
coordinates are a third form; the rotations are the one unambiguous statement.
Joints of the file the model lacks (jaw, eyes, or fingers with the 24-body model) stay in
``meta["amass"]["unmodelled"]``. ``meta["amass"]`` records the layout, the key spelling,
gender (and how it was stored), betas and the other arrays, which the writer puts back.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy.spatial.transform import Rotation

from ...errors import ConversionError, FormatError
from ...model import Motion, Timeline, Track
from ...model.character import Character, CharacterSource
from ..loss import Holds, root_labels, tracks, written_rate
from ..shared.mjcf.character import load_character
from . import _npz

Array = NDArray[np.float64]

SMPL_BODY = ("Pelvis", "L_Hip", "R_Hip", "Torso", "L_Knee", "R_Knee", "Spine", "L_Ankle",
             "R_Ankle", "Chest", "L_Toe", "R_Toe", "Neck", "L_Thorax", "R_Thorax", "Head",
             "L_Shoulder", "R_Shoulder", "L_Elbow", "R_Elbow", "L_Wrist", "R_Wrist")
SMPL_NAMES = (*SMPL_BODY, "L_Hand", "R_Hand")
_FINGERS = tuple(f"{finger}{k}" for finger in ("Index", "Middle", "Pinky", "Ring", "Thumb")
                 for k in (1, 2, 3))
HANDS = tuple(f"L_{f}" for f in _FINGERS) + tuple(f"R_{f}" for f in _FINGERS)
#: Joint names per layout, in the order of ``poses`` (three numbers each).
LAYOUTS: dict[str, tuple[str, ...]] = {
    "smplh": (*SMPL_BODY, *HANDS),
    "smplx": (*SMPL_BODY, "Jaw", "L_Eye", "R_Eye", *HANDS),
}
WIDTHS = {3 * len(names): layout for layout, names in LAYOUTS.items()}
#: SMPL-X split keys and their widths, in the order ``poses`` concatenates them.
SPLIT = (("root_orient", 3), ("pose_body", 63), ("pose_jaw", 3), ("pose_eye", 6),
         ("pose_hand", 90))
FPS_KEYS = {"smplh": "mocap_framerate", "smplx": "mocap_frame_rate"}
#: ProtoMotions' re-framing of every world rotation: extrinsic xyz Euler (−90°, −90°, 0).
REFRAME = Rotation.from_quat([-0.5, -0.5, -0.5, 0.5])
HELD = tracks(root="pose", joint_rotations="quaternion")
#: Conventions of the file, stated in ``info`` and in the root track's attrs.
CONVENTIONS = "axis-angle per joint, Z-up world (SMPL body frame Y-up), metres, fps as stored"


def holds(character: CharacterSource | None = None) -> Holds:
    """Root pose and joint rotations; the skeleton only by reference (the ``character``
    given to the writer)."""
    return Holds(tracks=HELD, skeleton=character is not None, terrain=False, stamps=False,
                 start=False, one_timeline=True, ns_stamps=False, frame_numbers=False,
                 position_only=False, meta=frozenset(), namespace="amass",
                 plain=lambda key, value: True)


sniff = _npz.sniff
hint = _npz.hint


def accepts(path: str) -> bool:
    """An ``.npz`` with ``trans`` and ``poses`` or ``root_orient``."""
    keys = _npz.members(path)
    return "trans" in keys and bool(keys & {"poses", "root_orient"})


# ============================================================================ reading


def read(path: str | os.PathLike[str], character: CharacterSource | None = None) -> Motion:
    """Read an AMASS file; ``character`` (an SMPL humanoid MJCF) adds ProtoMotions' mapping."""
    arrays = _npz.load(path)
    if Path(path).name == "shape.npz" or Path(path).stem.endswith("stagei"):
        raise FormatError("an AMASS shape file (no motion): read the motion files beside it",
                          path)
    layout, poses, filled = _poses(arrays, path)
    if "trans" not in arrays:
        raise FormatError("not an AMASS motion: no 'trans'", path)
    trans = _npz.numbers(arrays, "trans", 2, path)
    frames = poses.shape[0]
    if trans.shape != (frames, 3):
        raise FormatError(f"trans must be ({frames}, 3) like poses, got {trans.shape}", path)
    fps_key = next((k for k in ("mocap_framerate", "mocap_frame_rate") if k in arrays), None)
    if fps_key is None:
        raise FormatError("no frame rate (mocap_framerate or mocap_frame_rate)", path)
    rate = _npz.rate(arrays, fps_key, path)
    keys = [key for key in arrays if key != _npz.CONVENTIONS_KEY]
    meta: dict[str, Any] = {"layout": layout, "fps_key": fps_key, "keys": keys, "frames": frames,
                            "filled": filled, "conventions": CONVENTIONS}
    if "gender" in arrays:
        meta["gender"], meta["gender_type"] = _npz.text(arrays["gender"], "gender", path)
    used = {"poses", "trans", fps_key, "gender", _npz.CONVENTIONS_KEY,
            *(key for key, _ in SPLIT)}
    meta["extra"] = {key: value for key, value in arrays.items() if key not in used}
    names = LAYOUTS[layout]
    timeline = Timeline.uniform(rate, frames)
    motion = Motion(meta={"name": Path(path).stem, "amass": meta})
    axis_angles = poses.reshape(frames, -1, 3)
    if character is None:
        rotations = Rotation.from_rotvec(poses.reshape(-1, 3)).as_quat().reshape(frames, -1, 4)
        root = np.concatenate([trans, rotations[:, 0]], axis=1)
        motion.add(Track("root", "pose", root, timeline, attrs={"axes": "smpl"}))
        motion.add(Track("joint_rotations", "quaternion", rotations[:, 1:], timeline,
                         list(names[1:])))
        return motion
    char = load_character(character)
    root_rot, local, unmodelled = to_model(char, names, axis_angles)
    meta["unmodelled"] = unmodelled
    root = np.concatenate([trans, root_rot], axis=1)
    motion.add(Track("root", "pose", root, timeline, attrs={"axes": "mjcf"}))
    motion.add(Track("joint_rotations", "quaternion", local, timeline, char.joint_labels))
    motion.skeleton = char.to_skeleton()
    return motion


def _poses(arrays: dict[str, NDArray[np.generic]], path: Any) -> tuple[str, Array, list[str]]:
    """The layout, the (N, width) pose array and the split parts filled with zeros."""
    filled: list[str] = []
    if "poses" in arrays:
        poses = _npz.numbers(arrays, "poses", 2, path)
    elif "root_orient" in arrays and "pose_body" in arrays:
        frames = arrays["root_orient"].shape[0] if arrays["root_orient"].ndim else 0
        parts = []
        for key, width in SPLIT:
            if key in arrays:
                part = _npz.numbers(arrays, key, 2, path)
                if part.shape != (frames, width):
                    raise FormatError(f"{key} must be ({frames}, {width}), got {part.shape}",
                                      path)
            else:
                part = np.zeros((frames, width))
                filled.append(key)
            parts.append(part)
        poses = np.concatenate(parts, axis=1)
    else:
        raise FormatError("not an AMASS motion: no 'poses' and no 'root_orient'/'pose_body'",
                          path)
    layout = WIDTHS.get(poses.shape[1])
    if layout is None:
        known = ", ".join(f"{w} ({name})" for w, name in WIDTHS.items())
        raise FormatError(f"poses is {poses.shape[1]} wide: not an AMASS layout (known: "
                          f"{known}); the joints cannot be named", path)
    if "surface_model_type" in arrays:
        stated, _ = _npz.text(arrays["surface_model_type"], "surface_model_type", path)
        family = "smplx" if stated.lower().startswith("smplx") else "smplh" \
            if stated.lower().startswith(("smplh", "smpl+h")) else None
        if family is not None and family != layout:
            raise FormatError(f"surface_model_type says {stated!r} but poses is "
                              f"{poses.shape[1]} wide ({layout}): ambiguous, refused", path)
    return layout, poses, filled


def to_model(char: Character, names: tuple[str, ...],
             axis_angles: Array) -> tuple[Array, Array, dict[str, Array]]:
    """ProtoMotions' mapping: root rotation and local joint rotations (xyzw) in the model's
    body order and axes, from per-joint axis-angles ``(frames, joints, 3)`` in the file's
    order; the file's joints the model lacks, as their axis-angles by name.

    Every world rotation right-multiplied by C makes each local rotation C⁻¹·L·C, which
    turns L's rotation vector by C⁻¹ and keeps its angle: one 3×3 product per joint."""
    frames = axis_angles.shape[0]
    index = {name: i for i, name in enumerate(names)}
    if char.body_names[0] != names[0]:
        raise ConversionError(f"character {char.name!r} starts with body "
                              f"{char.body_names[0]!r}, not the SMPL root {names[0]!r}")
    unknown = [n for n in char.joint_labels if n not in index and n not in SMPL_NAMES]
    if unknown:
        raise ConversionError(f"character {char.name!r} has bodies that are no SMPL joints: "
                              f"{unknown[:5]}")
    vectors = np.zeros((frames, char.body_count - 1, 3))
    for column, name in enumerate(char.joint_labels):
        if name in index:
            vectors[:, column] = axis_angles[:, index[name]]
    turned = vectors @ REFRAME.as_matrix()  # row vectors: (C⁻¹ v)ᵀ = vᵀ C
    local = Rotation.from_rotvec(turned.reshape(-1, 3)).as_quat().reshape(*vectors.shape[:2], 4)
    root = (Rotation.from_rotvec(axis_angles[:, 0]) * REFRAME).as_quat()
    modelled = set(char.body_names)
    unmodelled = {name: axis_angles[:, i]
                  for i, name in enumerate(names) if name not in modelled}
    return root, local, unmodelled


def _kept(meta: dict[str, Any], layout: str, rate: float, frames: int,
          taken: set[str]) -> dict[str, NDArray[np.generic]]:
    """Gender (as it was stored), the frame rate under its key, and the arrays the reader
    kept, for writing back."""
    out: dict[str, NDArray[np.generic]] = {}
    gender = meta.get("gender")
    if gender is not None:
        out["gender"] = np.array(gender.encode() if meta.get("gender_type") == "bytes"
                                 else gender)
    out[meta.get("fps_key") or FPS_KEYS[layout]] = np.array(rate)
    for key, value in (meta.get("extra") or {}).items():
        if isinstance(value, np.ndarray) and key not in taken:
            if value.ndim and value.shape[0] == meta.get("frames") != frames:
                continue  # per-frame data of the source: a loss `losses` named
            out[key] = value
    return out


def _meta(obj: Motion) -> dict[str, Any]:
    """What the reader kept in ``meta["amass"]`` (empty for a motion from elsewhere)."""
    meta = obj.meta.get("amass")
    return meta if isinstance(meta, dict) else {}


def describe(obj: object) -> list[str]:
    """The layout and conventions ``info`` shows."""
    if not isinstance(obj, Motion) or not _meta(obj):
        return []
    meta = _meta(obj)
    root = obj.tracks.get("root")
    axes = root.attrs.get("axes") if root is not None else None
    lines = [f"AMASS layout: {meta['layout']} ({3 * len(LAYOUTS[meta['layout']])} wide), "
             f"frame rate key {meta['fps_key']}",
             f"conventions: {CONVENTIONS}; root axes: "
             + ("SMPL body frame" if axes == "smpl" else "ProtoMotions MJCF (SMPL · C)"),
             "joint names: SMPL names (from the layout, not stored in the file)"]
    if meta.get("gender") is not None:
        lines.append(f"gender: {meta['gender']} (stored as {meta['gender_type']})")
    if meta.get("filled"):
        lines.append(f"missing parts read as zeros: {', '.join(meta['filled'])}")
    return lines


# ============================================================================ writing


def losses(obj: Motion, character: CharacterSource | None = None,
           layout: str | None = None) -> list[str]:
    """Joint rotations whose names are no joints of the layout."""
    chosen = layout or _meta(obj).get("layout")
    root = obj.tracks.get("root")
    meta = _meta(obj)
    frames = root.frames if root is not None else meta.get("frames")
    joints = [name for name, values in (meta.get("unmodelled") or {}).items()
              if np.shape(values)[0] != frames]
    arrays = [key for key, value in (meta.get("extra") or {}).items()
              if frames != meta.get("frames", frames) and np.ndim(value)
              and np.shape(value)[0] == meta["frames"]]
    lost = root_labels(obj)
    for what, names in (("rotations of joints the model lacks", joints),
                        ("per-frame arrays", arrays)):
        if names:
            listed = ", ".join(names[:3]) + (" …" if len(names) > 3 else "")
            lost.append(f"the source's {what} {listed} (their frames no longer match the "
                        "motion's)")
    rotations = obj.tracks.get("joint_rotations")
    if chosen not in LAYOUTS or rotations is None or not rotations.labels:
        return lost
    known = set(LAYOUTS[chosen]) | set(SMPL_NAMES)
    extra = [name for name in rotations.labels if name not in known]
    return lost + ([f"joint rotations of {', '.join(extra[:5])} (no joints of the {chosen} "
                    "layout)"] if extra else [])


def write(path: str | os.PathLike[str], obj: Motion, character: CharacterSource | None = None,
          layout: str | None = None) -> None:
    """Write an AMASS file in the layout the motion was read from (or ``layout=smplh|smplx``).

    Root axes come from the root track's ``axes`` attr (``smpl``, or ``mjcf`` when read
    through a character, whose re-framing is undone). The frame-rate key, gender, betas and
    the other arrays the reader kept are written back; the split SMPL-X keys too when the
    source had them.
    """
    arrays = encode(obj, layout)
    chosen = str(layout or _meta(obj)["layout"])  # encode checked it
    _npz.save(path, arrays, {"format": "amass", "layout": chosen,
                             "joint_names": list(LAYOUTS[chosen]),
                             "rotations": "axis-angle (rotation vector) per joint",
                             "up_axis": "z (world); SMPL body frame y-up", "units": "m",
                             "fps_key": next(k for k in arrays if k in FPS_KEYS.values())})


def encode(obj: Motion, layout: str | None = None) -> dict[str, NDArray[np.generic]]:
    """The arrays of the AMASS file for ``obj`` (the rules of :func:`write`)."""
    meta = _meta(obj)
    layout = layout or meta.get("layout")
    if layout not in LAYOUTS:
        raise ConversionError("name the AMASS layout: layout=smplh (156 wide) or smplx (165 wide)")
    root = obj.tracks["root"]
    timeline = root.timeline
    rate = written_rate(timeline)  # stamps: named by the loss check, their mean rate
    axes = root.attrs.get("axes")
    if axes not in ("smpl", "mjcf"):
        raise ConversionError("the root's axes are not known (SMPL body frame or ProtoMotions "
                              "MJCF); read the motion from AMASS or through an SMPL character")
    data = np.asarray(root.data, dtype=np.float64)
    names = LAYOUTS[layout]
    frames = root.frames
    root_rot = Rotation.from_quat(data[:, 3:7])
    if axes == "mjcf":
        root_rot = root_rot * REFRAME.inv()
    poses = np.zeros((frames, len(names), 3))
    poses[:, 0] = root_rot.as_rotvec()
    rotations = obj.tracks.get("joint_rotations")
    if rotations is not None:
        if rotations.labels is None:
            raise ConversionError("joint rotations without joint names cannot be placed in an "
                                  "AMASS layout")
        quats = np.asarray(rotations.data, dtype=np.float64).reshape(frames, -1, 4)
        for column, name in enumerate(rotations.labels):
            if name not in names:
                continue
            rot = Rotation.from_quat(quats[:, column])
            if axes == "mjcf":
                rot = REFRAME * rot * REFRAME.inv()
            poses[:, names.index(name)] = rot.as_rotvec()
    for name, values in (meta.get("unmodelled") or {}).items():
        if name in names and np.shape(values) == (frames, 3):
            poses[:, names.index(name)] = values
    flat = poses.reshape(frames, -1)
    out: dict[str, NDArray[np.generic]] = {"trans": np.ascontiguousarray(data[:, :3])}
    keys = meta.get("keys") or []
    if "poses" in keys or not keys:
        out["poses"] = flat
    if layout == "smplx" and any(key in keys for key, _ in SPLIT):
        at = 0
        for key, width in SPLIT:
            if key not in meta.get("filled", []):
                out[key] = np.ascontiguousarray(flat[:, at:at + width])
            at += width
    out.update(_kept(meta, layout, rate, frames, set(out)))
    order = {key: i for i, key in enumerate(keys)}
    return dict(sorted(out.items(), key=lambda item: order.get(item[0], len(order))))

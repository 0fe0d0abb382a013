"""The source motion as retargeting reads it: every body's world pose per frame (motionkit's
FK: Z-up metres), renamed, with GMR's synthetic foot bodies, then scaled and offset into the
targets of the map (GMR's ``motion_retarget.py`` §3 of the spec).

Orientation convention: motionkit's BVH world frames differ from those GMR's BVH loader
gives by a constant right factor (``q_GMR = q_motionkit ⊗ R_conv``, the loader's Y-up to
Z-up turn). A GMR map's rotation offsets (and a ``--frame-fix``) are written for GMR's
frames; :func:`targets` applies ``R_conv · fix · offset`` on the right of motionkit's world
orientation, so every map keeps the offsets GMR's users wrote.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ..errors import ConversionError, FormatError, choices, warn
from ..kinematics.motion import link_poses
from ..model import Motion, Timeline
from ..model.skeleton import Skeleton
from ..spatial import quaternion
from .maps import BodyMap, _matrix_wxyz, read_json

Array = NDArray[np.float64]

#: The height GMR's BVH loader reports whatever the skeleton (``lafan1.py``).
GMR_HUMAN_HEIGHT = 1.75
#: The Head joint's height above the lower foot joint, at rest, of a human GMR's 1.75 m is
#: for (the corpus Mixamo clip: 1.495 m; GMR's loader measures 1.473 m on its last frame).
GMR_HEAD_ABOVE_FEET = 1.5
#: GMR's synthetic bodies (the foot's position, the toe's orientation) and the foot each
#: one's position is.
FOOT_MODS = {f"{side}FootMod": (f"{side}Foot", f"{side}Toe") for side in ("Left", "Right")}


@dataclass
class SourceFrames:
    """World poses of the source's bodies: positions ``(frames, bodies, 3)`` and rotation
    matrices ``(frames, bodies, 3, 3)``, by name; and the frame rate."""

    names: list[str]
    positions: Array
    rotations: Array
    fps: float

    def index(self, name: str) -> int:
        try:
            return self.names.index(name)
        except ValueError:
            raise ConversionError(f"the source has no body {name!r} "
                                  f"({choices(name, self.names, 'bodies')})") from None


def source_frames(skeleton: Skeleton, motion: Motion,
                  rename: dict[str, str] | None = None) -> SourceFrames:
    """Every body's world pose per frame, names changed by ``rename``; GMR's
    ``LeftFootMod``/``RightFootMod`` (the foot's position, the toe's orientation) added
    where the source has the foot and the toe."""
    track = link_poses(skeleton, motion)
    names = [(rename or {}).get(name, name) for name in track.labels or []]
    data = np.asarray(track.data, dtype=np.float64)
    positions, rotations = data[:, :, :3], quaternion.to_matrix(data[:, :, 3:7])
    extra_pos, extra_rot = [], []
    for synthetic, (foot, toe) in FOOT_MODS.items():
        if foot in names and toe in names:
            extra_pos.append(positions[:, names.index(foot)])
            extra_rot.append(rotations[:, names.index(toe)])
            names.append(synthetic)
    if extra_pos:
        positions = np.concatenate([positions, np.stack(extra_pos, 1)], 1)
        rotations = np.concatenate([rotations, np.stack(extra_rot, 1)], 1)
    return SourceFrames(names, positions, rotations, _rate(track.timeline))


def measured_body(name: str) -> str:
    """The source body whose position a (possibly synthetic) target body has."""
    return FOOT_MODS[name][0] if name in FOOT_MODS else name


def _rate(timeline: Timeline) -> float:
    """The source's frame rate; a stamped source's from its median frame interval (said)."""
    if timeline.rate:
        return float(timeline.rate)
    steps = np.diff(timeline.times)
    steps = steps[steps > 0]
    rate = 1.0 / float(np.median(steps)) if len(steps) else 30.0
    warn(f"the source is time-stamped: the robot motion is written at {rate:g} fps, its frames "
         "one per source frame (resample the source first for even steps)")
    return rate


def read_rename(path: str | os.PathLike[str]) -> dict[str, str]:
    """A name map file: ``{"old": "new"}``, or ``{"joint_names": {...}}`` as in the corpus."""
    document = read_json(path)
    table = document.get("joint_names", document) if isinstance(document, dict) else None
    if not isinstance(table, dict) or not all(isinstance(k, str) and isinstance(v, str)
                                              for k, v in table.items()):
        raise FormatError("a name map is a JSON object of old name → new name", path)
    return dict(table)


def read_frame_fix(path: str | os.PathLike[str]) -> dict[str, Array]:
    """Per-body constant right factors: ``{"right_factor_wxyz": {body: [w, x, y, z]}}``."""
    document = read_json(path)
    table = document.get("right_factor_wxyz") if isinstance(document, dict) else None
    if not isinstance(table, dict):
        raise FormatError("a frame fix needs \"right_factor_wxyz\": {body: [w, x, y, z]}", path)
    out = {}
    for body, value in table.items():
        if not (isinstance(value, list) and len(value) == 4
                and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value)
                and np.linalg.norm(value) > 1e-9):
            raise FormatError(f"right_factor_wxyz.{body}: four numbers, not all zero", path)
        out[str(body)] = _matrix_wxyz(np.array(value, dtype=float))
    return out


def measured_height(skeleton: Skeleton, rename: dict[str, str] | None = None) -> float:
    """The source's standing height, estimated from its skeleton at rest (all coordinates
    0): ``Head`` z minus the lower foot's z, as GMR's loader measures it (before it
    overwrites it with 1.75), times ``GMR_HUMAN_HEIGHT / GMR_HEAD_ABOVE_FEET`` (joints are
    not the top of the head and the sole). On the rest pose, so that no frame of the clip
    changes every frame's scale."""
    names = [(rename or {}).get(body.name, body.name) for body in skeleton.bodies]
    feet = [names.index(f"{side}Foot") for side in ("Left", "Right") if f"{side}Foot" in names]
    if "Head" not in names or not feet:
        raise ConversionError("measuring the source's height needs bodies Head and LeftFoot "
                              "or RightFoot (or give the height)")
    z = skeleton.rest_poses()[:, 2, 3]
    height = float(z[names.index("Head")] - min(z[k] for k in feet))
    if not height > 0:
        raise ConversionError(f"the source's Head is not above its feet at rest ({height:.3g} "
                              "m): give the height")
    return height * GMR_HUMAN_HEIGHT / GMR_HEAD_ABOVE_FEET


def size_ratio(body_map: BodyMap, height: float, *, like_gmr: bool) -> float:
    """The factor on the map's scales for a source ``height`` tall. GMR multiplies by
    height / the map's assumed height, so a taller source is made larger (harmless in GMR,
    whose BVH height is always 1.75 m). motionkit gives a source of GMR's 1.75 m GMR's
    factor and scales the rest as 1 / height, so that neither the source's size nor its
    unit changes the robot motion."""
    assumed = body_map.height_assumption
    if assumed is None:
        return 1.0
    gmr = GMR_HUMAN_HEIGHT / assumed
    return gmr * height / GMR_HUMAN_HEIGHT if like_gmr else gmr * GMR_HUMAN_HEIGHT / height


def targets(frames: SourceFrames, body_map: BodyMap, ratio: float,
            fix: dict[str, Array] | None = None) -> tuple[list[str], Array]:
    """The target poses ``(frames, bodies, 4, 4)`` of every body in the map's scale table,
    scaled about the source root (the map's scales times ``ratio``, see :func:`size_ratio`)
    and offset as GMR does."""
    names = list(body_map.scales)
    turn = body_map.turn
    root = frames.positions[:, frames.index(body_map.source_root)]
    scaled_root = root * body_map.scales[body_map.source_root] * ratio
    out = np.zeros((len(frames.positions), len(names), 4, 4))
    out[:, :, 3, 3] = 1.0
    for k, name in enumerate(names):
        index = frames.index(name)
        task = body_map.offsets[name]
        position = frames.positions[:, index]
        if name != body_map.source_root:
            position = (position - root) * (body_map.scales[name] * ratio) + scaled_root
        else:
            position = scaled_root
        right = turn @ (fix[name] if fix is not None and name in fix else np.eye(3)) \
            @ task.rotation_offset
        rotation = frames.rotations[:, index] @ right
        shift = task.position_offset - np.array([0.0, 0.0, body_map.ground_height])
        out[:, k, :3, :3] = rotation
        out[:, k, :3, 3] = position + rotation @ shift
    return names, out

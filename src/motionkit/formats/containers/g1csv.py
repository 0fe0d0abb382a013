"""Unitree G1 motion CSV, headerless dialects: 36 columns per row = root position (3, m),
root quaternion (4), 29 joint angles (rad, the G1 MJCF's joint order).

The quaternion order cannot be told from the numbers (containers spec §4: reading the
Kimodo walk as xyzw turns the pelvis upside down, but reading the LAFAN layout as wxyz
gives an upright robot yawed by 180°), so it is never guessed:

- ``g1csv-lafan``: Unitree's LAFAN1 retargets as BeyondMimic / mjlab ``csv_to_npz`` read
  them — quaternion **x y z w**;
- ``g1csv-kimodo``: Kimodo / ARDY generator output as ProtoMotions reads it — **w x y z**;
- ``g1csv``: either, with ``quat=wxyz|xyzw`` (refused without it, unless the first line is
  the statement of the order this module writes).

None of these files store a rate: ``fps`` is taken as given; else the rate motionkit's own
first line states (``…, 50 fps``); else 30 (both dialects' rate), and ``info`` says it was
assumed. Joints that are not G1 joints are a named loss (the loss rule) when writing.
Model mapping: ``root`` pose, ``joints`` labelled with the G1 joint names (and the skeleton
with ``character``). The writer puts one ``#``
comment line first stating the dialect and conventions (NumPy's ``loadtxt``, which the
BeyondMimic and mjlab converters use, skips it; so does this reader), then the rows.
"""

from __future__ import annotations

import io
import os
import re
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from ..._io import atomic_write, read_bytes
from ..._limits import Budget
from ...errors import ConversionError, FormatError, format_hint, option_hint
from ...model import Motion, Timeline, Track
from ...model.character import CharacterSource
from ...spatial import quaternion as quat
from ..loss import Holds, root_labels, tracks
from ..shared.mjcf.character import load_character
from ..shared.textcolumns import exact

#: The G1 29-DOF joints in MJCF order (left leg, right leg, waist, left arm, right arm).
G1_JOINTS = tuple(
    [f"left_{n}_joint" for n in ("hip_pitch", "hip_roll", "hip_yaw", "knee", "ankle_pitch",
                                 "ankle_roll")]
    + [f"right_{n}_joint" for n in ("hip_pitch", "hip_roll", "hip_yaw", "knee",
                                    "ankle_pitch", "ankle_roll")]
    + ["waist_yaw_joint", "waist_roll_joint", "waist_pitch_joint"]
    + [f"{side}_{n}_joint" for side in ("left", "right")
       for n in ("shoulder_pitch", "shoulder_roll", "shoulder_yaw", "elbow", "wrist_roll",
                 "wrist_pitch", "wrist_yaw")])
COLUMNS = 7 + len(G1_JOINTS)
DIALECTS = {"lafan": "xyzw", "kimodo": "wxyz"}
ORDERS = ("wxyz", "xyzw")
DEFAULT_FPS = 30.0
_STATED_FPS = re.compile(rb", ([0-9][0-9.e+-]*) fps\s*$")
HOLDS = Holds(tracks=tracks(root="pose", joints="value"), skeleton=False, terrain=False,
              stamps=False, start=False, one_timeline=True, ns_stamps=False,
              frame_numbers=False, position_only=False, meta=frozenset(), namespace="g1csv")


def read_dialect(path: str | os.PathLike[str], order: str | None, fps: float | None,
                 character: CharacterSource | None, dialect: str) -> Motion:
    """Read a headerless G1 CSV whose root quaternion is in ``order``, at ``fps`` (None:
    the rate motionkit's first line states, else DEFAULT_FPS, said to be assumed)."""
    stated = stated_fps(path) if fps is None else None
    fps_from = "given" if fps is not None else "stated" if stated is not None else "assumed"
    fps = fps if fps is not None else stated if stated is not None else DEFAULT_FPS
    if order not in ORDERS:
        raise FormatError("the root quaternion order of a G1 CSV cannot be detected from "
                          "its numbers: pass quat=wxyz or quat=xyzw (-O quat=...), or name "
                          "the dialect (--from g1csv-lafan: xyzw, g1csv-kimodo: wxyz)", path)
    if not (np.isfinite(fps) and 1e-3 <= fps <= 1e6):
        raise FormatError(f"fps must be between 0.001 and 1e6, got {fps:g}", path)
    raw = read_bytes(path)
    Budget("CSV cell", path, len(raw)).charge(raw.count(b",") + raw.count(b"\n"))
    try:
        rows = np.loadtxt(io.BytesIO(raw), delimiter=",", comments="#", ndmin=2,
                          dtype=np.float64)
    except ValueError as exc:
        raise FormatError(f"not a table of numbers ({' '.join(str(exc).split())[:200]})",
                          path) from None
    if rows.size == 0:
        raise FormatError("no rows", path)
    if rows.shape[1] != COLUMNS:
        raise FormatError(f"a G1 CSV row has {COLUMNS} columns (root xyz, quaternion, 29 "
                          f"joints); this one has {rows.shape[1]}", path, 1)
    if not np.isfinite(rows).all():
        raise FormatError("holds non-finite numbers", path)
    root_q = rows[:, 3:7] if order == "xyzw" else quat.wxyz_to_xyzw(rows[:, 3:7])
    timeline = Timeline.uniform(fps, len(rows))
    motion = Motion(meta={"name": Path(path).stem, "g1csv": {
        "dialect": dialect, "quat": order, "fps_assumed": fps_from == "assumed",
        "fps_from": fps_from}})
    motion.add(Track("root", "pose", np.concatenate([rows[:, :3], root_q], axis=1), timeline))
    motion.add(Track("joints", "value", rows[:, 7:], timeline, list(G1_JOINTS)))
    if character is not None:
        char = load_character(character)
        missing = [name for name in G1_JOINTS if name not in char.joint_names]
        if missing:
            raise FormatError(f"character {char.name!r} has no joints {missing[:4]}", path)
        motion.skeleton = char.to_skeleton()
    return motion


def hint(head: bytes) -> str | None:
    """For a ``.csv`` no format claimed: rows of 36 numbers, or the BONES-SEED header, are
    a G1 CSV's; the hint names the dialects (the quaternion order cannot be told from the
    numbers, so none is picked)."""
    row = _first_row(head)
    if row is None:
        return None
    fields = [field for field in re.split(rb"[,;\s]+", row) if field]
    if [field.decode("latin-1") for field in fields[:7]] == list(SEED_HEADER):
        return f"its header is a BONES-SEED G1 CSV's: read it with {format_hint('g1csv-seed')}"
    if len(fields) != COLUMNS or not all(_is_number(field) for field in fields):
        return None
    return (f"its rows hold {COLUMNS} numbers, as a G1 CSV's (root x y z, a root quaternion, "
            f"{len(G1_JOINTS)} joint angles), whose quaternion order the numbers cannot tell: "
            f"read it with {format_hint('g1csv-lafan')} (x y z w), "
            f"{format_hint('g1csv-kimodo')} (w x y z), or {format_hint('g1csv')} "
            f"{option_hint('quat', 'wxyz|xyzw')}")


#: The first columns of the BONES-SEED dialect's header (g1csv_seed reads it).
SEED_HEADER = ("Frame", "root_translateX", "root_translateY", "root_translateZ",
               "root_rotateX", "root_rotateY", "root_rotateZ")


def _first_row(head: bytes) -> bytes | None:
    for line in head.lstrip(b"\xef\xbb\xbf").split(b"\n")[:50]:
        text = line.strip()
        if text and not text.startswith(b"#"):
            return text
    return None


def _is_number(field: bytes) -> bool:
    try:
        return bool(np.isfinite(float(field)))
    except ValueError:
        return False


def _stated_line(path: str | os.PathLike[str]) -> bytes | None:
    """The first line of a file written by motionkit (its statement), or None."""
    try:
        with open(path, "rb") as handle:
            first = handle.readline(4096)
    except OSError:
        return None
    return first if first.startswith(b"# motionkit g1csv") else None


def stated_fps(path: str | os.PathLike[str]) -> float | None:
    """The frame rate a file written by motionkit states in its first line, or None."""
    first = _stated_line(path)
    match = _STATED_FPS.search(first) if first is not None else None
    if match is None:
        return None
    try:
        return float(match.group(1))
    except ValueError:
        return None


def stated_order(path: str | os.PathLike[str]) -> str | None:
    """The quaternion order a file written by motionkit states in its first line, or None."""
    first = _stated_line(path)
    if first is None:
        return None
    for order in ORDERS:
        if f"root quaternion {' '.join(order)},".encode() in first:
            return order
    return None


def read(path: str | os.PathLike[str], *, quat: str | None = None, fps: float | None = None,
         character: CharacterSource | None = None) -> Motion:
    """Read a G1 CSV of either dialect: ``quat=wxyz|xyzw`` is required, unless the file's
    first line is motionkit's statement of its order (a header, not a guess)."""
    return read_dialect(path, quat or stated_order(path), fps, character, "g1csv")


def describe(obj: object) -> list[str]:
    """The dialect and conventions ``info`` shows, the assumed rate said so."""
    meta = obj.meta.get("g1csv") if isinstance(obj, Motion) else None
    if not isinstance(meta, dict) or not isinstance(obj, Motion):
        return []
    rate = obj.tracks["root"].timeline.rate
    if meta["dialect"] == "g1csv-seed":
        stated = ("G1 CSV dialect g1csv-seed: root xyz cm, extrinsic XYZ Euler degrees, 29 "
                  "joints degrees in G1 MJCF order, Z-up (read as m, rad)")
    else:
        stated = (f"G1 CSV dialect {meta['dialect']}: root xyz m, quaternion {meta['quat']} "
                  "(given, not detectable), 29 joints rad in G1 MJCF order, Z-up")
    said = {"given": "given (the fps option)",
            "stated": "stated by motionkit's first line"}.get(
        str(meta.get("fps_from")), "assumed (the file stores none)")
    return [stated, f"frame rate {rate:g} fps: {said}"]


def write_dialect(path: str | os.PathLike[str], obj: Motion, order: str, dialect: str) -> None:
    """Write the rows with the root quaternion in ``order`` after one comment line."""
    if order not in ORDERS:
        raise ConversionError("name the quaternion order: quat=wxyz or quat=xyzw (or write "
                              "--to g1csv-lafan / g1csv-kimodo)")
    root = np.asarray(obj.tracks["root"].data, dtype=np.float64)
    joints = obj.tracks.get("joints")
    if joints is None:
        raise ConversionError("a G1 CSV holds the 29 joint angles: the motion has no 'joints'")
    values = joint_values(joints)
    q = root[:, 3:7] if order == "xyzw" else quat.xyzw_to_wxyz(root[:, 3:7])
    rows = np.concatenate([root[:, :3], q, values], axis=1)
    timeline = obj.tracks["root"].timeline
    rate = f"{exact(timeline.rate)} fps" if timeline.rate else "unknown fps"
    with atomic_write(path, "w") as handle:
        handle.write(f"# motionkit {dialect}: root x y z (m), root quaternion {' '.join(order)}, "
                     f"29 joint angles (rad, G1 MJCF order: {' '.join(G1_JOINTS)}), Z-up, "
                     f"{rate}\n")
        handle.writelines(",".join(exact(v) for v in row) + "\n" for row in rows.tolist())


def losses(obj: Motion, **_: object) -> list[str]:
    """Joints of the motion that are not G1 joints (a G1 CSV has only the 29 columns), and
    the root's labels."""
    joints = obj.tracks.get("joints")
    extra = [name for name in (joints.labels or []) if name not in G1_JOINTS] \
        if joints is not None else []
    if not extra:
        return root_labels(obj)
    more = " …" if len(extra) > 5 else ""
    return [*root_labels(obj), f"joints {', '.join(extra[:5])}{more} (not G1 joints; a G1 CSV "
            "holds the 29 G1 joints only)"]


def joint_values(joints: Track) -> NDArray[np.float64]:
    """The 29 G1 joint columns of a ``joints`` track, by name where it names them."""
    values = np.asarray(joints.data, dtype=np.float64).reshape(joints.frames, -1)
    if joints.labels:
        missing = [name for name in G1_JOINTS if name not in joints.labels]
        if missing:
            raise ConversionError(f"'joints' lacks G1 joints {missing[:4]}")
        return values[:, [joints.labels.index(name) for name in G1_JOINTS]]
    if values.shape[1] != len(G1_JOINTS):
        raise ConversionError(f"'joints' has {values.shape[1]} unnamed columns; a G1 CSV has 29")
    return values


def write(path: str | os.PathLike[str], obj: Motion, *, quat: str | None = None) -> None:
    """Write a G1 CSV with the root quaternion in ``quat`` (``wxyz`` or ``xyzw``, required)."""
    write_dialect(path, obj, quat or "", "g1csv")

"""G1 CSV, the BONES-SEED retarget dialect (as ProtoMotions' ``convert_g1_csv_to_proto``
reads it): a header row, then ``Frame``, root position (3, **centimetres**), root rotation
as extrinsic XYZ Euler angles (3, **degrees**), 29 joint angles (**degrees**, G1 MJCF
order) — 36 columns. 120 fps unless ``fps`` says otherwise (the file stores no rate).

The header names the root columns ``root_translateX/Y/Z`` and ``root_rotateX/Y/Z`` and each
joint ``<joint>_dof``; the reader requires the first seven and matches joint columns by
name where they name G1 joints (with or without ``_joint``), else by position. The writer
writes that header with ``<joint name without _joint>_dof`` (the exact joint spelling of
the dataset is not known here; the reader accepts both).
"""

from __future__ import annotations

import io
import os
from pathlib import Path

import numpy as np
from scipy.spatial.transform import Rotation

from ..._io import atomic_write, read_bytes
from ..._limits import Budget
from ...errors import ConversionError, FormatError
from ...model import Motion, Timeline, Track
from ...model.character import CharacterSource
from ..shared.mjcf.character import load_character
from ..shared.textcolumns import exact
from . import g1csv
from .g1csv import G1_JOINTS, HOLDS, SEED_HEADER, describe, joint_values

__all__ = ["HOLDS", "describe", "losses", "read", "write"]
DEFAULT_FPS = 120.0


def _joint_column(name: str) -> str:
    return f"{name.removesuffix('_joint')}_dof"


def read(path: str | os.PathLike[str], *, fps: float | None = None,
         character: CharacterSource | None = None) -> Motion:
    """Read a BONES-SEED G1 CSV (cm, Euler degrees, joint degrees) at ``fps`` (default
    120, said to be assumed)."""
    fps_from = "assumed" if fps is None else "given"
    fps = DEFAULT_FPS if fps is None else fps
    if not (np.isfinite(fps) and 1e-3 <= fps <= 1e6):
        raise FormatError(f"fps must be between 0.001 and 1e6, got {fps:g}", path)
    raw = read_bytes(path)
    Budget("CSV cell", path, len(raw)).charge(raw.count(b",") + raw.count(b"\n"))
    head, _, body = raw.partition(b"\n")
    names = [name.strip() for name in head.decode("utf-8", "replace").split(",")]
    if tuple(names[:7]) != SEED_HEADER or len(names) != 7 + len(G1_JOINTS):
        raise FormatError(f"expected a header of {7 + len(G1_JOINTS)} columns starting "
                          f"{','.join(SEED_HEADER)}", path, 1, 1)
    try:
        rows = np.loadtxt(io.BytesIO(body), delimiter=",", ndmin=2, dtype=np.float64)
    except ValueError as exc:
        raise FormatError(f"not a table of numbers ({' '.join(str(exc).split())[:200]})",
                          path) from None
    if rows.size == 0 or rows.shape[1] != len(names) or not np.isfinite(rows).all():
        raise FormatError(f"rows must hold {len(names)} finite numbers each", path, 2)
    joints = np.radians(rows[:, 7:])
    by_name = {_joint_column(j): k for k, j in enumerate(G1_JOINTS)}
    by_name.update({f"{j}_dof": k for k, j in enumerate(G1_JOINTS)})
    if all(name in by_name for name in names[7:]):
        order = [by_name[name] for name in names[7:]]
        if sorted(order) == list(range(len(G1_JOINTS))):
            joints = joints[:, np.argsort(order)]
    root_q = Rotation.from_euler("xyz", rows[:, 4:7], degrees=True).as_quat()
    timeline = Timeline.uniform(fps, len(rows))
    motion = Motion(meta={"name": Path(path).stem, "g1csv": {
        "dialect": "g1csv-seed", "quat": "extrinsic XYZ Euler, degrees",
        "fps_assumed": fps_from == "assumed", "fps_from": fps_from}})
    motion.add(Track("root", "pose", np.concatenate([rows[:, 1:4] / 100.0, root_q], axis=1),
                     timeline))
    motion.add(Track("joints", "value", joints, timeline, list(G1_JOINTS)))
    if character is not None:
        motion.skeleton = load_character(character).to_skeleton()
    return motion


def losses(obj: Motion, **_: object) -> list[str]:
    """Joints that are not G1 joints, and a rate other than the dialect's (the file has no
    place for one)."""
    root = obj.tracks.get("root")
    rate = root.timeline.rate if root is not None else None
    lost = g1csv.losses(obj)
    if rate is not None and rate != DEFAULT_FPS:
        lost.append(f"the frame rate {rate:g} fps (the file stores none; readers assume "
                    f"{DEFAULT_FPS:g})")
    return lost


def write(path: str | os.PathLike[str], obj: Motion) -> None:
    """Write a BONES-SEED G1 CSV: the header, then frame numbers, cm, degrees."""
    root = np.asarray(obj.tracks["root"].data, dtype=np.float64)
    joints = obj.tracks.get("joints")
    if joints is None:
        raise ConversionError("a G1 CSV holds the 29 joint angles: the motion has no 'joints'")
    euler = Rotation.from_quat(root[:, 3:7]).as_euler("xyz", degrees=True)
    rows = np.concatenate([np.arange(len(root))[:, None], root[:, :3] * 100.0, euler,
                           np.degrees(joint_values(joints))], axis=1)
    with atomic_write(path, "w") as handle:
        handle.write(",".join([*SEED_HEADER, *map(_joint_column, G1_JOINTS)]) + "\n")
        handle.writelines(str(int(row[0])) + "," + ",".join(exact(v) for v in row[1:]) + "\n"
                          for row in rows.tolist())

"""KITTI odometry poses: 12 numbers per row, the 3x4 ``[R|t]`` matrix row by row.

The poses carry no time; a KITTI ``times.txt`` (one time in seconds per row) supplies it
through the ``times`` option. Without it frames are numbered 0, 1, 2 … (a uniform 1 Hz
timeline marked ``meta["kitti"]["time"] = "index"``) and writers that need real times refuse.
"""

from __future__ import annotations

import functools
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..._io import atomic_write
from ...errors import FormatError
from ...model import Motion, Timeline
from ..loss import Holds
from ..shared import poses
from . import _common as common
from ._text import TextTable, detect_delimiter, parse_numeric, read_table, scan
from .tum import first_numbers

PathLike = str | os.PathLike[str]



def sniff(head: bytes) -> bool:
    """True when the first data row is twelve numbers whose 3x3 part is a rotation (TUM
    rows with four extra columns are twelve numbers too)."""
    numbers = first_numbers(head)
    return len(numbers) == 12 and common.is_pose_matrix(numbers)


def matrices_to_quaternions(rotation: NDArray[np.float64]) -> NDArray[np.float64]:
    """(n, 3, 3) rotation matrices (nearest rotation if slightly off) to (n, 4) x y z w."""
    from scipy.spatial.transform import Rotation

    quat: NDArray[np.float64] = Rotation.from_matrix(rotation).as_quat(canonical=False)
    return quat


def quaternions_to_matrices(quat: NDArray[np.generic]) -> NDArray[np.float64]:
    """(n, 4) x y z w to (n, 3, 3) rotation matrices."""
    from scipy.spatial.transform import Rotation

    if quat.shape[0] == 0:
        return np.empty((0, 3, 3))
    matrices: NDArray[np.float64] = Rotation.from_quat(quat).as_matrix()
    return matrices


def read(path: PathLike, *, times: PathLike | None = None, rate: float | None = None,
         sort: bool = False, dedupe: bool = False) -> Motion:
    """Read KITTI poses; ``times`` names the matching ``times.txt``, ``rate`` a fixed rate.

    ``sort``/``dedupe`` reorder or drop rows by their ``times`` (otherwise unsorted or
    duplicate times are kept with a warning).
    """
    return read_table(path, functools.partial(_read, times=times, rate=rate, sort=sort,
                                              dedupe=dedupe))


def _read(table: TextTable, *, times: PathLike | None, rate: float | None, sort: bool,
          dedupe: bool) -> Motion:
    path = table.path
    values = parse_numeric(table, detect_delimiter(table))
    if table.rows and values.shape[1] != 12:
        raise FormatError(f"a KITTI row needs 12 numbers (3x4 [R|t]), found {values.shape[1]}",
                          path, table.line_of(0))
    values = values.reshape(-1, 3, 4)
    finite = np.all(np.isfinite(values), axis=(1, 2))
    if not np.all(finite):
        raise FormatError("non-finite pose", path, table.line_of(int(np.argmin(finite))))
    determinant = np.linalg.det(values[:, :, :3])
    bad = np.flatnonzero(~(determinant > 0))
    if bad.size:
        raise FormatError(f"the 3x3 part is not a rotation (determinant {determinant[bad[0]]:.6g}"
                          ": zero or mirrored)", path, table.line_of(int(bad[0])))
    quat = matrices_to_quaternions(values[:, :, :3]) if table.rows else np.empty((0, 4))
    position = values[:, :, 3]
    extras: dict[str, Any] = {"time": "index"}
    if times is not None:
        stamp_table = scan(times)
        stamps = parse_numeric(stamp_table, None, 1)[:, 0]
        if stamps.size != table.rows:
            raise FormatError(f"{stamps.size} times for {table.rows} poses in {path}", times)
        timeline, order = poses.stamped_timeline(stamps, None, path=times,
                                                  line_of=stamp_table.line_of, sort=sort,
                                                  dedupe=dedupe)
        if order is not None:
            quat, position, values = quat[order], position[order], values[order]
        extras = {"time": "stamps", "times_file": os.fspath(times)}
    elif rate is not None:
        timeline = Timeline.uniform(rate, table.rows)
        extras = {"time": "rate"}
    else:
        timeline = Timeline.frame_numbers(table.rows)
    meta = {"name": Path(path).stem, "epsg": 0, "nframe": None, "kitti": extras}
    motion = poses.build_motion(timeline, position, quat, meta=meta)
    # the matrices as written: evaluation uses them as evo does (the quaternions restate them
    # to rounding), so its numbers match evo's to the last digits
    motion.tracks["root"].attrs["matrices"] = values
    return motion


def holds(times: PathLike | None = None) -> Holds:
    """The root pose; its times only with a ``times`` file beside, else frame numbers only."""
    return replace(poses.pose_holds("kitti"), times=times is not None, frame_numbers=times is None)


def write(path: PathLike, obj: Motion, *, precision: int = 9,
          times: PathLike | None = None) -> None:
    """Write 12 fixed-point numbers per row; ``times`` also writes a ``times.txt``."""
    root = obj.tracks["root"]
    matrices = np.empty((root.frames, 3, 4))
    matrices[:, :, :3] = quaternions_to_matrices(root.data[:, 3:])
    matrices[:, :, 3] = root.data[:, :3]
    flat = matrices.reshape(-1, 12)
    number = common.Fixed(precision)
    with atomic_write(path, "w") as handle:
        common.write_rows(handle, [(flat[:, i], number) for i in range(12)], " ", root.frames)
    if times is not None:
        with atomic_write(times, "w") as handle:
            common.write_rows(handle, [common.time_column(root.timeline, number)], " ",
                              root.frames)

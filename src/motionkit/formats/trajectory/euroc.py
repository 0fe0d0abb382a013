"""EuRoC / ASL ground-truth CSV: nanosecond stamps, position, w-first quaternion, and
optionally velocity and IMU biases (17 columns in ``state_groundtruth_estimate0/data.csv``).

Stamps are kept as integer nanoseconds (exact round trip); quaternions become x, y, z, w.
"""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path
from typing import Any

import numpy as np

from ..._io import atomic_write
from ...errors import FormatError, format_hint, option_hint, warn
from ...model import Motion, Track
from ...model.timeline import seconds_to_ns
from ..shared import poses
from ..shared.poses import UnitRows
from . import _common as common
from ._text import (
    Target,
    TextTable,
    check_cells,
    detect_delimiter,
    field_count,
    parse_into,
    read_table,
)

PathLike = str | os.PathLike[str]

#: The root pose with its velocity and IMU biases (all vectors, on the root's timeline).
HOLDS = poses.pose_holds("euroc", velocity="vector3", gyro_bias="vector3",
                         accel_bias="vector3")

_HEADER = ("#timestamp [ns]", "p_RS_R_x [m]", "p_RS_R_y [m]", "p_RS_R_z [m]", "q_RS_w []",
           "q_RS_x []", "q_RS_y []", "q_RS_z []")
_VELOCITY = ("v_RS_R_x [m s^-1]", "v_RS_R_y [m s^-1]", "v_RS_R_z [m s^-1]")
_BIASES = ("b_w_RS_S_x [rad s^-1]", "b_w_RS_S_y [rad s^-1]", "b_w_RS_S_z [rad s^-1]",
           "b_a_RS_S_x [m s^-2]", "b_a_RS_S_y [m s^-2]", "b_a_RS_S_z [m s^-2]")


def sniff(head: bytes) -> bool:
    """True for a ``#timestamp`` header over rows that start with an integer stamp, or for
    a first row starting with a nanosecond stamp (a header over rows of seconds, as in
    open_vins' timing tables, is another table)."""
    text = head.lstrip(b"\xef\xbb\xbf")
    header = re.match(rb"#\s*timestamp", text, re.IGNORECASE) is not None
    stamp = rb"\d+\s*," if header else rb"\d{16,20}\s*,"
    for raw in text.split(b"\n")[:20]:
        row = raw.strip()
        if row and not row.startswith(b"#"):
            return re.match(stamp, row) is not None and row.count(b",") >= 7
    return header


def hint(head: bytes) -> str | None:
    """For a file no format claims: EuRoC's header over stamps that are no integer
    nanoseconds (seconds, say), which is EuRoC's columns (w-first quaternions) but not
    its stamps; TUM's reader takes it when told the order."""
    text = head.lstrip(b"\xef\xbb\xbf")
    lines = text.split(b"\n", 2)
    if (len(lines) < 2 or not lines[0].startswith(_HEADER[0].encode())
            or b"q_RS_w" not in lines[0]
            or not re.match(rb"\s*\d+\.\d*(?:[eE][-+]?\d+)?\s*,", lines[1])):
        return None
    return ("its header names EuRoC's columns, but its stamps are not integer nanoseconds "
            f"as EuRoC's are: for stamps in seconds read it with {format_hint('tum')} "
            f"{option_hint('quaternion_order', 'wxyz')} (w first, as the header says)")


def read(path: PathLike, *, sort: bool = False, dedupe: bool = False) -> Motion:
    """Read an EuRoC CSV into a trajectory Motion with exact nanosecond stamps."""
    return read_table(path, functools.partial(_read, sort=sort, dedupe=dedupe))


def _read(table: TextTable, *, sort: bool, dedupe: bool) -> Motion:
    path = table.path
    delimiter = detect_delimiter(table) or b","
    width = field_count(table.first_row(), delimiter) if table.rows else 8
    if width < 8:
        raise FormatError(f"an EuRoC row needs at least 8 columns, found {width}", path,
                          table.line_of(0))
    check_cells(table, width)
    ns = np.empty(table.rows, dtype=np.int64)
    values = np.empty((table.rows, width), order="F")  # column 0 (the stamps) stays unused
    targets: dict[int, Target] = {i: values[:, i] for i in range(1, width)}
    targets[0] = ns
    quaternion = UnitRows((5, 6, 7, 4))  # the file has w first
    rows = parse_into(table, delimiter, width, targets, unit=quaternion) if table.rows else 0
    ns, values = ns[:rows], values[:rows]
    quaternion.check(path, table.line_of)
    quat = values[:, [5, 6, 7, 4]]
    position = values[:, 1:4]
    timeline, order = poses.stamped_timeline(None, ns, path=path, line_of=table.line_of,
                                              sort=sort, dedupe=dedupe)
    if order is not None:
        values, quat, position = values[order], quat[order], position[order]
    names = _column_names(table.comments)
    meta: dict[str, Any] = {"name": Path(path).stem, "epsg": 0, "nframe": None,
                            "euroc": {"columns": names}}
    velocity = values[:, 8:11] if width >= 11 else None
    motion = poses.build_motion(timeline, position, quat, velocity=velocity, meta=meta)
    if width >= 17:
        motion.add(Track("gyro_bias", "vector3", values[:, 11:14], timeline))
        motion.add(Track("accel_bias", "vector3", values[:, 14:17], timeline))
    used = 17 if width >= 17 else 11 if width >= 11 else 8
    if width > used:
        labels = names[used:width] if len(names) >= width else None
        motion.add(Track("extra", "value", values[:, used:width], timeline, labels=labels))
        warn(f"{path}: {width - used} unrecognised column(s) kept as track 'extra'")
    return motion


def _column_names(comments: list[tuple[int, str]]) -> list[str]:
    for _, text in comments:
        if "," in text:
            return [name.strip() for name in text.lstrip("#").split(",")]
    return []


def losses(obj: Motion, **_: object) -> list[str]:
    """EuRoC's columns: biases come in pairs, after the velocity."""
    held = obj.tracks
    biases = "gyro_bias" in held and "accel_bias" in held
    if not biases and ("gyro_bias" in held or "accel_bias" in held):
        return ["a bias track without its partner (EuRoC holds both or neither)"]
    if biases and "velocity" not in held:
        return ["the IMU biases (EuRoC needs velocity columns before them)"]
    return []


def write(path: PathLike, obj: Motion, *, precision: int = 9) -> None:
    """Write the canonical EuRoC layout (8, 11 or 17 columns), integer ns stamps."""
    root, held = obj.tracks["root"], obj.tracks
    biases = "gyro_bias" in held and "accel_bias" in held and "velocity" in held
    timeline = root.timeline
    ns = (timeline.stamps_ns if timeline.stamps_ns is not None
          else seconds_to_ns(timeline.times))
    number = common.Fixed(precision)
    data = root.data
    columns: list[tuple[Any, common.Formatter | None]] = [(ns, common.integers)]
    columns += [(data[:, i], number) for i in (0, 1, 2, 6, 3, 4, 5)]
    header = list(_HEADER)
    extra = ["velocity"] if "velocity" in held else []
    if biases:
        extra += ["gyro_bias", "accel_bias"]
    for name in extra:
        vectors = obj.tracks[name].data.reshape(-1, 3)
        columns += [(vectors[:, i], number) for i in range(3)]
    header += list(_VELOCITY) if extra else []
    header += list(_BIASES) if biases else []
    with atomic_write(path, "w") as handle:
        handle.write(", ".join(header) + "\n")
        common.write_rows(handle, columns, ",", root.frames)

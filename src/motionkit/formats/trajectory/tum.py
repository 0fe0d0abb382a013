"""TUM RGB-D trajectories: ``t x y z qx qy qz qw`` per row.

Read tolerantly (any whitespace or commas, ``#`` comments anywhere, one header row of
names, extra columns at the end, w-first quaternions on request or when the header row says
so); written canonically: single spaces, fixed-point numbers, no header.
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
from ..shared import poses
from ..shared.poses import UnitRows
from . import _common as common
from ._text import (
    DecimalSeconds,
    TextTable,
    decimal_nanoseconds,
    detect_delimiter,
    field_count,
    parse_into,
    read_table,
)

PathLike = str | os.PathLike[str]

#: The root pose with real times; integer nanosecond stamps as exact decimal seconds
#: (and read back exactly where float64 cannot hold them).
HOLDS = poses.pose_holds("tum")
_NUMBER = rb"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?(?:nan|inf)"


def _first_data_row(head: bytes) -> bytes | None:
    for raw in head.lstrip(b"\xef\xbb\xbf").split(b"\n")[:50]:
        text = raw.strip()
        if text and not text.startswith(b"#"):
            return text
    return None


def first_numbers(head: bytes) -> list[float]:
    """The numbers of the first data row ([] when it is not all numbers)."""
    row = _first_data_row(head)
    if row is None:
        return []
    tokens = re.split(rb"[,;\s]+", row.strip(b", "))
    if all(re.fullmatch(_NUMBER, t, re.IGNORECASE) for t in tokens):
        return [float(t) for t in tokens]
    return []


def sniff(head: bytes) -> bool:
    """True when the first data row is eight numbers ending in a unit quaternion (a table
    of eight other numbers, such as open_vins' timings, is not a TUM file), under no
    header naming quaternion columns in a way this reader takes no order from."""
    numbers = first_numbers(head)
    return len(numbers) == 8 and common.near_unit(numbers[4:8]) and not _foreign_names(head)


def _foreign_names(head: bytes) -> bool:
    """True when a comment row above the data names quaternion columns (``q…w``, ``q…x``)
    other than TUM's ``qx … qw`` spellings, which the reader orders by: EuRoC's ``q_RS_w
    [], q_RS_x [] …`` say w first, and read as TUM (x y z w) the rotation would be wrong."""
    for raw in head.lstrip(b"\xef\xbb\xbf").split(b"\n")[:50]:
        text = raw.strip().decode("utf-8", "replace")
        if text and not text.startswith("#"):
            return False
        names = [name.lower() for name in re.split(r"[,;\s]+", text.lstrip("#")) if name]
        quaternion = [name[-1] for name in names if re.fullmatch(r"q\w*[wxyz]", name)]
        if {"w", "x"} <= set(quaternion) and _order_from_names([(0, text)]) is None:
            return True
    return False


def hint(head: bytes) -> str | None:
    """For a file no format claims: rows of more than eight numbers are TUM with extras,
    unless they are a time and a KITTI pose matrix."""
    numbers = first_numbers(head)
    fields = len(numbers)
    if fields == 13 and common.is_pose_matrix(numbers[1:]):
        return ("its rows hold a time and a KITTI 3x4 pose matrix (13 numbers), which no "
                "reader takes as one file: put the first column in a times file and read the "
                f"other twelve with {format_hint('kitti')} {option_hint('times', 'FILE')}")
    if fields >= 8 and not common.near_unit(numbers[4:8]):
        norm = sum(value * value for value in numbers[4:8]) ** 0.5
        return (f"its rows hold {fields} numbers, but columns 5-8 are no unit quaternion "
                f"(norm {norm:.3g}): these rows are not poses (if they are, read them with "
                f"{format_hint('tum')} {option_hint('normalize', True)})")
    if fields > 8:
        return (f"its rows hold {fields} numbers, TUM's eight and {fields - 8} more: read it "
                f"with {format_hint('tum')} ({option_hint('extra', 'NAME')} keeps the rest as "
                "a track)")
    return None


def _names_row(comments: list[tuple[int, str]], width: int) -> list[str] | None:
    """The column names of the last comment that names ``width`` columns."""
    for _, text in reversed(comments):
        names = re.split(r"[,;\s]+", text.lstrip("#").strip())
        if len(names) == width:
            return names
    return None


def _order_from_names(comments: list[tuple[int, str]]) -> str | None:
    for _, text in reversed(comments):
        names = [n.lower() for n in re.split(r"[,;\s]+", text.lstrip("#").strip())]
        if "qw" in names and "qx" in names:
            return "wxyz" if names.index("qw") < names.index("qx") else "xyzw"
    return None


def read(path: PathLike, *, time_unit: str = "s", sort: bool = False, dedupe: bool = False,
         quaternion_order: str | None = None, extra: str | None = None,
         normalize: bool = False) -> Motion:
    """Read a TUM file (or a tolerant variant) into a trajectory Motion.

    ``quaternion_order`` is ``xyzw`` (TUM) or ``wxyz``; by default it comes from a header
    row naming ``qw``/``qx``, else ``xyzw``. Columns after the eighth (covariances, say)
    are ignored with a warning, or kept as a value track called ``extra`` (labelled from a
    header row that names every column). Quaternions are scaled to unit length; a few
    rows far from it are a warning, more (or the first row) a FormatError unless
    ``normalize`` (see ``UnitRows.check``).
    """
    return read_table(path, functools.partial(_read, time_unit=time_unit, sort=sort,
                                              dedupe=dedupe, quaternion_order=quaternion_order,
                                              extra=extra, normalize=normalize),
                      header_row=True)


def _read(table: TextTable, *, time_unit: str, sort: bool, dedupe: bool,
          quaternion_order: str | None, extra: str | None, normalize: bool) -> Motion:
    path = table.path
    delimiter = detect_delimiter(table)
    width = field_count(table.first_row(), delimiter) if table.rows else 8
    if width < 8:
        raise FormatError(f"a TUM row needs 8 numbers (t x y z qx qy qz qw), found {width}",
                          path, table.line_of(0))
    if width == 12 and extra is None and common.is_pose_matrix(first_numbers(table.first_row())):
        raise FormatError("its rows are KITTI 3x4 pose matrices (twelve numbers, a rotation in "
                          f"columns 1-3, 5-7, 9-11), not TUM rows: read it with "
                          f"{format_hint('kitti')}", path, table.line_of(0))
    order = (quaternion_order or _order_from_names(table.comments) or "xyzw").lower()
    if order not in ("xyzw", "wxyz"):
        raise FormatError(f"quaternion_order must be xyzw or wxyz, not {order!r}", path)
    pose = np.empty((table.rows, 7))
    times = np.empty(table.rows)
    slots = (3, 4, 5, 6) if order == "xyzw" else (6, 3, 4, 5)
    targets = {0: times, 1: pose[:, 0], 2: pose[:, 1], 3: pose[:, 2]}
    targets.update({4 + i: pose[:, slot] for i, slot in enumerate(slots)})
    kept = np.empty((table.rows, width - 8)) if extra and width > 8 else None
    if kept is not None:
        targets.update({8 + i: kept[:, i] for i in range(width - 8)})
    quaternion = UnitRows((4, 5, 6, 7) if order == "xyzw" else (5, 6, 7, 4),
                          tolerance=common.UNIT_TOLERANCE)
    scale = common.time_scale(time_unit, path)
    decimal = DecimalSeconds(0) if scale == 1.0 else None
    rows = (parse_into(table, delimiter, width, targets, unit=quaternion, decimal=decimal)
            if table.rows else 0)
    pose, times = pose[:rows], times[:rows]
    if width > 8 and kept is None:
        warn(f"{path}: columns after the 8th ignored ({width} per row; "
             f"{option_hint('extra', 'NAME')} keeps them)")
    quaternion.check(path, table.line_of, rows, normalize)
    ns = decimal_nanoseconds(table, delimiter, times, decimal) if decimal else None
    if scale != 1.0:
        times = times * scale
    timeline, keep = poses.stamped_timeline(times, ns, path=path, line_of=table.line_of,
                                             sort=sort, dedupe=dedupe,
                                             seconds_of_ns=scale == 1.0)
    if keep is not None:
        pose = pose[keep]
    meta: dict[str, Any] = {"name": Path(path).stem, "epsg": 0, "nframe": None,
                            "tum": {"comments": [text for _, text in table.comments],
                                    "quaternion_order": order}}
    motion = poses.pose_motion(timeline, pose, True, meta=meta)
    if kept is not None and extra is not None:
        kept = kept[:rows] if keep is None else kept[:rows][keep]
        names = _names_row(table.comments, width)
        motion.add(Track(extra, "value", kept, timeline, names[8:] if names else None))
    return motion


def write(path: PathLike, obj: Motion, *, precision: int = 9) -> None:
    """Write ``t x y z qx qy qz qw`` rows, single spaces, ``precision`` decimals."""
    root = obj.tracks["root"]
    number = common.Fixed(precision)
    columns = [common.time_column(root.timeline, number)]
    columns += [(root.data[:, i], number) for i in range(7)]
    with atomic_write(path, "w") as handle:
        common.write_rows(handle, columns, " ", root.frames)

"""Pieces the text trajectory formats share: time units and the stamps column (the
pieces bags share are in ``formats.poses``, the text table writer in ``formats.textcolumns``,
whose names are used here through this module)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ...errors import FormatError, choices
from ...model import Timeline
from ..shared.textcolumns import Fixed, Formatter, integers, ns_seconds, shortest, write_rows

__all__ = ["TIME_UNITS", "UNIT_TOLERANCE", "Fixed", "Formatter", "integers", "is_pose_matrix",
           "near_unit", "ns_seconds", "shortest", "time_column", "time_scale", "write_rows"]

#: Seconds per unit for the time-unit option.
TIME_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}


def time_scale(unit: str, path: object = None) -> float:
    """Seconds per stamp unit; a clear error for unknown units."""
    try:
        return TIME_UNITS[unit.strip().lower()]
    except KeyError:
        raise FormatError(f"unknown time unit {unit!r} ({choices(unit, TIME_UNITS)})",
                          str(path) if path is not None else None) from None


def time_column(timeline: Timeline, number: Formatter) -> tuple[Any, Formatter | None]:
    """The stamps column: exact text from integer nanoseconds when known, else floats."""
    if timeline.stamps_ns is not None:
        return timeline.stamps_ns, ns_seconds
    return timeline.times, number


#: How far a quaternion's norm may be from 1 in a pose file (text rounding reaches 1e-4 at
#: four decimals): beyond it a row is no rotation, and a file of such rows is not poses
#: (open_vins' timing tables have "quaternions" of norm 0.002-0.4; see UnitRows.check).
UNIT_TOLERANCE = 0.05


def near_unit(quaternion: Sequence[float]) -> bool:
    """True when four numbers are a unit quaternion within :data:`UNIT_TOLERANCE`."""
    return abs(float(np.linalg.norm(quaternion)) - 1.0) <= UNIT_TOLERANCE


def is_pose_matrix(numbers: Sequence[float]) -> bool:
    """True when twelve numbers, row by row, are a 3x4 [R|t] with R a rotation (to 1e-2:
    written rotations drift a little; a stamp or a position in those places is far off)."""
    if len(numbers) != 12:
        return False
    rotation = np.asarray(numbers, dtype=float).reshape(3, 4)[:, :3]
    if not np.all(np.isfinite(rotation)):
        return False
    return bool(np.allclose(rotation @ rotation.T, np.eye(3), atol=1e-2)
                and np.linalg.det(rotation) > 0)

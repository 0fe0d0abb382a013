"""Pieces the text trajectory formats share: time units and the stamps column (the
pieces bags share are in ``formats.poses``, the text table writer in ``formats.textcolumns``,
whose names are used here through this module)."""

from __future__ import annotations

from typing import Any

from ...errors import FormatError
from ...model import Timeline
from ..shared.textcolumns import Fixed, Formatter, integers, ns_seconds, shortest, write_rows

__all__ = ["TIME_UNITS", "Fixed", "Formatter", "integers", "ns_seconds", "shortest", "time_column",
           "time_scale", "write_rows"]

#: Seconds per unit for the time-unit option.
TIME_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}


def time_scale(unit: str, path: object = None) -> float:
    """Seconds per stamp unit; a clear error for unknown units."""
    try:
        return TIME_UNITS[unit.strip().lower()]
    except KeyError:
        known = ", ".join(TIME_UNITS)
        raise FormatError(f"unknown time unit {unit!r} (known: {known})",
                          str(path) if path is not None else None) from None


def time_column(timeline: Timeline, number: Formatter) -> tuple[Any, Formatter | None]:
    """The stamps column: exact text from integer nanoseconds when known, else floats."""
    if timeline.stamps_ns is not None:
        return timeline.stamps_ns, ns_seconds
    return timeline.times, number



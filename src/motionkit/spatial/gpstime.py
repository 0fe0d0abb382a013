"""GPS time <-> Unix (UTC) time with a leap-second table by date.

GPS time runs without leap seconds from its epoch 1980-01-06 00:00:00 UTC; UTC has
inserted leap seconds since, so GPS - UTC grows over the years (18 s since 2017-01-01).
A fixed 18 s offset is wrong for any data recorded before 2017; this module looks the
offset up by date instead.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

#: Unix time of the GPS epoch, 1980-01-06 00:00:00 UTC.
GPS_EPOCH_UNIX = 315964800
#: Seconds in a GPS week.
WEEK_SECONDS = 604800

# (Unix time at which the new offset starts, GPS - UTC from then on), from the IERS
# leap-second announcements (TAI - UTC minus the 19 s that TAI and GPS differ by).
_LEAPS: tuple[tuple[int, int], ...] = (
    (362793600, 1),    # 1981-07-01
    (394329600, 2),    # 1982-07-01
    (425865600, 3),    # 1983-07-01
    (489024000, 4),    # 1985-07-01
    (567993600, 5),    # 1988-01-01
    (631152000, 6),    # 1990-01-01
    (662688000, 7),    # 1991-01-01
    (709948800, 8),    # 1992-07-01
    (741484800, 9),    # 1993-07-01
    (773020800, 10),   # 1994-07-01
    (820454400, 11),   # 1996-01-01
    (867715200, 12),   # 1997-07-01
    (915148800, 13),   # 1999-01-01
    (1136073600, 14),  # 2006-01-01
    (1230768000, 15),  # 2009-01-01
    (1341100800, 16),  # 2012-07-01
    (1435708800, 17),  # 2015-07-01
    (1483228800, 18),  # 2017-01-01
)

_UNIX_STARTS = np.array([start for start, _ in _LEAPS], dtype=np.float64)
_OFFSETS = np.array([0] + [offset for _, offset in _LEAPS], dtype=np.float64)
# The same instants on the GPS scale (seconds since the GPS epoch).
_GPS_STARTS = _UNIX_STARTS - GPS_EPOCH_UNIX + _OFFSETS[1:]


def leap_seconds_at_unix(unix: ArrayLike) -> NDArray[np.float64]:
    """GPS - UTC in seconds in force at the given Unix times."""
    index = np.searchsorted(_UNIX_STARTS, np.asarray(unix, dtype=np.float64), side="right")
    return _OFFSETS[index]


def gps_to_unix(gps_seconds: ArrayLike) -> NDArray[np.float64]:
    """Seconds since the GPS epoch (GPS scale) to Unix seconds (UTC)."""
    gps = np.asarray(gps_seconds, dtype=np.float64)
    leaps = _OFFSETS[np.searchsorted(_GPS_STARTS, gps, side="right")]
    return gps + GPS_EPOCH_UNIX - leaps


def unix_to_gps(unix: ArrayLike) -> NDArray[np.float64]:
    """Unix seconds (UTC) to seconds since the GPS epoch (GPS scale)."""
    times = np.asarray(unix, dtype=np.float64)
    return times - GPS_EPOCH_UNIX + leap_seconds_at_unix(times)


def week_sow_to_unix(week: ArrayLike, seconds_of_week: ArrayLike) -> NDArray[np.float64]:
    """GPS week number and seconds of week to Unix seconds (UTC), leap seconds by date.

    Seconds of week beyond one week (a roll-over kept in the same week) are accepted.
    """
    gps = np.asarray(week, dtype=np.float64) * WEEK_SECONDS + np.asarray(
        seconds_of_week, dtype=np.float64)
    return gps_to_unix(gps)

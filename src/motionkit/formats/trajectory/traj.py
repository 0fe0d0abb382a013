"""trajectopy's ASCII trajectory format (``.traj``; ``.txt``/``.csv`` with a ``#fields`` header).

A self-describing ``#key value`` header (anywhere in the file) names the columns, the
delimiter, the time system, the rotation parameters, the navigation frame and the CRS.
Where trajectopy silently misreads (see the trajectories spec, §2.12) this reader raises a
FormatError with line and column or warns explicitly. Times become Unix seconds (UTC),
navigation frames ENU, rotations unit quaternions (x, y, z, w).
"""

from __future__ import annotations

import functools
import itertools
import math
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TypeVar, cast

import numpy as np
from numpy.typing import NDArray

from ..._io import atomic_write
from ...errors import FormatError, warn
from ...model import Motion, Timeline
from ...model.timeline import ns_to_seconds
from ...spatial import gpstime
from ...spatial.navframe import is_right_handed, nframe_matrix
from ..shared import poses
from ..shared.poses import UnitRows
from . import _common as common
from ._text import (
    DecimalSeconds,
    RowFields,
    Target,
    TextTable,
    check_cells,
    decimal_nanoseconds,
    detect_delimiter,
    field_count,
    parse_into,
    read_table,
)

PathLike = str | os.PathLike[str]

#: The root pose (or position only), velocity and arc length, the CRS and the sorting; a
#: timeline of frame numbers is written without a ``t`` column (read back as such).
HOLDS = replace(poses.pose_holds("traj", velocity="vector3", arc_length="value"),
                meta=frozenset({"epsg", "sorting"}), position_only=True, frame_numbers=True)

#: Header keys trajectopy knows (plus ``time_unit`` and ``body_frame``, ours).
KEYS = frozenset({
    "epsg", "name", "sorting", "state", "fields", "delimiter", "nframe", "type",
    "comparison_method", "relative_dist_unit", "num_pairs", "rot_unit", "euler_rot_seq",
    "time_format", "datetime_format", "datetime_timezone", "id", "gps_week", "time_offset",
    "time_unit", "body_frame",
})
FIELDS = frozenset({"t", "l", "px", "py", "pz", "qx", "qy", "qz", "qw", "ex", "ey", "ez",
                    "vx", "vy", "vz", "-"})
DEFAULT_FIELDS = ("t", "px", "py", "pz", "qx", "qy", "qz", "qw")
_DELIMITER_NAMES = {"tab": "\t", "space": " ", "comma": ",", "semicolon": ";", "\\t": "\t"}
_SORTING = {"time": "time", "arc_length": "arc_length", "path_length": "arc_length",
            "chrono": "time", "spatial": "arc_length"}
_EULER = re.compile(r"^(?:[xyz]{1,3}|[XYZ]{1,3})$")
_GPS_EPOCH = datetime(1980, 1, 6)
_Value = TypeVar("_Value", int, float)


def sniff(head: bytes) -> bool:
    """True when a line starts with a trajectopy header key such as ``#fields``."""
    text = head.lstrip(b"\xef\xbb\xbf")
    return re.search(rb"(?m)^#(fields|epsg|nframe|time_format|sorting|rot_unit)\b", text,
                     re.IGNORECASE) is not None


class _Header:
    """Header entries by lower-case key: (value, line, column of the value)."""

    def __init__(self, comments: list[tuple[int, str]], path: PathLike) -> None:
        self.path = path
        self.entries: dict[str, tuple[str, int, int]] = {}
        self.notes: list[str] = []  # warnings, given once the rows are read
        for line, text in comments:
            match = re.match(r"#([A-Za-z_]\w*)(?:[ \t]+(.*))?$", text)
            if match is None:
                spaced = re.match(r"#[ \t]+([A-Za-z_]\w*)[ \t]", text)
                if spaced and spaced.group(1).lower() in KEYS:
                    self.notes.append(f"{path}:{line}: '{text[:30]}' is a comment, not a "
                                      f"header (no space after '#': #{spaced.group(1)})")
                continue
            key = match.group(1).lower()
            value = (match.group(2) or "").strip()
            column = match.start(2) + 1 if match.group(2) is not None else len(text) + 1
            if key not in KEYS:
                self.notes.append(f"{path}:{line}: unknown header key #{match.group(1)} ignored")
                continue
            self.entries[key] = (value, line, column)

    def get(self, key: str, default: str | None = None) -> str | None:
        entry = self.entries.get(key)
        return entry[0] if entry else default

    def error(self, key: str, message: str) -> FormatError:
        _, line, column = self.entries[key]
        return FormatError(message, self.path, line, column)

    def value(self, key: str, default: _Value, convert: Callable[[str], _Value]) -> _Value:
        """The first word of ``#key`` through ``convert`` (int or float), which must give a
        finite number; ``default`` when the key is absent."""
        text = self.get(key)
        if text is None:
            return default
        kind = "an integer" if convert is int else "a finite number"
        try:
            result = convert(text.split()[0])
        except (ValueError, IndexError):
            raise self.error(key, f"#{key} needs {kind}, got {text!r}") from None
        if not math.isfinite(result):
            raise self.error(key, f"#{key} needs {kind}, got {text!r}")
        return result


def _delimiter(header: _Header, table: TextTable) -> bytes | None:
    value = header.get("delimiter")
    if value is None:
        return detect_delimiter(table)
    text = value
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        text = text[1:-1]
    text = _DELIMITER_NAMES.get(text.lower(), text)
    if text in (" ", "\t"):
        return None
    if len(text) != 1 or text in "#.-+" or text.isalnum():
        raise header.error("delimiter", f"#delimiter must be one character, 'tab' or 'space', "
                                        f"got {value!r}")
    return text.encode()


def _fields(header: _Header) -> list[str]:
    value = header.get("fields")
    if value is None:
        return list(DEFAULT_FIELDS)
    names = [name.strip() for name in value.split(",")]
    _, line, column = header.entries["fields"]
    seen: set[str] = set()
    for name in names:
        if name not in FIELDS:
            raise FormatError(f"unknown field {name!r} in #fields (known: "
                              f"{', '.join(sorted(FIELDS))}; '-' skips a column)",
                              header.path, line, column)
        if name in seen and name not in ("t", "-"):
            raise FormatError(f"field {name!r} appears twice in #fields", header.path, line,
                              column)
        seen.add(name)
    for group in (("px", "py", "pz"), ("qx", "qy", "qz", "qw"), ("ex", "ey", "ez"),
                  ("vx", "vy", "vz")):
        present = [g for g in group if g in seen]
        if present and len(present) != len(group):
            missing = [g for g in group if g not in seen]
            raise FormatError(f"#fields has {', '.join(present)} but not {', '.join(missing)}",
                              header.path, line, column)
    if "px" not in seen:
        raise FormatError("#fields must contain px, py and pz", header.path, line, column)
    return names


def read(path: PathLike, *, time_unit: str | None = None, sort: bool = False,
         dedupe: bool = False, gps_week: int | None = None, to_epsg: int | None = None,
         local_enu: bool = False) -> Motion:
    """Read a trajectopy ASCII file into a trajectory Motion (root pose in ENU, Unix time).

    ``time_unit`` (s, ms, us, ns) scales ``t`` in unix mode (default from ``#time_unit``,
    else seconds). ``sort``/``dedupe`` reorder or drop rows (otherwise kept with a
    warning). ``gps_week`` supplies a week the file lacks. ``to_epsg`` reprojects and
    ``local_enu`` moves geodetic positions into a local ENU frame (both need pyproj).
    """
    return read_table(path, functools.partial(
        _read, time_unit=time_unit, sort=sort, dedupe=dedupe, gps_week=gps_week,
        to_epsg=to_epsg, local_enu=local_enu))


def _read(table: TextTable, *, time_unit: str | None, sort: bool, dedupe: bool,
          gps_week: int | None, to_epsg: int | None, local_enu: bool) -> Motion:
    """The trajectory Motion of a ``.traj`` table (the options as in :func:`read`)."""
    path = table.path
    header = _Header(table.comments, path)
    fields = _fields(header)
    delimiter = _delimiter(header, table)
    clock = _clock(header, fields, time_unit)
    pose = np.zeros((table.rows, 7))
    quaternion = (UnitRows((fields.index("qx"), fields.index("qy"), fields.index("qz"),
                            fields.index("qw"))) if "qx" in fields else None)
    cols, datetimes = _columns(table, header, fields, delimiter, clock, pose, quaternion)
    rows = table.rows
    pose = pose[:rows]
    for note in header.notes:  # only now: a one-pass read given up reads the header again
        warn(note)
    times, ns = _times(table, header, delimiter, clock, cols, datetimes, gps_week)
    quat = _rotations(header, fields, cols, pose, table, quaternion)
    velocity = (np.column_stack([cols["vx"], cols["vy"], cols["vz"]])[:rows]
                if "vx" in fields else None)
    arc = cols["l"][:rows].copy() if "l" in fields else None
    del cols  # the parsed columns are not needed any more: keep the peak memory low
    epsg = header.value("epsg", 0, int)
    file_nframe, velocity = _to_enu(header, pose, velocity, quat, epsg)
    sorting = _sorting(header)
    if not clock.columns:
        timeline = Timeline.frame_numbers(times.size)
    else:
        timeline, order = poses.stamped_timeline(times, ns, path=path, line_of=table.line_of,
                                                  sort=sort, dedupe=dedupe,
                                                  seconds_of_ns=not clock.offset)
        if order is not None:
            pose = pose[order]
            velocity = velocity[order] if velocity is not None else None
            arc = arc[order] if arc is not None else None
    meta = _meta(header, epsg, file_nframe, sorting, "stamps" if clock.columns else "index")
    if to_epsg is not None or local_enu:
        pose[:, :3] = _reproject(pose[:, :3], meta, to_epsg, local_enu)
    return poses.pose_motion(timeline, pose, quat, velocity=velocity, arc_length=arc,
                              meta=meta)


@dataclass
class _Clock:
    """How the ``t`` columns become times: ``#time_format``, which columns are ``t``, the
    ``#time_offset`` in seconds, the unit of unix times and its factor to seconds, and the
    exact reading of decimal unix seconds (None where it does not apply)."""

    format: str
    columns: list[int]
    offset: float
    unit: str
    scale: float
    decimal: DecimalSeconds | None

    @property
    def nanoseconds(self) -> bool:
        """Whether the unit is ns (the ``t`` column is then read as exact integers)."""
        return self.unit.strip().lower() == "ns"


def _clock(header: _Header, fields: list[str], time_unit: str | None) -> _Clock:
    """The header's time settings (the ``time_unit`` option before ``#time_unit``)."""
    time_format = (header.get("time_format") or "unix").lower()
    if time_format not in ("unix", "datetime", "gps_sow"):
        raise header.error("time_format", f"unknown #time_format {header.get('time_format')!r} "
                                          "(known: unix, datetime, gps_sow)")
    t_columns = [i for i, name in enumerate(fields) if name == "t"]
    if len(t_columns) > 1 and time_format != "datetime":
        raise header.error("fields", f"{len(t_columns)} 't' columns need #time_format datetime "
                                     "(only date and time parts can be joined)")
    offset = header.value("time_offset", 0.0, float)
    unit = time_unit or header.get("time_unit") or "s"
    scale = common.time_scale(unit, header.path) if time_format == "unix" else 1.0
    decimal = (DecimalSeconds(t_columns[0]) if time_format == "unix" and t_columns
               and scale == 1.0 else None)  # seconds (not ns, which are read as integers)
    return _Clock(time_format, t_columns, offset, unit, scale, decimal)


def _columns(table: TextTable, header: _Header, fields: list[str], delimiter: bytes | None,
             clock: _Clock, pose: NDArray[np.float64], quaternion: UnitRows | None
             ) -> tuple[dict[str, NDArray[Any]], NDArray[np.float64] | None]:
    """The parsed rows: the number columns (see :func:`_parse_columns`), and Unix seconds
    per row when the ``t`` columns hold date/time text (else None)."""
    if clock.format == "datetime" and table.rows:
        return _read_with_datetimes(table, header, fields, delimiter, clock.columns, pose,
                                    quaternion)
    ns_time = clock.format == "unix" and clock.nanoseconds
    return _parse_columns(table, delimiter, fields, pose, ns_time=ns_time,
                          quaternion=quaternion, decimal=clock.decimal), None


def _times(table: TextTable, header: _Header, delimiter: bytes | None, clock: _Clock,
           cols: dict[str, NDArray[Any]], datetimes: NDArray[np.float64] | None,
           gps_week: int | None) -> tuple[NDArray[np.float64], NDArray[np.int64] | None]:
    """Unix seconds per row (frame numbers without a ``t`` column), and exact integer
    nanoseconds where the file gives them (the timeline is then made from those)."""
    rows = table.rows
    if not clock.columns:
        warn(f"{table.path}: no 't' column; frames numbered 0, 1, 2 … as times")
        return np.arange(rows, dtype=np.float64), None
    if datetimes is not None:
        return datetimes + clock.offset, None
    if clock.format == "gps_sow":
        week = gps_week if gps_week is not None else header.value("gps_week", -1, int)
        if week < 0:
            raise FormatError("#time_format gps_sow needs #gps_week (or the gps_week option); "
                              "the week is not guessed", table.path,
                              header.entries["time_format"][1])
        return gpstime.week_sow_to_unix(week, cols["t"][:rows]) + clock.offset, None
    if clock.nanoseconds:
        ns = _shifted(cols["t"][:rows], clock.offset, header)
        return ns_to_seconds(ns), ns
    times = cols["t"][:rows]
    exact = (decimal_nanoseconds(table, delimiter, times, clock.decimal) if clock.decimal
             else None)
    if exact is not None:
        return times, _shifted(exact, clock.offset, header)  # the timeline comes from ns
    if clock.scale != 1.0 or clock.offset:
        return times * clock.scale + clock.offset, None
    return times, None


def _to_enu(header: _Header, pose: NDArray[np.float64], velocity: NDArray[np.float64] | None,
            orientation: bool, epsg: int) -> tuple[str, NDArray[np.float64] | None]:
    """Turn positions (local ones only: ``#epsg 0``), velocities and orientations from the
    file's ``#nframe`` to ENU, in place where they are in ``pose``; returns that frame's
    name and the velocities."""
    file_nframe = (header.get("nframe") or "enu").lower()
    if file_nframe == "enu":
        return file_nframe, velocity
    try:
        matrix = nframe_matrix(file_nframe)
    except ValueError as exc:
        raise header.error("nframe", str(exc)) from None
    if epsg == 0:
        pose[:, :3] = _permute(pose[:, :3], matrix)
    if velocity is not None:
        velocity = _permute(velocity, matrix)
    if orientation:
        if not is_right_handed(file_nframe):
            raise header.error("nframe", f"#nframe {file_nframe} is left-handed; it cannot "
                                         "carry orientations")
        pose[:, 3:] = _left_multiply(matrix, pose[:, 3:])
    return file_nframe, velocity


def _sorting(header: _Header) -> str:
    """The model's sorting (time or arc_length) of ``#sorting``."""
    sorting_raw = (header.get("sorting") or "time").lower()
    if sorting_raw not in _SORTING:
        raise header.error("sorting", f"unknown #sorting {sorting_raw!r} (time, arc_length)")
    return _SORTING[sorting_raw]


def _meta(header: _Header, epsg: int, file_nframe: str, sorting: str,
          time_meta: str) -> dict[str, Any]:
    """The motion's metadata: name, EPSG code, ENU, sorting, and every header entry (with
    the file's navigation frame and how times were read) under ``traj``."""
    extras = {key: value for key, (value, _, _) in header.entries.items()}
    extras["file_nframe"] = file_nframe
    extras["time"] = time_meta
    meta: dict[str, Any] = {
        "name": header.get("name") or Path(header.path).stem,
        "epsg": epsg,
        "nframe": "enu",
        "sorting": sorting,
        "traj": extras,
    }
    if header.get("body_frame"):
        meta["body_frame"] = header.get("body_frame")
    return meta


def _shifted(ns: NDArray[np.int64], offset: float, header: _Header) -> NDArray[np.int64]:
    """Integer nanosecond stamps moved by ``#time_offset`` seconds; a FormatError when the
    result leaves the int64 range."""
    if not offset:
        return ns
    shift = offset * 1e9
    low, high = -(1 << 63), (1 << 63) - 1
    if not (math.isfinite(shift) and low <= round(shift) <= high and (not ns.size or (
            low <= int(ns.min()) + round(shift) and int(ns.max()) + round(shift) <= high))):
        raise header.error("time_offset", f"#time_offset {offset:g} s moves the nanosecond "
                                          "stamps out of the int64 range")
    return ns + round(shift)


def _reproject(position: NDArray[np.float64], meta: dict[str, Any], to_epsg: int | None,
               local_enu: bool) -> NDArray[np.float64]:
    from ...spatial import geo

    if to_epsg is not None:
        position = geo.reproject(position, meta["epsg"], to_epsg)
        meta["epsg"] = int(to_epsg)
    if local_enu:
        position, origin = geo.to_local_enu(position, meta["epsg"])
        meta["traj"]["local_origin_epsg"] = meta["epsg"]
        meta["local_origin"] = [float(v) for v in origin]
        meta["epsg"] = 0
    return position


def _permute(vectors: NDArray[np.float64], matrix: NDArray[np.float64]) -> NDArray[np.float64]:
    """Apply a signed axis permutation without a matrix product, so that a NaN in one
    coordinate does not spread to the others."""
    columns = np.argmax(np.abs(matrix), axis=1)
    signs: NDArray[np.float64] = matrix[np.arange(3), columns]
    return vectors[:, columns] * signs


def _left_multiply(matrix: NDArray[np.float64], quat: NDArray[np.float64]) -> NDArray[np.float64]:
    from scipy.spatial.transform import Rotation

    frame = Rotation.from_matrix(matrix)
    product: NDArray[np.float64] = (frame * Rotation.from_quat(quat)).as_quat(canonical=False)
    return product


def _rotations(header: _Header, fields: list[str], cols: dict[str, NDArray[Any]],
               pose: NDArray[np.float64], table: TextTable,
               quaternion: UnitRows | None) -> bool:
    """Make ``pose[:, 3:]`` unit quaternions (those parsed into it were scaled by
    ``quaternion``) or fill it from Euler columns; False when the file has no orientation."""
    unit = header.get("rot_unit") or "rad"
    if unit not in ("rad", "deg"):
        raise header.error("rot_unit", f"#rot_unit must be 'rad' or 'deg', got {unit!r}")
    rows = pose.shape[0]
    if quaternion is not None:
        quaternion.check(table.path, table.line_of)
        return True
    pose[:, 6] = 1.0
    if "ex" not in fields:
        return False
    sequence = header.get("euler_rot_seq") or "xyz"
    if not _EULER.match(sequence) or len(sequence) != 3 or any(
            a == b for a, b in itertools.pairwise(sequence)):
        key = "euler_rot_seq"
        raise header.error(key, f"#euler_rot_seq {sequence!r} must be three axes, all of xyz "
                                "(extrinsic) or all of XYZ (intrinsic), no axis twice in a row")
    angles = np.column_stack([cols[k][:rows] for k in ("ex", "ey", "ez")])
    bad = np.flatnonzero(~np.all(np.isfinite(angles), axis=1))
    if bad.size:
        raise FormatError("Euler angles must be finite numbers", table.path,
                          table.line_of(int(bad[0])))
    from scipy.spatial.transform import Rotation

    pose[:, 3:] = Rotation.from_euler(sequence, angles, degrees=unit == "deg").as_quat(
        canonical=False)
    return True


def _parse_columns(table: TextTable, delimiter: bytes | None, fields: list[str],
                   pose: NDArray[np.float64], text: RowFields | None = None,
                   ns_time: bool = False, quaternion: UnitRows | None = None,
                   decimal: DecimalSeconds | None = None) -> dict[str, NDArray[Any]]:
    """Parse the rows straight into ``pose`` (positions, quaternions scaled by
    ``quaternion``) and one column-major array for the other fields; columns named ``-`` or
    beyond ``#fields`` are not kept. With ``text`` the ``t`` columns are text, not numbers:
    every row's fields go there; with ``ns_time`` the ``t`` column is int64 (exact integer
    nanoseconds)."""
    width = field_count(table.first_row(), delimiter) if table.rows else len(fields)
    if width < len(fields):
        raise FormatError(f"#fields names {len(fields)} columns but rows have {width}",
                          table.path, table.line_of(0))
    slots = {"px": 0, "py": 1, "pz": 2, "qx": 3, "qy": 4, "qz": 5, "qw": 6}
    kept = [name != "-" and (text is None or name != "t") for name in fields]
    others = [name for name, keep in zip(fields, kept, strict=True)
              if keep and name not in slots and not (ns_time and name == "t")]
    check_cells(table, width)
    rest = np.empty((table.rows, len(others)), order="F")
    cols: dict[str, NDArray[Any]] = {}
    targets: dict[int, Target] = {}
    for index, name in enumerate(fields):
        if not kept[index] or name in cols:
            continue
        if name in slots:
            cols[name] = pose[:, slots[name]]
        elif ns_time and name == "t":
            cols[name] = np.empty(table.rows, dtype=np.int64)
        else:
            cols[name] = rest[:, others.index(name)]
        targets[index] = cols[name]
    if table.rows:
        skipped = frozenset(i for i in range(width) if i >= len(fields) or not kept[i])
        parse_into(table, delimiter, width, targets, skipped, text, quaternion, decimal)
    if width > len(fields):
        warn(f"{table.path}: {width - len(fields)} column(s) beyond #fields ignored")
    return cols


def _read_with_datetimes(table: TextTable, header: _Header, fields: list[str],
                         delimiter: bytes | None, t_columns: list[int],
                         pose: NDArray[np.float64], quaternion: UnitRows | None
                         ) -> tuple[dict[str, NDArray[Any]], NDArray[np.float64]]:
    """Rows with date/time text in the ``t`` columns: the number columns (as
    ``_parse_columns``) and Unix seconds per row."""
    fmt = header.get("datetime_format") or "%Y-%m-%d %H:%M:%S.%f"
    zone_name = header.get("datetime_timezone") or "UTC"
    zone: Any
    if zone_name.upper() == "GPS":
        zone = "GPS"
    elif zone_name.upper() == "UTC":
        zone = timezone.utc
    else:
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

        try:
            zone = ZoneInfo(zone_name)
        except (ZoneInfoNotFoundError, ValueError):
            raise header.error("datetime_timezone",
                               f"unknown time zone {zone_name!r} (an IANA name such as "
                               "Europe/Berlin, UTC or GPS)") from None
    rows: RowFields = []
    cols = _parse_columns(table, delimiter, fields, pose, rows, quaternion=quaternion)
    stamps = np.empty(len(rows))
    gps = np.zeros(len(rows), dtype=bool)
    for row, (line, cells) in enumerate(rows):
        text = " ".join(cells[i][1].decode("utf-8", "replace") for i in t_columns)
        try:
            moment = datetime.strptime(text, fmt)
        except ValueError:
            raise FormatError(f"time {text!r} does not match #datetime_format {fmt!r}",
                              table.path, line, cells[t_columns[0]][0]) from None
        if moment.tzinfo is not None:
            stamps[row] = moment.timestamp()
        elif zone == "GPS":
            stamps[row] = (moment - _GPS_EPOCH).total_seconds()
            gps[row] = True
        else:
            stamps[row] = moment.replace(tzinfo=zone).timestamp()
    if np.any(gps):
        stamps[gps] = gpstime.gps_to_unix(stamps[gps])
    return cols, stamps


def losses(obj: Motion, **_: object) -> list[str]:
    """What the header cannot say as the motion has it: a navigation frame other than ENU
    (not converted on writing), an EPSG code that is not a whole number, a sorting other
    than by time or arc length."""
    lost = []
    nframe = str(obj.meta.get("nframe") or "enu").lower()  # unknown: trajectopy's default
    if nframe != "enu":
        lost.append(f"navigation frame {nframe!r} (the model is ENU)")
    epsg = obj.meta.get("epsg")
    whole = isinstance(epsg, (int, np.integer, float, np.floating)) and float(epsg).is_integer()
    if epsg is not None and (isinstance(epsg, bool) or not whole):
        lost.append(f"metadata 'epsg' = {epsg!r} (not a whole EPSG code)")
    sorting = obj.meta.get("sorting", "time")
    if sorting not in ("time", "arc_length"):
        lost.append(f"metadata 'sorting' = {sorting!r} (time or arc_length)")
    return lost


def write(path: PathLike, obj: Motion, *, precision: int | None = None) -> None:
    """Write a trajectory in trajectopy's own layout; full precision unless ``precision``.

    Header order ``#epsg #name #nframe #sorting #fields``; columns in trajectopy's order
    ``t, l, px, py, pz, qx, qy, qz, qw, vx, vy, vz`` (only those the motion has).
    """
    root, held, meta = obj.tracks["root"], obj.tracks, obj.meta
    number = common.shortest if precision is None else common.Fixed(precision)
    numbered = root.timeline.frame_numbered  # no times: no t column, as it was read
    fields: list[str] = [] if numbered else ["t"]
    columns: list[tuple[Any, common.Formatter | None]] = (
        [] if numbered else [common.time_column(root.timeline, number)])
    if "arc_length" in held:
        fields.append("l")
        columns.append((obj.tracks["arc_length"].data[:, 0], number))
    data = root.data
    names = ["px", "py", "pz"] + (["qx", "qy", "qz", "qw"] if poses.has_orientation(root)
                                  else [])
    for index, name in enumerate(names):
        fields.append(name)
        columns.append((data[:, index], number))
    if "velocity" in held:
        velocity = obj.tracks["velocity"].data.reshape(-1, 3)
        for index, name in enumerate(("vx", "vy", "vz")):
            fields.append(name)
            columns.append((velocity[:, index], number))
    sorting = meta.get("sorting", "time")
    name = str(meta.get("name") or Path(path).stem).replace("\n", " ")
    with atomic_write(path, "w") as handle:
        handle.write(f"#epsg {int(cast(int, meta.get('epsg') or 0))}\n#name {name}\n#nframe enu\n"
                     f"#sorting {'path_length' if sorting == 'arc_length' else 'time'}\n"
                     f"#fields {','.join(fields)}\n")
        common.write_rows(handle, columns, ",", root.frames)


"""Pieces every trajectory format shares: building the Motion, checking what a writer
can hold, time units, stamp order, and chunked fixed-point text output."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import IO, Any

import numpy as np
from numpy.typing import NDArray

from ... import _accel
from ...errors import ConversionError, FormatError, warn
from ...model import Motion, Timeline, Track
from ...model.timeline import NS_PER_SECOND, ns_to_seconds
from ._text import UnitRows

#: Seconds per unit for the time-unit option.
TIME_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}
_ROWS_PER_CHUNK = 65536
Formatter = Callable[[list[float]], list[str]]


def time_scale(unit: str, path: object = None) -> float:
    """Seconds per stamp unit; a clear error for unknown units."""
    try:
        return TIME_UNITS[unit.strip().lower()]
    except KeyError:
        known = ", ".join(TIME_UNITS)
        raise FormatError(f"unknown time unit {unit!r} (known: {known})",
                          str(path) if path is not None else None) from None


def _order_stamps(times: NDArray[Any], *, sort: bool, dedupe: bool, path: object,
                  ) -> NDArray[np.int64] | None:
    """Row order to keep: None for all rows as they are (``times`` may be integer ns).

    Duplicate and unsorted stamps are kept with a warning unless ``dedupe`` (drop later
    duplicates) or ``sort`` (stable time sort) is asked for.
    """
    if times.size < 2:
        return None
    steps = np.diff(times)
    order: NDArray[np.int64] | None = None
    if np.any(steps < 0):
        if sort:
            order = np.argsort(times, kind="stable")
        else:
            count = int(np.count_nonzero(steps < 0))
            warn(f"{path}: time stamps go backwards {count} time(s); rows kept in file "
                 "order (read with sort=True to sort them)")
    current = times if order is None else times[order]
    same = np.diff(current) == 0
    if np.any(same):
        if dedupe:
            keep = np.concatenate([[True], ~same])
            base = np.arange(times.size) if order is None else order
            order = base[keep]
        else:
            warn(f"{path}: {int(np.count_nonzero(same))} duplicate time stamp(s) kept "
                 "(read with dedupe=True to drop them)")
    return order


def stamped_timeline(times: NDArray[np.float64] | None, ns: NDArray[np.int64] | None, *,
                     path: object, line_of: Callable[[int], int], sort: bool = False,
                     dedupe: bool = False) -> tuple[Timeline, NDArray[np.int64] | None]:
    """The stamped timeline of a reader's rows (float seconds or, when known, integer ns)
    and the row order to keep (None: all rows as they are; see ``_order_stamps``).

    A non-finite stamp is a FormatError naming its row's line; unsorted or duplicate
    stamps are sorted/dropped on request, else kept with a warning.
    """
    if ns is None:
        assert times is not None
        bad = np.flatnonzero(~np.isfinite(times))
        if bad.size:
            raise FormatError(f"time stamp is not a finite number ({times[bad[0]]})",
                              str(path), line_of(int(bad[0])))
        order = _order_stamps(times, sort=sort, dedupe=dedupe, path=path)
        return Timeline.stamped(times if order is None else times[order], check=False), order
    order = _order_stamps(ns, sort=sort, dedupe=dedupe, path=path)
    if order is not None:
        ns = ns[order]
    try:
        return Timeline.from_nanoseconds(ns), order
    except ValueError:  # unsorted or duplicate stamps we warned about
        timeline = Timeline.stamped(ns_to_seconds(ns), check=False)
        ns = np.ascontiguousarray(ns)
        ns.setflags(write=False)
        object.__setattr__(timeline, "stamps_ns", ns)
        return timeline, order


def normalized_quaternions(quat: NDArray[np.float64], path: object,
                           line_of: Callable[[int], int]) -> NDArray[np.float64]:
    """Scale ``quat`` rows to unit length in place (already-unit rows stay bit-exact),
    exactly as the text readers do while parsing; a zero or non-finite quaternion is a
    FormatError naming its line."""
    unit = UnitRows((0, 1, 2, 3))
    columns = [quat[:, i] for i in range(4)]
    unit.scale(columns, dict(enumerate(columns)), 0)
    unit.check(path, line_of)
    return quat


def build_motion(timeline: Timeline, position: NDArray[np.float64],
                 quat: NDArray[np.float64] | None, *, velocity: NDArray[np.float64] | None = None,
                 arc_length: NDArray[np.float64] | None = None,
                 meta: dict[str, Any]) -> Motion:
    """A trajectory Motion: ``root`` pose (+ ``velocity``, ``arc_length``) and metadata.

    Without orientation the root carries identity quaternions and ``attrs["orientation"]
    = False``, so writers leave the quaternion columns out again.
    """
    root = np.empty((position.shape[0], 7))
    root[:, :3] = position
    root[:, 3:] = (0.0, 0.0, 0.0, 1.0) if quat is None else quat
    return pose_motion(timeline, root, quat is not None, velocity=velocity,
                       arc_length=arc_length, meta=meta)


def pose_motion(timeline: Timeline, root: NDArray[np.float64], orientation: bool, *,
                velocity: NDArray[np.float64] | None = None,
                arc_length: NDArray[np.float64] | None = None,
                meta: dict[str, Any]) -> Motion:
    """Like build_motion, from a ready ``(frames, 7)`` pose array (used as is, no copy)."""
    attrs: dict[str, Any] = {} if orientation else {"orientation": False}
    motion = Motion(meta=meta)
    motion.add(Track("root", "pose", root, timeline, attrs=attrs))
    if velocity is not None:
        motion.add(Track("velocity", "vector3", velocity, timeline))
    if arc_length is not None:
        motion.add(Track("arc_length", "value", arc_length.reshape(-1, 1), timeline))
    return motion


def writable_root(obj: Any, holds: Sequence[str], fmt: str, lossy: bool,
                  link: str | None = None, *, holds_crs: bool = False,
                  holds_times: bool = True, needs_orientation: bool = True,
                  needs_real_times: bool = False) -> tuple[Track, list[str]]:
    """The root pose of ``obj`` and the names of held extra tracks; refuse what is lost.

    ``link`` picks one part of ``links`` by name as the trajectory (the caller asked for
    that link, so the others are not reported). Anything else the target cannot hold
    (other tracks, further links, a skeleton, a terrain, tracks on another timeline) or
    that it would have to invent raises ConversionError naming it, or with ``lossy`` warns
    with the same list. The flags say what the target can hold: a CRS (``holds_crs``),
    time stamps (``holds_times``); and what it needs: an orientation, not the identity
    quaternions of a position-only root (``needs_orientation``), real times, not the
    frame numbers of a source without them (``needs_real_times``).
    """
    if not isinstance(obj, Motion):
        raise ConversionError(f"{fmt} holds trajectories; got {type(obj).__name__}")
    root = _named_link(obj, link) if link is not None else obj.root_pose()
    if root is None:
        names = ", ".join(obj.tracks) or "none"
        raise ConversionError(f"{fmt} needs a root pose (a 'root' track or 'links'); "
                              f"this motion has tracks: {names}")
    lost: list[str] = []
    held: list[str] = []
    links = obj.tracks.get("links")
    # a root that only repeats links part 0 (as .seq readers give) is not a track of its own
    echo = ("root" in obj.tracks and links is not None and links.data.ndim == 3
            and links.timeline.same_as(obj.tracks["root"].timeline)
            and np.array_equal(links.data[:, 0], obj.tracks["root"].data))
    for name, track in obj.tracks.items():
        if (name == "links" and link is not None) or (name == "root" and link and echo):
            continue
        if (name == "root" and link is None) or (
                name == "links" and ("root" not in obj.tracks or echo)):
            if name == "links" and track.part_count > 1:
                lost.append(f"links beyond the first ({track.part_count - 1} parts; "
                            "name one with link=...)")
            continue
        if name in holds and track.timeline.same_as(root.timeline):
            held.append(name)
        elif name in holds:
            lost.append(f"track {name!r} (its timeline differs from the root's)")
        else:
            lost.append(f"track {name!r}")
    if obj.skeleton is not None:
        lost.append("the skeleton")
    if obj.terrain is not None:
        lost.append("the terrain")
    if obj.meta.get("epsg") and not holds_crs:
        lost.append(f"the CRS (EPSG {obj.meta['epsg']})")
    if needs_orientation and not has_orientation(root):
        lost.append("the missing orientation (identity quaternions would be written)")
    index = times_are_index(obj)
    if needs_real_times and index:
        lost.append("real times (the source had frame numbers only)")
    if not holds_times and not index:
        lost.append("the time stamps")
    refuse_or_warn(lost, fmt, lossy)
    return root, held


def _named_link(obj: Motion, link: str) -> Track:
    links = obj.tracks.get("links")
    if links is None or links.data.ndim != 3 or not links.labels or link not in links.labels:
        known = ", ".join(links.labels or []) if links is not None else "no links track"
        raise ConversionError(f"no link named {link!r} (links: {known})")
    index = links.labels.index(link)
    return Track("root", "pose", links.data[:, index, :], links.timeline, attrs={"link": link})


def refuse_or_warn(lost: list[str], fmt: str, lossy: bool) -> None:
    """ConversionError naming ``lost`` (or a warning when ``lossy``)."""
    if not lost:
        return
    what = "; ".join(lost)
    if not lossy:
        raise ConversionError(f"{fmt} cannot hold: {what} (pass lossy=True / --lossy to drop it)")
    warn(f"{fmt}: dropped {what}")


def times_are_index(obj: Motion) -> bool:
    """True when the source had frame numbers, not times (KITTI without times.txt, …)."""
    return any(isinstance(obj.meta.get(key), dict) and obj.meta[key].get("time") == "index"
               for key in ("kitti", "traj"))


def has_orientation(root: Track) -> bool:
    """False when the root came from a position-only source."""
    return bool(root.attrs.get("orientation", True))


class Fixed:
    """Fixed-point formatter with ``precision`` decimals: Python's correctly rounded
    ``{:.Nf}`` (ties to even). For big tables write_rows has polars write the same text."""

    def __init__(self, precision: int) -> None:
        self.precision = int(precision)
        self._pattern = f"{{:.{self.precision}f}}"

    def __call__(self, values: list[float]) -> list[str]:
        return [self._pattern.format(v) for v in values]


def shortest(values: list[float]) -> list[str]:
    """Shortest text that reads back to the same float64 (full precision)."""
    return [repr(v) for v in values]


def integers(values: list[float]) -> list[str]:
    """Whole numbers; write_rows hands this formatter int64 values (nanosecond stamps), so
    nothing passes through float64 on the way."""
    return [str(int(v)) for v in values]


def ns_seconds(ns: list[float]) -> list[str]:
    """Exact decimal seconds from integer nanoseconds (``1403715524.907143168``); a
    formatter that write_rows hands int64 values, like ``integers``."""
    out = []
    for value in ns:
        sign = "-" if value < 0 else ""
        whole, frac = divmod(abs(int(value)), NS_PER_SECOND)
        out.append(f"{sign}{whole}.{frac:09d}")
    return out


def time_column(timeline: Timeline, number: Formatter) -> tuple[Any, Formatter | None]:
    """The stamps column: exact text from integer nanoseconds when known, else floats."""
    if timeline.stamps_ns is not None:
        return timeline.stamps_ns, ns_seconds
    return timeline.times, number


def write_rows(handle: IO[str], columns: Iterable[tuple[Any, Formatter | None]],
               delimiter: str, rows: int) -> None:
    """Write ``rows`` lines; each column is (array or list of str, formatter or None).
    Big tables are formatted by polars, chunk by chunk, into the same bytes."""
    cols = list(columns)
    fast = _polars_writer(cols, rows)
    for start in range(0, rows, _ROWS_PER_CHUNK):
        stop = min(start + _ROWS_PER_CHUNK, rows)
        text = _polars_rows(fast, cols, start, stop, delimiter) if fast else None
        if text is None:
            texts = []
            for values, formatter in cols:
                piece = values[start:stop]
                if formatter is None:
                    texts.append(piece)
                else:
                    kind = np.int64 if formatter in _WHOLE else np.float64  # ns stay exact
                    texts.append(formatter(np.asarray(piece, dtype=kind).tolist()))
            text = "\n".join(map(delimiter.join, zip(*texts, strict=True))) + "\n"
        handle.write(text)


def _polars_writer(cols: list[tuple[Any, Formatter | None]], rows: int
                   ) -> tuple[Any, int | None] | None:
    """polars and the one precision of the Fixed number columns (None without any), when
    the table is big enough for polars to pay and every column is text, whole numbers,
    Fixed numbers or shortest numbers."""
    formatters = [formatter for _, formatter in cols]
    precisions = {f.precision for f in formatters if isinstance(f, Fixed)}
    known = all(f is None or f in _WHOLE or f is shortest or isinstance(f, Fixed)
                for f in formatters)
    if len(precisions) > 1 or not known:
        return None
    pl = _accel.polars_for(rows * len(cols) * 12)  # about the size of the text
    return (pl, precisions.pop() if precisions else None) if pl is not None else None


def _polars_rows(fast: tuple[Any, int | None], cols: list[tuple[Any, Formatter | None]],
                 start: int, stop: int, delimiter: str) -> str | None:
    """Rows ``start:stop`` as polars writes them: the same text as the formatters give
    (tested bit for bit), several times faster; None for non-finite Fixed numbers, which
    polars spells differently."""
    pl, precision = fast
    series = []
    for index, (values, formatter) in enumerate(cols):
        name, piece = f"c{index}", values[start:stop]
        if formatter is None:
            series.append(pl.Series(name, piece, dtype=pl.String))
        elif formatter is integers:
            series.append(pl.Series(name, np.asarray(piece, dtype=np.int64)))
        elif formatter is ns_seconds:
            series.append(_seconds_text(pl, name, np.asarray(piece, dtype=np.int64)))
        elif formatter is shortest:
            series.append(_shortest_text(pl, name, np.asarray(piece, dtype=np.float64)))
        else:
            numbers = np.asarray(piece, dtype=np.float64)
            if not np.isfinite(numbers).all():
                return None
            series.append(pl.Series(name, numbers))
    return str(pl.DataFrame(series).write_csv(
        None, include_header=False, separator=delimiter, float_precision=precision,
        float_scientific=False, quote_style="never", line_terminator="\n"))


def _shortest_text(pl: Any, name: str, numbers: NDArray[np.float64]) -> Any:
    """``repr`` of each number as a polars text column: polars' own shortest round-trip
    text equals ``repr`` where ``repr`` writes positional digits (0 and 1e-4 <= |x| < 1e16;
    tested); the numbers outside, which the two spell differently, get ``repr`` itself."""
    magnitude = np.abs(numbers)
    odd = np.flatnonzero(~((magnitude >= 1e-4) & (magnitude < 1e16) | (numbers == 0)))
    text = pl.Series(name, numbers).cast(pl.String)
    if odd.size:
        text = text.scatter(odd, [repr(v) for v in numbers[odd].tolist()])
    return text


def _seconds_text(pl: Any, name: str, ns: NDArray[np.int64]) -> Any:
    """``ns_seconds`` of each stamp as a polars text column, built column-wise."""
    if ns.size and ns.min() == np.iinfo(np.int64).min:  # no int64 absolute value
        return pl.Series(name, ns_seconds(ns.tolist()), dtype=pl.String)
    whole, frac = np.divmod(np.abs(ns), NS_PER_SECOND)
    sign = pl.Series(np.where(ns < 0, "-", ""))
    text = (sign + pl.Series(whole).cast(pl.String) + "."
            + pl.Series(frac).cast(pl.String).str.zfill(9))
    return text.rename(name)


#: Formatters of whole numbers: write_rows hands them int64 values, never floats.
_WHOLE = (integers, ns_seconds)

"""Pieces every reader and writer of pose series shares — text trajectories and ROS bags:
unit quaternions, stamped timelines (order, duplicates, exact nanoseconds), the pose
Motion a reader returns, and what a one-pose-track writer holds."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ...errors import FormatError, option_hint, warn
from ...model import Motion, Timeline, Track
from ...model.timeline import ns_to_seconds
from ..loss import Holds, tracks

#: A column a parser fills: float64 numbers, or int64 nanosecond stamps.
Target = NDArray[np.float64] | NDArray[np.int64]


def pose_holds(namespace: str, **kinds: str) -> Holds:
    """What a writer of one pose track holds: ``root`` (+ the tracks named in ``kinds``) on
    one timeline, a real orientation, and no skeleton, terrain, labels, attributes or
    metadata (arguments of ``dataclasses.replace`` on the result add what a format keeps)."""
    return Holds(tracks=tracks(root="pose", **kinds), skeleton=False, terrain=False,
                 one_timeline=True, labels=False, attrs=False, meta=frozenset(),
                 position_only=False, namespace=namespace)


@dataclass
class UnitRows:
    """File columns (x, y, z, w) of a quaternion that parse_into scales to unit length as
    it stores each block: from the parsed columns while they are in cache, instead of a
    later pass over the strided pose array. Rows within 1e-15 of unit length stay
    bit-exact; ``bad`` is the first zero or non-finite row, for the reader to report, and
    with a ``tolerance`` ``far`` the first whose norm is further than it from 1 and
    ``far_rows`` how many are (see :meth:`check` for what that says of the file)."""

    columns: tuple[int, int, int, int]
    bad: int | None = None
    tolerance: float | None = None
    far: tuple[int, float] | None = None
    far_rows: int = 0

    def scale(self, sources: Sequence[Target], targets: Mapping[int, Target],
              row: int) -> None:
        """Write ``sources`` (x, y, z, w of rows ``row``… ; they may be the targets'
        own rows) divided by their norm to the targets."""
        x, y, z, w = sources
        norms = np.sqrt(x * x + y * y + z * z + w * w)
        bad = np.flatnonzero(~(norms > 0) | ~np.isfinite(norms))
        if bad.size and self.bad is None:
            self.bad = row + int(bad[0])
        if self.tolerance is not None:
            off = np.flatnonzero(np.abs(norms - 1.0) > self.tolerance)
            if off.size and self.far is None:
                self.far = (row + int(off[0]), float(norms[off[0]]))
            self.far_rows += int(off.size)
        norms[np.abs(norms - 1.0) <= 1e-15] = 1.0  # x / 1.0 is x exactly
        with np.errstate(invalid="ignore", divide="ignore"):  # bad rows are reported
            for column, source in zip(self.columns, sources, strict=True):
                np.divide(source, norms, out=targets[column][row:row + x.size])

    def check(self, path: object, line_of: Callable[[int], int], rows: int = 0,
              normalize: bool = False) -> None:
        """A FormatError naming the line of the first zero or non-finite quaternion. Rows
        whose norm is beyond the tolerance (read scaled to unit length) are a warning that
        counts them when few, after a first row that is a rotation (drifting, unrenormalised
        integration); the first row off or more than FAR_SHARE of ``rows`` are columns
        that are no quaternion (a timing table), a FormatError naming the ``normalize``
        read option, with which they are read anyway (and counted in the warning)."""
        if self.bad is not None:
            raise FormatError("zero or invalid quaternion", str(path), line_of(self.bad))
        if self.far is None:
            return
        row, norm = self.far
        share = f"{self.far_rows} of {rows} rows" if rows else f"{self.far_rows} rows"
        if not normalize and (row == 0 or self.far_rows > FAR_SHARE * rows):
            raise FormatError(
                f"the quaternion columns have norm {norm:.6g}, not 1 (beyond "
                f"{self.tolerance:g}; {share} so): these rows are not poses (to read them as "
                f"poses anyway, each quaternion scaled to unit length: "
                f"{option_hint('normalize', True)})", str(path), line_of(row))
        warn(f"{path}: quaternions of norm beyond 1 ± {self.tolerance:g} in {share} (the "
             f"first on line {line_of(row)}, norm {norm:.6g}); read scaled to unit length")


#: The share of rows (after a first row that is a rotation) whose quaternions may be off
#: unit length for a file still to read as poses (those rows normalised, with a warning);
#: evo reads any norm and flags it in ``check()``, but a table that is mostly off is no
#: trajectory (open_vins' timings), and ``normalize`` is there for one that is.
FAR_SHARE = 0.1


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
                 f"order (read with {option_hint('sort', True)} to sort them)")
    current = times if order is None else times[order]
    same = np.diff(current) == 0
    if np.any(same):
        if dedupe:
            keep = np.concatenate([[True], ~same])
            base = np.arange(times.size) if order is None else order
            order = base[keep]
        else:
            warn(f"{path}: {int(np.count_nonzero(same))} duplicate time stamp(s) kept "
                 f"(read with {option_hint('dedupe', True)} to drop them)")
    return order


def stamped_timeline(times: NDArray[np.float64] | None, ns: NDArray[np.int64] | None, *,
                     path: object, line_of: Callable[[int], int], sort: bool = False,
                     dedupe: bool = False, seconds_of_ns: bool = False,
                     ) -> tuple[Timeline, NDArray[np.int64] | None]:
    """The stamped timeline of a reader's rows (float seconds or, when known, integer ns)
    and the row order to keep (None: all rows as they are; see ``_order_stamps``).

    A non-finite stamp is a FormatError naming its row's line; unsorted or duplicate
    stamps are sorted/dropped on request, else kept with a warning. ``seconds_of_ns``
    says that ``times`` are already ``ns_to_seconds(ns)`` (they are then used, not made
    again: ~0.03 s per million stamps).
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
    elif seconds_of_ns and times is not None:
        return _with_ns(times, ns), None
    try:
        return Timeline.from_nanoseconds(ns), order
    except ValueError:  # unsorted or duplicate stamps we warned about
        return _with_ns(ns_to_seconds(ns), ns), order


def _with_ns(seconds: NDArray[np.float64], ns: NDArray[np.int64]) -> Timeline:
    """The stamped timeline of ``seconds`` keeping their exact nanoseconds (in any order)."""
    timeline = Timeline.stamped(seconds, check=False)
    ns = np.ascontiguousarray(ns)
    ns.setflags(write=False)
    object.__setattr__(timeline, "stamps_ns", ns)
    return timeline


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
                 meta: dict[str, object]) -> Motion:
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
                meta: dict[str, object]) -> Motion:
    """Like build_motion, from a ready ``(frames, 7)`` pose array (used as is, no copy)."""
    attrs: dict[str, object] = {} if orientation else {"orientation": False}
    motion = Motion(meta=meta)
    motion.add(Track("root", "pose", root, timeline, attrs=attrs))
    if velocity is not None:
        motion.add(Track("velocity", "vector3", velocity, timeline))
    if arc_length is not None:
        motion.add(Track("arc_length", "value", arc_length.reshape(-1, 1), timeline))
    return motion


def has_orientation(root: Track) -> bool:
    """False when the root came from a position-only source."""
    return bool(root.attrs.get("orientation", True))

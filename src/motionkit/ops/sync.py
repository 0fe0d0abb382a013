"""Many tracks on one clock: a uniform grid over the span every track covers, each track
sampled on it by its own rule, and a refusal where a track has no recent enough sample.

The rules (a bag's topics become a training dataset's frames):

- grid ``t_k = t_start + k / fps``, ``k = 0 … ⌊(t_end − t_start)·fps⌋``; ``t_start`` is the
  latest first sample time of all tracks (or ``start``), ``t_end`` the earliest last one (or
  ``end``); ``start`` and ``end`` are seconds on the tracks' clock, or text ``"+S"``: S
  seconds after the latest first sample (``start="+0.5", end="+1.5"``: one second of it);
- per track ``hold`` (the last sample at or before ``t_k``; never a newer one), ``linear``
  (lerp, slerp for rotations; ``slerp`` is accepted as its name for them) or ``nearest``;
  a track's method is the one ``methods`` names for it, else ``method``, else its
  ``interpolation`` attribute (readers set ``hold`` for commands), else ``linear``;
- a grid point is valid for a track only if the sample(s) used lie within the tolerance of
  it: by default 1.5 × the median sample period; outside it the sync fails naming the
  track, its topic and the time (``on_gap="fail"``) or drops that grid point from every
  track (``on_gap="drop"``; :func:`pieces` then cuts the result at its gaps);
- NaN values are missing samples (a JointState message without velocity, or without one
  joint's name): each column is sampled from the samples that have it, under the same
  tolerance, so ``hold`` keeps the previous value and ``linear`` bridges a short gap.

Times are whole nanoseconds after the earliest sample: exact where every track has integer
ns stamps (bags), else float seconds rounded to the nearest ns (two samples of a track in
one ns: the later one). The grid is ``k·1e9/fps`` ns after its start (exact where that is
a whole ns), and the sample search, the weights and the tolerance check all compare in
these ns, so a sample that lies exactly on a grid time is the one ``hold`` takes and the
distance 0 the check sees (not the previous one, as float seconds a few ulp off gave).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ..errors import ConversionError, warn
from ..model import Motion, Timeline, Track
from ..model.timeline import ns_to_seconds, seconds_to_ns
from .resample import _check_growth, grid_count, grid_offsets, sample

#: The track attribute a reader sets to name a track's default method.
METHOD_ATTR = "interpolation"
#: The track attribute a reader sets on a track that holds for all time (a transform from
#: ``/tf_static``): its last value on every frame, outside the span and the tolerance.
STATIC_ATTR = "static"
SYNC_METHODS = ("linear", "hold", "nearest")
GAP_ACTIONS = ("fail", "drop")
#: Default tolerance, in median sample periods of a track.
TOLERANCE_PERIODS = 1.5


@dataclass
class _Column:
    """Some of a track's columns with the same present samples (relative times)."""

    index: NDArray[np.intp] | None  # the columns of a value track; None: the whole row
    times: NDArray[np.int64]  # ns after the clock's origin
    rows: NDArray[np.intp]


def sync(motion: Motion, fps: float, *, methods: Mapping[str, str] | None = None,
         method: str | None = None, start: float | str | None = None,
         end: float | str | None = None,
         tolerance: float | Mapping[str, float] | None = None,
         on_gap: str = "fail", zero: bool = False) -> Motion:
    """Every track of ``motion`` on one grid at ``fps`` over their common span (see the
    module's rules). ``start`` and ``end`` (seconds on the tracks' clock, or ``"+S"`` after
    the latest first sample) replace the span's ends; ``methods`` (per track name) and
    ``method`` (every other track) the tracks' own methods; ``tolerance`` (seconds, one for
    all or per track name) the 1.5-period default.
    The result is uniform (stamped at the kept grid times if frames were dropped), from the
    grid's start or, with ``zero``, from 0 (frame times k/fps, as LeRobot writes them);
    ``meta["sync"]`` records fps, the start, methods and tolerances. The ``interpolation``
    attribute, used, is not kept."""
    _check_rate_and_gap(fps, on_gap)
    every = list(motion.tracks.values())
    tracks = [track for track in every if not track.attrs.get(STATIC_ATTR)]
    if not tracks:
        raise ConversionError("nothing to synchronise: the motion has no tracks that change "
                              "in time")
    chosen = {track.name: _method(track, (methods or {}).get(track.name, method))
              for track in tracks}
    _known(methods, every, "methods")
    _known(tolerance if isinstance(tolerance, Mapping) else None, every, "tolerances")
    empty = [track.name for track in tracks if not track.frames]
    if empty:
        raise ConversionError(f"nothing to put on the clock: {', '.join(map(repr, empty))} "
                              "has no samples")
    clock = _clock(tracks)
    columns = {track.name: _columns(track, clock.relative(track)) for track in tracks}
    first, last = _span(columns, clock, start, end)
    for track in tracks:
        _check_growth(track, (last - first) * fps / 1e9 + 1)
    count = grid_count(last - first, fps)
    grid = first + grid_offsets(count, fps)
    valid = np.ones(count, dtype=bool)
    sampled: dict[str, NDArray[np.float64]] = {}
    tolerances: dict[str, float] = {}
    for track in tracks:
        sampled[track.name], tolerances[track.name] = _on_grid(
            track, columns[track.name], grid, chosen[track.name],
            _tolerance(tolerance, track.name), on_gap, clock, valid)
    _hold_static(every, count, sampled, chosen)
    start_s = clock.absolute(first)
    timeline = _timeline(fps, (grid - first) / 1e9, 0.0 if zero else start_s, valid)
    out = Motion(skeleton=motion.skeleton, terrain=motion.terrain, meta=dict(motion.meta))
    for track in every:
        synced = track.with_data(sampled[track.name][valid], timeline)
        synced.attrs.pop(METHOD_ATTR, None)
        synced.attrs.pop(STATIC_ATTR, None)
        out.add(synced)
    facts: dict[str, object] = {"fps": float(fps), "start": start_s,
                                "frames": int(valid.sum()), "methods": chosen,
                                "tolerance": tolerances, "dropped": int(count - valid.sum())}
    if clock.origin_ns is not None:
        facts["start_ns"] = clock.origin_ns + first
    if not valid.all():
        facts["first_kept"] = int(np.argmax(valid))  # the grid frame the timeline starts at
    out.meta["sync"] = facts
    return out


def pieces(motion: Motion) -> list[Motion]:
    """A motion :func:`sync` made with ``on_gap="drop"`` cut at its gaps: each run of
    consecutive grid frames is one uniform motion at the sync's rate from its first frame
    (what ``convert --on-gap split`` writes as the episodes of one dataset, so that no
    episode steps over a gap). ``meta["sync"]`` of each says which piece it is, of how
    many, and where it starts; a motion without dropped frames is one piece."""
    facts = motion.meta.get("sync")
    main = motion.main_track
    if not isinstance(facts, dict) or main is None or not isinstance(facts.get("fps"), float):
        raise ConversionError("only a motion put on one clock (ops.sync) is cut at its gaps")
    fps = facts["fps"]
    times = main.times
    frame = np.rint((times - times[0]) * fps).astype(np.int64)
    cuts = np.flatnonzero(np.diff(frame) > 1) + 1
    bounds = list(zip([0, *cuts.tolist()], [*cuts.tolist(), len(times)], strict=True))
    out = []
    for number, (first, stop) in enumerate(bounds):
        timeline = Timeline.uniform(fps, stop - first, float(times[first]))
        piece = Motion(skeleton=motion.skeleton, terrain=motion.terrain, meta=dict(motion.meta))
        for track in motion.tracks.values():
            piece.add(track.with_data(track.data[first:stop], timeline))
        offset = int(facts.get("first_kept", 0)) + int(frame[first])  # grid frames
        own: dict[str, object] = {**{k: v for k, v in facts.items() if k != "first_kept"},
                                  "frames": stop - first, "piece": number,
                                  "pieces": len(bounds),
                                  "start": float(facts["start"]) + offset / fps}
        if "start_ns" in facts:
            own["start_ns"] = int(facts["start_ns"]) + round(offset * 1e9 / fps)
        piece.meta["sync"] = own
        out.append(piece)
    return out


def _check_rate_and_gap(fps: float, on_gap: str) -> None:
    if not (fps > 0 and math.isfinite(fps)):
        raise ConversionError(f"fps must be a positive number, not {fps!r}")
    if on_gap not in GAP_ACTIONS:
        raise ConversionError(f"on_gap must be one of {', '.join(GAP_ACTIONS)}, not {on_gap!r}")


def _timeline(fps: float, grid: NDArray[np.float64], origin: float,
              valid: NDArray[np.bool_]) -> Timeline:
    """Uniform from ``origin``; stamped at the kept grid times (``grid`` from 0) when some
    were dropped (said in one warning)."""
    if valid.all():
        return Timeline.uniform(fps, grid.size, origin)
    if not valid.any():
        raise ConversionError("every grid point falls in a gap of some track")
    warn(f"sync: dropped {int(np.count_nonzero(~valid))} of {grid.size} frames that fall in a "
         "gap of some track (on_gap='drop')")
    return Timeline.stamped(origin + grid[valid])


def _hold_static(every: list[Track], count: int, sampled: dict[str, NDArray[np.float64]],
                 chosen: dict[str, str]) -> None:
    """The static tracks' last values on every frame."""
    for track in every:
        if track.attrs.get(STATIC_ATTR):
            if not track.frames:
                raise ConversionError(f"track {track.name!r} is static but has no value")
            last = np.asarray(track.data, dtype=np.float64)[-1]
            sampled[track.name] = np.broadcast_to(last, (count, *last.shape)).copy()
            chosen[track.name] = "static"


def _known(asked: Mapping[str, object] | None, every: list[Track], what: str) -> None:
    """ConversionError where ``asked`` names a track the motion does not have."""
    unknown = sorted(set(asked or {}) - {track.name for track in every})
    if unknown:
        raise ConversionError(f"{what} name no track: {', '.join(unknown)} "
                              f"(tracks: {', '.join(track.name for track in every)})")


def _span(columns: dict[str, list[_Column]], clock: _Clock, start: float | str | None,
          end: float | str | None) -> tuple[int, int]:
    """The grid's first and last relative time (ns): the latest first sample (or
    ``start``) and the earliest last one (or ``end``)."""
    empty = [name for name, cols in columns.items() if any(not c.times.size for c in cols)]
    if empty:
        raise ConversionError(f"track(s) {', '.join(empty)} have columns without any sample")
    common = max(int(c.times[0]) for cols in columns.values() for c in cols)
    first = common if start is None else _bound(start, "start", clock, common)
    last = min(int(c.times[-1]) for cols in columns.values() for c in cols)
    if end is not None:
        last = _bound(end, "end", clock, common)
    if last < first:
        raise ConversionError(f"the tracks share no time span (latest first sample "
                              f"{clock.absolute(first):.9f} s, earliest last sample "
                              f"{clock.absolute(last):.9f} s)")
    return first, last


def _bound(value: float | str, name: str, clock: _Clock, common: int) -> int:
    """A grid end (relative ns) from seconds on the tracks' clock or ``"+S"`` after the
    latest first sample (``common``)."""
    if isinstance(value, str):
        text = value.strip()
        try:
            after = float(text[1:]) if text.startswith("+") else math.nan
        except ValueError:
            after = math.nan
        if not (math.isfinite(after) and after >= 0):
            raise ConversionError(f"{name} must be seconds on the tracks' clock or '+S' (S "
                                  f"seconds after their latest first sample), not {value!r}")
        return common + int(_to_ns(after))
    if not math.isfinite(value):
        raise ConversionError(f"{name} must be a finite number of seconds, not {value!r}")
    return clock.relative_start(value)


def _on_grid(track: Track, columns: list[_Column], grid: NDArray[np.float64], method: str,
             tol: float | None, on_gap: str, clock: _Clock, valid: NDArray[np.bool_],
             ) -> tuple[NDArray[np.float64], float]:
    """One track's values on the grid and its widest tolerance; grid points outside the
    tolerance raise (``fail``) or are cleared in ``valid`` (``drop``)."""
    data = np.empty((grid.size, *track.data.shape[1:]))
    widest = 0.0
    for column in columns:
        own = tol if tol is not None else _default_tolerance(column.times)
        widest = max(widest, own)
        ok = _covered(column.times, grid, own, method)
        if on_gap == "fail" and not ok.all():
            raise _gap(track, column, grid, int(np.argmin(ok)), own, clock)
        valid &= ok
        values = sample(_part(track, column), grid, "linear" if method == "slerp" else method,
                        origin_ns=0)
        if column.index is None:
            data[:] = values
        else:
            data[:, column.index] = values
    return data, widest


def _method(track: Track, asked: str | None) -> str:
    """The asked method, else the track's ``interpolation`` attribute, else ``linear``."""
    method = asked if asked is not None else track.attrs.get(METHOD_ATTR, "linear")
    if method == "slerp" and track.kind in ("pose", "quaternion"):
        return "slerp"
    if method not in SYNC_METHODS:
        raise ConversionError(f"track {track.name!r}: method must be one of "
                              f"{', '.join(SYNC_METHODS)} (slerp for rotations), not {method!r}")
    return str(method)


def _clock(tracks: list[Track]) -> _Clock:
    """The origin: the earliest sample, in integer ns when every track has them."""
    if all(track.timeline.stamps_ns is not None for track in tracks):
        return _Clock(min(int(t.timeline.stamps_ns[0]) for t in tracks  # type: ignore[index]
                          if t.frames), None)
    return _Clock(None, min(float(t.times[0]) for t in tracks if t.frames))


@dataclass
class _Clock:
    """Track times in seconds after an origin given in ns (exact) or in seconds."""

    origin_ns: int | None
    origin_s: float | None

    def relative(self, track: Track) -> NDArray[np.int64]:
        ns = track.timeline.stamps_ns
        if self.origin_ns is not None and ns is not None:
            return np.asarray(ns - self.origin_ns, dtype=np.int64)
        assert self.origin_s is not None
        return _to_ns(track.times - self.origin_s)

    def relative_start(self, start: float) -> int:
        if self.origin_ns is not None:
            return int(_to_ns(start)) - self.origin_ns
        assert self.origin_s is not None
        return int(_to_ns(start - self.origin_s))

    def absolute(self, relative: float) -> float:
        if self.origin_ns is not None:
            return float(ns_to_seconds(np.int64(self.origin_ns))) + relative / 1e9
        assert self.origin_s is not None
        return self.origin_s + relative / 1e9


def _to_ns(seconds: float | NDArray[np.float64]) -> NDArray[np.int64]:
    """Seconds to whole ns; a time beyond int64 ns is refused."""
    try:
        return seconds_to_ns(seconds)
    except ValueError:
        raise ConversionError("sync: a time is beyond ±9.2e9 s (int64 nanoseconds)") from None


def _columns(track: Track, times: NDArray[np.int64]) -> list[_Column]:
    """The track's present samples, sorted by time (of samples in one ns the last): per
    column of a value track holding NaN, else per row (a pose or quaternion is present as
    a whole)."""
    order = np.argsort(times, kind="stable")
    times = times[order]
    last = np.append(times[1:] != times[:-1], True)
    order, times = order[last], times[last]
    data = np.asarray(track.data, dtype=np.float64)[order]
    flat = data.reshape(len(data), -1)
    if track.kind == "value" and data.ndim == 2 and np.isnan(flat).any():
        out = []
        for column in range(flat.shape[1]):
            present = np.flatnonzero(~np.isnan(flat[:, column]))
            out.append(_Column(np.array([column]), times[present], order[present]))
        return out
    whole = np.isfinite(flat).all(axis=1) if track.kind in ("pose", "quaternion") \
        else ~np.isnan(flat).all(axis=1)
    return [_Column(None, times[whole], order[whole])]


def _part(track: Track, column: _Column) -> Track:
    """The present samples of ``column`` as a track of their own, for ``sample``."""
    data = np.asarray(track.data, dtype=np.float64)[column.rows]
    if column.index is not None:
        data = data[:, column.index]
    return Track(track.name, track.kind, data, Timeline.from_nanoseconds(column.times))


def _default_tolerance(times: NDArray[np.int64]) -> float:
    steps = np.diff(times)
    return TOLERANCE_PERIODS * float(np.median(steps)) / 1e9 if steps.size else math.inf


def _tolerance(tolerance: float | Mapping[str, float] | None, name: str) -> float | None:
    value = tolerance.get(name) if isinstance(tolerance, Mapping) else tolerance
    if value is not None and not value >= 0:
        raise ConversionError(f"tolerance must be a number of seconds >= 0, not {value!r}")
    return None if value is None else float(value)


def _covered(times: NDArray[np.int64], grid: NDArray[np.float64], tol: float,
             method: str) -> NDArray[np.bool_]:
    """True where the sample(s) ``method`` uses at a grid time lie within ``tol`` s of it:
    the same integer-ns search as the sampling, and the tolerance rounded to whole ns, so a
    distance equal to it is within it."""
    tol = float(round(tol * 1e9)) if math.isfinite(tol) else math.inf
    n = times.size
    before = np.searchsorted(times, grid, side="right") - 1  # last sample at or before
    has_before = before >= 0
    age = np.where(has_before, grid - times[np.clip(before, 0, n - 1)], np.inf)
    covered: NDArray[np.bool_]
    if method == "hold":
        covered = has_before & (age <= tol)
        return covered
    exact = has_before & (age == 0)
    after = np.clip(before + 1, 0, n - 1)
    has_after = before + 1 < n
    wait = np.where(has_after, times[after] - grid, np.inf)
    if method == "nearest":
        covered = exact | (np.minimum(age, wait) <= tol)
    else:
        covered = exact | ((age <= tol) & (wait <= tol))
    return covered


def _gap(track: Track, column: _Column, grid: NDArray[np.float64], at: int, tol: float,
         clock: _Clock) -> ConversionError:
    """The refusal naming the track (its topic and joint), the grid time and its neighbours."""
    where = f"track {track.name!r}"  # several topics of a bag: the topic's own name
    if column.index is not None and track.labels:
        where += f", column {track.labels[int(column.index[0])]!r}"
    t = float(grid[at])
    before = column.times[column.times <= t]
    after = column.times[column.times > t]
    near = []
    if before.size:
        near.append(f"last sample {(t - float(before[-1])) / 1e9:.6g} s before")
    if after.size:
        near.append(f"next {(float(after[0]) - t) / 1e9:.6g} s after")
    return ConversionError(
        f"{where}: no sample within the tolerance {tol:.6g} s of grid time "
        f"{clock.absolute(t):.9f} s (frame {at}; {', '.join(near) or 'no samples'}); "
        "give a larger tolerance or drop such frames (on_gap='drop')")


#: How an action is derived from a state track on a grid (spec 3.3 rule 6).
ACTIONS = ("next", "delta")


def action_from_state(track: Track, how: str, name: str = "action") -> Track:
    """An action track from a synchronised state track: ``next`` = the next grid state
    (``action[k] = state[k+1]``, the last frame repeated) or ``delta`` = the step to it
    (``state[k+1] − state[k]``, so 0 on the last frame; Azure #224's current-to-next
    deltas). ``attrs`` say which (``action``) and from what (``derived_from``)."""
    _check_action(how)
    if track.kind != "value":
        raise ConversionError(f"actions come from a value track, not the {track.kind} track "
                              f"{track.name!r}")
    data = np.asarray(track.data, dtype=np.float64)
    following = np.concatenate([data[1:], data[-1:]]) if len(data) else data
    values = following if how == "next" else following - data
    return Track(name, "value", values, track.timeline,
                 list(track.labels) if track.labels else None,
                 {"derived_from": track.name, "action": how})


def with_action(motion: Motion, how: str, state: str, name: str = "action") -> Motion:
    """``motion`` with an action track ``name`` derived from its state track ``state``
    (:func:`action_from_state`); refused where ``name`` is taken or ``state`` is missing."""
    _check_action(how)
    if state not in motion.tracks:
        raise ConversionError(f"no state track {state!r} to derive the action from (tracks: "
                              f"{', '.join(motion.tracks)})")
    if name in motion.tracks:
        raise ConversionError(f"the motion has a track {name!r} already; an action derived "
                              "from the state would replace it")
    out = Motion(dict(motion.tracks), motion.skeleton, motion.terrain, dict(motion.meta))
    out.add(action_from_state(motion.tracks[state], how, name))
    return out


def _check_action(how: str) -> None:
    if how not in ACTIONS:
        raise ConversionError(f"an action is one of {', '.join(ACTIONS)}, not {how!r}")

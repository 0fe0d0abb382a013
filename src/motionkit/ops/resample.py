"""Resampling tracks to a uniform rate with proper interpolation.

Methods: ``linear`` (lerp for values, vectors and positions; slerp for rotations),
``hold`` (the previous sample), ``nearest``, and ``choreonoid`` — Choreonoid's own
timed-frame import rule (frame ``int(t * rate)``, gaps hold the previous frame, a later
sample on the same frame wins), so users can reproduce what Choreonoid shows.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from .._limits import WORK_CAP, WORK_FLOOR
from ..errors import MotionkitError, choices
from ..model import Motion, Timeline, Track
from ..spatial.quaternion import slerp

METHODS = ("linear", "hold", "nearest", "choreonoid")
#: A resampled track may hold this many times its input's values (plus WORK_FLOOR, at
#: most WORK_CAP): upsampling 10 Hz to 10 kHz fits, a far time stamp cannot fill memory.
MAX_GROWTH = 1000


def resample(motion: Motion, rate: float | None, method: str = "linear") -> Motion:
    """A new Motion with every track on a uniform timeline at ``rate`` Hz.

    ``rate=None`` keeps each track's own (nominal) rate, which turns stamped tracks into
    uniform ones. ``method="auto"`` is ``linear``. Skeleton, terrain and metadata are shared.
    """
    if method == "auto":
        method = "linear"
    if method not in METHODS:
        raise MotionkitError(f"unknown resampling method {method!r}; "
                             f"{choices(method, METHODS, 'use one of')}")
    out = Motion(skeleton=motion.skeleton, terrain=motion.terrain, meta=dict(motion.meta))
    for track in motion.tracks.values():
        out.add(resample_track(track, rate, method))
    return out


def resample_track(track: Track, rate: float | None, method: str = "linear") -> Track:
    """One track on a uniform timeline (see :func:`resample`)."""
    target_rate = rate if rate is not None else _own_rate(track)
    if not (target_rate > 0 and math.isfinite(target_rate)):
        raise MotionkitError(f"the target rate must be a positive number, not {target_rate!r}")
    times = track.times
    data = np.asarray(track.data, dtype=np.float64)
    if method == "choreonoid":
        last = float(np.max(times)) * target_rate + 1 if times.size else 0.0
        _check_growth(track, last)
        try:
            frames = choreonoid_import(times, data, target_rate, track.kind)
        except ValueError as exc:
            raise MotionkitError(f"track {track.name!r}: {exc}") from None
        return track.with_data(frames, Timeline.uniform(target_rate, len(frames)))
    start = float(times[0]) if times.size else 0.0
    span = float(times[-1]) - start if times.size else 0.0
    _check_growth(track, span * target_rate + 1)
    ns = track.timeline.stamps_ns
    if ns is not None and ns.size:  # exact: the grid and the search in integer ns
        count = grid_count(int(ns[-1] - ns[0]), target_rate)
        timeline = Timeline.uniform(target_rate, count, start)
        return track.with_data(sample(track, grid_offsets(count, target_rate), method,
                                      origin_ns=int(ns[0])), timeline)
    count = math.floor(span * target_rate + 1e-9) + 1 if times.size else 0
    timeline = Timeline.uniform(target_rate, count, start)
    return track.with_data(sample(track, timeline.times, method), timeline)


def grid_count(span_ns: int, fps: float) -> int:
    """Frames of a grid at ``fps`` over ``span_ns`` ns: every k whose time (see
    :func:`grid_offsets`) is at most ``span_ns``."""
    count = max(math.floor(span_ns * fps / 1e9), 0) + 1
    while count > 1 and (count - 1) * 1e9 / fps > span_ns:
        count -= 1
    while count * 1e9 / fps <= span_ns:
        count += 1
    return count


def grid_offsets(count: int, fps: float) -> NDArray[np.float64]:
    """Grid times k/fps in ns after the first, k < count, as float64 ``k·1e9/fps``: a grid
    time that is a whole ns is that integer exactly (one correctly rounded division), so a
    sample stamped on it in integer ns is found at it, not one period earlier as float
    seconds a few ulp off would place it; other grid times keep their fraction."""
    offsets: NDArray[np.float64] = np.arange(count, dtype=np.float64) * 1e9 / fps
    return offsets


def sample(track: Track, at: NDArray[np.float64], method: str = "linear", *,
           origin_ns: int | None = None) -> NDArray[np.float64]:
    """The track's values at times ``at`` (clamped to its time range): seconds, or, with
    ``origin_ns``, ns after it compared with the track's integer ``stamps_ns`` (exact
    while within 2**53 ns, 104 days, of the origin)."""
    if origin_ns is not None:
        if track.timeline.stamps_ns is None:
            raise MotionkitError(f"track {track.name!r} has no nanosecond stamps")
        times = (track.timeline.stamps_ns - origin_ns).astype(np.float64)
    else:
        times = track.times
    data = np.asarray(track.data, dtype=np.float64)
    if times.size == 1:
        return np.repeat(data, len(at), axis=0)
    after = np.searchsorted(times, at, side="right")
    if method == "hold":
        return data[np.clip(after - 1, 0, len(times) - 1)]
    lower = np.clip(after - 1, 0, len(times) - 2)
    span = times[lower + 1] - times[lower]
    with np.errstate(divide="ignore", invalid="ignore"):
        frac = np.clip((at - times[lower]) / span, 0.0, 1.0)
    frac[span == 0] = 1.0  # equal stamps (ns apart, below float resolution): the later one
    if method == "nearest":
        return data[lower + (frac >= 0.5)]
    a, b = data[lower], data[lower + 1]
    weight = frac.reshape((-1,) + (1,) * (data.ndim - 1))
    mixed = a * (1.0 - weight) + b * weight
    if track.kind in ("pose", "quaternion"):
        rotations = slice(3, 7) if track.kind == "pose" else slice(0, 4)
        part_frac = frac.reshape((-1,) + (1,) * (data.ndim - 2))
        blended = slerp(a[..., rotations], b[..., rotations], part_frac)
        # at a sample's own time, give its quaternion exactly (slerp would renormalise it)
        at_a = (frac == 0.0).reshape((-1,) + (1,) * (data.ndim - 1))
        at_b = (frac == 1.0).reshape((-1,) + (1,) * (data.ndim - 1))
        blended = np.where(at_a, a[..., rotations], np.where(at_b, b[..., rotations], blended))
        mixed[..., rotations] = blended
    return mixed


def choreonoid_import(times: NDArray[np.float64], data: NDArray[np.float64], rate: float,
                      kind: str) -> NDArray[np.float64]:
    """Frames as Choreonoid fills them from time-stamped samples (in file order).

    Sample *i* goes to frame ``int(t_i * rate)``; growing the sequence copies the last
    frame into the gap; a sample on an existing frame overwrites it.
    """
    if times.size and (not np.all(np.isfinite(times)) or times.min() < 0):
        raise ValueError("timed frames need finite, non-negative times")
    indices = (times * rate).astype(np.int64)
    frames: list[NDArray[np.float64]] = []
    default = np.zeros(data.shape[1:])
    if kind == "pose":
        default[..., 6] = 1.0
    for index, row in zip(indices.tolist(), data, strict=True):
        if index >= len(frames):
            fill = frames[-1] if frames else default
            frames.extend([fill] * (index - len(frames)))
            frames.append(row)
        else:
            frames[index] = row
    return np.array(frames, dtype=np.float64).reshape((len(frames), *data.shape[1:]))


def _check_growth(track: Track, frames: float) -> None:
    """Refuse to make more frames than MAX_GROWTH times the track's values warrant."""
    width = max(int(np.prod(track.data.shape[1:])), 1)
    allowed = min(WORK_CAP, WORK_FLOOR + MAX_GROWTH * int(track.data.size))
    if not frames * width <= allowed:
        raise MotionkitError(f"track {track.name!r}: resampling would make {frames:.4g} frames "
                             f"of {width} values, more than the {allowed:,}-value budget of "
                             "a resample")


def _own_rate(track: Track) -> float:
    if track.timeline.rate:
        return float(track.timeline.rate)
    steps = np.diff(track.times)
    if steps.size == 0:
        raise MotionkitError(f"track {track.name!r} has no rate; give one")
    return 1.0 / float(np.median(steps))

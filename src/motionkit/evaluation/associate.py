"""Pairing reference and estimate poses by time: evo's nearest stamp, trajectopy's interpolation."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from ..errors import ConversionError
from ._poses import Array, PoseInput, Poses, as_poses

Method = Literal["nearest", "interpolate"]


@dataclass(frozen=True)
class Association:
    """Matched pairs: ``ref[k]`` belongs to ``est[k]``. ``ref_index``/``est_index`` point into
    the inputs (for interpolation ``est_index`` is the estimate pose before the stamp)."""

    ref: Poses
    est: Poses
    ref_index: NDArray[np.intp]
    est_index: NDArray[np.intp]
    method: str
    max_diff: float
    offset: float
    max_gap: float
    n_ref: int
    n_est: int

    def __len__(self) -> int:
        return len(self.ref)

    def settings(self) -> dict[str, float | str | int]:
        """The association's settings and counts, for result files."""
        return {"match": self.method, "max_diff": self.max_diff, "offset": self.offset,
                "max_gap": self.max_gap, "n_ref": self.n_ref, "n_est": self.n_est}


def associate(ref: PoseInput, est: PoseInput, method: Method = "nearest", max_diff: float = 0.01,
              offset: float = 0.0, max_gap: float = 10.0) -> Association:
    """Pair ``ref`` and ``est`` poses; ``offset`` (s) is added to the estimate's stamps.

    ``nearest`` reproduces evo 1.38 exactly (the shorter input searches the longer one,
    ``|Δt| ≤ max_diff``, ties to the earlier stamp). ``interpolate`` follows trajectopy: both
    inputs sorted and de-duplicated, cropped to their common span, the estimate linearly
    interpolated (slerp for rotations) at every reference stamp inside it, without bridging
    gaps longer than ``max_gap`` seconds. Fewer than 2 pairs raise ConversionError.
    """
    r, e = as_poses(ref, _name(ref, "reference")), as_poses(est, _name(est, "estimate"))
    if not np.isfinite(offset) or not (max_diff >= 0) or not (max_gap > 0):
        raise ConversionError(f"offset must be finite, max_diff >= 0 and max_gap > 0 "
                              f"(got {offset}, {max_diff}, {max_gap})")
    if method == "nearest":
        ri, ei = _nearest(r.times, e.times, max_diff, offset)
        pair = Association(r.take(ri), e.take(ei), ri, ei, method, max_diff, offset, max_gap,
                           len(r), len(e))
    elif method == "interpolate":
        pair = _interpolate(r, e, offset, max_gap, max_diff)
    else:
        raise ConversionError(f"unknown match method {method!r}; use nearest or interpolate")
    if len(pair) < 2:
        raise ConversionError(
            f"only {len(pair)} of {len(r)} reference and {len(e)} estimate poses matched "
            f"({method}, max_diff {max_diff} s, offset {offset} s; reference "
            f"{_span(r.times)}, estimate {_span(e.times + offset)}); check that both use the same "
            "clock, or raise --max-diff, set --offset, or use --match interpolate")
    return pair


def _name(source: PoseInput, default: str) -> str:
    return source.name if isinstance(source, Poses) and source.name else default


def _span(times: Array) -> str:
    return f"{times.min():.6f}..{times.max():.6f} s"


def _nearest(ref_t: Array, est_t: Array, max_diff: float,
             offset: float) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """evo 1.38's nearest-stamp rule, vectorised: indices into ref and est, in short-list order."""
    est_short = len(est_t) <= len(ref_t)
    short, long = (est_t, ref_t - offset) if est_short else (ref_t, est_t + offset)
    chosen = _nearest_sorted(short, long, max_diff) if bool(np.all(np.diff(long) >= 0)) else \
        _nearest_scan(short, long, max_diff)
    found = np.flatnonzero(chosen >= 0)
    match = chosen[found]
    return (match, found) if est_short else (found, match)


def _nearest_sorted(a: Array, s: Array, m: float) -> NDArray[np.intp]:
    """For each stamp of ``a`` the chosen index into the sorted ``s`` (or -1), in blocks."""
    out = np.empty(len(a), dtype=np.intp)
    for start in range(0, len(a), 1 << 16):
        out[start:start + (1 << 16)] = _nearest_block(a[start:start + (1 << 16)], s, m)
    return out


def _nearest_block(a: Array, s: Array, m: float) -> NDArray[np.intp]:
    j = np.minimum(np.searchsorted(s, a, side="right"), len(s) - 1)
    ub = s[j] - a
    lb = np.where(j > 0, a - s[np.maximum(j - 1, 0)], np.inf)
    upper = (ub <= m) & (ub < lb)
    lower = ~upper & (lb <= m) & (lb <= ub)
    out = np.where(upper, j, np.where(lower, j - 1, -1))
    out[(a < s[0] - m) | (a > s[-1] + m)] = -1
    return out.astype(np.intp)


def _nearest_scan(a: Array, s: Array, m: float) -> NDArray[np.intp]:
    """Unsorted stamps: the first minimum of |s - a| over all of ``s``, in blocks."""
    from ..errors import warn

    warn("stamps are not sorted; nearest matching scans every pair (slow for long inputs)")
    out = np.full(len(a), -1, dtype=np.intp)
    block = max(1, 4_000_000 // max(len(s), 1))
    for start in range(0, len(a), block):
        part = a[start:start + block]
        diff = np.abs(s[None, :] - part[:, None])
        best = np.argmin(diff, axis=1)
        ok = diff[np.arange(len(part)), best] <= m
        out[start:start + block] = np.where(ok, best, -1)
    return out


def _sorted_unique(poses: Poses) -> tuple[Poses, NDArray[np.intp]]:
    """Sorted by time, duplicate stamps dropped (first occurrence kept), as trajectopy loads."""
    order = np.argsort(poses.times, kind="stable")
    _, first = np.unique(poses.times[order], return_index=True)
    keep = order[first]
    return poses.take(keep), keep


def _gap_filter(times: Array, other: Array, max_gap: float) -> NDArray[np.bool_]:
    """Mask of ``times`` to keep: inside ``other``'s span, and not inside one of ``other``'s gaps
    longer than ``max_gap`` except the first stamp after the gap starts and the last before it ends."""
    keep: NDArray[np.bool_] = (times >= max(times[0], other[0])) & (times <= min(times[-1], other[-1]))
    gaps = np.flatnonzero(np.diff(other) > max_gap)
    if len(gaps):
        lo, hi = other[gaps], other[gaps + 1]
        slot = np.searchsorted(lo, times, side="left") - 1  # the gap starting before each stamp
        inside = (slot >= 0) & (times > lo[np.maximum(slot, 0)]) & (times < hi[np.maximum(slot, 0)])
        if inside.any():
            first = np.searchsorted(times, lo, side="right")
            last = np.searchsorted(times, hi, side="left") - 1
            spared = np.zeros(len(times), dtype=bool)
            spared[first[first < len(times)]] = True
            spared[last[last >= 0]] = True
            keep &= ~inside | spared
    return keep


def _interpolate(r: Poses, e: Poses, offset: float, max_gap: float, max_diff: float) -> Association:
    """trajectopy-style matching: the estimate resampled at the reference stamps."""
    from ..spatial.quaternion import conjugate, multiply

    r, r_keep = _sorted_unique(r)
    e, e_keep = _sorted_unique(e)
    e_t = e.times + offset
    e_mask = _gap_filter(e_t, r.times, max_gap)
    if not e_mask.any():
        return Association(r.take(np.arange(0)), e.take(np.arange(0)), np.arange(0), np.arange(0),
                           "interpolate", max_diff, offset, max_gap, len(r), len(e))
    e_sel = np.flatnonzero(e_mask)
    e_t = e_t[e_sel]
    r_mask = _gap_filter(r.times, e_t, max_gap)
    r_sel = np.flatnonzero(r_mask & (r.times >= e_t[0]) & (r.times <= e_t[-1]))
    tau = r.times[r_sel]
    if len(e_sel) < 2 or len(tau) < 2:
        empty = np.arange(0)
        return Association(r.take(empty), e.take(empty), empty, empty, "interpolate", max_diff, offset,
                           max_gap, len(r), len(e))
    pos = e.positions[e_sel]
    quat = e.quaternions[e_sel]
    positions = np.column_stack([np.interp(tau, e_t, pos[:, k]) for k in range(3)])
    k = np.clip(np.searchsorted(e_t, tau, side="left") - 1, 0, len(e_t) - 2)
    frac = (tau - e_t[k]) / (e_t[k + 1] - e_t[k])
    step = multiply(conjugate(quat[k]), quat[k + 1])
    quaternions = multiply(quat[k], _quat_power(step, frac))
    ref = r.take(r_sel)
    est = Poses(ref.times - offset, positions, quaternions, e.name, oriented=e.oriented)
    return Association(ref, est, r_keep[r_sel], e_keep[e_sel[k]], "interpolate", max_diff, offset,
                       max_gap, len(r), len(e))


def _quat_power(q: Array, f: Array) -> Array:
    """``q`` raised to fractions ``f`` along the shortest arc: exp(f·log q), as SciPy's Slerp."""
    q = np.where(q[:, 3:4] < 0, -q, q)
    vec = q[:, :3]
    sin_half = np.linalg.norm(vec, axis=1)
    half = np.arctan2(sin_half, q[:, 3])
    scaled = f * half
    axis = np.divide(vec, sin_half[:, None], out=np.zeros_like(vec), where=sin_half[:, None] > 0)
    return np.column_stack([axis * np.sin(scaled)[:, None], np.cos(scaled)])

"""Absolute (APE) and relative (RPE) pose errors, with evo's per-pair definitions."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Literal

import numpy as np
from numpy.typing import NDArray

from ..errors import ConversionError
from ._poses import Array, PoseInput, Poses, as_poses
from ._threads import single_blas
from .align import Alignment, Kind
from .align import align as fit_alignment
from .associate import Association, Method, associate
from .result import Result, Setting

if TYPE_CHECKING:
    from scipy.optimize import OptimizeResult

#: Estimate poses the clock-offset search looks at (evenly spread); more only refine the end.
OFFSET_SAMPLE = 20_000

Relation = Literal["translation", "rotation_angle", "rotation", "full", "point_distance"]
RELATIONS: tuple[str, ...] = ("translation", "rotation_angle", "rotation", "full", "point_distance")
DeltaUnit = Literal["frames", "m", "deg", "rad", "s"]
Offset = float | Literal["auto"]


def quaternion_angle(q: Array) -> Array:
    """Rotation angles (rad, in [0, π]) of unit quaternions; atan2 keeps tiny angles exact."""
    sines: Array = np.linalg.norm(q[:, :3], axis=1)
    return 2.0 * np.arctan2(sines, np.abs(q[:, 3]))


def _unit(relation: str, unit: str | None) -> tuple[str, bool]:
    """The unit label, and whether angles are wanted in degrees."""
    if relation not in RELATIONS:
        raise ConversionError(f"unknown relation {relation!r}; use one of {', '.join(RELATIONS)}")
    if relation == "rotation_angle":
        unit = unit or "deg"
        if unit not in ("deg", "rad"):
            raise ConversionError(f"rotation_angle is in deg or rad, not {unit!r}")
        return unit, unit == "deg"
    if relation in ("rotation", "full"):
        if unit not in (None, ""):
            raise ConversionError(f"{relation} errors have no unit (got {unit!r})")
        return "", False
    if unit not in (None, "m"):
        raise ConversionError(f"{relation} errors are in m, not {unit!r}")
    return "m", False


def _pairs(ref: PoseInput | Association, est: PoseInput | None, match: Method, max_diff: float,
           offset: Offset, max_gap: float, kind: Kind) -> tuple[Association, float | None]:
    """The association to evaluate, and the estimated offset when ``offset="auto"``."""
    if isinstance(ref, Association):
        return ref, None
    if est is None:
        raise ConversionError("give an estimate, or an Association as the only argument")
    found = None
    if offset == "auto":
        found = estimate_offset(ref, est, kind=kind, max_gap=max_gap)
        offset = found
    elif not isinstance(offset, (int, float)):
        raise ConversionError(f"offset must be seconds or 'auto', not {offset!r}")
    return associate(ref, est, match, max_diff, float(offset), max_gap), found


def _settings(pairs: Association, alignment: Kind, n_align: int | None, origin: bool,
              found: float | None) -> dict[str, Setting]:
    settings: dict[str, Setting] = dict(pairs.settings())
    settings.update(align=alignment, n_align=n_align, origin=origin,
                    offset_estimated=found is not None)
    return settings


def _rotation_errors(q_err: Array, relation: str, trans: Array, degrees: bool) -> Array:
    """rotation_angle, rotation (‖R − I‖_F = 2√2‖v‖) or full errors of error quaternions."""
    if relation == "rotation_angle":
        angle = quaternion_angle(q_err)
        return np.rad2deg(angle) if degrees else angle
    rot: Array = 2.0 * math.sqrt(2.0) * np.linalg.norm(q_err[:, :3], axis=1)
    return rot if relation == "rotation" else np.sqrt(rot * rot + trans * trans)


@single_blas
def ape(ref: PoseInput | Association, est: PoseInput | None = None, *,
        relation: Relation = "translation", unit: str | None = None, align: Kind = "none",
        n_align: int | None = None, origin: bool = False, match: Method = "nearest",
        max_diff: float = 0.01, offset: Offset = 0.0, max_gap: float = 10.0) -> Result:
    """Absolute pose error of ``est`` against ``ref`` per matched pair (evo's APE).

    ``translation`` (= ``point_distance``) is ‖p − q‖; ``rotation_angle`` the angle of
    P⁻¹Q in deg (or rad); ``rotation`` ‖R(P⁻¹Q) − I‖_F; ``full`` ‖P⁻¹Q − I₄‖_F. The estimate is
    first aligned with ``align`` (see :func:`align`). ``offset="auto"`` estimates the clock offset.
    """
    label, degrees = _unit(relation, unit)
    pairs, found = _pairs(ref, est, match, max_diff, offset, max_gap, align)
    if relation not in ("translation", "point_distance"):
        for poses in (pairs.ref, pairs.est):
            poses.need_orientation(f"APE {relation}")
    alignment = fit_alignment(pairs.ref, pairs.est, align, n_align, origin)
    q, p = pairs.ref, pairs.est
    errors = np.empty(len(q))
    for block in _blocks(len(q)):  # blocks keep temporaries small (1M poses in ~0.1 GB)
        errors[block] = _ape_errors(q.part(block), alignment.apply(p.part(block)), relation, degrees)
    return Result("ape", relation, label, errors, pairs.ref_index, pairs.est_index, q.times, p.times,
                  alignment, _settings(pairs, align, n_align, origin, found),
                  pairs.ref.name or "reference", pairs.est.name or "estimate")


def _ape_errors(q: Poses, p: Poses, relation: str, degrees: bool) -> Array:
    from ..spatial.quaternion import conjugate, multiply

    trans: Array = np.linalg.norm(p.positions - q.positions, axis=1)
    if relation in ("translation", "point_distance"):
        return trans
    if p.matrices is not None and q.matrices is not None:
        rotation = np.einsum("nji,njk->nik", p.matrices, q.matrices)
        translation = np.einsum("nji,nj->ni", p.matrices, q.positions - p.positions)
        return _matrix_errors(rotation, translation, relation, degrees)
    return _rotation_errors(multiply(conjugate(p.quaternions), q.quaternions), relation, trans, degrees)


@single_blas
def rpe(ref: PoseInput | Association, est: PoseInput | None = None, *, delta: float = 1,
        unit: DeltaUnit = "frames", relation: Relation = "translation", error_unit: str | None = None,
        all_pairs: bool = False, tolerance: float = 0.1, pairs_from_reference: bool = False,
        align: Kind = "none", n_align: int | None = None, match: Method = "nearest",
        max_diff: float = 0.01, offset: Offset = 0.0, max_gap: float = 10.0) -> Result:
    """Relative pose error over pose pairs ``delta`` apart (evo's RPE, errors not normalised).

    ``unit`` measures ``delta`` in frames, metres travelled, degrees or radians turned, or
    seconds; consecutive pairs by default (a running sum, as evo), every start with
    ``all_pairs`` (nearest end within ``tolerance·delta``). The pair error is the ``relation``
    of (Q_i⁻¹Q_j)⁻¹(P_i⁻¹P_j); ``point_distance`` is |‖q_j − q_i‖ − ‖p_j − p_i‖|.
    """
    label, degrees = _unit(relation, error_unit)
    pairs, found = _pairs(ref, est, match, max_diff, offset, max_gap, align)
    for poses in (pairs.ref, pairs.est):
        poses.need_orientation("RPE (relative poses)")
    alignment: Alignment = fit_alignment(pairs.ref, pairs.est, align, n_align, False)
    q, p = pairs.ref, pairs.est
    basis = q if pairs_from_reference else p if unit == "frames" else alignment.apply(p)
    i, j = pair_indices(basis, delta, unit, all_pairs, tolerance)
    errors = np.empty(len(i))
    for block in _blocks(len(i)):
        bi, bj = i[block], j[block]
        errors[block] = _rpe_errors(q.take(bi), q.take(bj), alignment.apply(p.take(bi)),
                                    alignment.apply(p.take(bj)), relation, degrees)
    settings = _settings(pairs, align, n_align, False, found)
    settings.update(delta=delta, delta_unit=unit, all_pairs=all_pairs, tolerance=tolerance,
                    pairs_from_reference=pairs_from_reference)
    return Result("rpe", relation, label, errors, pairs.ref_index[j], pairs.est_index[j], q.times[j],
                  p.times[j], alignment, settings, pairs.ref.name or "reference",
                  pairs.est.name or "estimate", ref_start=pairs.ref_index[i], est_start=pairs.est_index[i])


def _blocks(n: int, size: int = 1 << 16) -> list[slice]:
    return [slice(start, min(start + size, n)) for start in range(0, n, size)]


def _rpe_errors(qi: Poses, qj: Poses, pi: Poses, pj: Poses, relation: str, degrees: bool) -> Array:
    """Errors of the pairs (qi[k], qj[k]) vs (pi[k], pj[k])."""
    from ..spatial.quaternion import conjugate, multiply, rotate

    dq = qj.positions - qi.positions
    dp = pj.positions - pi.positions
    if relation == "point_distance":
        ref_lengths: Array = np.linalg.norm(dq, axis=1)
        est_lengths: Array = np.linalg.norm(dp, axis=1)
        return np.abs(ref_lengths - est_lengths)
    if qi.matrices is not None and qj.matrices is not None and pi.matrices is not None \
            and pj.matrices is not None:
        return _rpe_matrix_errors(qi.matrices, qj.matrices, pi.matrices, pj.matrices, dq, dp, relation,
                                  degrees)
    qi_inv, pi_inv = conjugate(qi.quaternions), conjugate(pi.quaternions)
    trans: Array = np.linalg.norm(rotate(pi_inv, dp) - rotate(qi_inv, dq), axis=1)
    if relation == "translation":
        return trans
    q_rel = multiply(qi_inv, qj.quaternions)
    p_rel = multiply(pi_inv, pj.quaternions)
    return _rotation_errors(multiply(conjugate(q_rel), p_rel), relation, trans, degrees)


def _rpe_matrix_errors(rqi: Array, rqj: Array, rpi: Array, rpj: Array, dq: Array, dp: Array,
                      relation: str, degrees: bool) -> Array:
    """RPE with rotations kept as matrices (closed-form inverse = transpose, as evo does)."""
    t_q = np.einsum("nji,nj->ni", rqi, dq)
    t_p = np.einsum("nji,nj->ni", rpi, dp)
    r_q = np.einsum("nji,njk->nik", rqi, rqj)
    r_p = np.einsum("nji,njk->nik", rpi, rpj)
    rotation = np.einsum("nji,njk->nik", r_q, r_p)
    translation = np.einsum("nji,nj->ni", r_q, t_p - t_q)
    return _matrix_errors(rotation, translation, relation, degrees)


def _matrix_errors(rotation: Array, translation: Array, relation: str, degrees: bool) -> Array:
    """Errors of error poses given as (n, 3, 3) rotations and (n, 3) translations."""
    trans: Array = np.linalg.norm(translation, axis=1)
    if relation == "translation":
        return trans
    if relation == "rotation_angle":
        from scipy.spatial.transform import Rotation

        angle: Array = np.linalg.norm(Rotation.from_matrix(rotation).as_rotvec(), axis=1)
        return np.rad2deg(angle) if degrees else angle
    rot: Array = np.linalg.norm((rotation - np.eye(3)).reshape(-1, 9), axis=1)
    return rot if relation == "rotation" else np.sqrt(rot * rot + trans * trans)


def pair_indices(poses: Poses, delta: float, unit: str, all_pairs: bool,
                 tolerance: float) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """Start and end indices of the RPE pairs, chosen on ``poses`` as evo chooses them."""
    n = len(poses)
    if not (delta > 0) or not math.isfinite(delta):
        raise ConversionError(f"delta must be positive (got {delta})")
    if unit == "frames":
        if delta != int(delta):
            raise ConversionError(f"delta must be a whole number of frames (got {delta})")
        step = int(delta)
        if all_pairs:
            start = np.arange(max(n - step, 0))
            return _nonempty(start, start + step, delta, unit)
        ids = np.arange(0, n, step)
        return _nonempty(ids[:-1], ids[1:], delta, unit)
    if unit in ("deg", "rad"):
        limit = 180.0 if unit == "deg" else math.pi
        if delta > limit:
            raise ConversionError(f"an angle delta must lie in (0, {limit:g}] {unit} (got {delta})")
        if all_pairs:
            raise ConversionError("all_pairs is not available for angle deltas (O(n²)); use "
                                  "consecutive pairs or a distance delta")
        from ..spatial.quaternion import conjugate, multiply

        q = poses.quaternions
        steps = quaternion_angle(multiply(conjugate(q[:-1]), q[1:]))
        return _nonempty(*_running(steps, math.radians(delta) if unit == "deg" else delta), delta, unit)
    if unit == "m":
        d = poses.positions[1:] - poses.positions[:-1]
        steps = np.sqrt(np.einsum("ij,ij->i", d, d))
    elif unit == "s":
        steps = np.diff(poses.times)
    else:
        raise ConversionError(f"unknown delta unit {unit!r}; use frames, m, deg, rad or s")
    if not all_pairs:
        return _nonempty(*_running(steps, delta), delta, unit)
    cumulative = np.concatenate([[0.0], np.cumsum(steps)])
    return _nonempty(*_nearest_ends(cumulative, delta, tolerance), delta, unit)


def _running(steps: Array, delta: float) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """evo's consecutive pairs: accumulate step sizes, close a pair when the sum reaches delta."""
    ids = [0]
    acc = 0.0
    for k, size in enumerate(steps.tolist(), start=1):
        acc += size
        if acc >= delta:
            ids.append(k)
            acc = 0.0
    index = np.asarray(ids, dtype=np.intp)
    return index[:-1], index[1:]


def _nearest_ends(cumulative: Array, delta: float,
                  tolerance: float) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """For every start i the first j > i minimising |(D_j − D_i) − delta|, kept within tolerance."""
    n = len(cumulative)
    start = np.arange(n - 1)
    centre = np.searchsorted(cumulative, cumulative[start] + delta, side="left")
    best = np.full(n - 1, -1, dtype=np.intp)
    best_err = np.full(n - 1, np.inf)
    for shift in (-2, -1, 0, 1):
        cand = np.clip(centre + shift, 0, n - 1)
        cand = np.searchsorted(cumulative, cumulative[cand], side="left")  # first of equal values
        cand = np.maximum(cand, start + 1)
        err = np.abs((cumulative[cand] - cumulative[start]) - delta)
        better = (err < best_err) | ((err == best_err) & (cand < best))
        best = np.where(better, cand, best)
        best_err = np.where(better, err, best_err)
    ok = best_err <= delta * tolerance
    return start[ok], best[ok]


def _nonempty(i: NDArray[np.intp], j: NDArray[np.intp], delta: float,
              unit: str) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    if len(i) == 0:
        raise ConversionError(f"delta {delta:g} {unit} gives no pose pair on these poses; use a "
                              "smaller delta (or a larger tolerance with all_pairs)")
    return i.astype(np.intp), j.astype(np.intp)


@single_blas
def estimate_offset(ref: PoseInput, est: PoseInput, *, kind: Kind = "se3", max_gap: float = 10.0,
                    start: float = 0.0, window: float | None = None) -> float:
    """The clock offset (s) to add to the estimate's stamps so that it best fits the reference.

    Minimises the mean squared position error after ``kind`` alignment, with the reference
    interpolated at the estimate's stamps, over ``start ± window`` seconds (default: 1 s, at
    most a tenth of the shorter input): a scan on 1/40 of the window, then Brent's method
    around the best scan point (to 1e-10 s). Reference gaps longer than ten of its median
    steps are not bridged here (a straight line across a tracking dropout is no reference). Fitting the
    offset and the alignment together matters: the alignment otherwise absorbs much of a shift."""
    r = as_poses(ref, "reference")
    e = as_poses(est, "estimate")
    if window is None:
        window = min(1.0, 0.1 * min(np.ptp(r.times), np.ptp(e.times)))
    gap = min(max_gap, 10 * float(np.median(np.diff(np.sort(r.times)))))  # bridge no dropouts
    if not (window > 0) or not math.isfinite(start):
        raise ConversionError(f"window must be positive and start finite (got {window}, {start})")

    # the search runs on at most OFFSET_SAMPLE estimate poses, evenly spread; with more, the
    # found offset is refined on all of them within one scan step (a few evaluations)
    step = max(1, -(-len(e) // OFFSET_SAMPLE))
    sample = e.take(np.arange(0, len(e), step))
    grid = start + np.linspace(-window, window, 81)
    values = np.array([_offset_cost(sample, r, float(x), kind, gap) for x in grid])
    if not np.isfinite(values).any():
        raise ConversionError(f"no offset in {start - window:g}..{start + window:g} s makes the inputs "
                              "overlap in time; give --offset (or a start) near the true one")
    best = int(np.argmin(values))
    lo, hi = grid[max(best - 1, 0)], grid[min(best + 1, len(grid) - 1)]
    found = _refine(sample, r, kind, gap, lo, hi)
    offset = float(found.x) if found.fun <= values[best] else float(grid[best])
    if step == 1:
        return offset
    width = grid[1] - grid[0]
    whole = _refine(e, r, kind, gap, max(offset - width, grid[0]), min(offset + width, grid[-1]))
    return float(whole.x) if whole.fun <= _offset_cost(e, r, offset, kind, gap) else offset


def _offset_cost(e: Poses, r: Poses, offset: float, kind: Kind, gap: float) -> float:
    """Mean squared position error of ``e`` shifted by ``offset`` against ``r`` after ``kind``
    alignment (inf where they do not overlap)."""
    try:
        # the reference (usually the less noisy side) is interpolated at the estimate's stamps:
        # interpolating noisy samples averages their noise, which would pull the offset
        # towards half-way between samples
        pairs = associate(e, r, "interpolate", offset=-offset, max_gap=gap)
        moved = fit_alignment(pairs.est, pairs.ref, kind).apply(pairs.ref)
        residual = pairs.est.positions - moved.positions
    except ConversionError:
        return math.inf
    return float(np.mean(np.einsum("ij,ij->i", residual, residual)))


def _refine(e: Poses, r: Poses, kind: Kind, gap: float, lo: float, hi: float) -> OptimizeResult:
    """Brent's method on the offset cost within ``lo..hi``, to 1e-10 s."""
    from scipy.optimize import minimize_scalar

    return minimize_scalar(lambda x: _offset_cost(e, r, float(x), kind, gap), bounds=(lo, hi),
                           method="bounded", options={"xatol": 1e-10})

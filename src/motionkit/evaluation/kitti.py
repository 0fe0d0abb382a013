"""The KITTI odometry segment metric, computed as the KITTI devkit (kitti-odom-eval) does."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from ..errors import ConversionError
from ._poses import Array, PoseInput, Poses, as_poses
from ._threads import single_blas
from .align import Alignment, umeyama
from .associate import Association, associate
from .result import Result, Setting

KittiAlign = Literal["none", "se3", "sim3"]
LENGTHS = (100.0, 200.0, 300.0, 400.0, 500.0, 600.0, 700.0, 800.0)


def _homogeneous(poses: Poses) -> Array:
    out = np.zeros((len(poses), 4, 4))
    out[:, :3, :3] = poses.rotation_matrices()
    out[:, :3, 3] = poses.positions
    out[:, 3, 3] = 1.0
    return out


@single_blas
def kitti_odometry(ref: PoseInput | Association, est: PoseInput | None = None, *,
                   align: KittiAlign = "none",
                   lengths: Sequence[float] = LENGTHS, step: int = 10) -> Result:
    """Translation (%) and rotation (deg/100 m) drift over segments of the given lengths.

    As the devkit: both inputs re-expressed in their first frame (general matrix inverse),
    optionally aligned (``se3``/``sim3`` Umeyama), path length along the reference, a segment
    from every ``step``-th frame to the first frame whose path exceeds start + L, error
    (P_rel⁻¹Q_rel) divided by the nominal L, averaged over all segments. Inputs of equal
    length are paired frame by frame, others by nearest stamp first.
    """
    pairs = _pairs(ref, est)
    for poses in (pairs.ref, pairs.est):
        poses.need_orientation("the KITTI metric")
    if align not in ("none", "se3", "sim3") or step < 1 or not lengths or min(lengths) <= 0:
        raise ConversionError("kitti_odometry needs align none|se3|sim3, step >= 1 and positive lengths")
    gt, res = _homogeneous(pairs.ref), _homogeneous(pairs.est)
    gt = np.linalg.inv(gt[0]) @ gt
    res = np.linalg.inv(res[0]) @ res
    res, alignment = _aligned(res, gt, align)
    first, length, last = _segments(gt, lengths, step)
    rel_gt = np.linalg.inv(gt[first]) @ gt[last]
    rel_res = np.linalg.inv(res[first]) @ res[last]
    error = np.linalg.inv(rel_res) @ rel_gt
    cosine = 0.5 * (error[:, 0, 0] + error[:, 1, 1] + error[:, 2, 2] - 1.0)
    r_err = np.arccos(np.clip(cosine, -1.0, 1.0)) / length
    t = error[:, :3, 3]
    t_err = np.sqrt(t[:, 0] ** 2 + t[:, 1] ** 2 + t[:, 2] ** 2) / length
    ref_last: NDArray[np.intp] = pairs.ref_index[last]
    settings: dict[str, Setting] = dict(pairs.settings())
    settings.update(align=align, lengths=",".join(f"{v:g}" for v in lengths), step=step)
    return Result("kitti", "translation_drift", "%", t_err * 100, ref_last, pairs.est_index[last],
                  pairs.ref.times[last], pairs.est.times[last], alignment, settings,
                  pairs.ref.name or "reference", pairs.est.name or "estimate",
                  extra=_summary(lengths, length, t_err, r_err))


def _pairs(ref: PoseInput | Association, est: PoseInput | None) -> Association:
    """The pose pairs: an Association as given, else frame by frame for inputs of equal
    length, by nearest stamp for others."""
    if isinstance(ref, Association):
        return ref
    if est is None:
        raise ConversionError("give an estimate, or an Association as the only argument")
    r = as_poses(ref, ref.name if isinstance(ref, Poses) else "reference")
    e = as_poses(est, est.name if isinstance(est, Poses) else "estimate")
    if len(r) == len(e):
        index = np.arange(len(r))
        return Association(r, e, index, index, "index", 0.0, 0.0, 0.0, len(r), len(e))
    return associate(r, e)


def _aligned(res: Array, gt: Array, align: KittiAlign) -> tuple[Array, Alignment]:
    """The estimate's 4×4 poses moved onto the reference's by Umeyama (``se3``/``sim3``),
    and the alignment."""
    if align == "none":
        return res, Alignment("none")
    rotation, translation, scale = umeyama(res[:, :3, 3], gt[:, :3, 3], align == "sim3")
    res[:, :3, 3] *= scale
    transform = np.eye(4)
    transform[:3, :3], transform[:3, 3] = rotation, translation
    return transform @ res, Alignment(align, rotation, translation, scale, len(res))


def _segments(gt: Array, lengths: Sequence[float], step: int
              ) -> tuple[NDArray[np.intp], Array, NDArray[np.intp]]:
    """Segments as the devkit takes them: from every ``step``-th frame, for each length,
    to the first frame whose path length along the reference exceeds the start's + L;
    (first frames, lengths, last frames) of those that end inside the path."""
    d = gt[1:, :3, 3] - gt[:-1, :3, 3]
    dist = np.concatenate([[0.0], np.cumsum(np.sqrt(d[:, 0] ** 2 + d[:, 1] ** 2 + d[:, 2] ** 2))])
    n = len(dist)
    first = np.repeat(np.arange(0, n, step), len(lengths))
    length = np.tile(np.asarray(lengths, dtype=np.float64), len(first) // len(lengths))
    last = np.searchsorted(dist, dist[first] + length, side="right")
    ok = last < n
    first, length, last = first[ok], length[ok], last[ok]
    if len(first) == 0:
        raise ConversionError(f"the reference path is {dist[-1]:.6g} m long, shorter than the shortest "
                              f"segment ({min(lengths):g} m); give shorter lengths")
    return first, length, last


def _summary(lengths: Sequence[float], length: Array, t_err: Array, r_err: Array
             ) -> dict[str, object]:
    """The devkit's averages over all segments and per length (translation in %, rotation
    in degrees per 100 m)."""
    count = len(t_err)
    per_length = {}
    for value in lengths:
        mask = length == value
        if mask.any():
            per_length[f"{value:g}"] = {"segments": int(mask.sum()),
                                        "t_err_percent": float(np.mean(t_err[mask])) * 100,
                                        "r_err_deg_per_100m": float(np.mean(r_err[mask])) / math.pi * 18000}
    return {
        "segments": count,
        "t_err_percent": sum(t_err.tolist()) / count * 100,
        "r_err_deg_per_100m": sum(r_err.tolist()) / count / math.pi * 180 * 100,
        "per_length": per_length,
    }

"""A quick look at a result: both paths from above, and the errors (over time, or per segment
length for the KITTI metric).

Needs matplotlib (the ``plot`` extra); drawn on a bare ``Figure``, so no GUI backend or
global pyplot state is touched."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import MotionkitError
from ._poses import Array, Poses
from .result import Result

MAX_POINTS = 200_000


def _broken(times: Array, values: Array) -> tuple[Array, Array]:
    """Thinned to MAX_POINTS, with NaN at gaps over ten median steps so lines do not bridge them."""
    step = max(1, len(times) // MAX_POINTS)
    times, values = times[::step], values[::step]
    if len(times) < 3:
        return times, values
    dt = np.diff(times)
    gaps = np.flatnonzero(dt > 10 * np.median(dt)) + 1
    nan = np.full((len(gaps), *values.shape[1:]), np.nan)
    return np.insert(times, gaps, np.nan), np.insert(values, gaps, nan, axis=0)


def plot(result: Result, ref: Poses, est: Poses, path: str | os.PathLike[str]) -> Path:
    """Write a PNG (or any format matplotlib knows by the suffix) of ``result`` to ``path``."""
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise MotionkitError("plotting needs matplotlib: pip install 'motionkit[plot]'") from None
    figure = Figure(figsize=(12, 4.8), layout="constrained")
    top, right = figure.subplots(1, 2, width_ratios=(1, 1.4))
    if result.metric == "kitti":  # the devkit's alignment lives in first-frame coordinates
        from .align import align

        first = slice(0, 2)
        aligned = align(ref.part(first), est.part(first), "none", origin=True).apply(est)
    else:
        aligned = result.alignment.apply(est)
    axes = np.argsort(np.ptp(ref.positions, axis=0))[::-1][:2]  # the two widest axes: a top view
    for poses, label, style in ((ref, f"reference ({ref.name or 'ref'})", "k-"),
                                (aligned, f"estimate ({est.name or 'est'}), {result.alignment.kind}", "C1-")):
        _, xy = _broken(poses.times, poses.positions[:, axes])
        top.plot(xy[:, 0], xy[:, 1], style, lw=0.8, label=label)
    names = "xyz"
    top.set(xlabel=f"{names[axes[0]]} (m)", ylabel=f"{names[axes[1]]} (m)", aspect="equal",
            title="seen from above")
    top.legend(fontsize="small")
    if result.metric == "kitti":
        _per_length(right, result.extra)
    else:
        seconds, errors = _broken(result.t_est - result.t_est[0], result.errors)
        right.plot(seconds, errors, "C0-", lw=0.6)
        for key, colour, style in (("rmse", "C3", "--"), ("median", "C2", ":")):
            right.axhline(result.stats[key], color=colour, ls=style, lw=1,
                          label=f"{key} {result.stats[key]:.6g}")
        unit = f" ({result.unit})" if result.unit else ""
        right.set(xlabel="time since the first pair (s)", ylabel=f"{result.relation}{unit}",
                  title=f"{result.metric.upper()}: {result.pairs} pairs", ylim=(0, None))
        right.legend(fontsize="small")
    target = Path(path)
    figure.savefig(target, dpi=110)
    return target


def _per_length(axes: Any, extra: dict[str, Any]) -> None:
    """Translation and rotation drift per segment length."""
    rows = extra["per_length"]
    lengths = [float(k) for k in rows]
    axes.plot(lengths, [r["t_err_percent"] for r in rows.values()], "C0o-",
              label=f"translation, overall {extra['t_err_percent']:.4g} %")
    axes.set(xlabel="segment length (m)", ylabel="translation drift (%)", ylim=(0, None),
             title=f"KITTI: {extra['segments']} segments")
    twin = axes.twinx()
    twin.plot(lengths, [r["r_err_deg_per_100m"] for r in rows.values()], "C3s--",
              label=f"rotation, overall {extra['r_err_deg_per_100m']:.4g} deg/100m")
    twin.set(ylabel="rotation drift (deg/100m)", ylim=(0, None))
    axes.legend(handles=axes.get_lines() + twin.get_lines(), fontsize="small")

"""The figure of an evaluation result: both paths from above with the error along the
estimate as a colour map, the error over time, and its histogram (or the KITTI drift per
segment length). ``motionkit eval … --plot`` draws this."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from . import plain_text, require_matplotlib, save
from .motion import thin

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from ..evaluation._poses import Poses
    from ..evaluation.result import Result

Array = NDArray[np.float64]


def _broken(times: Array, values: Array) -> tuple[Array, Array]:
    """Thinned for drawing, with NaN at gaps over ten median steps so lines do not bridge them."""
    keep = thin(len(times))
    times, values = times[keep], values[keep]
    if len(times) < 3:
        return times, values
    dt = np.diff(times)
    gaps = np.flatnonzero(dt > 10 * np.median(dt)) + 1
    nan = np.full((len(gaps), *values.shape[1:]), np.nan)
    return np.insert(times, gaps, np.nan), np.insert(values, gaps, nan, axis=0)


def evaluation_figure(result: Result, ref: Poses, est: Poses) -> Figure:
    """Paths (estimate aligned as the metric did) coloured by error, error over time with RMSE
    and median, histogram of the errors."""
    from matplotlib.figure import Figure

    figure = Figure(figsize=(15, 5), layout="constrained")
    top, middle, right = figure.subplots(1, 3, width_ratios=(1.2, 1.3, 0.8))
    if result.metric == "kitti":  # the devkit's alignment lives in first-frame coordinates
        from ..evaluation.align import align

        first = slice(0, 2)
        aligned = align(ref.part(first), est.part(first), "none", origin=True).apply(est)
    else:
        aligned = result.alignment.apply(est)
    axes = sorted(np.argsort(np.ptp(ref.positions, axis=0))[::-1][:2].tolist())  # a top view
    names = "xyz"
    ref_name, est_name = Path(result.ref_name).name, Path(result.est_name).name
    _, ref_xy = _broken(ref.times, ref.positions[:, axes])
    top.plot(ref_xy[:, 0], ref_xy[:, 1], "-", color="0.3", lw=0.8, label=f"reference ({ref_name})")
    unit = f" ({result.unit})" if result.unit else ""
    if result.metric != "kitti" and result.pairs:
        keep = thin(result.pairs)
        points = aligned.positions[result.est_index[keep]][:, axes]
        dots = top.scatter(points[:, 0], points[:, 1], c=result.errors[keep], s=4, cmap="viridis",
                           label=f"estimate ({est_name}), {result.alignment.kind}")
        # under the top view: a colour bar at its right put its label beside the middle
        # panel's y label, the same words twice in a row
        figure.colorbar(dots, ax=top, label=f"error: {result.relation}{unit}", shrink=0.8,
                        location="bottom", pad=0.02)
    else:
        _, xy = _broken(aligned.times, aligned.positions[:, axes])
        top.plot(xy[:, 0], xy[:, 1], "C1-", lw=0.8, label=f"estimate ({est_name})")
    top.set(xlabel=f"{names[axes[0]]} (m)", ylabel=f"{names[axes[1]]} (m)", aspect="equal",
            title="Seen from above, coloured by error")
    top.legend(fontsize="small")
    if result.metric == "kitti":
        _per_length(middle, result.extra)
        right.set_visible(False)
    else:
        seconds, errors = _broken(result.t_est - result.t_est[0], result.errors)
        middle.plot(seconds, errors, "C0-", lw=0.6, label="error")
        for key, colour, style in (("rmse", "C3", "--"), ("median", "C2", ":")):
            middle.axhline(result.stats[key], color=colour, ls=style, lw=1,
                           label=f"{key} {result.stats[key]:.6g}")
        middle.set(xlabel="time since the first pair (s)", ylabel=f"{result.relation}{unit}",
                   title=f"{result.metric.upper()} over time: {result.pairs} pairs", ylim=(0, None))
        middle.legend(fontsize="small")
        right.hist(result.errors, bins=50, color="C0")
        right.set(xlabel=f"{result.relation}{unit}", ylabel="pairs (count)", title="Histogram")
    figure.suptitle(f"{result.metric.upper()}: {est_name} against {ref_name}")
    return figure


def _per_length(axes: Axes, extra: dict[str, Any]) -> None:
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


def save_evaluation(result: Result, ref: Poses, est: Poses, path: str | os.PathLike[str]) -> Path:
    """Write the figure of ``result`` to ``path`` (.png, .svg or .pdf), same bytes every time.

    Needs matplotlib (the ``plot`` extra)."""
    require_matplotlib()
    with plain_text():
        figure = evaluation_figure(result, ref, est)
    return save(figure, path)

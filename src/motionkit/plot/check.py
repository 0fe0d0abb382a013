"""The figure of a check report: each check's value over time, its threshold, and the
failing frames marked (``plot --kind check``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..errors import MotionkitError
from ..quality.report import CheckReport
from .motion import _new_figure, thin

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def check_figure(report: CheckReport) -> Figure:
    """One panel per check that measures every frame: its value (line), its threshold
    (dashed), the failing frames (red marks), the verdict in the panel's title."""
    drawn = [r for r in report.results if r.series is not None and len(r.series)]
    if not drawn:
        raise MotionkitError(f"{report.name}: no check measured a value per frame")
    figure = _new_figure((11, 1.9 * len(drawn) + 0.8))
    axes = figure.subplots(len(drawn), 1, sharex=True, squeeze=False)[:, 0]
    seconds = np.arange(report.frames) / report.fps
    for ax, result in zip(axes, drawn, strict=True):
        assert result.series is not None
        step = thin(len(result.series))
        ax.plot(seconds[step], result.series[step], color="C0", linewidth=1.2)
        if result.series_threshold is not None:
            ax.axhline(result.series_threshold, color="C3", linestyle="--", linewidth=1.0,
                       label=f"threshold {result.series_threshold:g}")
        if result.failing is not None and result.failing.any():
            bad = np.flatnonzero(result.failing)
            ax.plot(seconds[bad], result.series[bad], "o", color="C3", markersize=3.5,
                    label=f"failing ({len(bad)} frames)")
        verdict = "ok" if result.passed else "FAIL"
        ax.set_title(f"{result.name}: {verdict}, {result.value:.4g} {result.unit} "
                     f"(limit {result.threshold:.4g})", fontsize=9, loc="left")
        ax.legend(loc="upper right", fontsize=7)
        ax.grid(alpha=0.3)
    axes[-1].set_xlabel("time [s]")
    figure.suptitle(f"{report.name}: {report.verdict} (preset {report.preset})", fontsize=10)
    return figure

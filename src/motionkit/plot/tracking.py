"""Tracking errors over time: one line per tracked body (e.g. how far each robot body is
from its retargeting target), the worst first in the legend. ``motionkit retarget …
--plot-errors`` draws this."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from . import plain_text, require_matplotlib, save
from .motion import thin

if TYPE_CHECKING:
    from matplotlib.figure import Figure

#: Most bodies drawn (the worst by mean error); the rest are named in the title.
MAX_LINES = 12


def tracking_figure(names: Sequence[str], times: NDArray[np.float64],
                    errors: NDArray[np.float64], title: str = "tracking error") -> Figure:
    """``errors`` ``(frames, bodies)`` in metres over ``times`` (s), in millimetres."""
    from matplotlib.figure import Figure

    figure = Figure(figsize=(11, 4.5), layout="constrained")
    axes = figure.subplots()
    order = np.argsort(np.nanmean(errors, axis=0))[::-1] if errors.size else np.zeros(0, int)
    keep = thin(len(times))
    for body in order[:MAX_LINES]:
        axes.plot(times[keep], 1000 * errors[keep, body], lw=1.0,
                  label=f"{names[body]} (mean {1000 * np.nanmean(errors[:, body]):.0f} mm)")
    hidden = len(order) - MAX_LINES
    axes.set(xlabel="time (s)", ylabel="distance to target (mm)", ylim=(0, None),
             title=title + (f" ({hidden} more bodies not drawn)" if hidden > 0 else ""))
    if len(order):
        axes.legend(fontsize="small", ncols=2)
    axes.grid(alpha=0.3)
    return figure


def save_tracking(names: Sequence[str], times: NDArray[np.float64],
                  errors: NDArray[np.float64], path: str | os.PathLike[str],
                  title: str = "tracking error") -> Path:
    """Write :func:`tracking_figure` to ``path`` (.png, .svg or .pdf), same bytes every time.
    Body names are drawn as written (never parsed as mathtext). Needs matplotlib."""
    require_matplotlib()
    with plain_text():
        figure = tracking_figure(names, times, errors, title)
    return save(figure, path)

"""A quick look at a result, drawn by :mod:`motionkit.plot` (the one plotting module).

Needs matplotlib (the ``plot`` extra)."""

from __future__ import annotations

import os
from pathlib import Path

from ._poses import Poses
from .result import Result


def plot(result: Result, ref: Poses, est: Poses, path: str | os.PathLike[str]) -> Path:
    """Write the figure of ``result`` to ``path`` (.png, .svg or .pdf), same bytes every time."""
    from ..plot import require_matplotlib, save

    require_matplotlib()
    from ..plot.evaluation import evaluation_figure

    return save(evaluation_figure(result, ref, est), path)

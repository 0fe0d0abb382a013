"""A quick look at a result, drawn by :mod:`motionkit.plot` (the one plotting module).

Needs matplotlib (the ``plot`` extra)."""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import MotionkitError
from ._poses import Poses
from .result import Result


def plot(result: Result, ref: Poses, est: Poses, path: str | os.PathLike[str]) -> Path:
    """Write the figure of ``result`` to ``path`` (.png, .svg or .pdf), same bytes every time."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise MotionkitError("plotting needs matplotlib: pip install 'motionkit[plot]'") from None
    from ..plot import save
    from ..plot.evaluation import evaluation_figure

    return save(evaluation_figure(result, ref, est), path)

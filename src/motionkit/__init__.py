"""motionkit: read, write, check and convert robot and character motion data.

>>> import motionkit as mk
>>> m = mk.read("walk.seq")          # doctest: +SKIP
>>> m.tracks["joints"].data.shape    # doctest: +SKIP
(6701, 29)
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from ._version import __version__
from .api import convert, read, write
from .errors import ConversionError, FormatError, MotionkitError, MotionkitWarning
from .model import Motion, Skeleton, Terrain, Timeline, Track, World

if TYPE_CHECKING:  # what __getattr__ imports on first use, as type checkers should see it
    from . import formats as formats
    from . import kinematics, motionlib, ops, quality, spatial
    from .plot import plot  # callable modules: mk.plot(...) calls plot.plot(...)
    from .quality import check
    from .view import view


__all__ = [
    "ConversionError",
    "FormatError",
    "Motion",
    "MotionkitError",
    "MotionkitWarning",
    "Skeleton",
    "Terrain",
    "Timeline",
    "Track",
    "World",
    "__version__",
    "check",
    "convert",
    "kinematics",
    "motionlib",
    "ops",
    "plot",
    "quality",
    "read",
    "spatial",
    "view",
    "write",
]

#: ``mk.plot(...)`` and ``mk.view(...)`` call the subpackages themselves (callable modules).
_LAZY_SUBMODULES = {"kinematics", "motionlib", "ops", "spatial", "formats", "plot", "view",
                    "quality"}


def __getattr__(name: str) -> object:
    """Import heavy subpackages (kinematics, ops, …) only when first used; ``check`` is
    :func:`motionkit.quality.check`."""
    if name == "check":
        return importlib.import_module(".quality", __name__).check
    if name in _LAZY_SUBMODULES:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'motionkit' has no attribute {name!r}")

"""motionkit: read, write, check and convert robot and character motion data.

>>> import motionkit as mk
>>> m = mk.read("walk.seq")          # doctest: +SKIP
>>> m.tracks["joints"].data.shape    # doctest: +SKIP
(6701, 29)
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import TYPE_CHECKING

from ._version import __version__
from .api import convert, read, write
from .errors import ConversionError, FormatError, MotionkitError, MotionkitWarning
from .model import Motion, Skeleton, Terrain, Timeline, Track, World

if TYPE_CHECKING:  # what __getattr__ imports on first use, as type checkers should see it
    from . import formats as formats
    from . import kinematics, motionlib, ops, spatial
    from .plot import plot  # callable modules: mk.plot(...) calls plot.plot(...)
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
    "convert",
    "kinematics",
    "motionlib",
    "ops",
    "plot",
    "read",
    "spatial",
    "view",
    "write",
]

#: ``mk.plot(...)`` and ``mk.view(...)`` call the subpackages themselves (callable modules).
_LAZY_SUBMODULES = {"kinematics", "motionlib", "ops", "spatial", "formats", "plot", "view"}


def __getattr__(name: str) -> ModuleType:
    """Import heavy subpackages (kinematics, ops, …) only when first used."""
    if name in _LAZY_SUBMODULES:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'motionkit' has no attribute {name!r}")

"""glTF 2.0 .gltf: JSON with the buffer embedded as a base64 data URI (see :mod:`motionkit.formats.gltf`)."""

from __future__ import annotations

import os

from ...model import Motion
from ._read import read_motion, survey
from .write import HOLDS, holds, losses, write_motion

__all__ = ["HOLDS", "holds", "losses", "read", "survey", "write"]

def read(path: str | os.PathLike[str], *, motion: str | int | None = None) -> Motion:
    """A motion motionkit wrote (``motion``: which, by name or index, of a file of several)."""
    return read_motion(path, motion)


def write(path: str | os.PathLike[str], obj: Motion, *, skin: bool = False,
          spacing: float | None = None) -> None:
    """Write ``obj``; ``skin=True`` adds a skin of its bodies, for Blender's armature."""
    write_motion(path, obj, skin, spacing, binary=False)

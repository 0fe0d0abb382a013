"""G1 CSV, the lafan dialect: root quaternion **xyzw** (see :mod:`.g1csv`)."""

from __future__ import annotations

import os

from ...model import Motion
from ...model.character import CharacterSource
from .g1csv import DIALECTS, HOLDS, describe, losses, read_dialect, write_dialect

__all__ = ["HOLDS", "describe", "losses", "read", "write"]
ORDER = DIALECTS["lafan"]


def read(path: str | os.PathLike[str], *, fps: float | None = None,
         character: CharacterSource | None = None) -> Motion:
    """Read a G1 CSV of the lafan dialect (quaternion xyzw)."""
    return read_dialect(path, ORDER, fps, character, "g1csv-lafan")


def write(path: str | os.PathLike[str], obj: Motion) -> None:
    """Write a G1 CSV of the lafan dialect (quaternion xyzw)."""
    write_dialect(path, obj, ORDER, "g1csv-lafan")

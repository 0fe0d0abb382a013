"""Packed motion libraries (``.mkpack``) as dataset jobs: pack a folder or motion list, open
a pack, check it against its sources. The file layout is :mod:`motionkit.motionlib.packfile`.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import MotionkitError
from ..model.character import Character
from ..motionlib import MotionLib, packfile
from ..motionlib.library import PACK_SUFFIX, listing


def write_pack(lib: MotionLib, path: str | os.PathLike[str],
               sources: list[Path] | None = None) -> Path:
    """Write ``lib`` to ``path`` (atomically), recording each source file's size and hash."""
    return packfile.write(path, lib.state(), lib.names, lib.character is not None, sources)


def open_pack(path: str | os.PathLike[str], character: Character | None = None,
              verify: bool = False) -> MotionLib:
    """Open a pack as a MotionLib whose arrays are memory maps of the file.

    A truncated or damaged pack is one FormatError. ``verify`` also checks every array
    against its hash (reads the whole file)."""
    return MotionLib.from_pack(path, character, verify)


def check_pack(path: str | os.PathLike[str]) -> list[str]:
    """What changed since the pack was written: damaged arrays, and source files that are
    missing or whose bytes differ from the recorded hash. Empty when all is as packed."""
    return packfile.check(path)


def pack(source: str | os.PathLike[str], output: str | os.PathLike[str],
         character: str | os.PathLike[str] | None = None) -> MotionLib:
    """Load the library at ``source`` (folder, motion list or file) and write it as a pack."""
    target = Path(source)
    if target.suffix.lower() == PACK_SUFFIX:
        raise MotionkitError("the source is already a pack")
    paths = listing(target).paths
    lib = MotionLib.load(target, character=character)
    write_pack(lib, output, list(dict.fromkeys(p.absolute() for p in paths)))
    return lib

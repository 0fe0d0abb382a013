"""PARC character models (``parc-character``): MJCF files inside the subset PARC reads.

The subset and the arrays it gives (:class:`~motionkit.model.character.Character`) are
read by the shared MJCF parser (:mod:`motionkit.formats.shared.mjcf.character`); this
module only decides which files it takes (:func:`accepts`) and reads them.
"""

from __future__ import annotations

import os

from ...errors import ConversionError, FormatError
from ...model.skeleton import Skeleton
from ..shared.mjcf.character import ParcSubsetError, character_of, read_character
from ..shared.mjcf.parse import parse_tree, sniff

__all__ = ["accepts", "read", "sniff"]


def accepts(path: str) -> bool:
    """False for a MuJoCo model outside the PARC subset, or one a character reading would
    shorten: several top-level bodies (a scene, or a World written as MJCF), a root
    without a free joint (a fixed base), a joint ``ref`` (PARC measures from the XML pose
    and keeps limits as written), or three hinges that are not x, y and z (no qpos
    conversion). The general ``mjcf`` reader takes those; other errors stay this
    reader's to report. (``character=`` options read the PARC way whatever the file.)"""
    try:
        tree = parse_tree(path, keep=True)  # for the read that follows
        character = character_of(tree)
    except ParcSubsetError:
        return False
    except FormatError:
        return True
    tops = [body for body in tree.bodies if body.parent < 0]
    root = tops[0].found
    if len(tops) != 1 or not (root.free is not None
                              or any(attrs.get("type") == "free" for _, attrs in root.joints)):
        return False
    if any(_moves_reference(attrs.get("ref")) for body in tree.bodies
           for _, attrs in body.found.joints):
        return False
    try:
        for body, kind in enumerate(character.kinds):
            if kind == "spherical":
                character.euler_order(body)
    except ConversionError:
        return False
    return True


def _moves_reference(ref: str | None) -> bool:
    """Whether a joint's ``ref`` is set to other than 0 (unreadable counts: the general
    reader names the error)."""
    if ref is None:
        return False
    try:
        return float(ref) != 0
    except ValueError:
        return True




def read(path: str | os.PathLike[str]) -> Skeleton:
    """A PARC character as a Skeleton, its Character attached (see :func:`read_character`)."""
    return read_character(path)

"""BVH (Biovision Hierarchy): character motions with their skeleton, in and out.

Reading gives a Motion in metres and Z up (``unit``/``up`` say what the file uses) with
the skeleton attached; writing takes any Skeleton and the joint values that pose it.
See ``specs/character-bridges.md`` §3 and NOTES.md "BVH".
"""

from __future__ import annotations

from .read import read
from .write import describe, holds, losses, write

__all__ = ["describe", "holds", "losses", "read", "sniff", "write"]


def sniff(head: bytes) -> bool:
    """A file whose first word is HIERARCHY."""
    return head.lstrip()[:9].upper() == b"HIERARCHY"

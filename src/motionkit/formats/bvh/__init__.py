"""BVH (Biovision Hierarchy): character motions with their skeleton, in and out."""

from __future__ import annotations

from .read import read

__all__ = ["read", "sniff"]


def sniff(head: bytes) -> bool:
    """A file whose first word is HIERARCHY."""
    return head.lstrip()[:9].upper() == b"HIERARCHY"

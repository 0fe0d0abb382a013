"""URDF robot models: any Skeleton written as URDF 1.0 links and joints.

See :mod:`.write` for the mapping and ``specs/character-bridges.md`` §5; NOTES.md
"Model export" for what each loader makes of the result.
"""

from __future__ import annotations

from .chain import step_values
from .write import WRITES, losses, write

__all__ = ["WRITES", "losses", "sniff", "step_values", "write"]


def sniff(head: bytes) -> bool:
    """A document whose root element is ``<robot``."""
    return b"<robot" in head[:4096]

"""URDF robot models: any Skeleton written as URDF 1.0 links and joints, and read back.

See :mod:`.write` and :mod:`.read` for the mapping and ``specs/character-bridges.md`` §5; NOTES.md
"Model export" for what each loader makes of the result.
"""

from __future__ import annotations

from ..shared.chains import step_values
from .read import read
from .write import HOLDS, WRITES, losses, write

__all__ = ["HOLDS", "WRITES", "losses", "read", "sniff", "step_values", "write"]


def sniff(head: bytes) -> bool:
    """A document whose root element is ``<robot``."""
    return b"<robot" in head[:4096]

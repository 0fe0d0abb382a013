"""Choreonoid body motion files (``.seq``, also ``.yaml``), versions 1 to 4.

Reading: every version, both key spellings, inherited top-level keys, all SE3 layouts,
time-stamped frames kept as stamps. Writing: the layout Choreonoid writes, lossless
numbers by default. See ``seq_reader`` and ``seq_writer`` for the details.
"""

from __future__ import annotations

import re

from .seq_reader import read_seq as read
from .seq_writer import write_seq as write

READ_OPTIONS = frozenset({"fast", "timed"})
WRITE_OPTIONS = frozenset({"version", "precision", "nonfinite", "lossy"})

_SIGNATURE = re.compile(rb"""(^|[{,])\s*["']?type["']?\s*:\s*["']?(CompositeSeq|BodyMotion)\b""",
                        re.MULTILINE)


def sniff(head: bytes) -> bool:
    """True for a YAML document whose top-level type is a Choreonoid body motion."""
    return _SIGNATURE.search(head) is not None


__all__ = ["READ_OPTIONS", "WRITE_OPTIONS", "read", "sniff", "write"]

"""Choreonoid body motion files (``.seq``, also ``.yaml``), versions 1 to 4.

Reading: every version, both key spellings, inherited top-level keys, all SE3 layouts,
time-stamped frames kept as stamps. Writing: the layout Choreonoid writes, lossless
numbers by default. See ``seq_reader`` and ``seq_writer`` for the details.
"""

from __future__ import annotations

import re

from .seq_reader import read_seq as read
from .seq_writer import holds
from .seq_writer import write_seq as write

_TOP_TYPE = re.compile(
    rb"""(?:^|[{,])[ \t]*["']?type["']?[ \t]*:[ \t]*["']?(?:CompositeSeq|BodyMotion)\b""",
    re.MULTILINE)
_COMPONENT = re.compile(
    rb"""["']?(?:type|content)["']?[ \t]*:[ \t]*["']?(?:MultiValueSeq|MultiSE3Seq|Vector3Seq|"""
    rb"""MultiSe3Seq|JointDisplacement|JointPosition|LinkPosition|MultiJointDisplacementSeq|"""
    rb"""MultiLinkPositionSeq|ZMP|ZMPSeq|RelativeZMP)\b""")


def sniff(head: bytes) -> bool:
    """True for a YAML document that is a Choreonoid body motion.

    Looks for the top-level type, or — for files whose keys were sorted so that the type
    comes after a long ``components`` list — a ``components`` key with a Choreonoid
    component type or content name.
    """
    if _TOP_TYPE.search(head):
        return True
    return b"components" in head and _COMPONENT.search(head) is not None


def describe(motion: object) -> list[str]:
    """``info`` lines for a .seq motion: its format version and the components kept verbatim."""
    meta = getattr(motion, "meta", {}).get("choreonoid", {})
    lines = []
    if meta.get("version") is not None:
        lines.append(f"format version: {meta['version']:g}")
    for tree in meta.get("opaque", []):
        lines.append(f"kept verbatim: {tree.get('type')} ({tree.get('content', '')})")
    return lines


__all__ = ["describe", "holds", "read", "sniff", "write"]

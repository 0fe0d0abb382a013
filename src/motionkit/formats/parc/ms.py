"""PARC motion pickles: the MS container (``.pkl``) and the legacy single-dict format.

MS container: a pickled dict ``{"motion_data", "terrain_data", "misc_data"}`` whose
values are ``None`` or themselves pickles of plain dicts (see ``specs/parc-ms.md``).
Legacy: one pickled dict with ``frames`` (root position, root exp-map, DOFs),
``contacts``, a pickled ``SubTerrain``, ``fps``, ``loop_mode`` and misc keys.

Model mapping: ``root`` pose track (root_pos + root_rot, x y z w), ``joint_rotations``
(frames, J, 4), ``contacts`` (frames, B), ``joints`` (PARC DOF vectors; legacy frames or
derived through a character), ``motion.terrain``, ``meta["loop_mode"]``, and
``meta["parc"]`` = {container, fps, misc, …}. Everything is decoded by
:mod:`.safepickle`; the writer reproduces PARC's own bytes (:mod:`.writepickle`).

Writing: MS files hold float32, so float64 values are rounded to the nearest float32
(about 7 significant digits: 123456789.123 is stored as 123456792.0, and UTM-sized
coordinates, millions of metres, move by up to half a metre). That is the format's nature
and is done without a word; finite values beyond float32's range (±3.4e38) are refused,
never written as infinities. What PARC has no field for but is plain data —
metadata (except ``name``: a PARC motion is named by its file), track labels a character
does not explain, track and terrain attrs — is kept in ``misc_data["motionkit"]`` as
``{"meta": {…}, "tracks": {name: {"labels": […], "attrs": {…}}}, "terrain": {"attrs": {…}}}``
(parts only when they hold something). PARC's loaders hand misc keys they do not know
through untouched; the reader here puts them back (unless ``misc=False``), stored labels
over those a character would give.
"""

from __future__ import annotations

from ..shared.pickles.safepickle import MS_KEYS
from .ms_read import MOTION_KEYS, TERRAIN_KEYS, describe_misc, read
from .ms_write import HOLDS, WRITES, encode, losses, write

__all__ = ["HOLDS", "MOTION_KEYS", "MS_KEYS", "TERRAIN_KEYS", "WRITES", "describe_misc", "encode",
           "losses", "read", "sniff", "write"]


def sniff(head: bytes) -> bool:
    """A pickle (protocol 2+) that looks like an MS container, a legacy PARC dict or a
    terrain export."""
    if not head.startswith(b"\x80") or len(head) < 2 or head[1] < 2:
        return False
    start = head[:256]
    return (any(key.encode() in start for key in MS_KEYS) or b"frames" in head
            or b"SubTerrain" in head)

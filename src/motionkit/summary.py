"""What a file holds, as data: the ``info --json`` document (a public layout, DESIGN.md)
and the short summaries of metadata it and ``motionkit info`` show. Library logic, so the
catalog of a dataset and the CLI give the same answer."""

from __future__ import annotations

import itertools

import numpy as np

from .model import Motion, Skeleton, Track, World

#: Keys of one metadata mapping shown (summaries nest three levels).
MAX_KEYS = 32


def describe(fmt: str, obj: object) -> dict[str, object]:
    """The ``info --json`` document (layout fixed by DESIGN.md's public API contract)."""
    if isinstance(obj, Motion):
        doc: dict[str, object] = {"format": fmt, "frames": obj.frames, "duration": obj.duration,
                                  "tracks": {n: t.describe() for n, t in all_tracks(obj).items()}}
        meta = {k: v for k, v in obj.meta.items() if k != "source_format"}
        if meta:
            doc["meta"] = summarise(meta)
        if obj.terrain is not None and hasattr(obj.terrain, "describe"):
            doc["terrain"] = obj.terrain.describe()
        return doc
    if isinstance(obj, World):
        return {"format": fmt, **obj.describe()}
    if isinstance(obj, Skeleton):
        return {"format": fmt, "skeletons": [obj.describe()]}
    return {"format": fmt, "type": type(obj).__name__}


def all_tracks(motion: Motion) -> dict[str, Track]:
    """Stored tracks, then the views derived from them (``root`` of ``links``)."""
    return {**motion.tracks, **motion.tracks.views()}


def summarise(value: object, depth: int = 0) -> object:
    """Metadata made JSON-friendly and short: arrays and bytes become one-line summaries."""
    if isinstance(value, np.ndarray):
        if value.size <= 8 and value.dtype.kind in "biuf":
            return value.tolist()
        return f"array {value.dtype} {list(value.shape)}"
    if isinstance(value, (bytes, bytearray)):
        return f"<{len(value)} bytes>"
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, dict):
        if depth >= 3:
            return f"dict of {len(value)} keys"
        shown = {str(k): summarise(v, depth + 1)
                 for k, v in itertools.islice(value.items(), MAX_KEYS)}
        if len(value) > MAX_KEYS:  # aliased mappings could otherwise multiply per level
            shown["…"] = f"{len(value) - MAX_KEYS} more keys"
        return shown
    if isinstance(value, (list, tuple)):
        if len(value) > 16 or depth >= 3:
            return f"{type(value).__name__} of {len(value)}"
        return [summarise(v, depth + 1) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return type(value).__name__

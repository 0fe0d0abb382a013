"""How the scene looks, shared by the live view (viser) and the offline page (our own player),
so the two draw the same colours, sizes and camera and start alike."""

from __future__ import annotations

import numpy as np

from .scene import Actor, Scene

#: Frames drawn along a trajectory's path.
FRAMES_ALONG = 40

#: Speeds both views offer.
SPEEDS = ("0.25", "0.5", "1", "2", "4")

#: Both views open paused on the first step (press play, or move the slider).
START_PLAYING = False

#: Path width in screen pixels (stick widths, colours: ``model.geometry``, which the glTF
#: writer draws with too).
PATH_PIXELS = 2.0


def frame_size(actor: Actor) -> float:
    """Axes length: 5 cm on a skeleton's links; for a trajectory a twentieth of its extent, at
    least 5 cm."""
    if actor.kind == "skeleton":
        return 0.05
    path = _finite(actor.path)
    span = float(np.max(np.ptp(path, axis=0))) if len(path) > 1 else 1.0
    return float(np.clip(span / 20, 0.05, _FAR))


def frames_along(actor: Actor) -> np.ndarray:
    """The shown frames drawn as small axes along a trajectory's path (none for a skeleton)."""
    if actor.kind != "trajectory" or len(actor.frames) <= 1:
        return np.zeros(0, dtype=np.intp)
    return np.unique(np.linspace(0, len(actor.frames) - 1, FRAMES_ALONG).astype(np.intp))


def camera(scene: Scene) -> tuple[np.ndarray, np.ndarray]:
    """The first camera ``(position, look_at)``: at the first actor's first frame from the
    side and above, far enough to see every path."""
    first = _finite(scene.actors[0].positions[0])
    paths = _finite(np.concatenate([a.path.astype(float) for a in scene.actors]))
    points = np.concatenate([first, paths])
    span = float(np.max(np.ptp(points, axis=0))) if len(points) else 1.0
    distance = float(np.clip(1.2 * span + 2.0, 2.5, 60.0))
    chosen = paths if span > 0.5 else first
    target = np.clip(chosen.mean(axis=0), -_FAR, _FAR) if len(chosen) else np.zeros(3)
    direction = np.array([0.55, -0.75, 0.45])
    return target + distance * direction / np.linalg.norm(direction), target


#: Beyond this (m) a file's points are not looked at or scaled for (they stay in the data).
_FAR = 1e6


def _finite(points: np.ndarray) -> np.ndarray:
    """The rows of ``points`` the camera and the axes are sized from: finite and within
    ``_FAR`` (a file's NaN or 1e308 rows are drawn as they are, not aimed at)."""
    points = np.asarray(points, dtype=float).reshape(-1, 3)
    keep = np.isfinite(points).all(axis=1) & (np.abs(points) <= _FAR).all(axis=1)
    rows: np.ndarray = points[keep]
    return rows

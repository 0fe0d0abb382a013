"""Figures of motions: trajectories (evo_traj-like), joint tracks, terrain with the root path."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..errors import MotionkitError, choices, warn
from ..model import Motion, Track

if TYPE_CHECKING:
    from matplotlib.figure import Figure

Array = NDArray[np.float64]

#: Points per drawn line at most; longer inputs are thinned for drawing only.
MAX_POINTS = 20_000
#: Most joint panels in one figure (each costs a few MB and tenths of a second to draw).
MAX_PANELS = 64


def thin(count: int, limit: int = MAX_POINTS) -> slice:
    """A stride that keeps at most about ``limit`` of ``count`` samples (first one kept)."""
    return slice(None, None, max(1, -(-count // limit)))


def rpy_degrees(quaternions: ArrayLike) -> Array:
    """Roll, pitch, yaw (ZYX, degrees) of x y z w quaternions, unwrapped over time so a turn
    past ±180° draws as one curve."""
    q = np.asarray(quaternions, dtype=float)
    q = q / np.linalg.norm(q, axis=1, keepdims=True)
    x, y, z, w = q.T
    roll = np.arctan2(2 * (w * x + y * z), 1 - 2 * (x * x + y * y))
    pitch = np.arcsin(np.clip(2 * (w * y - z * x), -1.0, 1.0))
    yaw = np.arctan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))
    return np.degrees(np.unwrap(np.stack([roll, pitch, yaw], axis=1), axis=0))


def _new_figure(size: tuple[float, float]) -> Figure:
    from matplotlib.figure import Figure

    return Figure(figsize=size, layout="constrained")


def _root(name: str, motion: Motion) -> Track:
    root = motion.root_pose()
    if root is None:
        raise MotionkitError(f"{name}: no root pose to draw as a trajectory "
                             "(try --kind joints, or view it with its model)")
    return root


def _top_axes(positions: Sequence[Array]) -> tuple[int, int]:
    """The two widest axes over all inputs, in x-y-z order: the view from 'above'."""
    spans = np.max([np.ptp(p, axis=0) if len(p) else np.zeros(3) for p in positions], axis=0)
    widest = sorted(np.argsort(spans)[::-1][:2].tolist())
    if spans[2] <= max(spans[0], spans[1]) * 0.5 or spans[2] == 0:
        widest = [0, 1]
    return widest[0], widest[1]


def trajectory_figure(named: Sequence[tuple[str, Motion]]) -> Figure:
    """Top view (equal axes), x/y/z over time and unwrapped roll/pitch/yaw over time; one colour
    per input, a legend, start (circle) and end (square) markers."""
    figure = _new_figure((13, 10))
    outer = figure.add_gridspec(2, 1, height_ratios=(3, 1.2))
    upper = outer[0].subgridspec(3, 2, width_ratios=(1.1, 1))
    top = figure.add_subplot(upper[:, 0])
    xyz = [figure.add_subplot(upper[i, 1]) for i in range(3)]
    lower = outer[1].subgridspec(1, 3)
    angles = [figure.add_subplot(lower[0, i]) for i in range(3)]
    tracks = [(name, _root(name, motion)) for name, motion in named]
    positions = [np.asarray(t.data[:, :3], dtype=float) for _, t in tracks]
    a, b = _top_axes(positions)
    letters = "xyz"
    for index, ((name, track), pos) in enumerate(zip(tracks, positions, strict=True)):
        colour = f"C{index % 10}"
        keep = thin(len(pos))
        seconds = track.times - (track.times[0] if track.frames else 0.0)
        top.plot(pos[keep, a], pos[keep, b], "-", color=colour, lw=1, label=name)
        if len(pos):
            top.plot(pos[0, a], pos[0, b], "o", color=colour, ms=6, mfc="none", label="_start")
            top.plot(pos[-1, a], pos[-1, b], "s", color=colour, ms=6, label="_end")
        for axis in range(3):
            xyz[axis].plot(seconds[keep], pos[keep, axis], "-", color=colour, lw=0.9, label=name)
        rpy = rpy_degrees(track.data[:, 3:7])[keep] if track.frames else np.zeros((0, 3))
        for axis in range(3):
            angles[axis].plot(seconds[keep], rpy[:, axis], "-", color=colour, lw=0.9, label=name)
    top.set(xlabel=f"{letters[a]} (m)", ylabel=f"{letters[b]} (m)", aspect="equal",
            title="Top view (○ start, □ end)")
    top.legend(fontsize="small", loc="best")
    for axis in range(3):
        xyz[axis].set(xlabel="time since start (s)", ylabel=f"{letters[axis]} (m)",
                      title=f"{letters[axis]} over time")
    for axis, label in enumerate(("roll", "pitch", "yaw")):
        angles[axis].set(xlabel="time since start (s)", ylabel=f"{label} (deg)",
                         title=f"{label} over time (unwrapped)")
    figure.suptitle("Trajectories" if len(tracks) > 1 else f"Trajectory: {tracks[0][0]}")
    return figure


def joints_figure(name: str, motion: Motion, joints: Sequence[str] | None = None,
                  names: Sequence[str] | None = None) -> Figure:
    """One small panel per joint (labelled, shared time axis), 4 columns; ``joints`` picks some
    by label; ``names`` label unlabelled columns (from a model)."""
    track = motion.tracks.get("joints")
    if track is None:
        raise MotionkitError(f"{name}: no joint values to plot")
    data = np.asarray(track.data, dtype=float).reshape(track.frames, -1)
    labels = list(track.labels or names or [f"joint {i}" for i in range(data.shape[1])])
    columns = list(range(len(labels)))
    if joints:
        unknown = [j for j in joints if j not in labels]
        if unknown:
            raise MotionkitError(f"{name}: no joint {unknown[0]!r} "
                                 f"({choices(unknown[0], labels, 'joints')})")
        columns = [labels.index(j) for j in joints]
    total = len(columns)
    if total > MAX_PANELS:
        columns = columns[:MAX_PANELS]
        warn(f"{name}: {total} joints; drawing the first {MAX_PANELS} (choose with --joints)")
    unit = str(track.attrs.get("unit", "rad"))
    count = len(columns)
    across = min(4, count)
    rows = -(-count // across)
    figure = _new_figure((3.4 * across, 1.9 * rows + 0.6))
    grid = figure.subplots(rows, across, sharex=True, squeeze=False)
    keep = thin(track.frames)
    seconds = track.times - (track.times[0] if track.frames else 0.0)
    for slot, axes in enumerate(grid.flat):
        if slot >= count:
            axes.set_visible(False)
            continue
        column = columns[slot]
        axes.plot(seconds[keep], data[keep, column], "-", color="C0", lw=0.9)
        axes.set_title(labels[column], fontsize="small")
        axes.set_ylabel(f"angle ({unit})", fontsize="x-small")
        axes.set_xlabel("time (s)", fontsize="x-small")
        axes.tick_params(labelsize="x-small")
    shown = f"{count} joints" if count == total else f"the first {count} of {total} joints"
    figure.suptitle(f"Joint values: {name} ({shown})")
    return figure


def terrain_figure(name: str, motion: Motion) -> Figure:
    """The heightmap (colour = height, metres) with the root path and its start/end on it."""
    terrain = motion.terrain
    if terrain is None:
        raise MotionkitError(f"{name}: no terrain to draw")
    figure = _new_figure((8.5, 7))
    axes = figure.add_subplot()
    x0, y0 = (float(v) for v in terrain.origin)
    dx, dy = float(terrain.dx), float(terrain.dy or terrain.dx)
    nx, ny = terrain.shape
    extent = (x0 - dx / 2, x0 + (nx - 0.5) * dx, y0 - dy / 2, y0 + (ny - 0.5) * dy)
    image = axes.imshow(np.asarray(terrain.heights, dtype=float).T, origin="lower", extent=extent,
                        cmap="terrain", interpolation="nearest")
    figure.colorbar(image, ax=axes, label="height (m)")
    root = motion.root_pose()
    if root is not None and root.frames:
        pos = np.asarray(root.data[:, :3], dtype=float)
        keep = thin(len(pos))
        axes.plot(pos[keep, 0], pos[keep, 1], "-", color="k", lw=1.2, label="root path")
        axes.plot(pos[0, 0], pos[0, 1], "o", color="k", mfc="none", ms=7, label="start")
        axes.plot(pos[-1, 0], pos[-1, 1], "s", color="k", ms=6, label="end")
        axes.legend(fontsize="small", loc="best")
    axes.set(xlabel="x (m)", ylabel="y (m)", aspect="equal", title=f"Terrain and root path: {name}")
    return figure

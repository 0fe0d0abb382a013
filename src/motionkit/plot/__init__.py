"""Static plots of motions, terrains and evaluation results (matplotlib, the ``plot`` extra).

Everything is drawn on bare ``matplotlib.figure.Figure`` objects with the Agg canvas: no GUI
backend, no pyplot global state, so notebooks, the CLI and tests get the same pictures.
:func:`plot` picks panels from what the inputs hold; :func:`save` writes the same bytes for the
same figure (no dates, a fixed SVG hash salt).
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import sys
import types
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, cast

import numpy as np

from .._io import atomic_write
from ..errors import MotionkitError, choices
from ..model import Motion, Skeleton, Track, World

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from ..evaluation.align import Kind
    from ..quality.report import CheckReport

KINDS = ("auto", "trajectory", "joints", "terrain", "check")

Source = Motion | str | os.PathLike[str]


def require_matplotlib() -> None:
    """A MotionkitError naming the extra when matplotlib is missing."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise MotionkitError("plotting needs matplotlib: pip install 'motionkit[plot]'") from None


def _motions(sources: Sequence[Source], names: Sequence[str] | None) -> list[tuple[str, Motion]]:
    from ..api import read

    if not sources:
        raise MotionkitError("nothing to plot: give at least one file or motion")
    out: list[tuple[str, Motion]] = []
    for index, source in enumerate(sources):
        if isinstance(source, Motion):
            motion = source
            name = str(motion.meta.get("name") or f"motion {index + 1}")
        else:
            loaded = read(source)
            if not isinstance(loaded, Motion):
                raise MotionkitError(f"{Path(source).name}: holds a model, not a motion; "
                                     "plot draws motions (view shows models)")
            motion, name = loaded, Path(source).name
        if names and index < len(names):
            name = names[index]
        out.append((name, motion))
    return out


def choose_kind(motions: Sequence[Motion]) -> str:
    """The panels that fit: terrain when one file has a terrain, joints for a single file of
    joint values without a root path, else trajectories."""
    if len(motions) == 1:
        motion = motions[0]
        if motion.terrain is not None:
            return "terrain"
        if motion.root_pose() is None and "joints" in motion.tracks:
            return "joints"
    return "trajectory"


def joint_names(motion: Motion, model: Skeleton | World | str | os.PathLike[str]) -> list[str] | None:
    """Names for a motion's unlabelled joint columns from a model: by Choreonoid joint ID
    (column = ID), else in coordinate order when the counts match; None when neither fits."""
    from ..api import read
    from ..kinematics.motion import model_skeleton

    track = motion.tracks.get("joints")
    if track is None or track.labels:
        return None
    loaded = model if isinstance(model, Skeleton | World) else read(model)
    skeleton = model_skeleton(loaded, model if not isinstance(model, Skeleton | World) else "model")
    columns = track.part_count
    by_id = skeleton.joint_id_columns()
    if by_id and all(c in by_id for c in range(columns)):
        return [skeleton.dof_names[by_id[c]] for c in range(columns)]
    if columns == skeleton.dof_count:
        return list(skeleton.dof_names)
    return None


def plot(*sources: Source, kind: str = "auto", joints: Sequence[str] | None = None,
         names: Sequence[str] | None = None,
         model: Skeleton | World | str | os.PathLike[str] | None = None,
         ref: Source | None = None, align: str = "none") -> Figure:
    """A figure of motions (files or :class:`Motion` objects), with the panels ``kind`` asks for
    (``auto``: :func:`choose_kind`). ``joints`` picks joint columns by label; ``names`` labels
    the inputs in legends (default: file names); ``model`` names unlabelled joint columns.
    ``ref`` is drawn first, and with ``align`` (``se3``, ``sim3``, ``posyaw``, …, as
    ``eval``) every other trajectory is fitted onto it first, as ``evo_traj --ref --align``
    does: two SLAM paths in different frames then overlay. ``check`` draws each check of
    ``motionkit.check`` over time through ``model`` (the motion's own skeleton without
    one)."""
    from .check import check_figure
    from .motion import joints_figure, terrain_figure, trajectory_figure

    if kind not in KINDS:
        raise MotionkitError(f"unknown plot kind {kind!r} (one of {', '.join(KINDS)})")
    if align != "none" and ref is None:
        raise MotionkitError("aligning needs a reference to align onto (ref=... / --ref FILE)")
    require_matplotlib()
    named = _motions(sources, names)
    if ref is not None:
        (ref_name, reference), = _motions([ref], None)
        if kind not in ("auto", "trajectory"):
            raise MotionkitError(f"a reference is drawn with trajectories, not --kind {kind}")
        kind = "trajectory"
        named = [(f"{ref_name} (reference)", reference)] + [
            (name if align == "none" else f"{name} ({align} aligned)",
             aligned_onto(reference, motion, align, name)) for name, motion in named]
    if kind == "auto":
        kind = choose_kind([m for _, m in named])
    if kind != "trajectory" and len(named) != 1:
        raise MotionkitError(f"--kind {kind} draws one file at a time, got {len(named)}")
    with plain_text():
        if kind == "trajectory":
            return trajectory_figure(named)
        name, motion = named[0]
        if kind == "joints":
            labels = joint_names(motion, model) if model is not None else None
            return joints_figure(name, motion, joints, labels)
        if kind == "check":
            return check_figure(_checked(name, motion, model))
        return terrain_figure(name, motion)


def _checked(name: str, motion: Motion,
             model: Skeleton | World | str | os.PathLike[str] | None) -> CheckReport:
    from ..api import read
    from ..kinematics.motion import model_skeleton
    from ..quality import check

    skeleton = None
    if model is not None:
        loaded = model if isinstance(model, Skeleton | World) else read(model)
        skeleton = model_skeleton(loaded, model if not isinstance(model, Skeleton | World)
                                  else "model")
    return check(motion, skeleton, name=name)


def aligned_onto(reference: Motion, motion: Motion, kind: str, name: str = "") -> Motion:
    """``motion``'s root path moved onto ``reference``'s by the evaluation's alignment (stamps
    matched as ``eval`` matches them; ``none``: as it is)."""
    from ..evaluation import align, as_poses, associate
    from ..evaluation.align import KINDS as ALIGNMENTS

    if kind not in ALIGNMENTS:
        raise MotionkitError(f"unknown alignment {kind!r}; {choices(kind, ALIGNMENTS, 'use one of')}")
    if kind == "none":
        return motion
    poses = as_poses(motion, name)
    pairs = associate(as_poses(reference, "reference"), poses)
    moved = align(pairs.ref, pairs.est, cast("Kind", kind)).apply(poses)
    root = motion.root_pose()
    assert root is not None  # as_poses checked it
    data = np.hstack([moved.positions, moved.quaternions])
    return Motion({"root": Track("root", "pose", data, root.timeline)},
                  meta={"name": motion.meta.get("name")})


def plain_text() -> contextlib.AbstractContextManager[object]:
    """Text drawn from files (names, labels) as it is written: matplotlib would otherwise
    parse ``$...$`` as mathtext, which a hostile name can make recurse or fail."""
    import matplotlib

    return matplotlib.rc_context({"text.parse_math": False})


def save(figure: Figure, path: str | os.PathLike[str], dpi: int = 110) -> Path:
    """Write ``figure`` to ``path`` (format from the suffix: png, svg, pdf); same figure, same bytes."""
    import matplotlib

    target = Path(path)
    suffix = target.suffix.lower().lstrip(".")
    metadata: dict[str, str | None] = {
        "png": {"Software": None}, "svg": {"Date": None, "Creator": None},
        "pdf": {"CreationDate": None, "ModDate": None, "Producer": None, "Creator": None},
    }.get(suffix, {})  # type: ignore[assignment]
    if suffix not in ("png", "svg", "pdf"):
        raise MotionkitError(f"{target.name}: plots are written as .png, .svg or .pdf")
    buffer = io.BytesIO()
    try:
        with matplotlib.rc_context({"svg.hashsalt": "motionkit", "pdf.compression": 6}):
            figure.savefig(buffer, format=suffix, dpi=dpi, metadata=metadata)
    except (ValueError, RuntimeError, RecursionError, OverflowError) as exc:
        raise MotionkitError(f"{target.name}: matplotlib could not draw the figure "
                             f"({type(exc).__name__}: {' '.join(str(exc).split())[:200]})") from None
    data = buffer.getvalue()
    if suffix == "svg":
        data = _numbered_clip_ids(data)
    with atomic_write(target) as handle:  # never a half-written picture
        handle.write(data)
    return target


def _numbered_clip_ids(svg: bytes) -> bytes:
    """Clip-path ids numbered in order of first use: matplotlib hashes a clip path's
    transform text into its id, which can differ from one run to the next."""
    names: dict[bytes, bytes] = {}

    def number(match: re.Match[bytes]) -> bytes:
        return names.setdefault(match.group(0), b"clip%d" % len(names))

    return re.sub(rb"(?<=[#\"])p[0-9a-f]{10}(?=[)\"])", number, svg)


__all__ = ["KINDS", "choose_kind", "joint_names", "plain_text", "plot", "require_matplotlib", "save"]


class _Callable(types.ModuleType):
    """Lets ``motionkit.plot(...)`` call :func:`plot` while ``motionkit.plot`` stays the package."""

    def __call__(self, *sources: Source, **options: object) -> object:
        return plot(*sources, **options)  # type: ignore[arg-type]


sys.modules[__name__].__class__ = _Callable

"""What the viewer shows, as plain arrays: built from files without viser, so tests and the
HTML export check the same numbers the browser draws."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from ..errors import MotionkitError
from ..model import Motion, Skeleton, Terrain, World
from ..model.geometry import terrain_mesh

F32 = NDArray[np.float32]

#: The view keeps at most this many link poses (frames × links, over all actors) and
#: subsamples the frames beyond it, so a page stays a few megabytes; the data is untouched.
MAX_LINK_POSES = 240_000
#: Terrain meshes are thinned to at most this many vertices.
MAX_TERRAIN_VERTICES = 250_000
#: Points of a drawn path (root path, trajectory) at most.
MAX_PATH_POINTS = 5_000


@dataclass(eq=False)
class ShapeView:
    """One shape geometry (``vertices``, ``faces`` in the shape frame) instanced at world
    ``positions (F, n, 3)`` and ``wxyz (F, n, 4)`` per shown frame, on the links ``links``."""

    vertices: F32
    faces: NDArray[np.uint32]
    links: NDArray[np.intp]
    positions: F32
    wxyz: F32
    color: tuple[int, int, int] | None = None
    #: Each instance's pose in its link's frame (x y z qx qy qz qw), so a player can place
    #: the shapes from the link poses alone.
    offsets: NDArray[np.float64] | None = None


@dataclass(eq=False)
class Actor:
    """One moving thing: a skeleton's links or a trajectory's single frame.

    ``positions (F, L, 3)`` and ``wxyz (F, L, 4)`` are the world poses of ``L`` links at the
    scene's shown frames (float32, what the browser receives); ``parents[i]`` is link ``i``'s
    parent (-1 for none) for the sticks; ``path`` the root (or trajectory) path."""

    name: str
    times: NDArray[np.float64]
    positions: F32
    wxyz: F32
    parents: NDArray[np.intp]
    labels: list[str]
    path: F32
    frames: NDArray[np.intp]
    kind: str = "skeleton"
    shapes: list[ShapeView] = field(default_factory=list)

    @property
    def links(self) -> int:
        return int(self.positions.shape[1])

    def sticks(self, shown: int) -> F32:
        """Segments ``(S, 2, 3)`` from each link to its parent at shown frame ``shown``."""
        child = np.flatnonzero(self.parents >= 0)
        pos = self.positions[shown]
        return np.stack([pos[self.parents[child]], pos[child]], axis=1).astype(np.float32)


@dataclass(eq=False)
class TerrainMesh:
    """A heightfield as triangles: ``vertices (V, 3)`` metres and ``faces (T, 3)``."""

    vertices: F32
    faces: NDArray[np.uint32]


@dataclass(eq=False)
class Scene:
    """Actors side by side on one clock (``times``: seconds of each shown step), an optional
    terrain, and ``note`` saying what was subsampled for the view."""

    actors: list[Actor]
    times: NDArray[np.float64]
    terrain: TerrainMesh | None = None
    note: str = ""
    title: str = "motionkit"
    offsets: list[NDArray[np.float64]] = field(default_factory=list)
    #: with ``build_scene(one_origin=True)``: the source time every actor's 0 s stands for
    origin: float | None = None

    def frame_of(self, actor: int, step: int) -> int:
        """The actor's shown-frame index at scene step ``step``: its last frame at or before
        that step's time (its first before it starts, its last after it ends)."""
        times = self.actors[actor].times
        return int(np.clip(np.searchsorted(times, self.times[step], side="right") - 1,
                           0, len(times) - 1))


Source = Motion | str | os.PathLike[str]
ModelSource = Skeleton | World | str | os.PathLike[str]


def _load(source: Source, index: int) -> tuple[str, Motion | Skeleton | World]:
    from ..api import read

    if isinstance(source, Motion):
        return str(source.meta.get("name") or f"motion {index + 1}"), source
    loaded = read(source)
    if not isinstance(loaded, Motion | Skeleton | World):
        raise MotionkitError(f"{Path(source).name}: holds a {type(loaded).__name__}, "
                             "not a motion or a model")
    return Path(source).name, loaded


def _skeleton(model: ModelSource | None) -> Skeleton | None:
    from ..api import read
    from ..kinematics.motion import model_skeleton

    if model is None:
        return None
    loaded = model if isinstance(model, Skeleton | World) else read(model)
    if isinstance(loaded, Motion):
        raise MotionkitError(f"{Path(str(model)).name}: --model must be a model file, not a motion")
    return model_skeleton(loaded, model if not isinstance(model, Skeleton | World) else "model")


def _link_track(name: str, motion: Motion, skeleton: Skeleton | None) -> tuple[
        NDArray[np.float64], NDArray[np.float64], NDArray[np.intp], list[str], Skeleton | None]:
    """Link poses ``(F, L, 7)``, times, parents, labels and the skeleton they belong to (None
    for a trajectory) for one motion. A motion with its own skeleton (a BVH) moves it; the
    model moves the others (a robot's joint values), so a human and the robot it was
    retargeted onto show side by side."""
    from .. import kinematics

    skeleton = motion.skeleton or skeleton
    links = motion.tracks.get("links")
    if links is not None and links.kind == "pose" and links.data.ndim == 3:
        labels = list(links.labels or [f"link {i}" for i in range(links.part_count)])
        parents = np.full(len(labels), -1, dtype=np.intp)
        matches = skeleton is not None and [b.name for b in skeleton.bodies] == labels
        if matches and skeleton is not None:
            parents = np.asarray([b.parent for b in skeleton.bodies], dtype=np.intp)
        return (np.asarray(links.data, dtype=float), links.times, parents, labels,
                skeleton if matches else None)
    if skeleton is not None and ("joints" in motion.tracks or motion.root_pose() is not None):
        track = kinematics.link_motion(skeleton, motion).tracks["links"]
        parents = np.asarray([b.parent for b in skeleton.bodies], dtype=np.intp)
        return np.asarray(track.data, dtype=float), track.times, parents, list(track.labels or []), \
            skeleton
    root = motion.root_pose()
    if root is not None:
        return (np.asarray(root.data, dtype=float)[:, None, :], root.times,
                np.array([-1], dtype=np.intp), ["pose"], None)
    if "joints" in motion.tracks:
        raise MotionkitError(f"{name}: holds joint values only; give the robot with --model")
    raise MotionkitError(f"{name}: nothing to show (no link poses, joints or root pose)")


def _shapes(skeleton: Skeleton, shown: NDArray[np.float64]) -> list[ShapeView]:
    """The skeleton's primitive shapes placed on the shown link poses ``(F, L, 7)``."""
    from .shapes import groups, instance_poses

    out = []
    for group in groups(skeleton):
        positions, wxyz = instance_poses(group, shown[..., :3], shown[..., 3:7])
        out.append(ShapeView(group.vertices, group.faces, group.bodies, positions, wxyz, group.color,
                             group.offsets))
    return out


def _terrain_mesh(terrain: Terrain) -> TerrainMesh:
    return TerrainMesh(*terrain_mesh(terrain, MAX_TERRAIN_VERTICES))


def stages(sources: int, model: bool) -> int:
    """How many times :func:`build_scene` tells ``progress`` (a file read, a file's poses made)
    for ``sources`` files, with or without a model file."""
    return 2 * sources + int(model)


def _motions(sources: tuple[Source, ...], model: ModelSource | None,
             tell: Callable[[str], None]) -> tuple[list[tuple[str, Motion]], Skeleton | None]:
    """The motions to show (a model alone becomes its rest pose) and the model to move them."""
    skeleton = _skeleton(model)
    if model is not None:
        tell("read model")
    loaded = []
    for i, source in enumerate(sources):
        loaded.append(_load(source, i))
        tell(f"read {loaded[-1][0]}")
    motions: list[tuple[str, Motion]] = []
    for name, item in loaded:
        if isinstance(item, Motion):
            motions.append((name, item))
        elif skeleton is None and len(loaded) > 1:
            skeleton = _skeleton(item)
        else:  # a model alone: its rest pose, one frame
            from ..kinematics import link_motion
            from ..model import Timeline, Track

            rest = _skeleton(item)
            assert rest is not None
            zero = Motion({"joints": Track("joints", "value", np.zeros((1, rest.dof_count)),
                                           Timeline.uniform(1.0, 1))})
            motions.append((name, link_motion(rest, zero)))
    if not motions:
        raise MotionkitError("nothing to view: the files hold models only")
    return motions, skeleton


def build_scene(*sources: Source, model: ModelSource | None = None,
                max_link_poses: int = MAX_LINK_POSES,
                progress: Callable[[str], None] | None = None,
                one_origin: bool = False) -> Scene:
    """The scene of one or more motions (files or :class:`Motion`), a model file alone, or a
    motion of joint values through ``model`` (forward kinematics). Several motions are shown
    side by side on one clock, each from its own first frame, or with ``one_origin`` from the
    earliest first time of them all (an estimate and its ground truth, whose stamps are one
    clock: :attr:`Scene.origin`); frames beyond ``max_link_poses`` are subsampled for the
    view. ``progress`` is told each stage done (:func:`stages` of them), for a progress bar."""
    if not sources:
        raise MotionkitError("nothing to view: give at least one file or motion")
    tell = progress or (lambda _done: None)
    motions, skeleton = _motions(sources, model, tell)
    raw = []
    for name, motion in motions:
        raw.append((name, motion, *_link_track(name, motion, skeleton)))
        tell(f"poses {name}")
    total = sum(poses.shape[0] * poses.shape[1] for _, _, poses, *_ in raw)
    stride = max(1, int(np.ceil(total / max_link_poses)))
    actors: list[Actor] = []
    firsts = [float(times[0]) for _, _, _, times, *_ in raw if len(times)]
    origin = min(firsts) if one_origin and firsts else None
    for name, _motion, poses, times, parents, labels, model in raw:
        frames = np.arange(0, poses.shape[0], stride, dtype=np.intp)
        if len(frames) and frames[-1] != poses.shape[0] - 1:
            frames = np.append(frames, poses.shape[0] - 1)
        shown = poses[frames]
        wxyz = shown[..., [6, 3, 4, 5]]
        root = poses[:, 0, :3]
        path = root[:: max(1, -(-len(root) // MAX_PATH_POINTS))]
        kind = "trajectory" if model is None and len(labels) == 1 and labels[0] == "pose" \
            else "skeleton"
        with np.errstate(over="ignore"):  # a file's 1e308 is drawn as inf (float32)
            zero = origin if origin is not None else (times[0] if len(times) else 0.0)
            actors.append(Actor(name, times[frames] - zero,
                                shown[..., :3].astype(np.float32), wxyz.astype(np.float32),
                                parents, labels, path.astype(np.float32), frames, kind,
                                _shapes(model, shown) if model is not None else []))
    longest = max(actors, key=lambda a: float(a.times[-1]) if len(a.times) else 0.0)
    note = ""
    if stride > 1:
        counts = ", ".join(f"{a.name}: {len(a.frames)} of {p.shape[0]} frames"
                           for a, (_, _, p, *_) in zip(actors, raw, strict=True))
        note = (f"Shown subsampled (every {stride}th frame, over {max_link_poses:,} link poses "
                f"in all): {counts}. The files are not changed.")
    terrain = next((m.terrain for _, m in motions if m.terrain is not None), None)
    return Scene(actors, longest.times, _terrain_mesh(terrain) if terrain is not None else None,
                 note, " + ".join(a.name for a in actors), origin=origin)


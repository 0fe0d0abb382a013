"""The ground under a retargeted robot: its lowest point over a clip, and planted feet.

A source foot is *planted* between two frames when its contact point moves less than
``PLANTED_SPEED`` horizontally and one of the two frames has it within ``PLANTED_HEIGHT``
of the clip's lowest height for that point (spec §7: 31 left and 35 right frame pairs
of the corpus clip). Both are for a human of ``PLANTED_FOR_HEIGHT`` and scale with the
source's height, so that a source in other units or of another size plants the same
frames. The contact point is the lowest body at rest of the subtree the foot's task
follows (a BVH's toe). A stance is a run of planted frames, cut where the contact point
has crept ``PLANTED_HEIGHT`` (scaled) from where the stance began.

Through a stance the robot's foot keeps one pose: the mean position the first solve gave
it, its lowest shape point on the ground, and, for a foot with a sole (shapes that span
a plane), the mean orientation with the sole turned level. A point or line foot (one
sphere, a capsule) keeps the orientation its task asks for.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ..errors import ConversionError, choices
from ..model.skeleton import Shape, Skeleton
from ..model.terrain import Terrain
from ..quality.shapes import FOOT_BAND
from ..quality.shapes import bottoms as _bottoms
from ..quality.shapes import primitives as _primitives
from ..spatial import quaternion
from .lie import exp3
from .maps import BodyMap
from .robot import Robot
from .source import SourceFrames, measured_body

Array = NDArray[np.float64]

#: The source's planted rule (spec §7).
PLANTED_SPEED, PLANTED_HEIGHT, PLANTED_FOR_HEIGHT = 0.1, 0.02, 1.75
#: A sole spans a plane: its contact points spread at least this far (m) in two directions.
SOLE_SPREAD = 1e-3
#: The frames of one FK call while the lowest point of a clip is looked for.
CHUNK = 4096


@dataclass(frozen=True)
class Foot:
    """A robot foot and the source point that says when it is planted."""

    body: int  # robot body
    point: int  # index in the source frames
    shapes: tuple[Shape, ...]
    #: the sole's normal in the body's frame (up at rest), or None for a point or line foot
    sole: Array | None


def lowest_point(robot: Robot, skeleton: Skeleton, root: Array, q: Array,
                 terrain: Terrain | None = None) -> float:
    """The lowest height of the robot's spheres, capsules, cylinders and boxes over the
    clip: above z = 0, or above ``terrain`` under each shape's centre (FK a chunk of frames
    at a time)."""
    shapes = _primitives(skeleton)
    if not shapes:
        raise ConversionError("the robot has no primitive shapes to put on the ground "
                              "(pass ground_clearance=None / --no-ground)")
    lowest = np.inf
    for start in range(0, len(q), CHUNK):
        part = slice(start, start + CHUNK)
        bodies = robot.poses_many(root[part, :3], quaternion.to_matrix(root[part, 3:]),
                                  q[part])[0]
        for index, shape in shapes:
            bottom = _bottoms(shape, bodies[:, index])
            if terrain is not None:
                under = terrain.height_at((bodies[:, index] @ shape.transform)[:, :2, 3])
                bottom = bottom - under
            lowest = min(lowest, float(bottom.min()))
    return float(lowest)


def scaled_terrain(terrain: Terrain, factor: float) -> Terrain:
    """``terrain`` in the robot's world: every length times ``factor`` (the root's scale,
    by which the targets' world is the source's scaled)."""
    return Terrain(np.asarray(terrain.heights, dtype=np.float64) * factor,
                   np.asarray(terrain.origin, dtype=np.float64) * factor, terrain.dx * factor,
                   None if terrain.dy is None else terrain.dy * factor,
                   None if terrain.bounds is None else np.asarray(terrain.bounds) * factor,
                   dict(terrain.attrs))


def find_feet(robot: Robot, skeleton: Skeleton, body_map: BodyMap, frames: SourceFrames,
              source: Skeleton, rename: dict[str, str] | None,
              names: tuple[str, ...] | None = None) -> list[Foot]:
    """The robot's feet (``names``, or the mapped bodies with shapes lowest at rest), each
    with its source contact point."""
    follows = {task.robot: task.source for stage in body_map.stages for task in stage
               if task.position_weight > 0}
    rest = robot.poses(robot.rest).bodies
    by_body = _shapes_by_body(skeleton)
    lowest = {index: float(min(_bottoms(shape, rest[None, index])[0] for shape in shapes))
              for index, shapes in by_body.items()}
    if names is None:
        floor = min(lowest.values(), default=np.inf)
        names = tuple(name for name in follows
                      if lowest.get(robot.names.index(name), np.inf) <= floor + FOOT_BAND)
    feet = []
    for name in names:
        if name not in follows:
            raise ConversionError(f"the foot {name!r} follows no source body in the map "
                                  f"({choices(name, follows, 'mapped bodies')})")
        body = robot.names.index(name)
        if body not in lowest:
            raise ConversionError(f"the foot {name!r} has no primitive shape to stand on")
        point = frames.index(_lowest_at_rest(source, measured_body(follows[name]), rename))
        shapes = tuple(by_body[body])
        feet.append(Foot(body, point, shapes, _sole(shapes, rest[body, :3, :3])))
    return feet


def stances(frames: SourceFrames, point: int, height: float = PLANTED_FOR_HEIGHT,
            terrain: Terrain | None = None) -> list[tuple[int, int]]:
    """The source point's stances, as ``(first, stop)`` frame ranges, for a source
    ``height`` tall (see the module's docstring); its height measured above ``terrain``
    (the source's) where there is one."""
    scale = height / PLANTED_FOR_HEIGHT
    path = frames.positions[:, point]
    speed = np.linalg.norm(np.diff(path[:, :2], axis=0), axis=1) * frames.fps
    above = path[:, 2] - (0.0 if terrain is None else terrain.height_at(path[:, :2]))
    low = above - above.min() <= PLANTED_HEIGHT * scale
    pairs = (speed < PLANTED_SPEED * scale) & (low[:-1] | low[1:])
    planted = np.zeros(len(path), dtype=bool)
    planted[:-1] |= pairs
    planted[1:] |= pairs
    out = []
    for start, stop in _runs(planted):
        first = start
        for frame in range(start + 1, stop):
            if np.linalg.norm(path[frame, :2] - path[first, :2]) > PLANTED_HEIGHT * scale:
                out.append((first, frame))
                first = frame
        out.append((first, stop))
    return out


def stance_targets(robot: Robot, foot: Foot, root: Array, q: Array,
                   runs: list[tuple[int, int]], ground: float,
                   terrain: Terrain | None = None) -> dict[int, Array]:
    """Per planted frame, the foot's world target: each stance at the mean position the
    foot had over it in the clip ``root`` (x y z qx qy qz qw), ``q``, its lowest point at
    ``ground`` (above ``terrain`` there, if any), and for a sole the mean orientation
    turned level (the orientation of a point foot's target is not used)."""
    out: dict[int, Array] = {}
    bodies = np.concatenate([robot.poses_many(
        root[part, :3], quaternion.to_matrix(root[part, 3:]), q[part])[0][:, foot.body]
        for part in (slice(start, start + CHUNK) for start in range(0, len(q), CHUNK))])
    for start, stop in runs:
        target = np.eye(4)
        target[:3, :3] = _mean_turn(bodies[start:stop, :3, :3])
        if foot.sole is not None:
            target[:3, :3] = _level(target[:3, :3] @ foot.sole) @ target[:3, :3]
        bottom = min(float(_bottoms(shape, target[None])[0]) for shape in foot.shapes)
        target[:2, 3] = bodies[start:stop, :2, 3].mean(axis=0)
        under = 0.0 if terrain is None else float(terrain.height_at(target[None, :2, 3])[0])
        target[2, 3] = ground + under - bottom
        out.update((frame, target) for frame in range(start, stop))
    return out


def _mean_turn(turns: Array) -> Array:
    """The rotation nearest the mean of ``turns`` (the chordal mean)."""
    u, _, vt = np.linalg.svd(turns.sum(axis=0))
    fix = np.diag([1.0, 1.0, float(np.sign(np.linalg.det(u @ vt)) or 1.0)])
    out: Array = u @ fix @ vt
    return out


def _level(normal: Array) -> Array:
    """The smallest rotation that turns the unit vector ``normal`` straight up."""
    axis = np.cross(normal, [0.0, 0.0, 1.0])
    size = float(np.linalg.norm(axis))
    angle = float(np.arctan2(size, normal[2]))
    if size < 1e-12:
        return np.eye(3) if normal[2] > 0 else np.diag([1.0, -1.0, -1.0])
    return exp3(axis / size * angle)


def _sole(shapes: tuple[Shape, ...], rest_turn: Array) -> Array | None:
    """The plane the foot's shapes rest on, as its normal in the body's frame (pointing up
    at rest), or None when they span no plane (a point or line foot). A box's sole is its
    face that looks most downward at rest, whatever its proportions."""
    boxes = [shape for shape in shapes if shape.kind == "box"]
    if boxes:
        lowest = min(boxes, key=lambda box: float(_bottoms(box, np.eye(4)[None])[0]))
        faces = lowest.transform[:3, :3]  # its axes in the body's frame
        up = (rest_turn @ faces)[2]
        axis = int(np.argmax(np.abs(up)))
        normal_box: Array = faces[:, axis] * np.sign(up[axis])
        return normal_box
    points = [shape.transform[:3, 3] for shape in shapes]
    if len(points) < 3:
        return None
    spread = np.asarray(points) - np.mean(points, axis=0)
    _, sizes, directions = np.linalg.svd(spread)
    if sizes[1] / np.sqrt(len(points)) < SOLE_SPREAD:
        return None
    normal: Array = directions[2]
    return normal if (rest_turn @ normal)[2] > 0 else -normal


def _runs(mask: NDArray[np.bool_]) -> list[tuple[int, int]]:
    edges = np.flatnonzero(np.diff(np.concatenate([[0], mask.astype(np.int8), [0]])))
    return [(int(a), int(b)) for a, b in zip(edges[::2], edges[1::2], strict=True)]


def _lowest_at_rest(source: Skeleton, name: str, rename: dict[str, str] | None) -> str:
    """The lowest body at rest of the subtree rooted at the (renamed) body ``name``."""
    names = [(rename or {}).get(body.name, body.name) for body in source.bodies]
    if name not in names:
        return name  # a synthetic body: its own point
    top = names.index(name)
    subtree, stack = [], [top]
    while stack:
        index = stack.pop()
        subtree.append(index)
        stack.extend(source.children(index))
    z = source.rest_poses()[:, 2, 3]
    return names[min(subtree, key=lambda index: (z[index], index))]


def _shapes_by_body(skeleton: Skeleton) -> dict[int, list[Shape]]:
    out: dict[int, list[Shape]] = {}
    for index, shape in _primitives(skeleton):
        out.setdefault(index, []).append(shape)
    return out

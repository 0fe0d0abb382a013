"""The ground under a retargeted robot: its lowest point over a clip, and planted feet.

A source foot is *planted* between two frames when its contact point moves less than
``PLANTED_SPEED`` horizontally and one of the two frames has it within ``PLANTED_HEIGHT``
of the clip's lowest height for that point (spec §7: 31 left and 35 right frame pairs
of the corpus clip). Both are for a human of ``PLANTED_FOR_HEIGHT`` and scale with the
source's height, so that a source in other units or of another size plants the same
frames. The contact point is the lowest body at rest of the subtree the foot's task
follows (a BVH's toe). While planted, the robot's foot keeps one pose per stance: the
stance's mean position on the ground plane, flat (its rest orientation turned about the
vertical only), its lowest shape point on the ground.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ..errors import ConversionError, choices
from ..model.skeleton import Shape, Skeleton
from ..spatial import quaternion
from .lie import exp3
from .maps import BodyMap
from .robot import Robot, State
from .source import SourceFrames, measured_body

Array = NDArray[np.float64]

#: The source's planted rule (spec §7).
PLANTED_SPEED, PLANTED_HEIGHT, PLANTED_FOR_HEIGHT = 0.1, 0.02, 1.75
#: Robot feet: mapped bodies whose lowest shape point at rest is this close to the lowest.
FOOT_BAND = 0.02
_PRIMITIVES = ("sphere", "capsule", "cylinder", "box")


@dataclass(frozen=True)
class Foot:
    """A robot foot and the source point that says when it is planted."""

    body: int  # robot body
    point: int  # index in the source frames
    #: the body's origin above its lowest shape point, and its world rotation, at rest
    height: float
    rest_turn: Array


def lowest_point(robot: Robot, skeleton: Skeleton, root: Array, q: Array) -> float:
    """The lowest point of the robot's spheres, capsules, cylinders and boxes over the clip."""
    shapes = _primitives(skeleton)
    if not shapes:
        raise ConversionError("the robot has no primitive shapes to put on the ground "
                              "(pass ground_clearance=None / --no-ground)")
    bodies = robot.poses_many(root[:, :3], quaternion.to_matrix(root[:, 3:]), q)[0]
    return min(float(_bottoms(shape, bodies[:, index]).min()) for index, shape in shapes)


def find_feet(robot: Robot, skeleton: Skeleton, body_map: BodyMap, frames: SourceFrames,
              source: Skeleton, rename: dict[str, str] | None,
              names: tuple[str, ...] | None = None) -> list[Foot]:
    """The robot's feet (``names``, or the mapped bodies with shapes lowest at rest), each
    with its source contact point."""
    follows = {task.robot: task.source for stage in body_map.stages for task in stage
               if task.position_weight > 0}
    rest = robot.poses(robot.rest).bodies
    lowest = {index: float(min(_bottoms(shape, rest[None, index])[0] for shape in shapes))
              for index, shapes in _shapes_by_body(skeleton).items()}
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
        feet.append(Foot(body, point, float(rest[body, 2, 3] - lowest[body]),
                         rest[body, :3, :3].copy()))
    return feet


def planted(frames: SourceFrames, point: int, height: float = PLANTED_FOR_HEIGHT
            ) -> NDArray[np.bool_]:
    """Per frame: whether the source point is planted there (it is in a planted pair), for
    a source ``height`` tall."""
    scale = height / PLANTED_FOR_HEIGHT
    path = frames.positions[:, point]
    speed = np.linalg.norm(np.diff(path[:, :2], axis=0), axis=1) * frames.fps
    low = path[:, 2] - path[:, 2].min() <= PLANTED_HEIGHT * scale
    pairs = (speed < PLANTED_SPEED * scale) & (low[:-1] | low[1:])
    out = np.zeros(len(path), dtype=bool)
    out[:-1] |= pairs
    out[1:] |= pairs
    return out


def stance_targets(robot: Robot, foot: Foot, states: list[State], stance: NDArray[np.bool_],
                   ground: float) -> dict[int, Array]:
    """Per planted frame, the foot's world target: each stance (a run of planted frames)
    at the mean position and heading the foot had over it in ``states``, flat, its lowest
    point at ``ground``."""
    out: dict[int, Array] = {}
    bodies = np.array([robot.poses(state).bodies[foot.body] for state in states])
    for start, stop in _runs(stance):
        turns = bodies[start:stop, :3, :3] @ foot.rest_turn.T
        heading = float(np.arctan2((turns[:, 1, 0] - turns[:, 0, 1]).mean(),
                                   (turns[:, 0, 0] + turns[:, 1, 1]).mean()))
        target = np.eye(4)
        target[:3, :3] = exp3(np.array([0.0, 0.0, heading])) @ foot.rest_turn
        target[:2, 3] = bodies[start:stop, :2, 3].mean(axis=0)
        target[2, 3] = ground + foot.height
        out.update((frame, target) for frame in range(start, stop))
    return out


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


def _primitives(skeleton: Skeleton) -> list[tuple[int, Shape]]:
    return [(index, shape) for index, body in enumerate(skeleton.bodies)
            for shape in body.shapes if shape.kind in _PRIMITIVES]


def _shapes_by_body(skeleton: Skeleton) -> dict[int, list[Shape]]:
    out: dict[int, list[Shape]] = {}
    for index, shape in _primitives(skeleton):
        out.setdefault(index, []).append(shape)
    return out


def _bottoms(shape: Shape, bodies: Array) -> Array:
    """The lowest z of a primitive shape on each body pose ``(frames, 4, 4)``."""
    pose = bodies @ shape.transform
    centre, turn = pose[:, 2, 3], pose[:, 2, :3]  # z of the centre; the z row of the turn
    size = shape.params
    if shape.kind == "sphere":
        return centre - float(size["radius"])
    if shape.kind == "box":
        return centre - np.abs(turn) @ (np.asarray(size["size"]) / 2)
    radius, half_height = float(size["radius"]), float(size.get("height", 0.0)) / 2
    axis_z = np.abs(turn[:, 2])
    rim = radius if shape.kind == "capsule" else radius * np.sqrt(np.maximum(0.0, 1 - axis_z**2))
    out: Array = centre - axis_z * half_height - rim
    return out

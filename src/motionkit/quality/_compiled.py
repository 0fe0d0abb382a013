"""The compiled path of the checks: a model's shapes as the table ``_check_kernel.c``
reads, and the calls on it (the per-frame checks in one pass; a foot's planted frames and
sole moves; self-penetration gaps).

The rules are those of :mod:`.check` and :mod:`.shapes` (the NumPy statement, which the
tests hold this one to). The extension is optional (``setup.py``): where it was not built,
:data:`KERNEL` is None and the NumPy path does all the work.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType

import numpy as np
from numpy.typing import NDArray

from .._accel import compiled
from ..model.skeleton import Shape
from .ground import Ground
from .shapes import SEARCH_STEPS, Collider

Array = NDArray[np.float64]

#: The compiled module, or None where it was not built.
KERNEL = compiled("motionkit.quality._check_kernel")

SHAPE_INTS, SHAPE_DOUBLES = 2, 18  # the C file's row widths (checked against it on import)
KINDS = {"sphere": 0, "capsule": 1, "cylinder": 2, "box": 3}
ORIGIN = 4  # a body origin: no shape
TURN, AT, RADIUS, HALF, SIZE, REACH = 0, 9, 12, 13, 14, 17
if KERNEL is not None and (KERNEL.SHAPE_INTS, KERNEL.SHAPE_DOUBLES, KERNEL.SEARCH_STEPS) != (
        SHAPE_INTS, SHAPE_DOUBLES, SEARCH_STEPS):
    KERNEL = None  # a stale build of another layout: never read a table it would misread


@dataclass(frozen=True)
class Table:
    """Shapes as the kernel reads them: ``ints`` ``(S, SHAPE_INTS)`` (body, kind),
    ``doubles`` ``(S, SHAPE_DOUBLES)`` (turn, centre, radius, half height, half sizes,
    reach)."""

    ints: NDArray[np.int32]
    doubles: Array

    @property
    def count(self) -> int:
        return int(self.ints.shape[0])


def _table(count: int) -> tuple[NDArray[np.int32], Array]:
    return np.zeros((count, SHAPE_INTS), dtype=np.int32), np.zeros((count, SHAPE_DOUBLES))


def shape_table(shapes: list[tuple[int, Shape]]) -> Table:
    """The primitives ``(body, shape)`` whose lowest points the checks measure."""
    ints, doubles = _table(len(shapes))
    for k, (body, shape) in enumerate(shapes):
        ints[k] = (body, KINDS[shape.kind])
        row = doubles[k]
        row[TURN:TURN + 9] = shape.transform[:3, :3].reshape(9)
        row[AT:AT + 3] = shape.transform[:3, 3]
        size = shape.params
        if shape.kind == "box":
            row[SIZE:SIZE + 3] = np.asarray(size["size"]) / 2
        else:
            row[RADIUS] = float(size["radius"])
            if shape.kind != "sphere":
                row[HALF] = float(size.get("height", 0.0)) / 2
    return Table(ints, doubles)


def origin_table(bodies: int) -> Table:
    """Every body's origin as a point (a model without shapes; ProtoMotions' rule)."""
    ints, doubles = _table(bodies)
    ints[:, 0] = np.arange(bodies)
    ints[:, 1] = ORIGIN
    return Table(ints, doubles)


def collider_table(collider: Collider) -> Table:
    """A collider's shapes (boxes, and swept segments: spheres, capsules, cylinders)."""
    ints, doubles = _table(len(collider.body))
    ints[:, 0] = collider.body
    ints[:, 1] = np.where(collider.box, KINDS["box"], KINDS["capsule"])
    doubles[:, TURN:TURN + 9] = collider.transform[:, :3, :3].reshape(-1, 9)
    doubles[:, AT:AT + 3] = collider.transform[:, :3, 3]
    doubles[:, RADIUS] = collider.radius
    doubles[:, HALF] = collider.half
    doubles[:, SIZE:SIZE + 3] = collider.half_size
    doubles[:, REACH] = np.where(collider.box, np.linalg.norm(collider.half_size, axis=1),
                                 collider.half + collider.radius)
    return Table(ints, doubles)


@dataclass(frozen=True)
class Frames:
    """What one pass gives: per frame the lowest shape point above the ground and the
    lowest body origin (z), per frame pair the body and joint speeds (None where not
    asked for), per (frame, body) the contact labels."""

    lowest: Array
    origin_low: Array
    body: Array | None
    joint: Array | None
    contacts: NDArray[np.bool_] | None


def frame_checks(kernel: ModuleType, poses: Array, parents: NDArray[np.intp], table: Table,
                 ground: Ground, steps: Array, *, largest: bool, fps: float,
                 contact_speed: float, contact_height: float, body: bool = True,
                 joint: bool = True, contacts: bool = True) -> Frames:
    """One pass over ``poses`` ``(frames, bodies, 7)`` (GIL released). ``ground``: a plane
    or a terrain (nearest cell); ``steps`` ``(frames - 1,)`` seconds; ``largest``: speeds
    as the largest |component| (ProtoMotions), else norms."""
    poses = np.ascontiguousarray(poses, dtype=np.float64)
    frames, bodies = int(poses.shape[0]), int(poses.shape[1])
    if poses.shape != (frames, bodies, 7) or len(parents) != bodies:
        raise ValueError("poses must be (frames, bodies, 7) with one parent per body")
    pairs = max(frames - 1, 0)
    steps = np.ascontiguousarray(steps, dtype=np.float64)
    if len(steps) != pairs:
        raise ValueError("one step per frame pair")
    hf, nx, ny, ox, oy, dx, dy = _ground(ground)
    lowest, origin_low = np.empty(frames), np.empty(frames)
    body_out = np.empty(pairs) if body else None
    joint_out = np.empty(pairs) if joint else None
    labels = np.empty((frames, bodies), dtype=np.uint8) if contacts else None
    kernel.frames(poses, frames, bodies, np.ascontiguousarray(parents, dtype=np.int32),
                  table.ints, table.doubles, table.count, float(ground.height), hf, nx, ny,
                  ox, oy, dx, dy, steps, largest, float(fps), float(contact_speed),
                  float(contact_height), lowest, origin_low, body_out, joint_out, labels)
    return Frames(lowest, origin_low, body_out, joint_out,
                  None if labels is None else labels.view(np.bool_))


def _ground(ground: Ground) -> tuple[Array | None, int, int, float, float, float, float]:
    """A ground as the kernel takes it: the heights (None for a plane), cells along x and
    y, the centre of cell (0, 0), the cell sizes."""
    terrain = ground.terrain
    if terrain is None:
        return None, 1, 1, 0.0, 0.0, 1.0, 1.0
    nx, ny = terrain.shape
    dx, dy = (float(v) for v in terrain.cell)
    return (np.ascontiguousarray(terrain.heights, dtype=np.float64), nx, ny,
            float(terrain.origin[0]), float(terrain.origin[1]), dx, dy)


def soles(kernel: ModuleType, poses: Array, foot: int, points: Array, radii: Array,
          ground: Ground, height: float) -> tuple[NDArray[np.bool_], Array, NDArray[np.bool_]]:
    """One foot's frames (GIL released): whether it is planted (every sole point, in
    the foot's frame ``(P, 3)`` with its radius, within ``height`` of the ground), how
    far the middle of its sole moved in x, y between frames ``(frames - 1,)``, and whether
    a sole point is not a finite number."""
    poses = np.ascontiguousarray(poses, dtype=np.float64)
    frames, bodies = int(poses.shape[0]), int(poses.shape[1])
    points = np.ascontiguousarray(points, dtype=np.float64)
    radii = np.ascontiguousarray(radii, dtype=np.float64)
    if poses.shape != (frames, bodies, 7) or points.shape != (len(radii), 3):
        raise ValueError("poses must be (frames, bodies, 7), sole points (P, 3) with P radii")
    planted, broken = np.empty(frames, dtype=np.uint8), np.empty(frames, dtype=np.uint8)
    step = np.empty(max(frames - 1, 0))
    hf, nx, ny, ox, oy, dx, dy = _ground(ground)
    kernel.soles(poses, frames, bodies, foot, points, radii, len(radii), float(ground.height),
                 hf, nx, ny, ox, oy, dx, dy, float(height), planted, step, broken)
    return planted.view(np.bool_), step, broken.view(np.bool_)


def gaps(kernel: ModuleType, poses: Array, table: Table, pairs: NDArray[np.intp], stride: int,
         near: float) -> tuple[Array, NDArray[np.int64], Array]:
    """Self-penetration on frames ``0, stride, 2·stride, …`` of ``poses`` (GIL released):
    per checked frame the least gap over the shape ``pairs`` ``(P, 2)`` (NaN where a gap
    is not a number), the pair it is on (the first NaN one there), and the least gap that
    is a finite number (inf where none is)."""
    poses = np.ascontiguousarray(poses, dtype=np.float64)
    frames, bodies = int(poses.shape[0]), int(poses.shape[1])
    if poses.shape != (frames, bodies, 7) or stride < 1:
        raise ValueError("poses must be (frames, bodies, 7), the stride at least 1")
    count = -(-frames // stride)
    least, closest = np.empty(count), np.empty(count)
    where = np.empty(count, dtype=np.int64)
    kernel.gaps(poses, frames, bodies, table.ints, table.doubles, table.count,
                np.ascontiguousarray(pairs, dtype=np.int32), len(pairs), 0, stride, count,
                float(near), least, where, closest)
    return least, where, closest

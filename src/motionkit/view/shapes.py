"""The shape groups the viewer instances per frame (the meshes themselves: ``model.geometry``)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ..model.geometry import F32, U32, mesh, shape_colour
from ..model.skeleton import Skeleton


@dataclass(eq=False)
class ShapeGroup:
    """One shape geometry instanced on ``bodies`` at ``offsets`` (x y z qx qy qz qw in the
    body frame)."""

    vertices: F32
    faces: U32
    bodies: NDArray[np.intp]
    offsets: NDArray[np.float64]
    color: tuple[int, int, int] | None


def groups(skeleton: Skeleton) -> list[ShapeGroup]:
    """The skeleton's drawable shapes grouped by geometry (visual shapes where a body has any,
    else its collision shapes)."""
    from ..spatial.quaternion import from_matrix

    found: dict[tuple[object, ...], tuple[F32, U32, list[int], list[NDArray[np.float64]],
                                          tuple[int, int, int] | None]] = {}
    for index, body in enumerate(skeleton.bodies):
        visual = [s for s in body.shapes if s.role == "visual"]
        for shape in visual or body.shapes:
            made = mesh(shape)
            if made is None:
                continue
            colour = shape_colour(shape)
            key = (shape.kind, repr(sorted((k, np.asarray(v).tolist()) for k, v in shape.params.items())),
                   colour)
            entry = found.setdefault(key, (made[0], made[1], [], [], colour))
            transform = np.asarray(shape.transform, dtype=float)
            entry[2].append(index)
            entry[3].append(np.concatenate([transform[:3, 3], from_matrix(transform[:3, :3])]))
    return [ShapeGroup(v, f, np.asarray(b, dtype=np.intp), np.asarray(o), c)
            for v, f, b, o, c in found.values()]


def instance_poses(group: ShapeGroup, positions: NDArray[np.float64],
                   quaternions: NDArray[np.float64]) -> tuple[F32, F32]:
    """World positions ``(F, n, 3)`` and w x y z rotations ``(F, n, 4)`` of a group's instances
    from link positions ``(F, L, 3)`` and x y z w rotations ``(F, L, 4)``."""
    from ..spatial.quaternion import multiply, rotate

    body_q = quaternions[:, group.bodies]
    offset_q = np.broadcast_to(group.offsets[:, 3:], body_q.shape)
    world = positions[:, group.bodies] + rotate(body_q, np.broadcast_to(group.offsets[:, :3],
                                                                        (*body_q.shape[:-1], 3)))
    q = multiply(body_q, offset_q)
    return world.astype(np.float32), q[..., [3, 0, 1, 2]].astype(np.float32)

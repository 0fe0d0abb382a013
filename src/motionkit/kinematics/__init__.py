"""Forward kinematics: generalized coordinates → world poses of every body.

``forward(skeleton, q)`` follows DART's rule for each body in depth-first order,
``W_child = W_parent · parent_to_joint · Q(q) · inv(child_to_joint)``, vectorised over
frames (every product is a batched NumPy operation over all frames at once).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..model.skeleton import Skeleton
from ._fast import forward_quat
from .joints import MOTIONS, exp_map, joint_motion, log_map

__all__ = ["MOTIONS", "exp_map", "forward", "forward_transforms", "joint_motion", "log_map",
           "matrices_to_poses", "poses_to_matrices"]

Array = NDArray[np.float64]


def _coords(skeleton: Skeleton, q: ArrayLike) -> Array:
    coords = np.asarray(q, dtype=float)
    if coords.ndim == 1:
        coords = coords[None, :]
    if coords.ndim != 2 or coords.shape[1] != skeleton.dof_count:
        raise ValueError(f"skeleton {skeleton.name!r} has {skeleton.dof_count} coordinates; "
                         f"q has shape {np.shape(q)}")
    return coords


def forward(skeleton: Skeleton, q: ArrayLike, root_pose: ArrayLike | None = None) -> Array:
    """World poses of every body: ``(frames, bodies, 7)`` as x y z qx qy qz qw (w >= 0).

    ``q`` is ``(frames, dof_count)`` in the skeleton's coordinate layout (a 1-D ``q`` is one
    frame and gives ``(bodies, 7)``). ``root_pose`` ``(frames, 7)``, when given, is the
    world pose of the first body and replaces what its own joint would give (the usual
    case: a free-floating root whose pose comes from a motion's root track).
    """
    coords = _coords(skeleton, q)
    root = None
    if root_pose is not None:
        if not skeleton.bodies:
            raise ValueError("root_pose given for a skeleton without bodies")
        root = np.asarray(root_pose, dtype=float).reshape(coords.shape[0], 7)
    poses = forward_quat(skeleton, coords, root)
    return poses[0] if np.ndim(q) == 1 else poses


def forward_transforms(skeleton: Skeleton, q: ArrayLike,
                       root_pose: ArrayLike | None = None) -> tuple[Array, Array]:
    """Like :func:`forward`, as rotation matrices ``(frames, bodies, 3, 3)`` and positions
    ``(frames, bodies, 3)`` (what DART reports)."""
    poses = forward(skeleton, _coords(skeleton, q), root_pose)
    return _quat_to_matrix(poses[..., 3:].reshape(-1, 4)).reshape(*poses.shape[:-1], 3, 3), \
        poses[..., :3]


def matrices_to_poses(rotations: Array, positions: Array) -> Array:
    """Rotation matrices ``(..., 3, 3)`` + positions ``(..., 3)`` → poses ``(..., 7)``.

    Quaternions are unit, x y z w, with ``w >= 0``.
    """
    shape = rotations.shape[:-2]
    r = rotations.reshape(-1, 3, 3)
    m00, m11, m22 = r[:, 0, 0], r[:, 1, 1], r[:, 2, 2]
    # Shepperd: pick the largest of 4w², 4x², 4y², 4z² for a well-conditioned division.
    diag = np.stack([m00 + m11 + m22, m00 - m11 - m22, m11 - m00 - m22, m22 - m00 - m11], axis=1)
    best = np.argmax(diag, axis=1)
    quat = np.empty((len(r), 4))
    d01, s01 = r[:, 1, 0] - r[:, 0, 1], r[:, 1, 0] + r[:, 0, 1]
    d02, s02 = r[:, 0, 2] - r[:, 2, 0], r[:, 0, 2] + r[:, 2, 0]
    d12, s12 = r[:, 2, 1] - r[:, 1, 2], r[:, 2, 1] + r[:, 1, 2]
    for case in range(4):
        sel = best == case
        if not np.any(sel):
            continue
        t = np.sqrt(1.0 + diag[sel, case]) * 2.0  # = 4·|component|
        if case == 0:
            quat[sel] = np.stack([d12[sel] / t, d02[sel] / t, d01[sel] / t, t / 4], axis=1)
        elif case == 1:
            quat[sel] = np.stack([t / 4, s01[sel] / t, s02[sel] / t, d12[sel] / t], axis=1)
        elif case == 2:
            quat[sel] = np.stack([s01[sel] / t, t / 4, s12[sel] / t, d02[sel] / t], axis=1)
        else:
            quat[sel] = np.stack([s02[sel] / t, s12[sel] / t, t / 4, d01[sel] / t], axis=1)
    quat /= np.linalg.norm(quat, axis=1, keepdims=True)
    quat[quat[:, 3] < 0] *= -1.0
    out = np.empty((*shape, 7))
    out[..., :3] = positions
    out[..., 3:] = quat.reshape(*shape, 4)
    return out


def _quat_to_matrix(quat: Array) -> Array:
    x, y, z, w = (quat / np.linalg.norm(quat, axis=-1, keepdims=True)).T
    out = np.empty((len(quat), 3, 3))
    out[:, 0, 0] = 1 - 2 * (y * y + z * z)
    out[:, 0, 1] = 2 * (x * y - z * w)
    out[:, 0, 2] = 2 * (x * z + y * w)
    out[:, 1, 0] = 2 * (x * y + z * w)
    out[:, 1, 1] = 1 - 2 * (x * x + z * z)
    out[:, 1, 2] = 2 * (y * z - x * w)
    out[:, 2, 0] = 2 * (x * z - y * w)
    out[:, 2, 1] = 2 * (y * z + x * w)
    out[:, 2, 2] = 1 - 2 * (x * x + y * y)
    return out


def poses_to_matrices(poses: ArrayLike) -> Array:
    """Poses ``(..., 7)`` (x y z qx qy qz qw) → homogeneous transforms ``(..., 4, 4)``."""
    arr = np.asarray(poses, dtype=float)
    shape = arr.shape[:-1]
    flat = arr.reshape(-1, 7)
    out = np.zeros((len(flat), 4, 4))
    out[:, :3, :3] = _quat_to_matrix(flat[:, 3:])
    out[:, :3, 3] = flat[:, :3]
    out[:, 3, 3] = 1.0
    return out.reshape(*shape, 4, 4)

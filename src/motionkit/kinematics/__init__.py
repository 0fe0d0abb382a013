"""Forward kinematics: generalized coordinates → world poses of every body.

``forward(skeleton, q)`` follows DART's rule for each body in depth-first order,
``W_child = W_parent · parent_to_joint · Q(q) · inv(child_to_joint)``, vectorised over
frames (every product is a batched NumPy operation over all frames at once).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..model.skeleton import Skeleton
from .joints import MOTIONS, exp_map, joint_motion, log_map

__all__ = ["MOTIONS", "exp_map", "forward", "forward_transforms", "joint_motion", "log_map",
           "matrices_to_poses", "poses_to_matrices"]

Array = NDArray[np.float64]


def forward_transforms(skeleton: Skeleton, q: ArrayLike,
                       root_pose: ArrayLike | None = None) -> tuple[Array, Array]:
    """World rotations ``(frames, bodies, 3, 3)`` and positions ``(frames, bodies, 3)``.

    ``q`` is ``(frames, dof_count)``. ``root_pose`` ``(frames, 7)`` (x y z qx qy qz qw), when
    given, is the world pose of the first body and replaces what its own joint would give
    (the usual case: a free-floating root whose pose comes from the motion's root track).
    """
    coords = np.asarray(q, dtype=float)
    if coords.ndim == 1:
        coords = coords[None, :]
    if coords.ndim != 2 or coords.shape[1] != skeleton.dof_count:
        raise ValueError(f"skeleton {skeleton.name!r} has {skeleton.dof_count} coordinates; "
                         f"q has shape {np.shape(q)}")
    frames = coords.shape[0]
    count = len(skeleton.bodies)
    rotations = np.empty((frames, count, 3, 3))
    positions = np.empty((frames, count, 3))
    root = None
    if root_pose is not None:
        root = np.asarray(root_pose, dtype=float).reshape(frames, 7)
        if not skeleton.bodies:
            raise ValueError("root_pose given for a skeleton without bodies")
    for index, body in enumerate(skeleton.bodies):
        if index == 0 and root is not None:
            rotations[:, 0] = _quat_to_matrix(root[:, 3:7])
            positions[:, 0] = root[:, :3]
            continue
        joint = body.joint
        p_rot = joint.parent_to_joint[:3, :3]
        p_pos = joint.parent_to_joint[:3, 3]
        if body.parent < 0:
            rot: Array = np.broadcast_to(p_rot, (frames, 3, 3))
            pos: Array = np.broadcast_to(p_pos, (frames, 3))
        else:
            parent_rot = rotations[:, body.parent]
            parent_pos = positions[:, body.parent]
            rot = parent_rot @ p_rot
            pos = parent_rot @ p_pos + parent_pos
        q_rot, q_pos = joint_motion(joint, coords[:, joint.dof_slice])
        if q_pos is not None:
            pos = np.einsum("fij,fj->fi", rot, q_pos) + pos
        if q_rot is not None:
            rot = rot @ q_rot
        c_inv_rot = joint.child_to_joint[:3, :3].T
        c_inv_pos = -c_inv_rot @ joint.child_to_joint[:3, 3]
        if np.any(c_inv_pos):
            pos = rot @ c_inv_pos + pos
        if not np.array_equal(c_inv_rot, np.eye(3)):
            rot = rot @ c_inv_rot
        rotations[:, index] = rot
        positions[:, index] = pos
    return rotations, positions


def forward(skeleton: Skeleton, q: ArrayLike, root_pose: ArrayLike | None = None) -> Array:
    """World poses of every body: ``(frames, bodies, 7)`` as x y z qx qy qz qw.

    ``q`` is ``(frames, dof_count)`` in the skeleton's coordinate layout (a 1-D ``q`` is one
    frame and gives ``(bodies, 7)``). See :func:`forward_transforms` for ``root_pose``.
    """
    single = np.ndim(q) == 1
    rotations, positions = forward_transforms(skeleton, q, root_pose)
    poses = matrices_to_poses(rotations, positions)
    return poses[0] if single else poses


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

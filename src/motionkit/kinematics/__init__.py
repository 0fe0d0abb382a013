"""Forward kinematics: generalized coordinates → world poses of every body.

``forward(skeleton, q)`` follows DART's rule for each body in depth-first order,
``W_child = W_parent · parent_to_joint · Q(q) · inv(child_to_joint)``. One engine
(``_engine.py``) runs it: a compiled kernel (``_fk_kernel.c``, one pass per frame straight
into the output, GIL released) where the install built it, else the NumPy statement of the
same rule (``_fast.py``, vectorised over chunks of frames), which the tests hold the
kernel equal to. Memory stays about the size of the output; ``threads`` splits the frames
(None: automatic, one thread per 250,000 frames up to the CPUs available).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..model.character import Character
from ..model.skeleton import Skeleton
from ..spatial import quaternion
from . import _engine
from .motion import link_motion, link_poses

__all__ = ["character_poses", "forward", "forward_transforms", "link_motion", "link_poses",
           "poses_to_matrices"]

Array = NDArray[np.float64]


def _coords(skeleton: Skeleton, q: ArrayLike) -> Array:
    coords = np.asarray(q, dtype=float)
    if coords.ndim == 1:
        coords = coords[None, :]
    if coords.ndim != 2 or coords.shape[1] != skeleton.dof_count:
        raise ValueError(f"skeleton {skeleton.name!r} has {skeleton.dof_count} coordinates; "
                         f"q has shape {np.shape(q)}")
    return coords


def forward(skeleton: Skeleton, q: ArrayLike, root_pose: ArrayLike | None = None, *,
            threads: int | None = None, out: Array | None = None) -> Array:
    """World poses of every body: ``(frames, bodies, 7)`` as x y z qx qy qz qw (w >= 0).

    ``q`` is ``(frames, dof_count)`` in the skeleton's coordinate layout (a 1-D ``q`` is one
    frame and gives ``(bodies, 7)``). ``root_pose`` ``(frames, 7)``, when given, is the
    world pose of the first body and replaces what its own joint would give (the usual
    case: a free-floating root whose pose comes from a motion's root track). ``threads``:
    see the module doc (the result does not depend on it). ``out``, when given, receives
    the poses (C-contiguous float64 ``(frames, bodies, 7)``, e.g. a memory map or an
    array reused across calls, which spares the system the cost of fresh pages).
    """
    coords = _coords(skeleton, q)
    root = None
    if root_pose is not None:
        if not skeleton.bodies:
            raise ValueError("root_pose given for a skeleton without bodies")
        root = np.asarray(root_pose, dtype=float).reshape(coords.shape[0], 7)
    shape = (coords.shape[0], len(skeleton.bodies), 7)
    if out is None:
        out = np.empty(shape)
    elif out.shape != shape or out.dtype != np.float64 or not out.flags.c_contiguous:
        raise ValueError(f"out must be C-contiguous float64 of shape {shape}")
    poses = _engine.poses_into(skeleton, coords, root, None, out, threads=threads)
    return poses[0] if np.ndim(q) == 1 else poses


def character_poses(character: Character, root_pos: ArrayLike, root_rot: ArrayLike,
                    joint_rot: ArrayLike, *, threads: int | None = None) -> tuple[Array, Array]:
    """World body positions ``(..., n, 3)`` and rotations ``(..., n, 4)`` (xyzw, w >= 0)
    of a character, from its root pose and one joint quaternion per non-root body.

    ``pos_j = pos_p + rot_p · local_pos_j``; ``rot_j = rot_p ⊗ local_rot_j ⊗ joint_rot_j``
    (PARC's FK), by the same engine as :func:`forward`. Quaternions are normalised first,
    as PARC's MotionLib does on load: float32 files drift from unit length by up to ~1e-6,
    which would otherwise stretch the limbs.
    """
    joints = character.check_rotations(joint_rot)
    lead = joints.shape[:-2]
    frames = int(np.prod(lead, dtype=np.int64))
    root = np.empty((frames, 7))
    root[:, :3] = np.broadcast_to(np.asarray(root_pos, dtype=float), (*lead, 3)).reshape(frames, 3)
    root[:, 3:] = np.broadcast_to(np.asarray(root_rot, dtype=float), (*lead, 4)).reshape(frames, 4)
    skeleton = character.skeleton
    given = joints.reshape(frames, character.body_count - 1, 4)  # normalised by the engine
    for quaternions in (given, root[:, 3:]):  # both engine paths would give NaN for these
        if not np.einsum("...i,...i->...", quaternions, quaternions).all():
            raise ValueError("cannot normalise a zero quaternion")
    unused = np.broadcast_to(np.zeros(skeleton.dof_count), (frames, skeleton.dof_count))
    poses = _engine.poses(skeleton, unused, root, given, threads=threads)
    poses = poses.reshape(*lead, character.body_count, 7)
    return poses[..., :3], poses[..., 3:]


def forward_transforms(skeleton: Skeleton, q: ArrayLike,
                       root_pose: ArrayLike | None = None) -> tuple[Array, Array]:
    """:func:`forward` as rotation matrices ``(frames, bodies, 3, 3)`` and positions
    ``(frames, bodies, 3)`` (what DART reports); a 1-D ``q`` drops the frame axis."""
    poses = forward(skeleton, q, root_pose)
    return quaternion.to_matrix(poses[..., 3:]), poses[..., :3]


def poses_to_matrices(poses: ArrayLike) -> Array:
    """Poses ``(..., 7)`` (x y z qx qy qz qw) → homogeneous transforms ``(..., 4, 4)``."""
    arr = np.asarray(poses, dtype=float)
    out = np.zeros((*arr.shape[:-1], 4, 4))
    out[..., :3, :3] = quaternion.to_matrix(arr[..., 3:])
    out[..., :3, 3] = arr[..., :3]
    out[..., 3, 3] = 1.0
    return out

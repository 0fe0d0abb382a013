"""The fast forward-kinematics path: unit quaternions in component-major arrays.

Every quantity is stored as ``(components, frames)`` so each step is a handful of
contiguous whole-array operations. For a body with parent ``p`` the rule
``W = W_p · P · Q(q) · inv(C)`` becomes

* rotation: ``q_W = q_p ⊗ (M · q_Q)`` with the constant 4×4 matrix ``M`` that applies
  ``q_P ⊗ · ⊗ q_C⁻¹`` (one small BLAS product for all frames), and
* position: ``t_W = t_p + R_p · (t_P + R_P · t_Q) − R_W · t_C``.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from ..model.skeleton import Joint, Skeleton

Array = NDArray[np.float64]

_UNIT = {"x": 0, "y": 1, "z": 2}


def _left(q: Array) -> Array:
    """Matrix of ``q ⊗ ·`` for a quaternion (x, y, z, w)."""
    x, y, z, w = q
    return np.array([[w, -z, y, x], [z, w, -x, y], [-y, x, w, z], [-x, -y, -z, w]])


def _right(q: Array) -> Array:
    """Matrix of ``· ⊗ q`` for a quaternion (x, y, z, w)."""
    x, y, z, w = q
    return np.array([[w, z, -y, x], [-z, w, x, y], [y, -x, w, z], [-x, -y, -z, w]])


def matrix_to_quat(r: Array) -> Array:
    """One rotation matrix → unit quaternion (x, y, z, w) (Shepperd's method)."""
    m = r.tolist()
    trace = m[0][0] + m[1][1] + m[2][2]
    if trace > 0.0:
        s = math.sqrt(trace + 1.0) * 2.0
        out = [(m[2][1] - m[1][2]) / s, (m[0][2] - m[2][0]) / s, (m[1][0] - m[0][1]) / s, s / 4]
    elif m[0][0] > m[1][1] and m[0][0] > m[2][2]:
        s = math.sqrt(1.0 + m[0][0] - m[1][1] - m[2][2]) * 2.0
        out = [s / 4, (m[0][1] + m[1][0]) / s, (m[0][2] + m[2][0]) / s, (m[2][1] - m[1][2]) / s]
    elif m[1][1] > m[2][2]:
        s = math.sqrt(1.0 + m[1][1] - m[0][0] - m[2][2]) * 2.0
        out = [(m[0][1] + m[1][0]) / s, s / 4, (m[1][2] + m[2][1]) / s, (m[0][2] - m[2][0]) / s]
    else:
        s = math.sqrt(1.0 + m[2][2] - m[0][0] - m[1][1]) * 2.0
        out = [(m[0][2] + m[2][0]) / s, (m[1][2] + m[2][1]) / s, s / 4, (m[1][0] - m[0][1]) / s]
    q = np.array(out)
    return q / np.linalg.norm(q)


def quat_mul(a: Array, b: Array, out: Array | None = None) -> Array:
    """Hamilton product of quaternion arrays ``(4, frames)`` (x, y, z, w)."""
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    if out is None:
        out = np.empty(np.broadcast_shapes(a.shape, b.shape))
    out[0] = aw * bx + ax * bw + ay * bz - az * by
    out[1] = aw * by - ax * bz + ay * bw + az * bx
    out[2] = aw * bz + ax * by - ay * bx + az * bw
    out[3] = aw * bw - ax * bx - ay * by - az * bz
    return out


def rotate(q: Array, v: Array) -> Array:
    """Rotate vectors ``v`` ``(3,)`` or ``(3, frames)`` by quaternions ``q`` ``(4, frames)``."""
    ux, uy, uz, w = q
    if v.ndim == 1:
        v = v[:, None]
    vx, vy, vz = v
    tx = uy * vz - uz * vy
    ty = uz * vx - ux * vz
    tz = ux * vy - uy * vx
    tx += tx
    ty += ty
    tz += tz
    out = np.empty((3, q.shape[1]))
    out[0] = vx + w * tx + (uy * tz - uz * ty)
    out[1] = vy + w * ty + (uz * tx - ux * tz)
    out[2] = vz + w * tz + (ux * ty - uy * tx)
    return out


def axis_quat(axis: Array, angle: Array) -> Array:
    """Quaternions ``(4, frames)`` of rotations about one unit axis."""
    half = 0.5 * angle
    s = np.sin(half)
    out = np.empty((4, len(angle)))
    out[:3] = np.outer(axis, s)
    out[3] = np.cos(half)
    return out


def exp_quat(w: Array) -> Array:
    """Quaternions ``(4, frames)`` of rotation vectors ``(3, frames)`` (exact near zero)."""
    theta = np.sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2])
    half = 0.5 * theta
    out = np.empty((4, w.shape[1]))
    with np.errstate(invalid="ignore", divide="ignore"):
        k = np.sin(half) / theta  # sin(θ/2)/θ
    small = theta < 1e-8
    if small.any():  # Taylor series near 0 (also avoids 0/0)
        k[small] = 0.5 - theta[small] ** 2 / 48.0
    np.multiply(w, k, out=out[:3])
    np.cos(half, out=out[3])
    return out


def _unit(v: Array) -> Array:
    return v / np.linalg.norm(v)


def joint_quat(joint: Joint, q: Array) -> tuple[Array | None, Array | None]:
    """Rotation ``(4, frames)`` and translation ``(3, frames)`` of Q(q); None = identity."""
    t = joint.type
    if t == "revolute":
        return axis_quat(_unit(joint.axes[0]), q[0]), None
    if t == "prismatic":
        return None, np.outer(_unit(joint.axes[0]), q[0])
    if t == "screw":
        axis = _unit(joint.axes[0])
        return axis_quat(axis, q[0]), np.outer(axis * joint.pitch / (2.0 * np.pi), q[0])
    if t == "universal":
        return quat_mul(axis_quat(_unit(joint.axes[0]), q[0]),
                        axis_quat(_unit(joint.axes[1]), q[1])), None
    if t == "ball":
        return exp_quat(q), None
    if t == "euler":
        eye = np.eye(3)
        o = joint.axis_order
        first = axis_quat(eye[_UNIT[o[0]]], q[0])
        second = axis_quat(eye[_UNIT[o[1]]], q[1])
        return quat_mul(quat_mul(first, second), axis_quat(eye[_UNIT[o[2]]], q[2])), None
    if t == "translational":
        return None, q
    if t == "translational2d":
        a1, a2, _ = joint.plane_axes()
        return None, np.outer(a1, q[0]) + np.outer(a2, q[1])
    if t == "planar":
        a1, a2, n = joint.plane_axes()
        return axis_quat(n, q[2]), np.outer(a1, q[0]) + np.outer(a2, q[1])
    if t == "free":
        return exp_quat(q[:3]), q[3:6]
    return None, None  # weld


def forward_quat(skeleton: Skeleton, coords: Array, root: Array | None) -> Array:
    """Poses ``(frames, bodies, 7)`` for coordinates ``(frames, dofs)`` (see module doc)."""
    frames = coords.shape[0]
    count = len(skeleton.bodies)
    qt = np.ascontiguousarray(coords.T)
    buf = np.empty((count, 7, frames))  # per body: x y z qx qy qz qw
    quats = buf[:, 3:]
    pos = buf[:, :3]
    for index, body in enumerate(skeleton.bodies):
        if index == 0 and root is not None:
            quats[0] = root[:, 3:7].T / np.linalg.norm(root[:, 3:7], axis=1)
            pos[0] = root[:, :3].T
            continue
        joint = body.joint
        p_mat = joint.parent_to_joint
        c_mat = joint.child_to_joint
        q_c = matrix_to_quat(c_mat[:3, :3])
        mix = _left(matrix_to_quat(p_mat[:3, :3])) @ _right(
            np.array([-q_c[0], -q_c[1], -q_c[2], q_c[3]]))
        q_rot, q_pos = joint_quat(joint, qt[joint.dof_slice])
        offset = p_mat[:3, 3][:, None] if q_pos is None else (
            p_mat[:3, 3][:, None] + p_mat[:3, :3] @ q_pos)
        if q_rot is None:
            quats[index] = (mix @ np.array([0.0, 0.0, 0.0, 1.0]))[:, None]
        elif np.array_equal(mix, np.eye(4)):
            quats[index] = q_rot
        else:
            np.matmul(mix, q_rot, out=quats[index])
        if body.parent < 0:
            pos[index] = offset
        else:
            quat_mul(quats[body.parent], quats[index].copy(), out=quats[index])
            pos[index] = pos[body.parent] + rotate(quats[body.parent], offset)
        c_pos = c_mat[:3, 3]
        if np.any(c_pos):
            pos[index] -= rotate(quats[index], c_pos)
    # canonical sign (w >= 0); products of unit quaternions stay unit to rounding error
    np.negative(quats, out=quats, where=quats[:, 3:4] < 0)
    return np.ascontiguousarray(buf.transpose(2, 0, 1))

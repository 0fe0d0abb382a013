"""Vectorised quaternion helpers; every quaternion here is (x, y, z, w), scalar last.

These work on arrays of any leading shape ``(..., 4)`` and never loop in Python. SciPy's
``Rotation`` is used where it is as fast; the small kernels below avoid building
Rotation objects on hot paths (slerp of many pairs, products, conversions at a border).
"""

from __future__ import annotations

from typing import TypeVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

Array = NDArray[np.float64]
#: A float dtype that passes through (float32 tables stay float32).
_Float = TypeVar("_Float", bound=np.floating)


def wxyz_to_xyzw(q: ArrayLike) -> Array:
    """Scalar-first (Choreonoid, evo) to scalar-last."""
    q = np.asarray(q, dtype=np.float64)
    return np.concatenate([q[..., 1:4], q[..., :1]], axis=-1)


def xyzw_to_wxyz(q: ArrayLike) -> Array:
    """Scalar-last to scalar-first."""
    q = np.asarray(q, dtype=np.float64)
    return np.concatenate([q[..., 3:4], q[..., :3]], axis=-1)


def normalize(q: ArrayLike) -> Array:
    """Unit quaternions; a zero quaternion raises ValueError."""
    q = np.asarray(q, dtype=np.float64)
    norm: Array = np.linalg.norm(q, axis=-1, keepdims=True)
    if np.any(norm == 0):
        raise ValueError("cannot normalise a zero quaternion")
    return q / norm


def conjugate(q: ArrayLike) -> Array:
    """The inverse of a unit quaternion."""
    q = np.asarray(q, dtype=np.float64)
    return np.concatenate([-q[..., :3], q[..., 3:4]], axis=-1)


def multiply(a: ArrayLike, b: ArrayLike, out: Array | None = None) -> Array:
    """Hamilton product ``a * b`` (apply b, then a), broadcasting over leading axes.

    ``out`` (not sharing memory with ``a`` or ``b``) receives the result when given.
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if out is None:
        out = np.empty(np.broadcast_shapes(a.shape, b.shape))
    ax, ay, az, aw = np.moveaxis(a, -1, 0)
    bx, by, bz, bw = np.moveaxis(b, -1, 0)
    out[..., 0] = aw * bx + ax * bw + ay * bz - az * by
    out[..., 1] = aw * by - ax * bz + ay * bw + az * bx
    out[..., 2] = aw * bz + ax * by - ay * bx + az * bw
    out[..., 3] = aw * bw - ax * bx - ay * by - az * bz
    return out


def rotate(q: ArrayLike, v: ArrayLike) -> Array:
    """Rotate vectors ``v (..., 3)`` by unit quaternions ``q (..., 4)``."""
    q = np.asarray(q, dtype=np.float64)
    v = np.asarray(v, dtype=np.float64)
    u = q[..., :3]
    w = q[..., 3:4]
    t = 2.0 * np.cross(u, v)
    return v + w * t + np.cross(u, t)


def shortest_arc(q0: NDArray[np.floating], q1: NDArray[_Float]
                 ) -> tuple[NDArray[_Float], NDArray[np.floating]]:
    """``q1``, negated where ``−q1`` (the same rotation) is nearer ``q0``, and the cosine
    of the angle between them (>= 0): the pieces of every slerp, which must take the short
    way round. ``q1`` keeps its dtype (tables of float32 rotations stay float32)."""
    dot = np.sum(q0 * q1, axis=-1)
    return np.where((dot < 0)[..., None], -q1, q1), np.abs(dot)


def slerp(q0: ArrayLike, q1: ArrayLike, t: ArrayLike) -> Array:
    """Spherical interpolation from ``q0`` to ``q1`` at fractions ``t`` (shortest arc).

    ``t`` broadcasts against the leading axes; nearly parallel pairs fall back to a
    normalised linear blend, which is exact to double precision there.
    """
    q0 = np.asarray(q0, dtype=np.float64)
    t = np.asarray(t, dtype=np.float64)[..., None]
    q1, cosine = shortest_arc(q0, np.asarray(q1, dtype=np.float64))
    dot = cosine[..., None]
    close = dot > 1.0 - 1e-12
    theta = np.arccos(np.clip(dot, -1.0, 1.0))
    sin_theta = np.sin(theta)
    safe = np.where(close, 1.0, sin_theta)
    w0 = np.where(close, 1.0 - t, np.sin((1.0 - t) * theta) / safe)
    w1 = np.where(close, t, np.sin(t * theta) / safe)
    out: Array = w0 * q0 + w1 * q1
    norm: Array = np.linalg.norm(out, axis=-1, keepdims=True)
    return out / norm


def from_rpy(rpy: ArrayLike) -> Array:
    """Roll, pitch, yaw (radians) with R = Rz(yaw)·Ry(pitch)·Rx(roll), as Choreonoid uses."""
    rpy = np.asarray(rpy, dtype=np.float64)
    half = rpy * 0.5
    cr, cp, cy = np.cos(half[..., 0]), np.cos(half[..., 1]), np.cos(half[..., 2])
    sr, sp, sy = np.sin(half[..., 0]), np.sin(half[..., 1]), np.sin(half[..., 2])
    return np.stack(
        [
            sr * cp * cy - cr * sp * sy,
            cr * sp * cy + sr * cp * sy,
            cr * cp * sy - sr * sp * cy,
            cr * cp * cy + sr * sp * sy,
        ],
        axis=-1,
    )


def from_axis_angle(axis: ArrayLike, angle: ArrayLike, out: Array | None = None) -> Array:
    """Rotations of ``angle (...)`` radians about ``axis (..., 3)`` (normalised here).

    The half-angle sine and cosine come from ``t = tan(angle / 4)`` (one ``tan`` is
    faster than ``sin`` plus ``cos`` and as accurate): cos = 2r - 1 and sin = 2tr with
    r = 2 / (1 + t²). ``out`` receives the result when given. A zero axis raises ValueError.
    """
    axis = np.asarray(axis, dtype=np.float64)
    norm = np.linalg.norm(axis, axis=-1, keepdims=True)
    if np.any(norm == 0):
        raise ValueError("cannot rotate about a zero axis")
    t = np.tan(0.25 * np.asarray(angle, dtype=np.float64))
    r = np.asarray(t * t)
    r += 1.0
    np.divide(2.0, r, out=r)
    if out is None:
        out = np.empty((*np.broadcast_shapes(axis.shape[:-1], r.shape), 4))
    np.subtract(r, 1.0, out=out[..., 3])
    r *= t
    np.multiply(axis / norm, r[..., None], out=out[..., :3])
    return out


def to_matrix(q: ArrayLike) -> Array:
    """Rotation matrices ``(..., 3, 3)`` of quaternions ``(..., 4)`` (normalised first)."""
    x, y, z, w = np.moveaxis(normalize(q), -1, 0)
    return np.stack([
        np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)], axis=-1),
        np.stack([2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)], axis=-1),
        np.stack([2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)], axis=-1),
    ], axis=-2)


def from_matrix(m: ArrayLike) -> Array:
    """Unit quaternions ``(..., 4)`` with ``w >= 0`` of rotation matrices ``(..., 3, 3)``.

    Shepperd's method: each quaternion is divided by its largest of 4w², 4x², 4y², 4z².
    """
    m = np.asarray(m, dtype=np.float64)
    r = m.reshape(-1, 3, 3)
    m00, m11, m22 = r[:, 0, 0], r[:, 1, 1], r[:, 2, 2]
    diag = np.stack([m00 + m11 + m22, m00 - m11 - m22, m11 - m00 - m22, m22 - m00 - m11], axis=1)
    best = np.argmax(diag, axis=1)
    d01, s01 = r[:, 1, 0] - r[:, 0, 1], r[:, 1, 0] + r[:, 0, 1]
    d02, s02 = r[:, 0, 2] - r[:, 2, 0], r[:, 0, 2] + r[:, 2, 0]
    d12, s12 = r[:, 2, 1] - r[:, 1, 2], r[:, 2, 1] + r[:, 1, 2]
    t = np.sqrt(np.maximum(1.0 + np.take_along_axis(diag, best[:, None], 1)[:, 0], 0.0))
    t = 2.0 * np.maximum(t, np.finfo(float).tiny)  # = 4·|largest component|
    cases = np.stack([
        np.stack([d12, d02, d01, t * t / 4], axis=1),
        np.stack([t * t / 4, s01, s02, d12], axis=1),
        np.stack([s01, t * t / 4, s12, d02], axis=1),
        np.stack([s02, s12, t * t / 4, d01], axis=1),
    ])
    quat: Array = cases[best, np.arange(len(r))] / t[:, None]
    quat /= np.linalg.norm(quat, axis=1, keepdims=True)
    quat[quat[:, 3] < 0] *= -1.0
    return quat.reshape(*m.shape[:-2], 4)


def positive_w(q: ArrayLike) -> Array:
    """The same rotations with ``w >= 0`` (PARC's and MimicKit's canonical sign)."""
    q = np.asarray(q, dtype=np.float64)
    return np.where(q[..., 3:4] < 0, -q, q)


def to_hinge_angle(q: ArrayLike, axis: ArrayLike) -> Array:
    """Signed angle in [-pi, pi] about ``axis`` of rotations assumed to be about it."""
    q = positive_w(q)
    return np.asarray(2.0 * np.arctan2(q[..., :3] @ np.asarray(axis, dtype=np.float64),
                                       q[..., 3]))


def from_exp_map(v: ArrayLike) -> Array:
    """Quaternions of exponential maps ``(..., 3)`` (axis · angle); the angle is wrapped to
    [-pi, pi] first."""
    v = np.asarray(v, dtype=np.float64)
    angle = np.linalg.norm(v, axis=-1, keepdims=True)
    safe = np.where(angle > 1e-12, angle, 1.0)
    axis = np.where(angle > 1e-12, v / safe, np.array([0.0, 0.0, 1.0]))
    wrapped = np.mod(angle + np.pi, 2 * np.pi) - np.pi
    return np.concatenate([axis * np.sin(0.5 * wrapped), np.cos(0.5 * wrapped)], axis=-1)


def to_exp_map(q: ArrayLike) -> Array:
    """Exponential maps ``(..., 3)`` of quaternions (w made >= 0 first: angles in [0, pi])."""
    q = positive_w(q)
    vec = q[..., :3]
    sin_half = np.linalg.norm(vec, axis=-1, keepdims=True)
    angle = 2.0 * np.arctan2(sin_half, q[..., 3:4])
    scale = np.where(sin_half > 1e-12, angle / np.where(sin_half > 1e-12, sin_half, 1.0),
                     2.0 / np.maximum(q[..., 3:4], 1e-12))
    return np.asarray(vec * scale)

"""Vectorised quaternion helpers; every quaternion here is (x, y, z, w), scalar last.

These work on arrays of any leading shape ``(..., 4)`` and never loop in Python. SciPy's
``Rotation`` is used where it is as fast; the small kernels below avoid building
Rotation objects on hot paths (slerp of many pairs, products, conversions at a border).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

Array = NDArray[np.float64]


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
    norm = np.linalg.norm(q, axis=-1, keepdims=True)
    if np.any(norm == 0):
        raise ValueError("cannot normalise a zero quaternion")
    return q / norm


def conjugate(q: ArrayLike) -> Array:
    """The inverse of a unit quaternion."""
    q = np.asarray(q, dtype=np.float64)
    return np.concatenate([-q[..., :3], q[..., 3:4]], axis=-1)


def multiply(a: ArrayLike, b: ArrayLike) -> Array:
    """Hamilton product ``a * b`` (apply b, then a), broadcasting over leading axes."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    ax, ay, az, aw = np.moveaxis(a, -1, 0)
    bx, by, bz, bw = np.moveaxis(b, -1, 0)
    return np.stack(
        [
            aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
            aw * bw - ax * bx - ay * by - az * bz,
        ],
        axis=-1,
    )


def rotate(q: ArrayLike, v: ArrayLike) -> Array:
    """Rotate vectors ``v (..., 3)`` by unit quaternions ``q (..., 4)``."""
    q = np.asarray(q, dtype=np.float64)
    v = np.asarray(v, dtype=np.float64)
    u = q[..., :3]
    w = q[..., 3:4]
    t = 2.0 * np.cross(u, v)
    return v + w * t + np.cross(u, t)


def slerp(q0: ArrayLike, q1: ArrayLike, t: ArrayLike) -> Array:
    """Spherical interpolation from ``q0`` to ``q1`` at fractions ``t`` (shortest arc).

    ``t`` broadcasts against the leading axes; nearly parallel pairs fall back to a
    normalised linear blend, which is exact to double precision there.
    """
    q0 = np.asarray(q0, dtype=np.float64)
    q1 = np.asarray(q1, dtype=np.float64)
    t = np.asarray(t, dtype=np.float64)[..., None]
    dot = np.sum(q0 * q1, axis=-1, keepdims=True)
    q1 = np.where(dot < 0, -q1, q1)
    dot = np.abs(dot)
    close = dot > 1.0 - 1e-12
    theta = np.arccos(np.clip(dot, -1.0, 1.0))
    sin_theta = np.sin(theta)
    safe = np.where(close, 1.0, sin_theta)
    w0 = np.where(close, 1.0 - t, np.sin((1.0 - t) * theta) / safe)
    w1 = np.where(close, t, np.sin(t * theta) / safe)
    out = w0 * q0 + w1 * q1
    return out / np.linalg.norm(out, axis=-1, keepdims=True)


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


def to_rpy(q: ArrayLike) -> Array:
    """Inverse of :func:`from_rpy` (pitch in [-pi/2, pi/2])."""
    x, y, z, w = np.moveaxis(np.asarray(q, dtype=np.float64), -1, 0)
    roll = np.arctan2(2.0 * (w * x + y * z), 1.0 - 2.0 * (x * x + y * y))
    pitch = np.arcsin(np.clip(2.0 * (w * y - z * x), -1.0, 1.0))
    yaw = np.arctan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))
    return np.stack([roll, pitch, yaw], axis=-1)

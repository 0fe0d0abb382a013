"""Euler angles of rotation matrices, exact to rounding error even at gimbal lock."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

Array = NDArray[np.float64]


def euler_xyz(rotation: Array) -> Array:
    """Angles (a, b, c) with ``rotation = Rx(a)·Ry(b)·Rz(c)`` (DART's <transformation>).

    ``b`` comes from a well-conditioned atan2 and ``c`` from what is left after ``a`` and
    ``b``, so the angles rebuild the matrix to rounding error even at gimbal lock.
    """
    r = rotation
    cos_b = math.hypot(r[0, 0], r[0, 1])
    b = math.atan2(r[0, 2], cos_b)
    a = math.atan2(-r[1, 2], r[2, 2]) if cos_b > 1e-12 else math.atan2(r[2, 1], r[1, 1])
    ca, sa, cb, sb = math.cos(a), math.sin(a), math.cos(b), math.sin(b)
    rx_ry = np.array([[cb, 0.0, sb], [sa * sb, ca, -sa * cb], [-ca * sb, sa, ca * cb]])
    rest = rx_ry.T @ r  # = Rz(c)
    return np.array([a, b, math.atan2(rest[1, 0], rest[0, 0])])

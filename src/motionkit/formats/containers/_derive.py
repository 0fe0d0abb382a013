"""Velocities for containers whose loaders expect them stored: central differences in
time (one-sided at the ends, as ``np.gradient`` and ``torch.gradient`` do), and world
angular velocities from quaternions by the same stencil."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray
from scipy.spatial.transform import Rotation

Array = NDArray[np.float64]


def rate_of_change(values: Array, dt: float) -> Array:
    """d/dt along axis 0: central differences inside, one-sided at the ends (zeros for a
    single frame)."""
    if len(values) < 2:
        return np.zeros_like(values)
    out: Array = np.asarray(np.gradient(values, dt, axis=0), dtype=np.float64)
    return out


def angular_velocity(quats: Array, dt: float) -> Array:
    """World angular velocity ``(..., 3)`` of rotations ``(frames, ..., 4)`` (xyzw):
    rotvec(q[t+1]·q[t−1]⁻¹) / (2·dt) inside, rotvec(q[1]·q[0]⁻¹) / dt (and the same at the
    end) at the ends."""
    frames = quats.shape[0]
    out = np.zeros((*quats.shape[:-1], 3))
    if frames < 2:
        return out
    flat = quats.reshape(frames, -1, 4)

    def step(a: Array, b: Array) -> Array:
        rot = Rotation.from_quat(b.reshape(-1, 4)) * Rotation.from_quat(a.reshape(-1, 4)).inv()
        vectors: Array = rot.as_rotvec().reshape(*a.shape[:-1], 3)
        return vectors

    result = out.reshape(frames, -1, 3)
    if frames > 2:
        result[1:-1] = step(flat[:-2], flat[2:]) / (2.0 * dt)
    result[0] = step(flat[0], flat[1]) / dt
    result[-1] = step(flat[-2], flat[-1]) / dt
    return out

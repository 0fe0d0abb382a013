"""SO(3) and SE(3) logarithms and the Jacobian of the SE(3) log, as the IK's task errors need
them: twists ordered translation first, angles from ``atan2`` (accurate near zero, where an
``arccos`` loses half the digits), series below a small angle.

``log6(T)`` is the twist ``ξ = (ρ, ω)`` with ``T = exp(ξ)``; ``jlog6(T)`` is
``∂ log6(T · exp(δ)) / ∂δ`` at ``δ = 0`` (the inverse of SE(3)'s right Jacobian at ``ξ``).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

Array = NDArray[np.float64]

#: Below this angle (rad) the coefficients come from their Taylor series.
SMALL = 1e-4


def hat(v: Array) -> Array:
    """The 3×3 cross-product matrix of ``v``."""
    return np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])


def log3(rotation: Array) -> Array:
    """The rotation vector ω of a rotation matrix (|ω| ≤ π)."""
    x, y, z, w = _quaternion(rotation)
    sine = math.sqrt(x * x + y * y + z * z)
    if sine < 1e-300:
        return np.zeros(3)
    angle = 2.0 * math.atan2(sine, w)
    if angle > math.pi:  # the same rotation the short way
        angle -= 2.0 * math.pi
    return np.array([x, y, z]) * (angle / sine)


def _quaternion(m: Array) -> tuple[float, float, float, float]:
    """(x, y, z, w) of a rotation matrix, from its largest diagonal term (no cancellation)."""
    trace = m[0, 0] + m[1, 1] + m[2, 2]
    if trace > 0:
        s = 2.0 * math.sqrt(1.0 + trace)
        return ((m[2, 1] - m[1, 2]) / s, (m[0, 2] - m[2, 0]) / s, (m[1, 0] - m[0, 1]) / s,
                0.25 * s)
    k = int(np.argmax([m[0, 0], m[1, 1], m[2, 2]]))
    i, j = (k + 1) % 3, (k + 2) % 3
    s = 2.0 * math.sqrt(1.0 + m[k, k] - m[i, i] - m[j, j])
    out = [0.0, 0.0, 0.0, (m[j, i] - m[i, j]) / s]
    out[k], out[i], out[j] = 0.25 * s, (m[i, k] + m[k, i]) / s, (m[j, k] + m[k, j]) / s
    return out[0], out[1], out[2], out[3]


def exp3(omega: Array) -> Array:
    """The rotation matrix of a rotation vector (Rodrigues)."""
    angle = float(np.linalg.norm(omega))
    w = hat(omega)
    if angle < SMALL:
        a, b = 1.0 - angle * angle / 6.0, 0.5 - angle * angle / 24.0
    else:
        a, b = math.sin(angle) / angle, (1.0 - math.cos(angle)) / (angle * angle)
    out: Array = np.eye(3) + a * w + b * (w @ w)
    return out


def log6(transform: Array) -> Array:
    """The twist (ρ, ω) of a 4×4 rigid transform: ω = log3(R), ρ = V(ω)⁻¹ t."""
    omega = log3(transform[:3, :3])
    angle = float(np.linalg.norm(omega))
    w = hat(omega)
    if angle < SMALL:
        c = 1.0 / 12.0 + angle * angle / 720.0
    else:
        half = 0.5 * angle
        c = (1.0 - half * math.cos(half) / math.sin(half)) / (angle * angle)
    v_inverse = np.eye(3) - 0.5 * w + c * (w @ w)
    return np.concatenate([v_inverse @ transform[:3, 3], omega])


def jlog6(transform: Array) -> Array:
    """``∂ log6(T · exp(δ)) / ∂δ``: the inverse right Jacobian of SE(3) at ``log6(T)``."""
    xi = log6(transform)
    rho, omega = xi[:3], xi[3:]
    inverse = _jr3_inverse(omega)
    q = _barfoot_q(-rho, -omega)
    out = np.zeros((6, 6))
    out[:3, :3] = out[3:, 3:] = inverse
    out[:3, 3:] = -inverse @ q @ inverse
    return out


def _jr3_inverse(omega: Array) -> Array:
    """Inverse of SO(3)'s right Jacobian: ``I + ½ω̂ + (1/θ² − (1+cos θ)/(2θ sin θ)) ω̂²``."""
    angle = float(np.linalg.norm(omega))
    w = hat(omega)
    if angle < SMALL:
        c = 1.0 / 12.0 + angle * angle / 720.0
    else:
        c = 1.0 / (angle * angle) - (1.0 + math.cos(angle)) / (2.0 * angle * math.sin(angle))
    out: Array = np.eye(3) + 0.5 * w + c * (w @ w)
    return out


def _barfoot_q(rho: Array, omega: Array) -> Array:
    """The coupling block ``Q(ρ, ω)`` of SE(3)'s left Jacobian (Barfoot, eq. 7.86)."""
    angle = float(np.linalg.norm(omega))
    r, w = hat(rho), hat(omega)
    rw, wr = r @ w, w @ r
    wrw = wr @ w
    if angle < SMALL:
        t2 = angle * angle
        a, b, c = 1.0 / 6.0 - t2 / 120.0, 1.0 / 24.0 - t2 / 720.0, 1.0 / 120.0 - t2 / 2520.0
    else:
        s, co, t2 = math.sin(angle), math.cos(angle), angle * angle
        a = (angle - s) / (t2 * angle)
        b = (t2 / 2.0 + co - 1.0) / (t2 * t2)
        c = (2.0 * angle - 3.0 * s + angle * co) / (2.0 * t2 * t2 * angle)
    out: Array = 0.5 * r + a * (wr + rw + wrw) + b * (w @ wr + rw @ w - 3.0 * wrw) \
        + c * (wrw @ w + w @ wrw)
    return out


# Batched forms: the same functions over arrays of any leading shape (the series kept).

#: ``hat(v) = v @ _HAT`` reshaped to 3×3: the cross-product matrices of the unit vectors.
_HAT = np.stack([hat(np.eye(3)[k]).ravel() for k in range(3)])


def hat_many(v: Array) -> Array:
    """``(..., 3)`` → ``(..., 3, 3)`` cross-product matrices."""
    out: Array = (v @ _HAT).reshape(*v.shape[:-1], 3, 3)
    return out


def cross_many(a: Array, b: Array) -> Array:
    """Cross products over the last axis (broadcast, without np.cross's axis handling)."""
    out: Array = a[..., [1, 2, 0]] * b[..., [2, 0, 1]] - a[..., [2, 0, 1]] * b[..., [1, 2, 0]]
    return out


def _norm(v: Array) -> Array:
    out: Array = np.sqrt(np.einsum("...i,...i->...", v, v))
    return out


def exp3_many(omega: Array) -> Array:
    """``(..., 3)`` rotation vectors → ``(..., 3, 3)`` rotation matrices."""
    angle = _norm(omega)
    small = angle < SMALL
    safe = np.where(small, 1.0, angle)
    t2 = angle * angle
    a = np.where(small, 1.0 - t2 / 6.0, np.sin(safe) / safe)
    b = np.where(small, 0.5 - t2 / 24.0, (1.0 - np.cos(safe)) / (safe * safe))
    w = hat_many(omega)
    out: Array = np.eye(3) + a[..., None, None] * w + b[..., None, None] * (w @ w)
    return out


def log3_many(rotation: Array) -> Array:
    """``(..., 3, 3)`` rotation matrices → ``(..., 3)`` rotation vectors (|ω| ≤ π)."""
    m = rotation.reshape(-1, 3, 3)
    trace = m[:, 0, 0] + m[:, 1, 1] + m[:, 2, 2]
    s = 2.0 * np.sqrt(np.maximum(1.0 + trace, 1e-300))
    xyz = (m[:, [2, 0, 1], [1, 2, 0]] - m[:, [1, 2, 0], [2, 0, 1]]) / s[:, None]
    w = 0.25 * s
    for k in np.flatnonzero(~(trace > 0)):  # near a half turn: from the largest diagonal
        x, y, z, w[k] = _quaternion(m[k])
        xyz[k] = (x, y, z)
    sine = _norm(xyz)
    angle = 2.0 * np.arctan2(sine, w)
    angle = np.where(angle > math.pi, angle - 2.0 * math.pi, angle)
    zero = sine < 1e-300
    out: Array = xyz * np.where(zero, 0.0, angle / np.where(zero, 1.0, sine))[..., None]
    return out.reshape(rotation.shape[:-1])


def log6_many(transform: Array) -> Array:
    """``(..., 4, 4)`` rigid transforms → ``(..., 6)`` twists (ρ, ω)."""
    omega = log3_many(transform[..., :3, :3])
    angle = _norm(omega)
    small = angle < SMALL
    safe = np.where(small, 1.0, angle)
    half = 0.5 * safe
    c = np.where(small, 1.0 / 12.0 + angle * angle / 720.0,
                 (1.0 - half * np.cos(half) / np.sin(half)) / (safe * safe))
    t = transform[..., :3, 3]
    wt = cross_many(omega, t)
    rho = t - 0.5 * wt + c[..., None] * cross_many(omega, wt)
    return np.concatenate([rho, omega], axis=-1)


def jlog6_many(transform: Array) -> Array:
    """``(..., 4, 4)`` → ``(..., 6, 6)``: :func:`jlog6` of each transform."""
    return jlog6_of_twist(log6_many(transform))


def jlog6_of_twist(xi: Array) -> Array:
    """:func:`jlog6` at ``exp(ξ)`` from its twist ``(..., 6)`` (the log need not be taken
    again: ``jlog6(T⁻¹)`` is ``jlog6_of_twist(−log6(T))``)."""
    rho, omega = xi[..., :3], xi[..., 3:]
    angle = _norm(omega)
    small = angle < SMALL
    safe = np.where(small, 1.0, angle)
    t2 = angle * angle
    s2 = safe * safe
    sine, cosine = np.sin(safe), np.cos(safe)
    c = np.where(small, 1.0 / 12.0 + t2 / 720.0, 1.0 / s2 - (1.0 + cosine) / (2.0 * safe * sine))
    w = hat_many(omega)
    ww = w @ w
    inverse = np.eye(3) + 0.5 * w + c[..., None, None] * ww
    q = _barfoot_q_many(-rho, -w, ww, angle, small, safe)
    out = np.zeros((*xi.shape[:-1], 6, 6))
    out[..., :3, :3] = out[..., 3:, 3:] = inverse
    out[..., :3, 3:] = -(inverse @ q @ inverse)
    return out


def _barfoot_q_many(rho: Array, w: Array, ww: Array, angle: Array, small: NDArray[np.bool_],
                    safe: Array) -> Array:
    """:func:`_barfoot_q` batched; ``w`` is ``hat(ω)`` and ``ww`` its square."""
    r = hat_many(rho)
    rw, wr = r @ w, w @ r
    wrw = wr @ w
    t2, s2 = angle * angle, safe * safe
    sine, cosine = np.sin(safe), np.cos(safe)
    a = np.where(small, 1.0 / 6.0 - t2 / 120.0, (safe - sine) / (s2 * safe))
    b = np.where(small, 1.0 / 24.0 - t2 / 720.0, (s2 / 2.0 + cosine - 1.0) / (s2 * s2))
    c = np.where(small, 1.0 / 120.0 - t2 / 2520.0,
                 (2.0 * safe - 3.0 * sine + safe * cosine) / (2.0 * s2 * s2 * safe))
    e = (..., None, None)
    out: Array = 0.5 * r + a[e] * (wr + rw + wrw) + b[e] * (ww @ r + r @ ww - 3.0 * wrw) \
        + c[e] * (wrw @ w + w @ wrw)
    return out

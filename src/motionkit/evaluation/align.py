"""Aligning the estimate onto the reference: Umeyama (as evo), position + yaw (as rpg)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from ..errors import ConversionError
from ._poses import Array, Poses
from ._threads import single_blas

Kind = Literal["se3", "sim3", "posyaw", "scale", "translation", "none"]
KINDS: tuple[str, ...] = ("se3", "sim3", "posyaw", "scale", "translation", "none")


@dataclass(frozen=True)
class Alignment:
    """``p' = scale·rotation·p + translation``, ``R' = rotation·R`` applied to the estimate.

    For ``scale`` only the scale is applied (``rotation``/``translation`` are identity/zero)."""

    kind: str
    rotation: Array = field(default_factory=lambda: np.eye(3))
    translation: Array = field(default_factory=lambda: np.zeros(3))
    scale: float = 1.0
    poses_used: int = 0
    origin: bool = False

    def apply(self, poses: Poses) -> Poses:
        """The aligned copy of ``poses``."""
        from ..spatial.quaternion import from_matrix, multiply

        if self.kind == "none" and not self.origin:
            return poses
        positions = poses.positions * self.scale if self.scale != 1.0 else poses.positions
        positions = positions @ self.rotation.T + self.translation
        if np.array_equal(self.rotation, np.eye(3)):
            return Poses(poses.times, positions, poses.quaternions, poses.name, poses.matrices,
                         poses.oriented)
        quaternions = multiply(from_matrix(self.rotation), poses.quaternions)
        matrices = None if poses.matrices is None else self.rotation @ poses.matrices
        return Poses(poses.times, positions, quaternions, poses.name, matrices, poses.oriented)

    def to_dict(self) -> dict[str, object]:
        """JSON-ready form."""
        return {"kind": self.kind, "rotation": self.rotation.tolist(),
                "translation": self.translation.tolist(), "scale": self.scale,
                "poses_used": self.poses_used, "origin": self.origin}


@single_blas
def align(ref: Poses, est: Poses, kind: Kind = "se3", n: int | None = None,
          origin: bool = False) -> Alignment:
    """The transform that moves matched ``est`` poses onto ``ref`` (positions only).

    ``se3``/``sim3``/``scale`` are Umeyama's closed form as evo computes it, ``scale`` applying
    only the scale; ``posyaw`` is rpg's 4-DoF position + yaw fit; ``translation`` matches the
    centroids. ``n`` uses only the first n pairs (``posyaw`` with n=1: the first pose).
    ``origin`` moves the estimate's first pose onto the reference's (with ``none`` or ``scale``).
    Degenerate input (too few, coincident or collinear points) raises ConversionError.
    """
    if len(ref) != len(est):
        raise ConversionError(f"align needs matched poses; got {len(ref)} reference and {len(est)} "
                              "estimate poses (associate them first)")
    if kind not in KINDS:
        raise ConversionError(f"unknown alignment {kind!r}; use one of {', '.join(KINDS)}")
    if origin and kind not in ("none", "scale"):
        raise ConversionError("origin alignment replaces se3/sim3/posyaw/translation; use it with "
                              "align 'none' or 'scale'")
    if n is not None and n < 1:
        raise ConversionError(f"n must be at least 1 (got {n}); leave it unset to use all pairs")
    count = len(ref) if n is None else min(n, len(ref))
    x, y = est.positions[:count], ref.positions[:count]
    if kind == "none":
        result = Alignment("none", poses_used=0)
    elif kind == "translation":
        result = Alignment(kind, translation=y.mean(axis=0) - x.mean(axis=0), poses_used=count)
    elif kind == "posyaw":
        result = _posyaw(ref, est, count, n)
    else:
        rotation, translation, scale = umeyama(x, y, with_scale=kind != "se3")
        result = (Alignment(kind, scale=scale, poses_used=count) if kind == "scale" else
                  Alignment(kind, rotation, translation, scale, count))
    if origin:
        result = _origin(ref, est, result)
    return result


def umeyama(x: Array, y: Array, with_scale: bool) -> tuple[Array, Array, float]:
    """``R, t, c`` minimising Σ‖y − (c·R·x + t)‖² for (n, 3) point sets (Umeyama 1991).

    Raises ConversionError where evo raises (rank test with absolute eps) and also for
    collinear points, whose rotation about the line is arbitrary."""
    n = len(x)
    if n < 3:
        raise ConversionError(f"{n} matched poses cannot fix a rotation; se3/sim3 alignment needs at "
                              "least 3 non-collinear positions (use --align translation or none)")
    mean_x, mean_y = x.mean(axis=0), y.mean(axis=0)
    xc, yc = x - mean_x, y - mean_y
    sigma_x = float(np.mean(np.einsum("ij,ij->i", xc, xc)))
    cov = yc.T @ xc / n
    u, d, vt = np.linalg.svd(cov)
    if np.count_nonzero(d > np.finfo(float).eps) < 2 or d[1] <= 1e-10 * d[0]:
        raise ConversionError(f"the {n} matched positions are coincident or on one line, so the "
                              "rotation is not determined; use --align translation or none")
    s = np.eye(3)
    if np.linalg.det(u) * np.linalg.det(vt) < 0.0:
        s[2, 2] = -1.0
    rotation = u @ s @ vt
    scale = float(np.trace(np.diag(d) @ s) / sigma_x) if with_scale else 1.0
    translation = mean_y - scale * rotation @ mean_x
    return rotation, translation, scale


def _posyaw(ref: Poses, est: Poses, count: int, n: int | None) -> Alignment:
    """rpg's yaw-only fit: θ maximising trace(Rz(θ)·C), then the centroid (or first-pose) shift."""
    if n == 1:
        c = est.rotation_matrices()[0] @ ref.rotation_matrices()[0].T
        origin_est, origin_ref = est.positions[0], ref.positions[0]
    else:
        x, y = est.positions[:count], ref.positions[:count]
        origin_est, origin_ref = x.mean(axis=0), y.mean(axis=0)
        c = (x - origin_est).T @ (y - origin_ref)
    a, b = c[0, 0] + c[1, 1], c[0, 1] - c[1, 0]
    if np.hypot(a, b) <= 1e-12 * max(float(np.abs(c).max()), np.finfo(float).tiny):
        raise ConversionError(f"the {count} matched positions fix no yaw (coincident or on a vertical "
                              "line); use --align translation or none")
    theta = np.pi / 2 - np.arctan2(a, b)
    cos, sin = np.cos(theta), np.sin(theta)
    rotation = np.diag([cos, cos, cos]) + np.diag([0.0, 0.0, 1.0 - cos])
    rotation += np.array([[0.0, -sin, 0.0], [sin, 0.0, 0.0], [0.0, 0.0, 0.0]])
    return Alignment("posyaw", rotation, origin_ref - rotation @ origin_est, 1.0, count)


def _origin(ref: Poses, est: Poses, base: Alignment) -> Alignment:
    """First estimate pose (after ``base``'s scale) moved onto the first reference pose."""
    r_ref, r_est = ref.rotation_matrices()[0], est.rotation_matrices()[0]
    rotation = r_ref @ r_est.T
    translation = ref.positions[0] - rotation @ (base.scale * est.positions[0])
    return Alignment(base.kind, rotation, translation, base.scale, 1, True)

"""Test oracle for forward kinematics: joint motions ``Q(q)`` as plain rotation matrices.

Independent of the production path (``motionkit.kinematics._fast``, quaternions). Each
function takes a joint and its coordinates ``q`` of shape ``(frames, dof_count)`` and
returns the rotation ``(frames, 3, 3)`` and translation ``(frames, 3)`` of the joint's
motion, in DART's conventions (see :mod:`motionkit.model.skeleton`). A rotation that is
constant is returned as ``None`` (identity) so callers can skip the product.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from hypothesis import strategies as st
from numpy.typing import NDArray
from scipy.spatial.transform import Rotation

from motionkit.model.skeleton import JOINT_DOFS, Body, Joint, Skeleton

Array = NDArray[np.float64]
Motion = tuple[Array | None, Array | None]

_AXES = {"x": np.array([1.0, 0.0, 0.0]), "y": np.array([0.0, 1.0, 0.0]),
         "z": np.array([0.0, 0.0, 1.0])}


def skew(v: Array) -> Array:
    """Cross-product matrix of one vector ``(3,)``."""
    return np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])


def axis_angle(axis: Array, angle: Array) -> Array:
    """Rotations about one fixed axis by ``angle`` ``(frames,)`` → ``(frames, 3, 3)``.

    Uses ``cos·I + sin·[a]× + (1-cos)·a aᵀ`` (``axis`` must be unit).
    """
    axis = np.asarray(axis, dtype=float)
    c = np.cos(angle)[:, None, None]
    s = np.sin(angle)[:, None, None]
    outer = np.outer(axis, axis)
    return c * np.eye(3) + s * skew(axis) + (1.0 - c) * outer


def exp_map(w: Array) -> Array:
    """Rotation matrices of rotation vectors ``(frames, 3)`` (Rodrigues; exact near zero)."""
    theta = np.sqrt(np.einsum("fi,fi->f", w, w))
    small = theta < 1e-12
    safe = np.where(small, 1.0, theta)
    s = np.where(small, 1.0, np.sin(safe) / safe)
    c = np.where(small, 0.5, (1.0 - np.cos(safe)) / (safe * safe))
    x, y, z = w[:, 0], w[:, 1], w[:, 2]
    out = np.empty((len(w), 3, 3))
    out[:, 0, 0] = 1.0 - c * (y * y + z * z)
    out[:, 1, 1] = 1.0 - c * (x * x + z * z)
    out[:, 2, 2] = 1.0 - c * (x * x + y * y)
    out[:, 0, 1] = c * x * y - s * z
    out[:, 1, 0] = c * x * y + s * z
    out[:, 0, 2] = c * x * z + s * y
    out[:, 2, 0] = c * x * z - s * y
    out[:, 1, 2] = c * y * z - s * x
    out[:, 2, 1] = c * y * z + s * x
    return out


def _unit(axis: Array) -> Array:
    norm = float(np.linalg.norm(axis))
    return axis / norm if norm > 0 else axis


def _weld(joint: Joint, q: Array) -> Motion:
    return None, None


def _revolute(joint: Joint, q: Array) -> Motion:
    return axis_angle(_unit(joint.axes[0]), q[:, 0]), None


def _prismatic(joint: Joint, q: Array) -> Motion:
    return None, q[:, :1] * _unit(joint.axes[0])


def _screw(joint: Joint, q: Array) -> Motion:
    axis = _unit(joint.axes[0])
    return axis_angle(axis, q[:, 0]), q[:, :1] * (axis * joint.pitch / (2.0 * math.pi))


def _universal(joint: Joint, q: Array) -> Motion:
    return (axis_angle(_unit(joint.axes[0]), q[:, 0]) @ axis_angle(_unit(joint.axes[1]), q[:, 1]),
            None)


def _ball(joint: Joint, q: Array) -> Motion:
    return exp_map(q[:, :3]), None


def _euler(joint: Joint, q: Array) -> Motion:
    order = joint.axis_order
    rotation = axis_angle(_AXES[order[0]], q[:, 0])
    rotation = rotation @ axis_angle(_AXES[order[1]], q[:, 1])
    return rotation @ axis_angle(_AXES[order[2]], q[:, 2]), None


def _translational(joint: Joint, q: Array) -> Motion:
    return None, q[:, :3].copy()


def _translational2d(joint: Joint, q: Array) -> Motion:
    a1, a2, _ = joint.plane_axes()
    return None, q[:, :1] * a1 + q[:, 1:2] * a2


def _planar(joint: Joint, q: Array) -> Motion:
    a1, a2, normal = joint.plane_axes()
    return axis_angle(normal, q[:, 2]), q[:, :1] * a1 + q[:, 1:2] * a2


def _free(joint: Joint, q: Array) -> Motion:
    return exp_map(q[:, :3]), q[:, 3:6].copy()


#: Joint type → function ``(joint, q) -> (rotation | None, translation | None)``.
MOTIONS: dict[str, Callable[[Joint, Array], Motion]] = {
    "weld": _weld, "revolute": _revolute, "prismatic": _prismatic, "screw": _screw,
    "universal": _universal, "ball": _ball, "euler": _euler, "translational": _translational,
    "translational2d": _translational2d, "planar": _planar, "free": _free,
}


def joint_motion(joint: Joint, q: Array) -> Motion:
    """The motion ``Q(q)`` of ``joint`` for coordinates ``q`` ``(frames, dof_count)``."""
    return MOTIONS[joint.type](joint, np.asarray(q, dtype=float))


def random_transform(rng: np.random.Generator) -> np.ndarray:
    """A random rigid transform (4×4) drawn from ``rng``."""
    out = np.eye(4)
    out[:3, :3] = Rotation.random(random_state=int(rng.integers(1 << 30))).as_matrix()
    out[:3, 3] = rng.uniform(-1, 1, 3)
    return out


@st.composite
def skeletons(draw: st.DrawFn) -> Skeleton:
    """Random skeletons of 1-6 bodies, every joint type, random frames and axes."""
    count = draw(st.integers(1, 6))
    seed = draw(st.integers(0, 2**31))
    rng = np.random.default_rng(seed)
    bodies = []
    for index in range(count):
        kind = draw(st.sampled_from(sorted(JOINT_DOFS)))
        extra: dict[str, object] = {}
        if kind in ("revolute", "prismatic", "screw"):
            extra["axes"] = [rng.normal(size=3)]
        if kind == "universal":
            extra["axes"] = rng.normal(size=(2, 3))  # not unit: FK normalises
        if kind == "euler":
            extra["axis_order"] = draw(st.sampled_from(["xyz", "zyx", "yxz", "zxy"]))
        if kind in ("planar", "translational2d"):
            plane = draw(st.sampled_from(["xy", "yz", "zx", "arbitrary"]))
            extra["plane"] = plane
            if plane == "arbitrary":
                extra["axes"] = rng.normal(size=(2, 3))
        if kind == "screw":
            extra["pitch"] = float(rng.uniform(-1, 1))
        joint = Joint(f"j{index}", kind, random_transform(rng), random_transform(rng),
                      **extra)  # type: ignore[arg-type]
        parent = int(rng.integers(-1, index)) if index else -1
        bodies.append(Body(f"b{index}", joint, parent=parent))
    return Skeleton("random", bodies)

"""The compiled FK path: a skeleton as the flat plan ``_fk_kernel.c`` walks.

The plan derives from the same per-body constants as the NumPy path (``_fast._plan``):
per body one row of ints (parent, how the joint rotates and from which coordinate, how
many coordinates translate it and from which) and one row of doubles (the rest rotation
``q_P ⊗ q_C⁻¹``, the 4×4 mix ``M``, what the sine of a one-axis joint brings, the unit
axes, ``t_P``, the matrix ``T`` from translation coordinates to the parent-to-joint
frame, and ``−t_C``). The layout is the enums at the top of the C file.

The extension is optional (``setup.py``): where it was not built, :data:`KERNEL` is None
and the NumPy path does all the work.
"""

from __future__ import annotations

import math
import weakref
from dataclasses import dataclass
from types import ModuleType

import numpy as np
from numpy.typing import NDArray

from .._accel import compiled
from ..model.skeleton import Joint, Skeleton
from ._fast import _Link, _plan

Array = NDArray[np.float64]


#: The compiled module, or None where it was not built.
KERNEL = compiled("motionkit.kinematics._fk_kernel")

INT_WIDTH, DOUBLE_WIDTH = 8, 48  # the C file's row widths (checked against it on import)
ROT_NONE, ROT_ONE_AXIS, ROT_TWO_AXES, ROT_THREE_AXES, ROT_VECTOR = range(5)
F_MIX, F_MATRIX, F_CHILD = 1, 2, 4
_EYE = np.eye(3)
_UNIT = {"x": 0, "y": 1, "z": 2}
if KERNEL is not None and (KERNEL.INT_WIDTH, KERNEL.DOUBLE_WIDTH) != (INT_WIDTH, DOUBLE_WIDTH):
    KERNEL = None  # a stale build of another layout: never walk a plan it would misread


@dataclass(frozen=True)
class Plan:
    """A skeleton's plan: ``ints`` ``(bodies, INT_WIDTH)``, ``consts`` ``(bodies, DOUBLE_WIDTH)``."""

    links: list[_Link]
    ints: NDArray[np.int32]
    consts: Array


_PLANS: weakref.WeakKeyDictionary[Skeleton, Plan] = weakref.WeakKeyDictionary()


def plan(skeleton: Skeleton) -> Plan:
    """The skeleton's plan, rebuilt only when its NumPy links were."""
    links = _plan(skeleton)
    cached = _PLANS.get(skeleton)
    if cached is None or cached.links is not links:
        cached = _build(links)
        _PLANS[skeleton] = cached
    return cached


def _unit(axis: Array) -> Array:
    norm = float(np.linalg.norm(axis))
    if norm == 0:
        raise ValueError("cannot rotate about a zero axis")
    return np.asarray(axis, dtype=float) / norm


def _rotation(joint: Joint) -> tuple[int, int, list[Array]]:
    """How the joint rotates: (kind, first coordinate, unit axes)."""
    t, start = joint.type, joint.dof_slice.start
    if t in ("revolute", "screw"):
        return ROT_ONE_AXIS, start, [_unit(joint.axes[0])]
    if t == "planar":
        return ROT_ONE_AXIS, start + 2, [joint.plane_axes()[2]]
    if t == "universal":
        return ROT_TWO_AXES, start, [_unit(joint.axes[0]), _unit(joint.axes[1])]
    if t == "euler":
        return ROT_THREE_AXES, start, [_EYE[_UNIT[c]] for c in joint.axis_order]
    if t in ("ball", "free"):
        return ROT_VECTOR, start, []
    return ROT_NONE, 0, []


def _translation(joint: Joint) -> tuple[int, list[Array]]:
    """How the joint translates: (first coordinate, one direction per coordinate)."""
    t, start = joint.type, joint.dof_slice.start
    if t == "prismatic":
        axis = joint.axes[0] / np.linalg.norm(joint.axes[0])
        return start, [axis]
    if t == "screw":
        axis = joint.axes[0] / np.linalg.norm(joint.axes[0])
        return start, [axis * joint.pitch / (2.0 * math.pi)]
    if t in ("translational2d", "planar"):
        a1, a2, _ = joint.plane_axes()
        return start, [a1, a2]
    if t == "translational":
        return start, list(_EYE)
    if t == "free":
        return start + 3, list(_EYE)
    return 0, []


def _build(links: list[_Link]) -> Plan:
    count = len(links)
    ints = np.zeros((count, INT_WIDTH), dtype=np.int32)
    consts = np.zeros((count, DOUBLE_WIDTH))
    parents = {link.parent for link in links}
    for index, link in enumerate(links):
        joint = link.joint
        mix = np.eye(4) if link.mix is None else link.mix
        kind, rot_dof, axes = _rotation(joint)
        move_dof, moves = _translation(joint)
        tilt = _EYE if link.tilt is None else link.tilt
        child = -joint.child_to_joint[:3, 3]
        flags = ((F_MIX if link.mix is not None else 0) | (F_MATRIX if index in parents else 0)
                 | (F_CHILD if child.any() else 0))
        ints[index, :6] = (link.parent, kind, rot_dof, len(moves), move_dof, flags)
        row = consts[index]
        row[0:4] = link.rest
        row[4:20] = mix.reshape(16)
        if kind == ROT_ONE_AXIS:
            row[20:24] = mix[:, :3] @ axes[0]
        for k, axis in enumerate(axes):
            row[24 + 3 * k:27 + 3 * k] = axis
        row[33:36] = link.offset
        for k, direction in enumerate(moves):
            row[36 + k:45:3] = tilt @ direction  # column k of the row-major T
        row[45:48] = child
    return Plan(links, ints, consts)


def run(kernel: ModuleType, skeleton_plan: Plan, coords: Array, root: Array | None,
        given: Array | None, out: Array, start: int, stop: int) -> None:
    """Poses of frames ``[start, stop)`` into ``out`` ``(frames, bodies, 7)`` (GIL released).

    ``coords`` ``(frames, dofs)`` (a broadcast row is passed as one row), ``root``
    ``(frames, 7)`` and ``given`` ``(frames, bodies - 1, 4)`` are float64 (``root``,
    ``given`` and ``out`` C-contiguous).
    """
    stride = coords.shape[1]
    if coords.strides[0] == 0:  # one row for every frame
        coords, stride = np.ascontiguousarray(coords[:1]), 0
    else:
        coords = np.ascontiguousarray(coords)
    kernel.run(skeleton_plan.ints, skeleton_plan.consts, len(skeleton_plan.links), coords,
               coords.shape[1], stride, root, given, out, start, stop)

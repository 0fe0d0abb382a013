"""The compiled IK stage: a Robot as the flat plan ``_ik_kernel.c`` walks, and the call.

The plan derives from the Robot's own batched-FK plan (``robot._Plan``): per body a row of
ints (parent, kind: no motion, one, several; its coordinate and whether it turns; its
motions) and a row of 48 doubles (one motion: ``P0, P1, P2``; none: the local transform;
several: ``before``, ``after``); per motion its coordinate, whether it turns and its unit
axis; per joint its axis's parent (0 the root pose, ``b + 1`` body ``b``), whether it turns,
its axis and anchor in that frame; per body which velocity coordinates move it. The joint
limits are read at each call (``run._speed_window`` narrows them for a block).

The extension is optional (``setup.py``): where it was not built, :data:`KERNEL` is None
and ``ik.py``'s NumPy loop does the work.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from .._accel import compiled
from .robot import Poses, Robot, State

Array = NDArray[np.float64]


#: The compiled module, or None where it was not built.
KERNEL = compiled("motionkit.retarget._ik_kernel")

BODY_INTS, BODY_DOUBLES = 8, 48  # the C file's row widths (checked against it on import)
KIND_FIXED, KIND_SINGLE, KIND_MULTI = range(3)


def use_only_if(expected: dict[str, float]) -> None:
    """Drop the kernel unless each of its constants equals ``expected``'s (the solver's
    own, from ``ik.py`` and ``lie.py``): a stale or edited build never splits the paths."""
    global KERNEL
    if KERNEL is not None and any(getattr(KERNEL, name, None) != value
                                  for name, value in expected.items()):
        KERNEL = None


use_only_if({"BODY_INTS": BODY_INTS, "BODY_DOUBLES": BODY_DOUBLES})


@dataclass(frozen=True)
class _Packed:
    """A robot's plan as the kernel reads it (see the module docstring)."""

    ints: NDArray[np.int32]
    doubles: Array
    motions: int


_PACKED: weakref.WeakKeyDictionary[Robot, _Packed] = weakref.WeakKeyDictionary()


def _pack(robot: Robot) -> _Packed:
    plan, count = robot.plan, len(robot.names)
    body_ints = np.zeros((count, BODY_INTS), dtype=np.int32)
    body_doubles = np.zeros((count, BODY_DOUBLES))
    motion_ints: list[tuple[int, int]] = []
    units: list[Array] = []
    for k, body in enumerate(plan.single):
        coordinate, turns, _ = robot.motions[body][0]
        body_ints[body, 1:4] = (KIND_SINGLE, coordinate, turns)
        body_doubles[body] = plan.terms[:, k].reshape(48)
    for k, body in enumerate(plan.fixed):
        body_ints[body, 1] = KIND_FIXED
        body_doubles[body, :16] = plan.fixed_local[k].reshape(16)
    for body in plan.multi:
        body_ints[body, 1], body_ints[body, 4:6] = KIND_MULTI, (len(units),
                                                                len(robot.motions[body]))
        body_doubles[body, :16] = plan.before[body].reshape(16)
        body_doubles[body, 16:32] = plan.after[body].reshape(16)
        for coordinate, turns, unit in robot.motions[body]:
            motion_ints.append((coordinate, turns))
            units.append(unit)
    body_ints[:, 0] = robot.parents
    joint_ints = np.stack([plan.axis_parent, robot.revolute], axis=1).astype(np.int32)
    ints = np.concatenate([body_ints.ravel(), np.array(motion_ints, dtype=np.int32).ravel(),
                           joint_ints.ravel(), robot.moved_by.astype(np.int32).ravel()])
    doubles = np.concatenate([body_doubles.ravel(), np.array(units).ravel(),
                              np.concatenate([plan.axis, plan.anchor], axis=1).ravel()])
    return _Packed(ints.astype(np.int32), doubles, len(units))


def packed(robot: Robot) -> _Packed:
    """The robot's plan (made once per robot)."""
    cached = _PACKED.get(robot)
    if cached is None:
        cached = _pack(robot)
        _PACKED[robot] = cached
    return cached


def fits(robot: Robot, tasks: int) -> bool:
    """Whether the kernel is built and takes this robot and this many tasks."""
    return KERNEL is not None and len(robot.names) <= KERNEL.MAX_BODIES \
        and 0 < robot.nv <= KERNEL.MAX_NV and tasks <= KERNEL.MAX_TASKS


def solve(robot: Robot, state: State, bodies: NDArray[np.int32], weights: Array, targets: Array,
          rule: tuple[float, int, bool], posture: tuple[Array, float] | None) -> tuple[State, int]:
    """One stage by the kernel (``fits`` must hold): tasks ``bodies`` ``(T,)`` int32,
    ``weights`` ``(T, 6)``, ``targets`` ``(T, 4, 4)``; ``rule`` (min drop, max repeats,
    adaptive?); ``posture`` (target ``(joints,)``, weight). The state it ends in (its poses
    filled) and the steps it took."""
    assert KERNEL is not None
    plan = packed(robot)
    joints, count = len(robot.joint_names), len(robot.names)
    target = None if posture is None else _doubles(posture[0]).reshape(joints)
    pos, rot, q = np.empty(3), np.empty((3, 3)), np.empty(joints)
    out_bodies, axes, anchors = np.empty((count, 4, 4)), np.empty((joints, 3)), \
        np.empty((joints, 3))
    steps = KERNEL.solve(
        plan.ints, plan.doubles, count, joints, plan.motions, robot.floating,
        np.ascontiguousarray(bodies, dtype=np.int32), _doubles(weights), _doubles(targets),
        len(bodies), _doubles(robot.lower), _doubles(robot.upper), target,
        0.0 if posture is None else float(posture[1]), float(rule[0]), int(rule[1]), rule[2],
        _doubles(state.root_pos), _doubles(state.root_rot), _doubles(state.q), pos, rot, q,
        out_bodies, axes, anchors)
    return State(pos, rot, q, Poses(out_bodies, axes, anchors)), int(steps)


def _doubles(array: Array) -> Array:
    return np.ascontiguousarray(array, dtype=np.float64)

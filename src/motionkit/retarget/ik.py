"""Inverse kinematics as GMR runs it (mink's weighted frame tasks): per stage, damped steps of
a box-bounded least-squares problem until the error stops falling.

One step, for tasks ``i`` with body pose ``T_b`` and target ``T_t``: error
``e_i = log6(T_b⁻¹ T_t)``, Jacobian ``J_i = −jlog6(T_t⁻¹ T_b) · J_body`` (the body-frame
Jacobian), weights ``W_i = diag(p, p, p, r, r, r)``; minimise ``½ Δᵀ H Δ + cᵀ Δ`` with
``H = Σ (W_i J_i)ᵀ W_i J_i + (damping + Σ ‖W_i e_i‖²) I`` and ``c = Σ (W_i J_i)ᵀ W_i e_i``,
every joint within ``0.95 ×`` its distance to its limits. A stage takes one step, then more
while the unweighted error norm falls by more than 0.001, at most 10 more.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from .lie import jlog6, log6
from .maps import Task
from .robot import Robot, State

Array = NDArray[np.float64]

#: GMR's solver settings (``motion_retarget.py``): damping, joint-limit gain, stopping rule.
DAMPING = 0.5
LIMIT_GAIN = 0.95
MIN_DROP = 0.001
MAX_REPEATS = 10


@dataclass(frozen=True)
class Goal:
    """A task with its target pose this frame."""

    body: int
    target: Array  # 4×4 world pose
    weights: Array  # (6,): p, p, p, r, r, r


def goals(robot: Robot, tasks: tuple[Task, ...], targets: dict[str, Array]) -> list[Goal]:
    """The stage's tasks with this frame's target poses."""
    index = {name: k for k, name in enumerate(robot.names)}
    return [Goal(index[task.robot], targets[task.source],
                 np.repeat([task.position_weight, task.rotation_weight], 3)) for task in tasks]


def errors(robot: Robot, state: State, stage: list[Goal]) -> Array:
    """Every task's 6-D error, stacked (unweighted)."""
    bodies = robot.poses(state).bodies
    return np.concatenate([log6(_relative(bodies[goal.body], goal.target)) for goal in stage])


def _relative(a: Array, b: Array) -> Array:
    """``a⁻¹ · b`` for rigid transforms (the inverse in closed form)."""
    out = np.empty((4, 4))
    turn = a[:3, :3].T
    out[:3, :3] = turn @ b[:3, :3]
    out[:3, 3] = turn @ (b[:3, 3] - a[:3, 3])
    out[3] = (0.0, 0.0, 0.0, 1.0)
    return out


def step(robot: Robot, state: State, stage: list[Goal]) -> State:
    """One damped, limit-bounded step toward the stage's targets."""
    poses = robot.poses(state)
    bodies = poses.bodies
    size = robot.nv
    hessian, gradient, damping = np.zeros((size, size)), np.zeros(size), DAMPING
    worlds = robot.jacobians([goal.body for goal in stage], poses)
    for goal, world in zip(stage, worlds, strict=True):
        pose = bodies[goal.body]
        error = log6(_relative(pose, goal.target))
        turn = pose[:3, :3].T
        local = np.vstack([turn @ world[:3], turn @ world[3:]])
        jacobian = -jlog6(_relative(goal.target, pose)) @ local
        weighted, werror = goal.weights[:, None] * jacobian, goal.weights * error
        hessian += weighted.T @ weighted
        gradient += weighted.T @ werror
        damping += float(werror @ werror)
    hessian[np.diag_indices(size)] += damping
    low, high = _bounds(robot, state)
    return robot.integrate(state, box_qp(hessian, gradient, low, high))


def _bounds(robot: Robot, state: State) -> tuple[Array, Array]:
    shift = 6 if robot.floating else 0
    low, high = np.full(robot.nv, -np.inf), np.full(robot.nv, np.inf)
    with np.errstate(invalid="ignore"):  # unlimited joints: inf - q
        low[shift:] = LIMIT_GAIN * (robot.lower - state.q)
        high[shift:] = LIMIT_GAIN * (robot.upper - state.q)
    return low, high


def solve_stage(robot: Robot, state: State, stage: list[Goal], min_drop: float = MIN_DROP,
                max_repeats: int = MAX_REPEATS) -> tuple[State, int]:
    """GMR's stage loop: the state it ends in and the steps it took (1 to 11 with GMR's
    settings)."""
    before = float(np.linalg.norm(errors(robot, state, stage)))
    state = step(robot, state, stage)
    after = float(np.linalg.norm(errors(robot, state, stage)))
    steps = 1
    while before - after > min_drop and steps <= max_repeats:
        before = after
        state = step(robot, state, stage)
        after = float(np.linalg.norm(errors(robot, state, stage)))
        steps += 1
    return state, steps


def box_qp(hessian: Array, gradient: Array, low: Array, high: Array) -> Array:
    """``argmin ½ xᵀHx + cᵀx`` with ``low ≤ x ≤ high`` (H positive definite; 0 feasible):
    a primal active-set method from x = 0, exact at its end."""
    size = len(gradient)
    x: Array = np.zeros(size)
    bound = np.zeros(size, dtype=np.int8)  # -1 at low, +1 at high, 0 free
    for _ in range(4 * size + 10):
        free = bound == 0
        target = x.copy()
        if free.any():
            rhs = -(gradient[free] + hessian[np.ix_(free, ~free)] @ x[~free])
            target[free] = np.linalg.solve(hessian[np.ix_(free, free)], rhs)
        move = target - x
        with np.errstate(divide="ignore", invalid="ignore"):
            room = np.where(move > 0, (high - x) / move, np.where(move < 0, (low - x) / move,
                                                                   np.inf))
        room[~free] = np.inf
        blocking = int(np.argmin(room))
        if room[blocking] < 1.0:
            x += room[blocking] * move
            x[blocking] = high[blocking] if move[blocking] > 0 else low[blocking]
            bound[blocking] = 1 if move[blocking] > 0 else -1
            continue
        x = np.asarray(target, dtype=np.float64)
        pull: Array = hessian @ x + gradient  # at a bound, the multiplier is ± this
        wrong = np.where(bound < 0, -pull, np.where(bound > 0, pull, 0.0))
        worst = int(np.argmax(wrong))
        if wrong[worst] <= 1e-14 * (1.0 + np.abs(gradient).max()):
            return x
        bound[worst] = 0
    return x

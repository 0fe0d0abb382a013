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

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from .lie import hat_many, jlog6_of_twist, log6_many
from .maps import Task
from .robot import Poses, Robot, State

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
    tasks = _Tasks.of([stage])
    return _errors_many(robot.poses(state).bodies[None], tasks.bodies, tasks.targets).ravel()


def step(robot: Robot, state: State, stage: list[Goal]) -> State:
    """One damped, limit-bounded step toward the stage's targets."""
    tasks = _Tasks.of([stage])
    poses = robot.poses(state)
    batch = _Batch(state.root_pos[None], state.root_rot[None], state.q[None],
                   poses.bodies[None], poses.axes[None], poses.anchors[None])
    error = _errors_many(batch.bodies, tasks.bodies, tasks.targets)
    pos, rot, q = _step_many(robot, batch, error, tasks)
    return State(pos[0], rot[0], q[0])


@dataclass(frozen=True)
class Rule:
    """How a stage steps and when it stops: one step, then more while the error norm falls
    by more than ``min_drop``, at most ``max_repeats`` more.

    GMR's rule: the norm of the unweighted errors (which a step may raise while it lowers
    what the step minimises), every step taken, damped by ``DAMPING`` plus mink's
    Levenberg–Marquardt term ``Σ‖W_i e_i‖²`` (steps crawl while targets stay out of reach).
    ``adaptive``: the weighted errors' norm, and a damping that shrinks (÷ 3, down to
    ``DAMPING``) after each step that lowers it and grows (× 4) on a step that would not,
    which is not taken. Both paths end at the same least-squares minimum where they end."""

    min_drop: float = MIN_DROP
    max_repeats: int = MAX_REPEATS
    adaptive: bool = False


#: GMR's stage loop.
GMR = Rule()
#: Until converged: a stage ends where a step lowers the weighted errors by less than 1e-7,
#: or no damping up to ``MAX_DAMPING`` finds a lower point (or after 200 steps).
CONVERGED = Rule(1e-7, 200, adaptive=True)
MAX_DAMPING = 1e8


@dataclass(frozen=True)
class Posture:
    """A pull of the joints toward ``target`` (clips, joints): the term ``½ w ‖q − target‖²``
    in each step's objective (smoothing: the target is where the joints would be at
    constant speed). With an adaptive rule it counts in the norm that decides the stop."""

    target: Array
    weight: float

    def take(self, rows: NDArray[np.intp]) -> Posture:
        return Posture(self.target[rows], self.weight)


def solve_stage(robot: Robot, state: State, stage: list[Goal], rule: Rule = GMR,
                posture: Posture | None = None) -> tuple[State, int]:
    """A stage's loop: the state it ends in and the steps it took (1 to 11 with GMR's
    rule; tried steps, taken or not, with an adaptive one)."""
    return solve_stage_many(robot, [state], [stage], rule, posture)[0]


def solve_stage_many(robot: Robot, states: Sequence[State], stages: Sequence[list[Goal]],
                     rule: Rule = GMR,
                     posture: Posture | None = None) -> list[tuple[State, int]]:
    """:func:`solve_stage` of independent problems (one per clip: ``states[k]`` toward
    ``stages[k]``), all the clips that have not stopped stepped together; each stops by its
    own rule and ends where it would alone, in as many steps. The stages must drive the same
    bodies with the same weights (their targets differ)."""
    tasks = _Tasks.of(stages)
    batch = _Batch.of(robot, states)
    error = _errors_many(batch.bodies, tasks.bodies, tasks.targets)
    scale = tasks.weights if rule.adaptive else np.ones_like(tasks.weights)

    def norms(error: Array, q: Array, rows: NDArray[np.intp] | None = None) -> Array:
        out = _norms(scale * error)
        if posture is None or not rule.adaptive:
            return out
        pull = q - (posture.target if rows is None else posture.target[rows])
        total: Array = np.sqrt(out**2 + posture.weight * np.einsum("bi,bi->b", pull, pull))
        return total

    before = norms(error, batch.q)
    steps = np.zeros(len(states), dtype=np.int64)
    damping = np.full(len(states), DAMPING)
    active = np.arange(len(states))
    while len(active):
        everyone = len(active) == len(states)
        sub = batch if everyone else batch.take(active)
        pos, rot, q = _step_many(robot, sub, error if everyone else error[active],
                                 tasks if everyone else tasks.take(active),
                                 damping[active] if rule.adaptive else None,
                                 None if posture is None else posture.take(active))
        moved = _Batch(pos, rot, q, *robot.poses_many(pos, rot, q))
        new_error = _errors_many(moved.bodies, tasks.bodies, tasks.targets[active])
        after = norms(new_error, q, active)
        steps[active] += 1
        taken = after < before[active] if rule.adaptive else np.ones(len(active), dtype=bool)
        if everyone and taken.all():
            batch, error = moved, new_error
        else:
            batch.put(active[taken], moved.take(np.flatnonzero(taken)))
            error[active[taken]] = new_error[taken]
        going = np.where(taken, before[active] - after > rule.min_drop,
                         damping[active] < MAX_DAMPING)
        keep = going & (steps[active] <= rule.max_repeats)
        before[active[taken]] = after[taken]
        damping[active] = np.where(taken, np.maximum(damping[active] / 3, DAMPING),
                                   damping[active] * 4)
        active = active[keep]
    return [(batch.state(k), int(steps[k])) for k in range(len(states))]


@dataclass
class _Batch:
    """States of several clips, stacked, with their poses (:meth:`Robot.poses_many`)."""

    root_pos: Array
    root_rot: Array
    q: Array
    bodies: Array
    axes: Array
    anchors: Array

    @classmethod
    def of(cls, robot: Robot, states: Sequence[State]) -> _Batch:
        pos = np.array([s.root_pos for s in states])
        rot, q = np.array([s.root_rot for s in states]), np.array([s.q for s in states])
        known = [s.poses for s in states]
        if all(p is not None for p in known):  # made by poses_many: the same numbers
            return cls(pos, rot, q, np.array([p.bodies for p in known if p is not None]),
                       np.array([p.axes for p in known if p is not None]),
                       np.array([p.anchors for p in known if p is not None]))
        return cls(pos, rot, q, *robot.poses_many(pos, rot, q))

    def take(self, rows: NDArray[np.intp]) -> _Batch:
        return _Batch(self.root_pos[rows], self.root_rot[rows], self.q[rows], self.bodies[rows],
                      self.axes[rows], self.anchors[rows])

    def put(self, rows: NDArray[np.intp], other: _Batch) -> None:
        self.root_pos[rows], self.root_rot[rows], self.q[rows] = \
            other.root_pos, other.root_rot, other.q
        self.bodies[rows], self.axes[rows], self.anchors[rows] = \
            other.bodies, other.axes, other.anchors

    def state(self, row: int) -> State:
        return State(self.root_pos[row].copy(), self.root_rot[row].copy(), self.q[row].copy(),
                     Poses(self.bodies[row].copy(), self.axes[row].copy(),
                           self.anchors[row].copy()))


@dataclass(frozen=True)
class _Tasks:
    """A stage's tasks over a batch: bodies ``(T,)``, weights ``(T, 6)``, targets
    ``(B, T, 4, 4)``."""

    bodies: NDArray[np.intp]
    weights: Array
    targets: Array

    @classmethod
    def of(cls, stages: Sequence[list[Goal]]) -> _Tasks:
        first = stages[0]
        bodies = np.array([goal.body for goal in first], dtype=np.intp)
        weights = np.array([goal.weights for goal in first]).reshape(-1, 6)
        for stage in stages[1:]:
            if [g.body for g in stage] != list(bodies) or \
                    not np.array_equal(np.reshape([g.weights for g in stage], (-1, 6)), weights):
                raise ValueError("solve_stage_many: every stage must drive the same bodies "
                                 "with the same weights")
        targets = np.array([[goal.target for goal in stage] for stage in stages])
        return cls(bodies, weights, targets.reshape(len(stages), len(bodies), 4, 4))

    def take(self, rows: NDArray[np.intp]) -> _Tasks:
        return _Tasks(self.bodies, self.weights, self.targets[rows])


def _norms(error: Array) -> Array:
    flat = error.reshape(len(error), -1)
    out: Array = np.sqrt(np.einsum("bi,bi->b", flat, flat))
    return out


def _errors_many(bodies: Array, tasks: NDArray[np.intp], targets: Array) -> Array:
    """``(B, T, 6)``: ``log6(T_b⁻¹ T_t)`` per clip and task."""
    pose = bodies[:, tasks]
    turn = pose[..., :3, :3].swapaxes(-1, -2)
    relative = np.zeros(targets.shape)
    relative[..., :3, :3] = turn @ targets[..., :3, :3]
    relative[..., :3, 3] = (turn @ (targets[..., :3, 3] - pose[..., :3, 3])[..., None])[..., 0]
    relative[..., 3, 3] = 1.0
    return log6_many(relative)


def _step_many(robot: Robot, batch: _Batch, error: Array, tasks: _Tasks,
               damping: Array | None = None,
               posture: Posture | None = None) -> tuple[Array, Array, Array]:
    """One step of every clip of the batch (``error``: its ``_errors_many``), damped by
    ``damping`` per clip (None: GMR's, ``DAMPING + Σ‖W_i e_i‖²``), the joints pulled by
    ``posture``."""
    count, size = len(error), robot.nv
    pose = batch.bodies[:, tasks.bodies]
    inverse = pose[..., :3, :3].swapaxes(-1, -2)  # world → body
    # J = −jlog6(T_t⁻¹ T_b) · blockdiag(inverse, inverse) · J_world, weighted per row, where
    # J_world's columns are the twists S (v, ω) moved to the body's origin p: (v + ω × p, ω)
    mix = (jlog6_of_twist(-error).reshape(count, -1, 12, 3) @ inverse).reshape(count, -1, 6, 6)
    mix *= -tasks.weights[:, :, None]
    mix[..., 3:] -= mix[..., :3] @ hat_many(pose[..., :3, 3])
    twists = robot.motion_axes(batch.bodies, batch.axes, batch.anchors)
    weighted = ((mix @ twists[:, None]) * robot.moved_by[tasks.bodies][:, None, :]) \
        .reshape(count, -1, size)
    werror = (tasks.weights * error).reshape(count, -1)
    across = weighted.swapaxes(1, 2)
    hessian = across @ weighted
    gradient = (across @ werror[..., None])[..., 0]
    diagonal = np.arange(size)
    if damping is None:
        damping = DAMPING + np.einsum("bi,bi->b", werror, werror)
    hessian[:, diagonal, diagonal] += damping[:, None]
    shift = size - len(robot.joint_names)
    if posture is not None:
        hessian[:, diagonal[shift:], diagonal[shift:]] += posture.weight
        gradient[:, shift:] += posture.weight * (batch.q - posture.target)
    low, high = np.full((count, size), -np.inf), np.full((count, size), np.inf)
    with np.errstate(invalid="ignore"):  # unlimited joints: inf - q
        low[:, shift:] = LIMIT_GAIN * (robot.lower - batch.q)
        high[:, shift:] = LIMIT_GAIN * (robot.upper - batch.q)
    return robot.integrate_many(batch.root_pos, batch.root_rot, batch.q,
                                _box_qp_many(hessian, gradient, low, high))


def _box_qp_many(hessian: Array, gradient: Array, low: Array, high: Array) -> Array:
    """:func:`box_qp` of each row: where the free solution is inside the box it is the
    answer (box_qp's first iteration, the same numbers), else box_qp."""
    target: Array = np.asarray(np.linalg.solve(hessian, -gradient[..., None])[..., 0], np.float64)
    for row in np.flatnonzero(((target < low) | (target > high)).any(axis=1)):
        target[row] = box_qp(hessian[row], gradient[row], low[row], high[row])
    return target


def box_qp(hessian: Array, gradient: Array, low: Array, high: Array) -> Array:
    """``argmin ½ xᵀHx + cᵀx`` with ``low ≤ x ≤ high`` (H positive definite): a primal
    active-set method from the point of the box nearest 0 (0 itself where the joints are
    within their limits; a joint outside its range starts at the bound that moves it back),
    exact at its end."""
    size = len(gradient)
    x: Array = np.clip(np.zeros(size), low, high)
    bound = np.where(low > 0, -1, np.where(high < 0, 1, 0)).astype(np.int8)  # -1 low, +1 high
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

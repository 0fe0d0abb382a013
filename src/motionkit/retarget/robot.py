"""A robot as the IK sees it: a floating (or fixed) root and joints made of one-axis motions,
with world body poses and MuJoCo-style Jacobians.

The state is MuJoCo's: the root's world position and orientation (a free joint's qpos), then
one coordinate per joint axis in the skeleton's order. Velocities are MuJoCo's too: the
root's linear velocity in world axes, its angular velocity in its own axes, then the joint
speeds, so a Jacobian's columns are those of ``mj_jacBody``. A joint of several axes (euler,
universal, translational) is its axes in sequence at the joint frame, as the neutral model
composes them (``"xyz"`` = Rx·Ry·Rz).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from ..errors import ConversionError
from ..model.skeleton import Joint, Skeleton
from .lie import cross_many, exp3_many, hat, hat_many

Array = NDArray[np.float64]
_UNIT = {"x": (1.0, 0.0, 0.0), "y": (0.0, 1.0, 0.0), "z": (0.0, 0.0, 1.0)}


@dataclass
class Poses:
    """World poses of the bodies ``(bodies, 4, 4)``, and of every joint axis: its world
    direction and a point on it ``(joints, 3)`` each."""

    bodies: Array
    axes: Array
    anchors: Array


@dataclass
class State:
    """Root pose (world) and joint coordinates (and, once asked for, their world poses)."""

    root_pos: Array
    root_rot: Array  # 3×3
    q: Array
    poses: Poses | None = None

    def copy(self) -> State:
        return State(self.root_pos.copy(), self.root_rot.copy(), self.q.copy())


@dataclass(eq=False)
class Robot:
    """The kinematic tree of a Skeleton whose joints the IK can move."""

    names: list[str]
    parents: NDArray[np.intp]
    #: per body: parent body frame → joint frame, and joint frame → body frame
    before: Array
    after: Array
    #: per body: its axes, as (coordinate, revolute?, unit axis in the joint frame)
    motions: list[list[tuple[int, bool, Array]]]
    lower: Array
    upper: Array
    joint_names: list[str]
    floating: bool
    rest: State
    #: (bodies, nv): whether a velocity coordinate moves the body (the root's always)
    moved_by: NDArray[np.bool_] = field(init=False)
    #: (bodies, joints): whether the joint moves the body (it is on the body's chain)
    moves: NDArray[np.bool_] = field(init=False)
    revolute: NDArray[np.bool_] = field(init=False)
    plan: _Plan = field(init=False)
    #: body name → its index
    index: dict[str, int] = field(init=False)

    def __post_init__(self) -> None:
        self.index = {name: k for k, name in enumerate(self.names)}
        self.moves = np.zeros((len(self.names), len(self.joint_names)), dtype=bool)
        self.revolute = np.zeros(len(self.joint_names), dtype=bool)
        for body in range(len(self.names)):
            for coordinate, turns, _ in self.motions[body]:
                self.revolute[coordinate] = turns
            chain = body
            while chain >= 0:
                for coordinate, _, _ in self.motions[chain]:
                    self.moves[body, coordinate] = True
                chain = self.parents[chain]
        self.plan = _Plan.of(self)
        self.moved_by = np.concatenate([np.ones((len(self.names), self.nv - len(self.revolute)),
                                                dtype=bool), self.moves], axis=1)

    @classmethod
    def of(cls, skeleton: Skeleton) -> Robot:
        """The robot of a Skeleton: a free root (or a fixed base), then revolute, prismatic,
        universal, euler, translational and welded joints (a ConversionError names any
        other joint)."""
        bodies = skeleton.bodies
        count = len(bodies)
        before, after = np.empty((count, 4, 4)), np.empty((count, 4, 4))
        motions: list[list[tuple[int, bool, Array]]] = []
        lower: list[float] = []
        upper: list[float] = []
        names: list[str] = []
        for index, body in enumerate(bodies):
            joint = body.joint
            before[index], after[index] = joint.parent_to_joint, np.linalg.inv(joint.child_to_joint)
            if index == 0 and joint.type in ("free", "weld"):
                if joint.type == "free":  # the state is the body's own pose (MuJoCo's qpos)
                    after[0] = np.eye(4)
                motions.append([])
                continue
            axes = _axes(joint, body.name, body.parent)
            motions.append([(len(names) + k, turns, axis) for k, (turns, axis) in enumerate(axes)])
            for dof in joint.dofs[:len(axes)]:
                names.append(dof.name)
                lower.append(dof.lower)
                upper.append(dof.upper)
        root = bodies[0].joint
        # the root state: a free body's own pose at rest; else the root joint's frame
        start = root.parent_to_joint @ np.linalg.inv(root.child_to_joint) \
            if root.type == "free" else root.parent_to_joint
        rest = State(start[:3, 3].copy(), start[:3, :3].copy(), np.zeros(len(names)))
        return cls([b.name for b in bodies], np.array([b.parent for b in bodies], dtype=np.intp),
                   before, after, motions, np.array(lower), np.array(upper), names,
                   bodies[0].joint.type == "free", rest)

    @property
    def nv(self) -> int:
        """Velocity coordinates: 6 for a floating root, then one per joint axis."""
        return (6 if self.floating else 0) + len(self.joint_names)

    def poses(self, state: State) -> Poses:
        """World poses of every body and joint axis (kept in the state: made once)."""
        if state.poses is None:
            bodies, axes, anchors = self.poses_many(state.root_pos[None], state.root_rot[None],
                                                    state.q[None])
            state.poses = Poses(bodies[0], axes[0], anchors[0])
        return state.poses

    def poses_many(self, root_pos: Array, root_rot: Array, q: Array) -> tuple[Array, Array, Array]:
        """:meth:`poses` of a batch of states ``(B, 3)``, ``(B, 3, 3)``, ``(B, joints)``:
        bodies ``(B, bodies, 4, 4)``, axes and anchors ``(B, joints, 3)``; tree level by tree
        level, each one batched product."""
        plan, count = self.plan, len(q)
        root = np.zeros((count, 4, 4))
        root[:, :3, :3], root[:, :3, 3], root[:, 3, 3] = root_rot, root_pos, 1.0
        local, axis, anchor = plan.locals(self, q)
        bodies = np.empty((count, len(self.names), 4, 4))
        bodies[:, 0] = root @ local[:, 0]
        for members, parents in plan.levels:
            bodies[:, members] = bodies[:, parents] @ local[:, members]
        parent = np.concatenate([root[:, None], bodies], axis=1)[:, plan.axis_parent]
        turn = parent[..., :3, :3]
        axes = (turn @ axis[..., None])[..., 0]
        anchors = (turn @ anchor[..., None])[..., 0] + parent[..., :3, 3]
        return bodies, axes, anchors

    def jacobians(self, targets: list[int], poses: Poses) -> Array:
        """``(len(targets), 6, nv)``: per body, the world linear velocity of its origin, then
        its world angular velocity, per velocity coordinate (MuJoCo's ``mj_jacBody``)."""
        out: Array = self.jacobians_many(np.asarray(targets, dtype=np.intp), poses.bodies[None],
                                         poses.axes[None], poses.anchors[None])[0]
        return out

    def jacobians_many(self, targets: NDArray[np.intp], bodies: Array, axes: Array,
                       anchors: Array) -> Array:
        """:meth:`jacobians` of a batch ``(B, len(targets), 6, nv)`` from
        :meth:`poses_many`'s arrays."""
        shift = 6 if self.floating else 0
        count = len(bodies)
        out = np.zeros((count, len(targets), 6, self.nv))
        point = bodies[:, targets][..., :3, 3]  # (B, T, 3)
        ax = axes[:, None]
        linear = cross_many(ax, point[:, :, None, :] - anchors[:, None])
        if not self.revolute.all():
            linear = np.where(self.revolute[:, None], linear, ax)
        out[:, :, :3, shift:] = (linear * self.moves[targets][..., None]).swapaxes(-1, -2)
        out[:, :, 3:, shift:] = (ax * (self.moves & self.revolute)[targets][..., None]) \
            .swapaxes(-1, -2)
        if self.floating:
            turn = bodies[:, 0, :3, :3]  # the root's angular velocity: its own axes
            out[:, :, :3, :3] = np.eye(3)
            offset = point - bodies[:, None, 0, :3, 3]
            out[:, :, :3, 3:6] = cross_many(turn.swapaxes(-1, -2)[:, None],
                                            offset[:, :, None, :]).swapaxes(-1, -2)
            out[:, :, 3:, 3:6] = turn[:, None]
        return out

    def motion_axes(self, bodies: Array, axes: Array, anchors: Array) -> Array:
        """``(B, 6, nv)``: every velocity coordinate's world twist about the world origin
        (linear part first): a point ``p`` moved only by the bodies it moves has velocity
        ``v + ω × p`` and angular velocity ``ω``; :meth:`jacobians_many` masked per body."""
        count, shift = len(bodies), 6 if self.floating else 0
        out = np.zeros((count, 6, self.nv))
        linear = np.where(self.revolute[:, None], cross_many(anchors, axes), axes)
        out[:, :3, shift:] = linear.swapaxes(-1, -2)
        out[:, 3:, shift:] = (axes * self.revolute[:, None]).swapaxes(-1, -2)
        if self.floating:
            turn = bodies[:, 0, :3, :3]
            out[:, :3, :3] = np.eye(3)
            out[:, :3, 3:6] = hat_many(bodies[:, 0, :3, 3]) @ turn
            out[:, 3:, 3:6] = turn
        return out

    def integrate_many(self, root_pos: Array, root_rot: Array, q: Array,
                       step: Array) -> tuple[Array, Array, Array]:
        """:meth:`integrate` over a batch (``step`` ``(B, nv)``)."""
        if not self.floating:
            return root_pos.copy(), root_rot.copy(), q + step
        u, _, vt = np.linalg.svd(root_rot @ exp3_many(step[:, 3:6]))
        return root_pos + step[:, :3], u @ vt, q + step[:, 6:]


def _axes(joint: Joint, body: str, parent: int) -> list[tuple[bool, Array]]:
    """A joint's one-axis motions in order: (revolute?, unit axis in the joint frame)."""
    kind = joint.type
    if kind in ("revolute", "prismatic"):
        return [(kind == "revolute", joint.axes[0] / np.linalg.norm(joint.axes[0]))]
    if kind == "universal":
        return [(True, axis / np.linalg.norm(axis)) for axis in joint.axes[:2]]
    if kind == "euler":
        return [(True, np.array(_UNIT[letter])) for letter in joint.axis_order]
    if kind == "translational":
        return [(False, np.array(_UNIT[letter])) for letter in "xyz"]
    if kind == "weld" and parent >= 0:
        return []
    raise ConversionError(f"retargeting moves free roots and revolute, prismatic, universal, "
                          f"euler and translational joints; body {body!r} has a {kind} joint")




@dataclass(frozen=True)
class _Plan:
    """What the batched FK precomputes. A body of one motion (a hinge or a slide) has
    ``local = P0 + s·P1 + c·P2`` (``before · motion · after`` expanded: s = sin q,
    c = 1 − cos q for a hinge, s = q, c = 0 for a slide) and its axis frame is ``before``; a
    body of several motions multiplies them out. ``axis_parent`` indexes [root pose, bodies]."""

    levels: list[tuple[NDArray[np.intp], NDArray[np.intp]]]
    before: Array  # the root's is the identity (its pose, then its motions)
    after: Array
    single: NDArray[np.intp]  # bodies of one motion
    single_coord: NDArray[np.intp]
    single_turns: NDArray[np.bool_]
    terms: Array  # (3, len(single), 4, 4): P0, P1, P2
    fixed: NDArray[np.intp]  # bodies of no motion, and their constant local transforms
    fixed_local: Array
    multi: list[int]  # bodies of several motions
    axis_parent: NDArray[np.intp]
    axis: Array  # (joints, 3): each axis in its parent body's frame (one-motion bodies)
    anchor: Array  # (joints, 3): its axis frame's origin there

    @classmethod
    def of(cls, robot: Robot) -> _Plan:
        count, joints = len(robot.names), len(robot.joint_names)
        before, after = robot.before.copy(), robot.after.copy()
        before[0] = np.eye(4)  # the root state is the root joint's frame (a free body's pose)
        depth = np.zeros(count, dtype=np.intp)
        for body in range(1, count):
            depth[body] = depth[robot.parents[body]] + 1
        levels = [(np.flatnonzero(depth == d), robot.parents[depth == d])
                  for d in range(1, int(depth.max(initial=0)) + 1)]
        single = [b for b in range(count) if len(robot.motions[b]) == 1]
        terms = np.zeros((3, len(single), 4, 4))
        axis, anchor = np.zeros((joints, 3)), np.zeros((joints, 3))
        axis_parent = np.zeros(joints, dtype=np.intp)
        for body in range(count):
            for coordinate, _, unit in robot.motions[body]:
                axis[coordinate], anchor[coordinate] = before[body][:3, :3] @ unit, \
                    before[body][:3, 3]
                axis_parent[coordinate] = robot.parents[body] + 1 if body else 0
        for k, body in enumerate(single):
            _, turns, unit = robot.motions[body][0]
            one, two = np.zeros((4, 4)), np.zeros((4, 4))
            if turns:
                one[:3, :3] = hat(unit)
                two[:3, :3] = one[:3, :3] @ one[:3, :3]
            else:
                one[:3, 3] = unit
            terms[:, k] = [before[body] @ m @ after[body] for m in (np.eye(4), one, two)]
        fixed = [b for b in range(count) if not robot.motions[b]]
        coords = [robot.motions[b][0][0] for b in single]
        return cls(levels, before, after, np.array(single, dtype=np.intp),
                   np.array(coords, dtype=np.intp), robot.revolute[coords], terms,
                   np.array(fixed, dtype=np.intp),
                   np.array([before[b] @ after[b] for b in fixed]).reshape(-1, 4, 4),
                   [b for b in range(count) if len(robot.motions[b]) > 1], axis_parent, axis,
                   anchor)

    def locals(self, robot: Robot, q: Array) -> tuple[Array, Array, Array]:
        """Per state ``(B, bodies, 4, 4)`` body transforms in their parents' frames, and the
        axes and axis-frame origins in the parent bodies' frames (``(joints, 3)`` when they
        do not depend on the state, else ``(B, joints, 3)``)."""
        count = len(q)
        local = np.empty((count, len(robot.names), 4, 4))
        if len(self.single):
            angle = q[:, self.single_coord]
            s = np.where(self.single_turns, np.sin(angle), angle)[..., None, None]
            c = np.where(self.single_turns, 1.0 - np.cos(angle), 0.0)[..., None, None]
            local[:, self.single] = self.terms[0] + s * self.terms[1] + c * self.terms[2]
        local[:, self.fixed] = self.fixed_local
        axis, anchor = self.axis, self.anchor
        if self.multi:
            axis = np.repeat(axis[None], count, axis=0)
            anchor = np.repeat(anchor[None], count, axis=0)
        for body in self.multi:
            frame = np.repeat(self.before[body][None], count, axis=0)
            for coordinate, turns, unit in robot.motions[body]:
                axis[:, coordinate], anchor[:, coordinate] = frame[:, :3, :3] @ unit, \
                    frame[:, :3, 3]
                motion = np.repeat(np.eye(4)[None], count, axis=0)
                if turns:
                    motion[:, :3, :3] = exp3_many(unit * q[:, coordinate, None])
                else:
                    motion[:, :3, 3] = unit * q[:, coordinate, None]
                frame = frame @ motion
            local[:, body] = frame @ self.after[body]
        return local, axis, anchor

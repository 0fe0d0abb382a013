"""A robot as the IK sees it: a floating (or fixed) root and one-axis joints, with world body
poses and MuJoCo-style Jacobians.

The state is MuJoCo's: the root's world position and orientation (a free joint's qpos), then
one coordinate per revolute or prismatic joint in the skeleton's order. Velocities are
MuJoCo's too: the root's linear velocity in world axes, its angular velocity in its own
axes, then the joint speeds, so a Jacobian's columns are those of ``mj_jacBody``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ..errors import ConversionError
from ..model.skeleton import Skeleton
from .lie import exp3

Array = NDArray[np.float64]
_ONE_AXIS = {"revolute": 0, "prismatic": 1}


@dataclass
class State:
    """Root pose (world) and joint coordinates (and, once asked for, their world poses)."""

    root_pos: Array
    root_rot: Array  # 3×3
    q: Array
    poses: tuple[Array, Array] | None = None

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
    kinds: list[str]  # "root", "revolute", "prismatic" or "fixed"
    axes: Array  # (bodies, 3), in the joint frame
    dof: NDArray[np.intp]  # per body: its joint coordinate, or -1
    lower: Array
    upper: Array
    joint_names: list[str]
    floating: bool
    rest: State
    #: (bodies, joints): whether the joint moves the body (it is on the body's chain)
    moves: NDArray[np.bool_] | None = None

    def __post_init__(self) -> None:
        moves = np.zeros((len(self.names), len(self.joint_names)), dtype=bool)
        for body in range(len(self.names)):
            chain = body
            while chain >= 0:
                if self.dof[chain] >= 0:
                    moves[body, self.dof[chain]] = True
                chain = self.parents[chain]
        self.moves = moves

    @classmethod
    def of(cls, skeleton: Skeleton) -> Robot:
        """The robot of a Skeleton: a free root (or a fixed base), then revolute, prismatic
        and welded joints (a ConversionError names any other joint)."""
        bodies = skeleton.bodies
        count = len(bodies)
        before, after = np.empty((count, 4, 4)), np.empty((count, 4, 4))
        kinds, axes, dof = [], np.zeros((count, 3)), np.full(count, -1, dtype=np.intp)
        lower: list[float] = []
        upper: list[float] = []
        names: list[str] = []
        floating = bodies[0].joint.type == "free"
        for index, body in enumerate(bodies):
            joint = body.joint
            before[index], after[index] = joint.parent_to_joint, np.linalg.inv(joint.child_to_joint)
            if index == 0 and joint.type in ("free", "weld"):
                kinds.append("root")
                continue
            if joint.type in _ONE_AXIS:
                kinds.append(joint.type)
                axes[index] = joint.axes[0] / np.linalg.norm(joint.axes[0])
                dof[index] = len(names)
                names.append(joint.dofs[0].name)
                lower.append(joint.dofs[0].lower)
                upper.append(joint.dofs[0].upper)
            elif joint.type == "weld" and body.parent >= 0:
                kinds.append("fixed")
            else:
                raise ConversionError(f"retargeting moves free roots and revolute and prismatic "
                                      f"joints; body {body.name!r} has a {joint.type} joint")
        start = bodies[0].joint.parent_to_joint
        rest = State(start[:3, 3].copy(), start[:3, :3].copy(), np.zeros(len(names)))
        return cls([b.name for b in bodies], np.array([b.parent for b in bodies], dtype=np.intp),
                   before, after, kinds, axes, dof, np.array(lower), np.array(upper), names,
                   floating, rest)

    @property
    def nv(self) -> int:
        """Velocity coordinates: 6 for a floating root, then one per joint."""
        return (6 if self.floating else 0) + len(self.joint_names)

    def poses(self, state: State) -> tuple[Array, Array]:
        """World poses of every body and of every joint frame, ``(bodies, 4, 4)`` each
        (kept in the state: a state's poses are made once)."""
        if state.poses is not None:
            return state.poses
        count = len(self.names)
        bodies, frames = np.empty((count, 4, 4)), np.empty((count, 4, 4))
        turns = _turns(self.axes, self.kinds, self.dof, state.q)
        for index in range(count):
            kind = self.kinds[index]
            if kind == "root":
                frames[index] = bodies[index] = _EYE4
                bodies[index][:3, :3], bodies[index][:3, 3] = state.root_rot, state.root_pos
                continue
            frame = frames[index] = bodies[self.parents[index]] @ self.before[index]
            if kind == "revolute":
                motion = _EYE4.copy()
                motion[:3, :3] = turns[index]
                frame = frame @ motion
            elif kind == "prismatic":
                motion = _EYE4.copy()
                motion[:3, 3] = self.axes[index] * state.q[self.dof[index]]
                frame = frame @ motion
            bodies[index] = frame @ self.after[index]
        state.poses = bodies, frames
        return state.poses

    def jacobians(self, targets: list[int], bodies: Array, frames: Array) -> Array:
        """``(len(targets), 6, nv)``: per body, the world linear velocity of its origin, then
        its world angular velocity, per velocity coordinate (MuJoCo's ``mj_jacBody``)."""
        assert self.moves is not None
        joints = np.flatnonzero(self.dof >= 0)
        order = self.dof[joints]
        axes = np.empty((len(self.joint_names), 3))
        anchors = np.empty((len(self.joint_names), 3))
        axes[order] = np.einsum("nij,nj->ni", frames[joints, :3, :3], self.axes[joints])
        anchors[order] = frames[joints, :3, 3]
        revolute = np.zeros(len(self.joint_names), dtype=bool)
        revolute[order] = [self.kinds[j] == "revolute" for j in joints]
        shift = 6 if self.floating else 0
        out = np.zeros((len(targets), 6, self.nv))
        for row, body in enumerate(targets):
            point = bodies[body][:3, 3]
            mask = self.moves[body]
            linear = np.where(revolute[:, None], _cross(axes, point - anchors), axes)
            out[row, :3, shift:] = (linear * mask[:, None]).T
            out[row, 3:, shift:] = (axes * (mask & revolute)[:, None]).T
            if self.floating:
                turn = bodies[0][:3, :3]  # the root's angular velocity is in its own axes
                out[row, :3, :3] = np.eye(3)
                out[row, :3, 3:6] = _cross(turn.T, point - bodies[0][:3, 3]).T
                out[row, 3:, 3:6] = turn
        return out

    def jacobian(self, body: int, bodies: Array, frames: Array) -> Array:
        """``(6, nv)`` of one body (see :meth:`jacobians`)."""
        out: Array = self.jacobians([body], bodies, frames)[0]
        return out

    def integrate(self, state: State, step: Array) -> State:
        """The state after velocity-coordinate step ``step`` (MuJoCo's ``mj_integratePos``:
        root translation in world axes, rotation in the root's own axes)."""
        out = state.copy()
        shift = 0
        if self.floating:
            out.root_pos = state.root_pos + step[:3]
            out.root_rot = _orthonormal(state.root_rot @ exp3(step[3:6]))
            shift = 6
        out.q = state.q + step[shift:]
        return out


_EYE4 = np.eye(4)


def _cross(a: Array, b: Array) -> Array:
    """Row-wise cross products of (n, 3) arrays (without np.cross's axis handling)."""
    out: Array = a[..., [1, 2, 0]] * b[..., [2, 0, 1]] - a[..., [2, 0, 1]] * b[..., [1, 2, 0]]
    return out


def _turns(axes: Array, kinds: list[str], dof: NDArray[np.intp], q: Array) -> Array:
    """Rotation matrices of every revolute joint at ``q`` (others: unused), at once."""
    angle = np.where(dof >= 0, q[np.maximum(dof, 0)] if len(q) else 0.0, 0.0)
    angle = np.where([kind == "revolute" for kind in kinds], angle, 0.0)
    x, y, z = axes[:, 0], axes[:, 1], axes[:, 2]
    sin, cos = np.sin(angle), np.cos(angle)
    one = 1.0 - cos
    return np.stack([
        np.stack([cos + x * x * one, x * y * one - z * sin, x * z * one + y * sin], -1),
        np.stack([y * x * one + z * sin, cos + y * y * one, y * z * one - x * sin], -1),
        np.stack([z * x * one - y * sin, z * y * one + x * sin, cos + z * z * one], -1)], -2)


def _orthonormal(rotation: Array) -> Array:
    """The nearest rotation (rounding drift of repeated products removed)."""
    u, _, vt = np.linalg.svd(rotation)
    out: Array = u @ vt
    return out

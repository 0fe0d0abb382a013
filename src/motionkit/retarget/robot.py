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
    """Root pose (world) and joint coordinates."""

    root_pos: Array
    root_rot: Array  # 3×3
    q: Array

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
        """World poses of every body and of every joint frame, ``(bodies, 4, 4)`` each."""
        count = len(self.names)
        bodies, frames = np.empty((count, 4, 4)), np.empty((count, 4, 4))
        for index in range(count):
            parent = self.parents[index]
            if self.kinds[index] == "root":
                frames[index] = np.eye(4)
                bodies[index] = np.eye(4)
                bodies[index][:3, :3], bodies[index][:3, 3] = state.root_rot, state.root_pos
                continue
            frame = bodies[parent] @ self.before[index]
            frames[index] = frame
            motion = np.eye(4)
            if self.kinds[index] == "revolute":
                motion[:3, :3] = exp3(self.axes[index] * state.q[self.dof[index]])
            elif self.kinds[index] == "prismatic":
                motion[:3, 3] = self.axes[index] * state.q[self.dof[index]]
            bodies[index] = frame @ motion @ self.after[index]
        return bodies, frames

    def jacobian(self, body: int, bodies: Array, frames: Array) -> Array:
        """``(6, nv)``: world linear velocity of the body's origin, then world angular
        velocity, per velocity coordinate (MuJoCo's ``mj_jacBody``)."""
        out = np.zeros((6, self.nv))
        point = bodies[body][:3, 3]
        shift = 6 if self.floating else 0
        chain = body
        while chain >= 0:
            kind = self.kinds[chain]
            if kind == "root" and self.floating:
                out[:3, :3] = np.eye(3)
                turn = bodies[chain][:3, :3]  # angular velocity in the root's axes
                arm = point - bodies[chain][:3, 3]
                out[:3, 3:6] = np.cross(turn.T, arm).T
                out[3:, 3:6] = turn
            elif kind in _ONE_AXIS:
                axis = frames[chain][:3, :3] @ self.axes[chain]
                column = shift + self.dof[chain]
                if kind == "revolute":
                    out[:3, column] = np.cross(axis, point - frames[chain][:3, 3])
                    out[3:, column] = axis
                else:
                    out[:3, column] = axis
            chain = self.parents[chain]
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


def _orthonormal(rotation: Array) -> Array:
    """The nearest rotation (rounding drift of repeated products removed)."""
    u, _, vt = np.linalg.svd(rotation)
    out: Array = u @ vt
    return out

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
from .lie import exp3

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
    #: (bodies, joints): whether the joint moves the body (it is on the body's chain)
    moves: NDArray[np.bool_] = field(init=False)
    revolute: NDArray[np.bool_] = field(init=False)

    def __post_init__(self) -> None:
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
                motions.append([])
                continue
            axes = _axes(joint, body.name, body.parent)
            motions.append([(len(names) + k, turns, axis) for k, (turns, axis) in enumerate(axes)])
            for dof in joint.dofs[:len(axes)]:
                names.append(dof.name)
                lower.append(dof.lower)
                upper.append(dof.upper)
        start = bodies[0].joint.parent_to_joint
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
        if state.poses is not None:
            return state.poses
        count = len(self.names)
        bodies = np.empty((count, 4, 4))
        axes, anchors = np.empty((len(self.joint_names), 3)), np.empty((len(self.joint_names), 3))
        for index in range(count):
            if index == 0:
                bodies[0] = _EYE4
                bodies[0][:3, :3], bodies[0][:3, 3] = state.root_rot, state.root_pos
                if not self.motions[0]:
                    continue
            frame = bodies[self.parents[index]] @ self.before[index] if index else bodies[0]
            for coordinate, turns, axis in self.motions[index]:
                axes[coordinate], anchors[coordinate] = frame[:3, :3] @ axis, frame[:3, 3]
                motion = _EYE4.copy()
                if turns:
                    motion[:3, :3] = exp3(axis * state.q[coordinate])
                else:
                    motion[:3, 3] = axis * state.q[coordinate]
                frame = frame @ motion
            bodies[index] = frame @ self.after[index] if index else frame
        state.poses = Poses(bodies, axes, anchors)
        return state.poses

    def jacobians(self, targets: list[int], poses: Poses) -> Array:
        """``(len(targets), 6, nv)``: per body, the world linear velocity of its origin, then
        its world angular velocity, per velocity coordinate (MuJoCo's ``mj_jacBody``)."""
        shift = 6 if self.floating else 0
        out = np.zeros((len(targets), 6, self.nv))
        axes, anchors = poses.axes, poses.anchors
        for row, body in enumerate(targets):
            point = poses.bodies[body][:3, 3]
            mask = self.moves[body]
            linear = np.where(self.revolute[:, None], _cross(axes, point - anchors), axes)
            out[row, :3, shift:] = (linear * mask[:, None]).T
            out[row, 3:, shift:] = (axes * (mask & self.revolute)[:, None]).T
            if self.floating:
                turn = poses.bodies[0][:3, :3]  # the root's angular velocity: its own axes
                out[row, :3, :3] = np.eye(3)
                out[row, :3, 3:6] = _cross(turn.T, point - poses.bodies[0][:3, 3]).T
                out[row, 3:, 3:6] = turn
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


_EYE4 = np.eye(4)


def _cross(a: Array, b: Array) -> Array:
    """Row-wise cross products of (n, 3) arrays (without np.cross's axis handling)."""
    out: Array = a[..., [1, 2, 0]] * b[..., [2, 0, 1]] - a[..., [2, 0, 1]] * b[..., [1, 2, 0]]
    return out


def _orthonormal(rotation: Array) -> Array:
    """The nearest rotation (rounding drift of repeated products removed)."""
    u, _, vt = np.linalg.svd(rotation)
    out: Array = u @ vt
    return out

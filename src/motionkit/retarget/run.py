"""Retarget a source motion onto a robot: targets per frame, two IK stages, frames in order
(each warm-started from the one before).

Two modes. ``like_gmr`` reproduces GMR (commit 4f9e8b7) exactly, its defects included: human
height 1.75 m, 30 fps written, frame 0 solved from the model's default pose in at most 11
steps per stage, no ground handling. The default fixes what GMR's users report: the source's
own height and frame rate, frame 0 started upright at the root target's position and
heading, every frame solved to convergence (so a clip's frames do not depend on where it
starts), and the robot's lowest point over the clip put on the ground (``ground_clearance``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ..errors import ConversionError, choices
from ..model import Motion, Timeline, Track
from ..model.skeleton import Skeleton
from ..spatial import quaternion
from . import ik
from .lie import exp3
from .maps import BodyMap, Task
from .robot import Robot, State
from .source import GMR_HUMAN_HEIGHT, measured_height, source_frames, targets

Array = NDArray[np.float64]

#: What GMR writes whatever the source (``bvh_to_robot.py``).
GMR_FPS = 30.0
#: The default mode solves every frame until a step lowers the error by less than this (or
#: this many steps): a converged frame is the same whatever the frames before it led to.
CONVERGED_DROP, CONVERGED_STEPS = 1e-9, 200


@dataclass(frozen=True)
class Options:
    """How to retarget; see the module's docstring for the two modes."""

    like_gmr: bool = False
    #: the source's height in metres (None: GMR's 1.75 m, or measured in the default mode)
    height: float | None = None
    #: the robot's lowest point over the clip at this height (None: no shift; default mode)
    ground_clearance: float | None = 0.0
    #: hold the root at the model's pose (an upper body on a fixed stand, a fixed-base arm)
    lock_base: bool = False
    #: the most any joint may move per second between output frames (rad/s, m/s)
    max_joint_speed: float | None = None

    def __post_init__(self) -> None:
        if self.height is not None and not (math.isfinite(self.height) and self.height > 0):
            raise ConversionError(f"the source's height must be a positive number, not "
                                  f"{self.height}")
        if self.ground_clearance is not None and not math.isfinite(self.ground_clearance):
            raise ConversionError("the ground clearance must be a finite number")
        if self.max_joint_speed is not None and not (math.isfinite(self.max_joint_speed)
                                                     and self.max_joint_speed > 0):
            raise ConversionError("the joint speed limit must be a positive number")


@dataclass
class Retargeted:
    """The robot motion, and how it was reached."""

    motion: Motion
    steps: NDArray[np.int64]  # (frames, stages)
    #: per frame and position task of the last stage: distance from body to target (m)
    position_errors: Array
    tracked: list[str]  # the robot bodies of those tasks
    height: float
    ground_shift: float


def retarget(source: Motion, robot_skeleton: Skeleton, body_map: BodyMap, *,
             rename: dict[str, str] | None = None, fix: dict[str, Array] | None = None,
             options: Options = Options(),
             progress: Callable[[Iterable[int]], Iterable[int]] | None = None) -> Retargeted:
    """``source`` (a motion with its skeleton) as a motion of ``robot_skeleton``."""
    if source.skeleton is None:
        raise ConversionError("retargeting needs the source's skeleton (for a PARC or MimicKit "
                              "motion give its character)")
    robot = Robot.of(robot_skeleton)
    _check_bodies(robot, body_map)
    if options.lock_base:
        robot = dataclasses.replace(robot, floating=False)
    else:
        _check_map(robot, body_map)
    frames = source_frames(source.skeleton, source, rename)
    if body_map.convention == "gmr-bvh" and source.meta.get("source_format") != "bvh":
        raise ConversionError("a GMR ik_config for BVH holds offsets for GMR's BVH frames: "
                              "the source must be a BVH (for a robot source, map by name)")
    if len(frames.positions) == 0:
        raise ConversionError("the source has no frames")
    height = options.height or (GMR_HUMAN_HEIGHT if options.like_gmr else 1.0
                                if body_map.height_assumption is None else
                                measured_height(source.skeleton, rename))
    names, poses = targets(frames, body_map, height, fix)
    state = robot.rest.copy()
    if not options.like_gmr:
        state = _start_at_root(robot, body_map, names, poses[0], state)
    fps = GMR_FPS if options.like_gmr else frames.fps
    solved = _Solved.of(robot, body_map, len(poses))
    rows = range(len(poses))
    for frame in progress(rows) if progress is not None else rows:
        by_name = dict(zip(names, poses[frame], strict=True))
        with _speed_window(robot, options.max_joint_speed, fps,
                           solved.q[frame - 1] if frame else None):
            for number, tasks in enumerate(body_map.stages):
                state, solved.steps[frame, number] = ik.solve_stage(
                    robot, state, ik.goals(robot, tasks, by_name),
                    *(() if options.like_gmr else (CONVERGED_DROP, CONVERGED_STEPS)))
        solved.keep(frame, robot, state, ik.goals(robot, solved.last, by_name))
    shift = 0.0
    if not options.like_gmr and options.ground_clearance is not None and robot.floating:
        shift = options.ground_clearance - _lowest_point(robot, robot_skeleton, solved.root,
                                                         solved.q)
        solved.root[:, 2] += shift
    motion = _motion(robot_skeleton, robot.joint_names, solved.root, solved.q, fps)
    return Retargeted(motion, solved.steps, solved.errors, [t.robot for t in solved.last],
                      height, shift)


@dataclass
class _Solved:
    """What the frames' solutions fill in: joints, root poses, steps, tracking errors."""

    q: Array
    root: Array
    steps: NDArray[np.int64]
    errors: Array
    last: tuple[Task, ...]  # the position tasks of the last stage

    @classmethod
    def of(cls, robot: Robot, body_map: BodyMap, count: int) -> _Solved:
        last = tuple(task for task in body_map.stages[-1] if task.position_weight > 0)
        return cls(np.empty((count, len(robot.joint_names))), np.empty((count, 7)),
                   np.zeros((count, len(body_map.stages)), dtype=np.int64),
                   np.zeros((count, len(last))), last)

    def keep(self, frame: int, robot: Robot, state: State, goals: list[ik.Goal]) -> None:
        bodies = robot.poses(state).bodies
        self.errors[frame] = [np.linalg.norm(bodies[goal.body][:3, 3] - goal.target[:3, 3])
                              for goal in goals]
        self.q[frame] = state.q
        self.root[frame, :3] = state.root_pos
        self.root[frame, 3:] = quaternion.from_matrix(state.root_rot)


@contextlib.contextmanager
def _speed_window(robot: Robot, speed: float | None, fps: float,
                  previous: Array | None) -> Iterator[None]:
    """Within the block, the joint limits narrowed to ``previous ± speed / fps`` (the solver's
    0.95 box then keeps every step inside): a joint-velocity limit that applies per output
    frame. A joint outside its range may move toward it by that much."""
    if speed is None or previous is None:
        yield
        return
    lower, upper = robot.lower, robot.upper
    reach = speed / fps
    robot.upper = np.minimum(upper, previous + reach)
    robot.lower = np.minimum(np.maximum(lower, previous - reach), robot.upper)
    robot.upper = np.maximum(robot.upper, robot.lower)
    try:
        yield
    finally:
        robot.lower, robot.upper = lower, upper


def _check_map(robot: Robot, body_map: BodyMap) -> None:
    if not robot.floating and any(task.robot == robot.names[0] and task.position_weight > 0
                                  for stage in body_map.stages for task in stage):
        raise ConversionError(f"the body map moves the root {robot.names[0]!r}, but the robot "
                              "has no free joint (lock the base to keep the root still)")


def _check_bodies(robot: Robot, body_map: BodyMap) -> None:
    wanted = {task.robot for stage in body_map.stages for task in stage}
    missing = sorted(wanted - set(robot.names))
    if missing:
        raise ConversionError(f"the body map drives {', '.join(map(repr, missing[:5]))}, which "
                              f"the robot lacks ({choices(missing[0], robot.names, 'bodies')})")


def _start_at_root(robot: Robot, body_map: BodyMap, names: list[str], first: Array,
                   state: State) -> State:
    """Frame 0's start: the robot root upright at its task's target position and heading
    (the direction its x axis points on the ground), the joints at rest."""
    for task in body_map.stages[0] + body_map.stages[-1]:
        if task.robot == robot.names[0] and robot.floating:
            target = first[names.index(task.source)]
            heading = np.arctan2(target[1, 0], target[0, 0])
            upright = exp3(np.array([0.0, 0.0, heading]))
            return State(target[:3, 3].copy(), upright, state.q.copy())
    return state


def _lowest_point(robot: Robot, skeleton: Skeleton, root: Array, q: Array) -> float:
    """The lowest point of the robot's spheres, capsules, cylinders and boxes over the clip."""
    lowest = np.inf
    shapes = [(index, shape) for index, body in enumerate(skeleton.bodies)
              for shape in body.shapes if shape.kind in ("sphere", "capsule", "cylinder", "box")]
    if not shapes:
        raise ConversionError("the robot has no primitive shapes to put on the ground "
                              "(pass ground_clearance=None / --no-ground)")
    for frame in range(len(q)):
        state = State(root[frame, :3], quaternion.to_matrix(root[frame, 3:]), q[frame])
        bodies = robot.poses(state).bodies
        for index, shape in shapes:
            pose = bodies[index] @ shape.transform
            lowest = min(lowest, _shape_bottom(shape.kind, shape.params, pose))
    return float(lowest)


def _shape_bottom(kind: str, params: object, pose: Array) -> float:
    size = dict(params)  # type: ignore[call-overload]
    centre, turn = pose[:3, 3], pose[:3, :3]
    if kind == "sphere":
        return float(centre[2] - size["radius"])
    if kind == "box":
        half = np.asarray(size["size"]) / 2
        return float(centre[2] - np.abs(turn[2]) @ half)
    radius, half_height = float(size["radius"]), float(size.get("height", 0.0)) / 2
    axis_z = turn[2, 2]
    if kind == "capsule":
        return float(centre[2] - abs(axis_z) * half_height - radius)
    return float(centre[2] - abs(axis_z) * half_height - radius * np.sqrt(max(0.0, 1 - axis_z**2)))


def _motion(skeleton: Skeleton, joints: list[str], root: Array, q: Array, fps: float) -> Motion:
    """The robot motion: joint values, and the root pose where the root is a free body (a
    fixed base's root follows its own joint)."""
    timeline = Timeline.uniform(fps, len(q))
    motion = Motion(meta={"name": skeleton.name})
    motion.skeleton = skeleton
    if skeleton.bodies[0].joint.type == "free":
        motion.add(Track("root", "pose", root, timeline))
    motion.add(Track("joints", "value", q, timeline, labels=list(joints)))
    return motion

"""Retarget a source motion onto a robot: targets per frame, two IK stages, frames in order
(each warm-started from the one before).

Two modes. ``like_gmr`` reproduces GMR (commit 4f9e8b7) exactly, its defects included: human
height 1.75 m, 30 fps written, frame 0 solved from the model's default pose in at most 11
steps per stage, no ground handling. The default fixes what GMR's users report: the source's
own height (scaled so that its size and unit do not matter) and frame rate, frame 0 started
upright at the root target's position and heading, every frame solved to convergence
(``ik.CONVERGED``: a clip's frames do not depend on where it starts), the robot's lowest
point over the clip put on the ground (``ground_clearance``), and each foot held still,
flat and on the ground while the source's is planted (``plant_feet``; see ``ground``).
Grounding and planting look at the whole clip: the shift and a stance cut by the clip's
start are the clip's own.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ..errors import ConversionError, choices, warn
from ..model import Motion, Timeline, Track
from ..model.skeleton import Skeleton
from ..model.terrain import Terrain
from ..spatial import quaternion
from . import ik
from .ground import PLANTED_FOR_HEIGHT, Foot, find_feet, lowest_point, scaled_terrain, stance_targets, stances
from .lie import exp3
from .maps import BodyMap, Task
from .robot import Robot, State
from .source import GMR_HUMAN_HEIGHT, SourceFrames, measured_height, size_ratio, source_frames, targets

Array = NDArray[np.float64]

#: What GMR writes whatever the source (``bvh_to_robot.py``).
GMR_FPS = 30.0
#: A planted foot's task weights (position ×3, rotation ×3): above every task of GMR's maps.
STANCE_WEIGHTS = np.repeat([500.0, 100.0], 3)


@dataclass(frozen=True)
class Options:
    """How to retarget; see the module's docstring for the two modes."""

    like_gmr: bool = False
    #: the source's height in metres (None: GMR's 1.75 m, or measured in the default mode;
    #: see ``source.size_ratio`` for how each mode scales by it)
    height: float | None = None
    #: the robot's lowest point over the clip at this height (None: no shift; default mode)
    ground_clearance: float | None = 0.0
    #: hold the root at the model's pose (an upper body on a fixed stand, a fixed-base arm)
    lock_base: bool = False
    #: the most any joint may move per second between output frames (rad/s, m/s)
    max_joint_speed: float | None = None
    #: hold each robot foot still, level and on the ground while the source's foot is
    #: planted (default mode, with the ground on; see ``ground``). None: for maps with a
    #: source height (a human's) or where ``feet`` are named, not for maps by name (a
    #: robot's feet are its own)
    plant_feet: bool | None = None
    #: the robot's feet (None: the mapped bodies whose shapes are lowest at rest)
    feet: tuple[str, ...] | None = None
    #: pull each frame's joints toward where constant speed from the two frames before
    #: would put them, with this weight (per rad², beside the map's task weights): less
    #: jitter for a little tracking (None: off; default mode only)
    smoothing: float | None = None

    def __post_init__(self) -> None:
        if self.height is not None and not (math.isfinite(self.height) and self.height > 0):
            raise ConversionError(f"the source's height must be a positive number, not "
                                  f"{self.height}")
        if self.ground_clearance is not None and not math.isfinite(self.ground_clearance):
            raise ConversionError("the ground clearance must be a finite number")
        if self.max_joint_speed is not None and not (math.isfinite(self.max_joint_speed)
                                                     and self.max_joint_speed > 0):
            raise ConversionError("the joint speed limit must be a positive number")
        if self.smoothing is not None and not (math.isfinite(self.smoothing)
                                               and self.smoothing > 0):
            raise ConversionError("the smoothing weight must be a positive number")
        if self.feet is not None:
            if isinstance(self.feet, str) or not all(isinstance(f, str) for f in self.feet):
                raise ConversionError("feet is a sequence of robot body names")
            if self.plant_feet is False or self.like_gmr or self.ground_clearance is None \
                    or self.lock_base:
                raise ConversionError("feet are for planting, which needs the default mode "
                                      "with the ground on and a free base")
            object.__setattr__(self, "feet", tuple(self.feet))  # a JSON list in a batch job
        if self.smoothing is not None and self.like_gmr:
            raise ConversionError("GMR has no smoothing: leave it out with like_gmr")


@dataclass
class Retargeted:
    """The robot motion, and how it was reached."""

    motion: Motion
    steps: NDArray[np.int64]  # (frames, stages)
    #: per frame and position task of the last stage that has any: distance from body to
    #: its target from the source (m)
    position_errors: Array
    tracked: list[str]  # the robot bodies of those tasks
    height: float | None  # the source's (None: a map by name, no scaling)
    ground_shift: float
    #: per robot foot held while the source's was planted: how many frames
    planted_frames: dict[str, int] = dataclasses.field(default_factory=dict)


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
    if robot.nv == 0:
        raise ConversionError("the robot has nothing to move: no joints, and its base is "
                              "fixed or held (--lock-base)")
    frames = source_frames(source.skeleton, source, rename)
    if body_map.convention == "gmr-bvh" and source.meta.get("source_format") != "bvh":
        raise ConversionError("a GMR ik_config for BVH holds offsets for GMR's BVH frames: "
                              "the source must be a BVH (for a robot source, map by name)")
    if len(frames.positions) == 0:
        raise ConversionError("the source has no frames")
    height = options.height or (GMR_HUMAN_HEIGHT if options.like_gmr else 1.0
                                if body_map.height_assumption is None else
                                measured_height(source.skeleton, rename))
    ratio = size_ratio(body_map, height, like_gmr=options.like_gmr)
    names, poses = targets(frames, body_map, ratio, fix)
    _check_finite(names, poses)
    if source.terrain is not None and not np.isfinite(source.terrain.heights).all():
        raise ConversionError("the source's terrain has heights that are not numbers")
    terrain = None if source.terrain is None else \
        scaled_terrain(source.terrain, body_map.scales[body_map.source_root] * ratio)
    state = robot.rest.copy()
    if not options.like_gmr:
        state = _start_at_root(robot, body_map, names, poses[0], state)
    fps = GMR_FPS if options.like_gmr else frames.fps
    clip = _Clip(robot, body_map, _FrameGoals(robot, body_map, names, poses), options, fps,
                 progress)
    solved, shift = clip.solve(state), 0.0
    held: dict[str, int] = {}
    if not options.like_gmr and options.ground_clearance is not None and robot.floating:
        ground = _Ground(robot_skeleton, options.ground_clearance, terrain)
        solved, shift, held = ground.put(clip, solved, frames, source, rename, height)
    motion = _motion(robot_skeleton, robot.joint_names, solved.root, solved.q, fps)
    motion.terrain = terrain
    return Retargeted(motion, solved.steps, solved.errors, [t.robot for t in solved.last],
                      None if body_map.height_assumption is None else height, shift, held)


@dataclass
class _Ground:
    """What the robot stands on: z = 0 or a terrain (the source's, scaled as the targets
    are), with its lowest point ``clearance`` above it."""

    skeleton: Skeleton
    clearance: float
    terrain: Terrain | None

    def shift(self, robot: Robot, solved: _Solved) -> float:
        """The root height change that puts the clip's lowest point at the clearance."""
        return self.clearance - lowest_point(robot, self.skeleton, solved.root, solved.q,
                                             self.terrain)

    def put(self, clip: _Clip, solved: _Solved, frames: SourceFrames, source: Motion,
            rename: dict[str, str] | None, height: float
            ) -> tuple[_Solved, float, dict[str, int]]:
        """The clip on the ground, its feet planted where the source's are (the options
        say whether: by default for maps with a source height, or where the feet are
        named): the solution, its root shift and the frames held per foot."""
        robot, body_map, options = clip.robot, clip.body_map, clip.options
        shift, held = self.shift(robot, solved), dict[str, int]()
        plant = options.plant_feet if options.plant_feet is not None else \
            body_map.height_assumption is not None or options.feet is not None
        assert source.skeleton is not None  # retarget() checked it
        feet = find_feet(robot, self.skeleton, body_map, frames, source.skeleton, rename,
                         options.feet) if plant else []
        if plant and not feet:
            warn("no robot foot to plant: no mapped body has the robot's lowest shapes at "
                 "rest (name the feet: feet=... / --feet)")
        sized = PLANTED_FOR_HEIGHT if body_map.height_assumption is None else height
        runs = [stances(frames, foot.point, sized, source.terrain) for foot in feet]
        if any(runs):
            solved = clip.plant(solved, feet, runs, self.clearance - shift, self.terrain)
            held = {robot.names[foot.body]: sum(stop - start for start, stop in run)
                    for foot, run in zip(feet, runs, strict=True) if run}
            shift = self.shift(robot, solved)
        solved.root[:, 2] += shift
        return solved, shift, held


class _FrameGoals:
    """Each frame's goals per stage: the map's tasks toward the frame's targets, a planted
    foot's replaced by its stance pose (weights ``STANCE_WEIGHTS``; a point foot keeps its
    task's orientation and rotation weight)."""

    def __init__(self, robot: Robot, body_map: BodyMap, names: list[str], poses: Array):
        self.robot, self.body_map, self.names, self.poses = robot, body_map, names, poses
        self.held: dict[int, dict[int, tuple[Array, bool]]] = {}  # frame → body → target, sole?

    def hold(self, foot: Foot, targets: dict[int, Array]) -> None:
        for frame, target in targets.items():
            self.held.setdefault(frame, {})[foot.body] = (target, foot.sole is not None)

    def mapped(self, frame: int, tasks: tuple[Task, ...]) -> list[ik.Goal]:
        """The tasks toward the frame's targets from the source."""
        return ik.goals(self.robot, tasks, dict(zip(self.names, self.poses[frame], strict=True)))

    def __call__(self, frame: int, tasks: tuple[Task, ...]) -> list[ik.Goal]:
        held = self.held.get(frame, {})
        return [goal if goal.body not in held else self._stance(goal, *held[goal.body])
                for goal in self.mapped(frame, tasks)]

    @staticmethod
    def _stance(goal: ik.Goal, target: Array, sole: bool) -> ik.Goal:
        if sole:
            return ik.Goal(goal.body, target, STANCE_WEIGHTS)
        placed = goal.target.copy()
        placed[:3, 3] = target[:3, 3]
        return ik.Goal(goal.body, placed, np.concatenate([STANCE_WEIGHTS[:3], goal.weights[3:]]))


@dataclass
class _Clip:
    """One clip's problem: the robot, the map, each frame's goals, and how to solve them."""

    robot: Robot
    body_map: BodyMap
    goals: _FrameGoals
    options: Options
    fps: float
    progress: Callable[[Iterable[int]], Iterable[int]] | None

    def solve(self, state: State) -> _Solved:
        """Every frame in order, each from the one before (frame 0 from ``state``)."""
        robot, options = self.robot, self.options
        solved = _Solved.of(robot, self.body_map, len(self.goals.poses))
        rows = range(len(self.goals.poses))
        for frame in self.progress(rows) if self.progress is not None else rows:
            posture = self._posture(solved.q, frame)
            with _speed_window(robot, options.max_joint_speed, self.fps,
                               solved.q[frame - 1] if frame else None):
                for number, tasks in enumerate(self.body_map.stages):
                    try:
                        state, solved.steps[frame, number] = ik.solve_stage(
                            robot, state, self.goals(frame, tasks),
                            ik.GMR if options.like_gmr else ik.CONVERGED, posture)
                    except np.linalg.LinAlgError:
                        state = State(np.full(3, np.nan), state.root_rot, state.q)
            if not (np.isfinite(state.q).all() and np.isfinite(state.root_pos).all()
                    and np.isfinite(state.root_rot).all()):
                raise ConversionError(f"the IK found no pose that is a number at the source's "
                                      f"frame {frame} (its targets are out of any robot's reach)")
            solved.keep(frame, robot, state, self.goals.mapped(frame, solved.last))
        return solved

    def _posture(self, q: Array, frame: int) -> ik.Posture | None:
        """The smoothing pull: toward ``2 q[t−1] − q[t−2]`` (``q[t−1]`` at frame 1)."""
        if self.options.smoothing is None or frame == 0:
            return None
        ahead = q[frame - 1] if frame == 1 else 2 * q[frame - 1] - q[frame - 2]
        return ik.Posture(ahead[None], self.options.smoothing)

    def plant(self, solved: _Solved, feet: list[Foot], runs: list[list[tuple[int, int]]],
              ground: float, terrain: Terrain | None) -> _Solved:
        """The clip solved again with each foot held through its stances (``runs``),
        placed where ``solved`` had it on average, its lowest point ``ground`` above the
        terrain (the steps counted are both solves')."""
        for foot, run in zip(feet, runs, strict=True):
            self.goals.hold(foot, stance_targets(self.robot, foot, solved.root, solved.q, run,
                                                 ground, terrain))
        again = self.solve(solved.state(0))
        again.steps += solved.steps
        return again


@dataclass
class _Solved:
    """What the frames' solutions fill in: joints, root poses, steps, tracking errors."""

    q: Array
    root: Array
    steps: NDArray[np.int64]
    errors: Array
    last: tuple[Task, ...]  # the position tasks of the last stage that has any

    @classmethod
    def of(cls, robot: Robot, body_map: BodyMap, count: int) -> _Solved:
        tracking = [stage for stage in body_map.stages if any(t.position_weight > 0
                                                              for t in stage)] or [()]
        last = tuple(task for task in tracking[-1] if task.position_weight > 0)
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

    def state(self, frame: int) -> State:
        return State(self.root[frame, :3].copy(), quaternion.to_matrix(self.root[frame, 3:]),
                     self.q[frame].copy())


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


#: No target is farther than this from the origin (m): beyond it a source is corrupt (and
#: the solver's squares would overflow).
FARTHEST = 1e6


def _check_finite(names: list[str], poses: Array) -> None:
    """Every target a number within ``FARTHEST``: a NaN, infinite or absurd source pose is
    refused at its frame."""
    with np.errstate(invalid="ignore"):
        bad = np.argwhere(~(np.abs(poses[..., :3, 3]) <= FARTHEST).all(axis=2)
                          | ~np.isfinite(poses).all(axis=(2, 3)))
    if len(bad):
        frame, body = bad[0]
        raise ConversionError(f"the source's frame {frame} gives {names[body]!r} a pose that "
                              f"is not a number or is more than {FARTHEST:g} m away")


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

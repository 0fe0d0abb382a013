"""The compiled IK stage (``_ik_kernel.c``) equals the NumPy stage (``ik.solve_stage_many``'s
loop, the statement it follows): from the same state, toward the same targets, it ends in the
same state to 1e-10 rad and 1e-12 m after the same number of steps, with GMR's rule and the
adaptive one, with and without a posture pull; on G1 with the corpus clip's targets (the
``raw`` case has a joint bound active in nearly every step) and on the PARC humanoid (joints
of three axes) and Go2 toward poses beyond their joint limits."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest
from clips import gmr_targets

import motionkit as mk
from conftest import corpus_file, require_compiled
from motionkit.formats.mujoco import mjcf
from motionkit.retarget import _ik, ik
from motionkit.retarget.maps import read_map
from motionkit.retarget.robot import Robot, State

RADIANS, METRES = 1e-10, 1e-12
RULES = {"gmr": ik.GMR, "converged": ik.CONVERGED}


@pytest.fixture(autouse=True)
def _built() -> None:
    """The kernel's tests need it: built wherever a C compiler is (see require_compiled)."""
    require_compiled(_ik.KERNEL is not None, "the compiled IK kernel")


def test_the_install_built_the_ik_kernel() -> None:
    # setup.py builds it (optional, for machines without a compiler); here it must be there
    assert _ik.KERNEL is not None


def _g1() -> tuple[Robot, list[list[list[ik.Goal]]], list[list[list[ik.Goal]]]]:
    """G1 and each corpus case's stages per frame (the targets GMR fed its solver)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the model's floor geom belongs to no body
        robot = Robot.of(mk.read(corpus_file("retarget", "g1_mocap_29dof_nomesh.xml")))
    body_map = read_map(corpus_file("retarget", "bvh_to_g1.json"))
    cases = []
    for case in ("corrected", "raw"):
        cases.append([[ik.goals(robot, stage, targets) for stage in body_map.stages]
                      for targets in gmr_targets(case)])
    return robot, cases[0], cases[1]


#: A fixed base, a slide, a two-hinge (universal) and a three-slide (translational) body, a
#: joint without limits.
SLIDES = """<mujoco model="slides"><compiler angle="radian"/><worldbody>
<body name="base" pos="0 0 0.5"><geom type="box" size="0.1 0.1 0.1"/>
 <body name="slider" pos="0.1 0 0"><joint name="lift" type="slide" axis="0 0 1" range="-0.3 0.3"/>
  <geom type="sphere" size="0.05"/>
  <body name="arm" pos="0 0.2 0" euler="0.1 0.2 0.3">
   <joint name="arm_x" type="hinge" axis="1 0 0" range="-1 1"/>
   <joint name="arm_y" type="hinge" axis="0 1 0.2" range="-1.2 0.7"/>
   <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03"/>
   <body name="hand" pos="0.3 0 0">
    <joint name="hand_x" type="slide" axis="1 0 0" range="-0.1 0.1"/>
    <joint name="hand_y" type="slide" axis="0 1 0" range="-0.1 0.1"/>
    <joint name="hand_z" type="slide" axis="0 0 1"/><geom type="sphere" size="0.04"/>
    <body name="tip" pos="0.1 0 0"><joint name="tip" type="hinge" axis="0 0 1" range="-2 2"/>
     <geom type="sphere" size="0.02"/></body></body></body></body></body>
</worldbody></mujoco>"""


def _synthetic(robot: Robot, seed: int) -> list[list[list[ik.Goal]]]:
    """12 frames of two stages toward the robot's own poses along a swing of every joint
    to 1.4 times its range (so that the bounds stop it; ±0.7 where it has none), a floating
    root moving and turning; stage 1 rotations only on half the bodies, stage 2 every body."""
    rng = np.random.default_rng(seed)
    bounded = np.isfinite(robot.lower) & np.isfinite(robot.upper)
    low, high = np.where(bounded, robot.lower, -1.0), np.where(bounded, robot.upper, 1.0)
    middle, half = 0.5 * (low + high), 0.7 * (high - low)
    phase, speed = rng.uniform(0, 2 * np.pi, len(middle)), rng.uniform(0.2, 0.6, len(middle))
    bodies = np.arange(len(robot.names))
    frames = []
    for frame in range(12):
        q = middle + half * np.sin(phase + speed * frame)
        angle = 0.1 * frame
        root = np.array([[np.cos(angle), -np.sin(angle), 0], [np.sin(angle), np.cos(angle), 0],
                         [0, 0, 1.0]])
        start = State(np.array([0.05 * frame, 0.0, 0.8]), root, q) if robot.floating else \
            State(robot.rest.root_pos, robot.rest.root_rot, q)
        poses = robot.poses(start).bodies
        stage_one = [ik.Goal(int(b), poses[b], np.array([0, 0, 0, 5.0, 5, 5]) * (1 + b % 3))
                     for b in bodies[::2]]
        stage_two = [ik.Goal(int(b), poses[b], np.array([50.0, 50, 50, 2, 2, 2]) / (1 + b % 2))
                     for b in bodies]
        frames.append([stage_one, stage_two])
    return frames


def _compare(robot: Robot, frames: list[list[list[ik.Goal]]], rule: ik.Rule, pulled: bool,
             monkeypatch: pytest.MonkeyPatch) -> tuple[int, int]:
    """Every stage of the clip by both paths from the NumPy path's state; the steps of all,
    and in how many stages a joint went at least 0.95 of its way to a limit (the box bound
    it: a bound active)."""
    state, total, bounded = robot.rest.copy(), 0, 0
    previous = state.q.copy()
    for number, stages in enumerate(frames):
        posture = ik.Posture(previous[None], 0.2) if pulled and number else None
        for stage in stages:
            mine, steps = ik.solve_stage(robot, state.copy(), stage, rule, posture)
            with monkeypatch.context() as patch:
                patch.setattr(_ik, "KERNEL", None)
                theirs, want = ik.solve_stage(robot, state.copy(), stage, rule, posture)
            assert steps == want, (number, steps, want)
            assert np.abs(mine.q - theirs.q).max() < RADIANS, number
            assert np.abs(mine.root_rot - theirs.root_rot).max() < RADIANS, number
            assert np.abs(mine.root_pos - theirs.root_pos).max() < METRES, number
            assert mine.poses is not None and theirs.poses is not None
            assert np.abs(mine.poses.bodies[:, :3, 3] - theirs.poses.bodies[:, :3, 3]).max() \
                < METRES, number
            assert np.abs(mine.poses.axes - theirs.poses.axes).max() < RADIANS
            assert np.abs(mine.poses.anchors - theirs.poses.anchors).max() < METRES
            with np.errstate(invalid="ignore"):  # inf - inf where a joint has no limits
                reach = 1e-6 * (robot.upper - robot.lower)
                bounded += bool(((state.q - robot.lower) * 0.05 - (mine.q - robot.lower)
                                 > -reach).any() or ((robot.upper - state.q) * 0.05
                                                     - (robot.upper - mine.q) > -reach).any())
            state, total = theirs, total + steps
        previous = state.q.copy()
    return total, bounded


@pytest.mark.parametrize("case", ["corrected", "raw"])
@pytest.mark.parametrize("rule", ["gmr", "converged"])
@pytest.mark.parametrize("pulled", [False, True])
def test_compiled_stage_equals_numpy_on_g1(case: str, rule: str, pulled: bool,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    robot, corrected, raw = _g1()
    frames = corrected if case == "corrected" else raw
    frames = frames if rule == "gmr" else frames[:12]  # NumPy's adaptive loop is slow
    steps, bounded = _compare(robot, frames, RULES[rule], pulled, monkeypatch)
    assert steps > 2 * len(frames)
    assert bounded > (1.5 if case == "raw" else 0.05) * len(frames)  # of 2 stages a frame


@pytest.mark.parametrize("model", ["parc/character/humanoid.xml", "mimickit/go2.xml", "slides"])
@pytest.mark.parametrize("rule", ["gmr", "converged"])
@pytest.mark.parametrize("pulled", [False, True])
def test_compiled_stage_equals_numpy_on_other_robots(model: str, rule: str, pulled: bool,
                                                     monkeypatch: pytest.MonkeyPatch,
                                                     tmp_path: Path) -> None:
    """The PARC humanoid (euler joints of three axes), Go2, and a fixed-base robot of slides
    and multi-axis joints."""
    path = tmp_path / "slides.xml"
    path.write_text(SLIDES)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # floor geoms of <worldbody> belong to no body
        robot = Robot.of(mjcf.read(path if model == "slides" else corpus_file(*model.split("/"))))
    if model != "mimickit/go2.xml":
        assert robot.plan.multi  # joints of several axes
    assert robot.floating == (model != "slides")
    frames = _synthetic(robot, 5)
    steps, bounded = _compare(robot, frames, RULES[rule], pulled, monkeypatch)
    assert steps > 2 * len(frames) and bounded > 0.8 * 2 * len(frames)


def _arguments(robot: Robot, stage: list[ik.Goal]) -> dict[str, object]:
    """The kernel's arguments for a stage from rest, by name (as ``_ik.solve`` passes them)."""
    plan = _ik.packed(robot)
    joints, state = len(robot.joint_names), robot.rest
    return {
        "ints": plan.ints, "doubles": plan.doubles, "bodies": len(robot.names),
        "joints": joints, "motions": plan.motions, "floating": robot.floating,
        "task_bodies": np.array([g.body for g in stage], dtype=np.int32),
        "weights": np.array([g.weights for g in stage]), "targets": np.array([g.target for g in
                                                                            stage]),
        "tasks": len(stage), "lower": robot.lower, "upper": robot.upper, "posture": None,
        "posture_weight": 0.0, "min_drop": 1e-3, "max_repeats": 10, "adaptive": False,
        "root_pos": state.root_pos, "root_rot": state.root_rot, "q": state.q,
        "out_pos": np.empty(3), "out_rot": np.empty((3, 3)), "out_q": np.empty(joints),
        "out_bodies": np.empty((len(robot.names), 4, 4)), "out_axes": np.empty((joints, 3)),
        "out_anchors": np.empty((joints, 3))}


def test_the_kernel_refuses_what_does_not_fit_its_plan() -> None:
    """Wrong sizes, item types, layouts, indices and bounds are a ValueError (a read-only
    output a BufferError) before any work; the robot's own arguments are accepted."""
    kernel = _ik.KERNEL
    assert kernel is not None
    robot, frames = _g1()[:2]
    stage = frames[0][0]
    good = _arguments(robot, stage)
    assert kernel.solve(*good.values()) >= 1
    broken_parent = good["ints"].copy()  # type: ignore[attr-defined]
    broken_parent[_ik.BODY_INTS * 3] = 7  # body 3's parent after it
    bad_task = good["task_bodies"].copy()  # type: ignore[attr-defined]
    bad_task[0] = len(robot.names)
    for name, value in [("ints", broken_parent), ("task_bodies", bad_task),
                        ("doubles", good["doubles"][:-1]),  # type: ignore[index]
                        ("weights", np.asarray(good["weights"], dtype=np.float32)),
                        ("weights", np.asarray(good["weights"]).astype(np.int64)),  # 8 bytes
                        ("ints", np.asarray(good["ints"]).astype(np.uint32)),  # 4 bytes
                        ("ints", np.asarray(good["ints"]).astype(np.float32)),
                        ("targets", np.asarray(good["targets"])[:-1]),
                        ("q", np.zeros(len(robot.joint_names) + 1)),
                        ("out_q", np.empty(len(robot.joint_names))[::-1]),
                        ("out_bodies", np.empty((len(robot.names), 4, 4)).T),
                        ("max_repeats", 10**9), ("bodies", 0), ("tasks", -1)]:
        with pytest.raises(ValueError):
            kernel.solve(*{**good, name: value}.values())
    with pytest.raises(BufferError):  # read-only
        kernel.solve(*{**good, "out_pos": b"123456789012345678901234"}.values())


@pytest.mark.parametrize("rule", ["gmr", "converged"])
def test_a_stage_toward_nan_targets_ends(rule: str) -> None:
    """Broken targets cannot make the kernel's loop run on: it stops after a few steps (GMR's
    rule: the error stops falling; adaptive: no damping finds a lower error). NumPy's path
    raises LinAlgError there (its SVD of a NaN rotation)."""
    robot, frames = _g1()[:2]
    stage = [ik.Goal(goal.body, np.full((4, 4), np.nan), goal.weights) for goal in frames[0][0]]
    _, steps = ik.solve_stage(robot, robot.rest.copy(), stage, RULES[rule])
    assert steps <= 20


def test_without_the_kernel_numpy_solves(monkeypatch: pytest.MonkeyPatch) -> None:
    robot, frames = _g1()[:2]
    monkeypatch.setattr(_ik, "KERNEL", None)
    calls: list[int] = []
    real = ik._step_many
    monkeypatch.setattr(ik, "_step_many", lambda *a: calls.append(1) or real(*a))
    _, steps = ik.solve_stage(robot, robot.rest.copy(), frames[0][0])
    assert len(calls) == steps >= 1



def test_stages_in_threads_give_the_same_bits() -> None:
    """The kernel runs without the GIL: two threads solving clips at once end as one alone."""
    from concurrent.futures import ThreadPoolExecutor

    robot, corrected, raw = _g1()

    def clip(frames: list[list[list[ik.Goal]]]) -> list[np.ndarray]:
        state, out = robot.rest.copy(), []
        for stages in frames[:20]:
            for stage in stages:
                state, _ = ik.solve_stage(robot, state, stage)
            out.append(np.concatenate([state.q, state.root_pos, state.root_rot.ravel()]))
        return out

    alone = [clip(corrected), clip(raw)]
    with ThreadPoolExecutor(2) as pool:
        together = list(pool.map(clip, [corrected, raw]))
    for mine, theirs in zip(together, alone, strict=True):
        np.testing.assert_array_equal(mine, theirs)


@pytest.mark.parametrize("compiled", [True, False])
def test_an_adaptive_stage_that_cannot_move_ends_at_once(
        compiled: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """No tasks and no posture: the first step changes nothing, so the stage ends there
    (it used to refuse it 14 more times, damping × 4 each)."""
    if not compiled:
        monkeypatch.setattr(_ik, "KERNEL", None)
    robot = _g1()[0]
    assert ik.solve_stage(robot, robot.rest.copy(), [], ik.CONVERGED)[1] == 1


def test_a_kernel_whose_constants_differ_is_not_used(monkeypatch: pytest.MonkeyPatch) -> None:
    """The solver's constants live in Python; a build with other ones is dropped."""
    kernel = _ik.KERNEL
    assert kernel is not None
    _ik.use_only_if({"DAMPING": ik.DAMPING, "MAX_DAMPING": ik.MAX_DAMPING})
    assert _ik.KERNEL is kernel
    monkeypatch.setattr(_ik, "KERNEL", kernel)
    _ik.use_only_if({"DAMPING": ik.DAMPING * 2})
    assert _ik.KERNEL is None

"""The compiled IK stage (``_ik_kernel.c``) equals the NumPy stage (``ik.solve_stage_many``'s
loop, the statement it follows): from the same state, toward the same targets, it ends in the
same state to 1e-10 rad and 1e-12 m after the same number of steps, with GMR's rule and the
adaptive one, with and without a posture pull; on G1 with the corpus clip's targets (the
``raw`` case has a joint bound active in nearly every step) and on the PARC humanoid (joints
of three axes) and Go2 toward poses beyond their joint limits."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import motionkit as mk
from conftest import corpus_file
from motionkit.formats.mujoco import mjcf
from motionkit.retarget import _ik, ik
from motionkit.retarget.maps import _matrix_wxyz, read_map
from motionkit.retarget.robot import Robot, State

RADIANS, METRES = 1e-10, 1e-12
RULES = {"gmr": ik.GMR, "converged": ik.CONVERGED}


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
        human = np.load(corpus_file("retarget", f"freebvh_{case}_human.npz"))
        frames = []
        for frame in range(len(human["target_pos"])):
            targets = {}
            for k, name in enumerate(human["human_bodies"]):
                pose = np.eye(4)
                pose[:3, :3] = _matrix_wxyz(human["target_quat_wxyz"][frame, k])
                pose[:3, 3] = human["target_pos"][frame, k]
                targets[str(name)] = pose
            frames.append([ik.goals(robot, stage, targets) for stage in body_map.stages])
        cases.append(frames)
    return robot, cases[0], cases[1]


def _synthetic(parts: tuple[str, ...], seed: int) -> tuple[Robot, list[list[list[ik.Goal]]]]:
    """A robot and 12 frames of two stages toward its own poses along a swing of every
    joint to 1.4 times its range (so that the bounds stop it), the root moving and turning;
    stage 1 rotations only on half the bodies, stage 2 every body."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # floor geoms of <worldbody> belong to no body
        robot = Robot.of(mjcf.read(corpus_file(*parts)))
    rng = np.random.default_rng(seed)
    middle, half = 0.5 * (robot.lower + robot.upper), 0.7 * (robot.upper - robot.lower)
    phase, speed = rng.uniform(0, 2 * np.pi, len(middle)), rng.uniform(0.2, 0.6, len(middle))
    bodies = np.arange(len(robot.names))
    frames = []
    for frame in range(12):
        q = middle + half * np.sin(phase + speed * frame)
        angle = 0.1 * frame
        root = np.array([[np.cos(angle), -np.sin(angle), 0], [np.sin(angle), np.cos(angle), 0],
                         [0, 0, 1.0]])
        poses = robot.poses(State(np.array([0.05 * frame, 0.0, 0.8]), root, q)).bodies
        stage_one = [ik.Goal(int(b), poses[b], np.array([0, 0, 0, 5.0, 5, 5]) * (1 + b % 3))
                     for b in bodies[::2]]
        stage_two = [ik.Goal(int(b), poses[b], np.array([50.0, 50, 50, 2, 2, 2]) / (1 + b % 2))
                     for b in bodies]
        frames.append([stage_one, stage_two])
    return robot, frames


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
            reach = 1e-6 * (robot.upper - robot.lower)
            bounded += bool(((state.q - robot.lower) * 0.05 - (mine.q - robot.lower) > -reach)
                            .any() or ((robot.upper - state.q) * 0.05 - (robot.upper - mine.q)
                                       > -reach).any())
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


@pytest.mark.parametrize("parts", [("parc", "character", "humanoid.xml"),
                                   ("mimickit", "go2.xml")])
@pytest.mark.parametrize("rule", ["gmr", "converged"])
@pytest.mark.parametrize("pulled", [False, True])
def test_compiled_stage_equals_numpy_on_other_robots(parts: tuple[str, ...], rule: str,
                                                     pulled: bool,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    robot, frames = _synthetic(parts, 5)
    if parts[0] == "parc":
        assert robot.plan.multi  # joints of several axes
    steps, bounded = _compare(robot, frames, RULES[rule], pulled, monkeypatch)
    assert steps > 2 * len(frames) and bounded == 2 * len(frames)

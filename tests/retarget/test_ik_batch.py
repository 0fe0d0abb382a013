"""The batched IK equals the one-by-one IK exactly (several clips stepped together end in the
same states after the same steps as each clip alone), and the batched SE(3) functions equal
the single ones."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from clips import gmr_targets
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import motionkit as mk
from conftest import corpus_file, require_compiled
from motionkit.retarget import _ik, ik
from motionkit.retarget.lie import (
    exp3,
    exp3_many,
    jlog6,
    jlog6_many,
    jlog6_of_twist,
    log3,
    log3_many,
    log6,
    log6_many,
)
from motionkit.retarget.maps import read_map
from motionkit.retarget.robot import Robot, State

finite = st.floats(-3.0, 3.0, allow_nan=False)


def _pose(xi: np.ndarray, spin: float) -> np.ndarray:
    pose = np.eye(4)
    pose[:3, :3] = exp3(xi[3:] * spin)
    pose[:3, 3] = xi[:3]
    return pose


@given(arrays(np.float64, (5, 6), elements=finite),
       st.sampled_from([1.0, 1.04, 1e-3, 1e-5, 1e-9, 0.0]))
@settings(max_examples=60, deadline=None)
def test_batched_lie_functions_equal_the_single_ones(xis: np.ndarray, spin: float) -> None:
    """Angles up to 3.12 rad (past 2π/3: the half-turn branch of the quaternion), tiny ones
    (the series) and zero."""
    poses = np.array([_pose(xi, spin) for xi in xis])
    assert np.abs(exp3_many(xis[:, 3:] * spin) - poses[:, :3, :3]).max() < 1e-14
    many = log6_many(poses.reshape(5, 1, 4, 4))[:, 0]
    for k, pose in enumerate(poses):
        assert np.abs(log3_many(pose[:3, :3]) - log3(pose[:3, :3])).max() < 1e-12
        assert np.abs(many[k] - log6(pose)).max() < 1e-11
        assert np.abs(jlog6_many(pose) - jlog6(pose)).max() < 1e-9
        inverse = np.linalg.inv(pose)
        assert np.abs(jlog6_of_twist(-log6(pose)) - jlog6(inverse)).max() < 1e-8


def _clip() -> tuple[Robot, list[list[list[ik.Goal]]]]:
    """G1 and the corpus clip's stages per frame (the targets GMR fed its solver)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the model's floor geom belongs to no body
        robot = Robot.of(mk.read(corpus_file("retarget", "g1_mocap_29dof_nomesh.xml")))
    body_map = read_map(corpus_file("retarget", "bvh_to_g1.json"))
    return robot, [[ik.goals(robot, stage, targets) for stage in body_map.stages]
                   for targets in gmr_targets("raw")]


def _slices(robot: Robot) -> list[State]:
    rng = np.random.default_rng(3)
    first = [robot.rest.copy() for _ in STARTS]
    for state in first[1:]:
        state.q = rng.uniform(0.5 * robot.lower, 0.5 * robot.upper)
    return first


STARTS, LENGTH = (0, 3, 17, 30, 51), 12


def test_batched_stages_equal_one_by_one_exactly(monkeypatch: pytest.MonkeyPatch) -> None:
    """Five slices of the raw clip (bounds active, the step cap hit), started at different
    frames and poses, solved together and alone by NumPy's batched loop: the same states
    bit for bit, the same steps on every frame and stage."""
    monkeypatch.setattr(_ik, "KERNEL", None)
    robot, frames = _clip()
    alone, together = _slices(robot), _slices(robot)
    for offset in range(LENGTH):
        for number in range(2):
            stages = [frames[start + offset][number] for start in STARTS]
            solved = ik.solve_stage_many(robot, together, stages)
            for k, stage in enumerate(stages):
                alone[k], steps = ik.solve_stage(robot, alone[k], stage)
                assert steps == solved[k][1], (offset, number, k)
                for mine, theirs in ((alone[k].q, solved[k][0].q),
                                     (alone[k].root_pos, solved[k][0].root_pos),
                                     (alone[k].root_rot, solved[k][0].root_rot)):
                    assert np.array_equal(mine, theirs), (offset, number, k)
            together = [state for state, _ in solved]


def test_the_kernels_batch_equals_numpys_batch(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same five slices through ``solve_stage_many`` by the kernel (clip after clip)
    and by NumPy's batched loop: equal steps, states within 1e-10."""
    require_compiled(_ik.KERNEL is not None, "the compiled IK kernel")
    kernel = _ik.KERNEL
    robot, frames = _clip()
    ours, numpys = _slices(robot), _slices(robot)
    for offset in range(LENGTH):
        for number in range(2):
            stages = [frames[start + offset][number] for start in STARTS]
            monkeypatch.setattr(_ik, "KERNEL", kernel)
            compiled = ik.solve_stage_many(robot, ours, stages)
            monkeypatch.setattr(_ik, "KERNEL", None)
            plain = ik.solve_stage_many(robot, numpys, stages)
            for (mine, my_steps), (theirs, their_steps) in zip(compiled, plain, strict=True):
                assert my_steps == their_steps, (offset, number)
                assert np.abs(mine.q - theirs.q).max() < 1e-10
                assert np.abs(mine.root_pos - theirs.root_pos).max() < 1e-10
            ours, numpys = [s for s, _ in compiled], [s for s, _ in plain]


@pytest.mark.parametrize("compiled", [True, False])
def test_batched_stages_need_the_same_tasks(compiled: bool,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    if not compiled:
        monkeypatch.setattr(_ik, "KERNEL", None)
    robot, frames = _clip()
    state = robot.rest.copy()
    try:
        ik.solve_stage_many(robot, [state, state], [frames[0][0], frames[0][1]])
    except ValueError as error:
        assert "same bodies" in str(error)
    else:
        raise AssertionError("stages of other tasks were solved together")
    assert isinstance(state, State)

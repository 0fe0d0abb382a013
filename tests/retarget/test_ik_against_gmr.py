"""The IK equals GMR (mink + DAQP on MuJoCo) on the corpus clip: fed the targets GMR fed its
solver, it gives GMR's root pose and joint angles, with the same number of solver steps on
every frame, in both corpus cases (``corrected``: 13 steps at a joint bound; ``raw``: a bound
active in 324 of 329 steps and the step cap hit)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from clips import gmr_targets

import motionkit as mk
from conftest import corpus_file
from motionkit.retarget import ik
from motionkit.retarget.maps import read_map
from motionkit.retarget.robot import Robot

#: spec §6: joints 1e-3°, root position 1e-6 m.
JOINT_DEGREES, ROOT_METRES = 1e-3, 1e-6


def _robot() -> Robot:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the model's floor geom belongs to no body
        return Robot.of(mk.read(corpus_file("retarget", "g1_mocap_29dof_nomesh.xml")))


@pytest.mark.parametrize("case", ["corrected", "raw"])
def test_gmr_targets_give_gmr_output_step_for_step(case: str) -> None:
    robot = _robot()
    body_map = read_map(corpus_file("retarget", "bvh_to_g1.json"))
    fed = gmr_targets(case)
    gmr = np.load(corpus_file("retarget", f"freebvh_{case}_gmr.npz"))
    assert list(gmr["dof_names"]) == robot.joint_names
    state = robot.rest.copy()
    for frame in range(len(gmr["dof_pos"])):
        targets = fed[frame]
        steps = []
        for stage in body_map.stages:
            state, count = ik.solve_stage(robot, state, ik.goals(robot, stage, targets))
            steps.append(count)
        assert steps == list(gmr["ik_steps"][frame]), frame
        assert np.degrees(np.abs(state.q - gmr["dof_pos"][frame])).max() < JOINT_DEGREES
        assert np.abs(state.root_pos - gmr["root_pos"][frame]).max() < ROOT_METRES

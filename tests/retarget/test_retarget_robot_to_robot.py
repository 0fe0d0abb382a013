"""Robot → robot: GMR's G1 output retargeted onto the same G1 with a map by name gives the
same motion back (what GMR cannot do: TWIST2 #28)."""

from __future__ import annotations

import warnings

import numpy as np

import motionkit as mk
from conftest import corpus_file
from motionkit import retarget
from motionkit.kinematics.motion import link_poses
from motionkit.model.skeleton import Skeleton


def test_g1_onto_g1_by_name_gives_the_motion_back() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the model's floor geom belongs to no body
        robot = mk.read(corpus_file("retarget", "g1_mocap_29dof_nomesh.xml"))
    assert isinstance(robot, Skeleton)
    gmr = np.load(corpus_file("retarget", "freebvh_corrected_gmr.npz"))
    timeline = mk.Timeline.uniform(30.0, len(gmr["dof_pos"]))
    source = mk.Motion()
    source.skeleton = robot
    source.add(mk.Track("root", "pose", np.concatenate([gmr["root_pos"], gmr["root_rot"]], 1),
                        timeline))
    source.add(mk.Track("joints", "value", gmr["dof_pos"], timeline,
                        labels=[str(n) for n in gmr["dof_names"]]))
    names = [body.name for body in robot.bodies]
    done = retarget.retarget(source, robot, retarget.same_names(names, names),
                             options=retarget.Options(ground_clearance=None))
    assert np.degrees(np.abs(done.motion.tracks["joints"].data - gmr["dof_pos"])).max() < 1e-3
    ours, theirs = link_poses(robot, done.motion), link_poses(robot, source)
    assert np.abs(ours.data[:, :, :3] - theirs.data[:, :, :3]).max() < 1e-5

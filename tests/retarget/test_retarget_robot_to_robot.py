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


def test_a_locked_base_holds_the_root_and_untracked_joints() -> None:
    """Upper body only (GMR #176): the arm and torso tasks on a G1 whose root is held; the
    root stays at the model's pose exactly and the legs at their rest angles."""
    import dataclasses

    folder = corpus_file("retarget", "bvh_to_g1.json").parent
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        robot = mk.read(folder / "g1_mocap_29dof_nomesh.xml")
    assert isinstance(robot, Skeleton)
    body_map = retarget.read_map(folder / "bvh_to_g1.json")
    upper = tuple(tuple(task for task in stage if "shoulder" in task.robot or "elbow" in task.robot
                        or "wrist" in task.robot) for stage in body_map.stages)
    done = retarget.retarget(
        mk.read(corpus_file("bvh", "test_freebvh.bvh")), robot,
        dataclasses.replace(body_map, stages=upper),
        rename=retarget.read_rename(folder / "freebvh_lafan1_names.json"),
        fix=retarget.read_frame_fix(folder / "freebvh_orientation_correction.json"),
        options=retarget.Options(lock_base=True))
    root = done.motion.tracks["root"].data
    assert np.array_equal(root[:, :3], np.tile([0.0, 0.0, 0.793], (len(root), 1)))
    assert np.array_equal(root[:, 3:], np.tile([0.0, 0.0, 0.0, 1.0], (len(root), 1)))
    joints = done.motion.tracks["joints"]
    legs = [k for k, name in enumerate(joints.labels or []) if any(
        part in name for part in ("hip", "knee", "ankle"))]
    assert len(legs) == 12 and not joints.data[:, legs].any()
    arms = [k for k, name in enumerate(joints.labels or []) if "shoulder" in name]
    assert np.abs(joints.data[:, arms]).max() > 0.3  # the arms do move

"""Robot → robot: GMR's G1 output retargeted onto the same G1 with a map by name gives the
same motion back (what GMR cannot do: TWIST2 #28)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from clips import gmr_g1_motion

import motionkit as mk
from conftest import corpus_file
from motionkit import retarget
from motionkit.kinematics.motion import link_poses
from motionkit.model.skeleton import Skeleton


@pytest.mark.parametrize("ground", [None, 0.0])
def test_g1_onto_g1_by_name_gives_the_motion_back(ground: float | None) -> None:
    """With the ground on too (the default): a map by name plants no feet (the source
    robot's are its own), and the shift moves the root only up or down."""
    source, robot, gmr = gmr_g1_motion()
    names = [body.name for body in robot.bodies]
    done = retarget.retarget(source, robot, retarget.same_names(names, names),
                             options=retarget.Options(ground_clearance=ground))
    assert done.planted_frames == {}
    assert np.degrees(np.abs(done.motion.tracks["joints"].data - gmr["dof_pos"])).max() < 1e-3
    ours, theirs = link_poses(robot, done.motion), link_poses(robot, source)
    ours.data[:, :, 2] -= done.ground_shift
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


ARM = ('<mujoco><compiler angle="radian"/><worldbody><body name="base" pos="0 0 1">'
       '<joint name="j0" type="hinge" pos="0.1 0 0" axis="0 0 1" range="-2 2"/>'
       '<geom size="0.05"/><body name="link" pos="0.5 0 0">'
       '<joint name="j1" axis="0 1 0" range="-1 1"/><geom size="0.05"/>'
       '<body name="hand" pos="0.4 0 0"><geom size="0.03"/></body></body></body>'
       "</worldbody></mujoco>")


def test_a_fixed_base_whose_root_turns_about_an_offset_joint(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The root body of a fixed-base arm has its own hinge, away from its origin: the
    robot's poses equal motionkit's FK, and the arm retargeted onto itself replays."""
    from motionkit.retarget.robot import Robot, State

    path = tmp_path / "arm.xml"
    path.write_text(ARM)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        arm = mk.read(path)
    assert isinstance(arm, Skeleton)
    rng = np.random.default_rng(3)
    q = rng.uniform(-0.9, 0.9, size=(20, 2))
    motion = mk.Motion()
    motion.skeleton = arm
    motion.add(mk.Track("joints", "value", q, mk.Timeline.uniform(30.0, 20), labels=["j0", "j1"]))
    expected = link_poses(arm, motion).data
    robot = Robot.of(arm)
    for frame in range(3):
        state = State(robot.rest.root_pos, robot.rest.root_rot, q[frame])
        assert np.abs(robot.poses(state).bodies[:, :3, 3] - expected[frame, :, :3]).max() < 1e-12
    names = [body.name for body in arm.bodies]
    done = retarget.retarget(motion, arm, retarget.same_names(names, names),
                             options=retarget.Options(lock_base=True))
    assert "root" not in done.motion.tracks
    replay = link_poses(arm, done.motion).data
    assert np.abs(replay[:, :, :3] - expected[:, :, :3]).max() < 1e-6


@pytest.mark.parametrize("ground", [None, 0.0])
def test_a_quadruped_onto_itself_replays(ground: float | None) -> None:
    """Spec §7 (quadrupeds, GMR #165): the Go2 trotting and turning, retargeted onto itself
    with a map by name, gives its joints back within 1e-3° (with the ground on as well)."""
    robot = mk.read(corpus_file("mimickit", "go2.xml"))
    assert isinstance(robot, Skeleton)
    frames, fps = 60, 30.0
    t = np.arange(frames) / fps
    legs = {"hip": (0.0, 0.25), "thigh": (0.9, 0.4), "calf": (-1.7, 0.4)}
    labels, columns = [], []
    for leg, phase in (("FL", 0.0), ("FR", np.pi), ("RL", np.pi), ("RR", 0.0)):
        for part, (middle, swing) in legs.items():
            labels.append(f"{leg}_{part}_joint")
            columns.append(middle + swing * np.sin(2 * np.pi * 1.5 * t + phase))
    heading = 0.4 * t
    root = np.zeros((frames, 7))
    root[:, 0], root[:, 1] = 0.5 * np.cos(heading) * t, 0.5 * np.sin(heading) * t
    root[:, 2] = 0.32 + 0.02 * np.sin(2 * np.pi * 3 * t)
    root[:, 5], root[:, 6] = np.sin(heading / 2), np.cos(heading / 2)
    timeline = mk.Timeline.uniform(fps, frames)
    source = mk.Motion()
    source.skeleton = robot
    source.add(mk.Track("root", "pose", root, timeline))
    source.add(mk.Track("joints", "value", np.stack(columns, 1), timeline, labels=labels))
    names = [body.name for body in robot.bodies]
    done = retarget.retarget(source, robot, retarget.same_names(names, names),
                             options=retarget.Options(ground_clearance=ground))
    joints = done.motion.tracks["joints"]
    assert joints.labels == labels
    assert np.degrees(np.abs(joints.data - np.stack(columns, 1))).max() < 1e-3
    moved = done.motion.tracks["root"].data[:, :3] - [0.0, 0.0, done.ground_shift]
    assert np.abs(moved - root[:, :3]).max() < 1e-6


def test_a_motion_on_terrain_stands_on_its_terrain() -> None:
    """Spec §7 (ground): a PARC motion comes with its terrain; the robot's lowest point is
    put on that terrain (under each shape), not on z = 0, and the output carries it. The
    same clip with its terrain raised 0.5 m comes out 0.5 m higher."""
    from motionkit.formats.mujoco import mjcf

    character = str(corpus_file("parc", "character", "humanoid.xml"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        source = mk.read(corpus_file("parc", "ms", "sfu.pkl"), character=character)
        robot = mjcf.read(character)  # the IK takes its hinges (PARC reads balls)
    assert isinstance(source, mk.Motion) and source.terrain is not None
    names = [body.name for body in robot.bodies]
    lifted = mk.Motion(source.tracks, source.skeleton, mk.Terrain(
        source.terrain.heights + 0.5, source.terrain.origin, source.terrain.dx), source.meta)
    on, up = (retarget.retarget(motion, robot, retarget.same_names(names, names))
              for motion in (source, lifted))
    assert up.ground_shift - on.ground_shift == pytest.approx(0.5, abs=1e-6)
    assert up.motion.terrain is not None
    assert np.array_equal(up.motion.terrain.heights, source.terrain.heights + 0.5)


def test_feet_named_on_a_map_by_name_are_planted() -> None:
    """A map by name plants nothing by default; naming the feet asks for it."""
    source, robot, _ = gmr_g1_motion()
    names = [body.name for body in robot.bodies]
    feet = ("left_ankle_roll_link", "right_ankle_roll_link")
    done = retarget.retarget(source, robot, retarget.same_names(names, names),
                             options=retarget.Options(feet=feet))
    assert set(done.planted_frames) == set(feet)

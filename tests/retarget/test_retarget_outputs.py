"""Every format that holds a retargeted robot motion reads back, and forward kinematics of
what it reads gives the same body positions as the motion written."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

import motionkit as mk
from conftest import corpus_file
from motionkit import retarget
from motionkit.kinematics.motion import link_poses
from motionkit.model.skeleton import Skeleton

METRES = 1e-6


def _clip_onto(robot: Skeleton, options: retarget.Options | None = None
               ) -> retarget.Retargeted:
    """The corpus clip retargeted onto the G1 with the corpus adapters."""
    folder = corpus_file("retarget", "bvh_to_g1.json").parent
    return retarget.retarget(
        mk.read(corpus_file("bvh", "test_freebvh.bvh")), robot,
        retarget.read_map(folder / "bvh_to_g1.json"),
        rename=retarget.read_rename(folder / "freebvh_lafan1_names.json"),
        fix=retarget.read_frame_fix(folder / "freebvh_orientation_correction.json"),
        options=options or retarget.Options())


@pytest.fixture(scope="module")
def result() -> tuple[retarget.Retargeted, Skeleton]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the model's floor geom belongs to no body
        robot = mk.read(corpus_file("retarget", "g1_mocap_29dof_nomesh.xml"))
    assert isinstance(robot, Skeleton)
    return _clip_onto(robot), robot


@pytest.mark.parametrize("fmt,name", [("gmr", "out.pkl"), ("mimickit", "out.pkl"), ("parc", "ms.pkl"),
                                      ("seq", "out.seq"), ("bvh", "out.bvh")])
def test_the_output_reads_back_with_the_same_body_positions(
        fmt: str, name: str, result: tuple[retarget.Retargeted, Skeleton],
        tmp_path: Path) -> None:
    done, robot = result
    model = str(corpus_file("retarget", "g1_mocap_29dof_nomesh.xml"))
    options = {"character": model} if fmt in ("gmr", "mimickit") else {}
    path = tmp_path / name
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mk.write(path, done.motion, format=fmt, **options)
        back = mk.read(path, format=fmt, **options)
    assert isinstance(back, mk.Motion)
    expected = link_poses(robot, done.motion)
    skeleton = back.skeleton if fmt == "bvh" else robot
    assert skeleton is not None
    found = link_poses(skeleton, back)
    names = list(found.labels or [])
    for k, body in enumerate(expected.labels or []):
        if body in names:
            gap = np.abs(found.data[:, names.index(body), :3] - expected.data[:, k, :3]).max()
            assert gap < METRES, (fmt, body, gap)
    main = back.main_track
    assert main is not None and main.timeline.rate is not None
    assert abs(main.timeline.rate - 30.0) < 1e-9


@pytest.mark.parametrize("name", ["out.bag", "out.mcap"])
def test_a_bag_of_joint_values_reads_back_with_the_same_body_positions(
        name: str, result: tuple[retarget.Retargeted, Skeleton], tmp_path: Path) -> None:
    """A bag output (the retarget command's writer): JointState on /joint_states and the
    free root on /tf (world → pelvis); read back by topic and TF chain, rosbags counting
    the messages, the robot's bodies where they were."""
    from rosbags.highlevel import AnyReader

    from motionkit.retarget.plan import Plan, write_robot_motion

    done, robot = result
    model = str(corpus_file("retarget", "g1_mocap_29dof_nomesh.xml"))
    path = tmp_path / name
    write_robot_motion(path, done.motion, None, Plan(model, by_name=True), lossy=False)
    with AnyReader([path]) as reader:
        counts = {c.topic: c.msgcount for c in reader.connections}
    assert counts == {"/joint_states": 69, "/tf": 69}
    joints = mk.read(f"{path}:/joint_states")
    root = mk.read(f"{path}:tf:world->pelvis")
    assert isinstance(joints, mk.Motion) and isinstance(root, mk.Motion)
    back = mk.Motion()
    back.add(mk.Track("root", "pose", root.tracks["root"].data, done.motion.tracks["root"].timeline))
    back.add(mk.Track("joints", "value", joints.main_track.data,  # type: ignore[union-attr]
                      done.motion.tracks["joints"].timeline,
                      labels=joints.main_track.labels))  # type: ignore[union-attr]
    gap = np.abs(link_poses(robot, back).data[:, :, :3]
                 - link_poses(robot, done.motion).data[:, :, :3]).max()
    assert gap < METRES


def test_a_joint_speed_limit_holds_between_output_frames(
        result: tuple[retarget.Retargeted, Skeleton]) -> None:
    """GMR's velocity limit never reaches its solver (spec §7); this one narrows the box of
    every frame to the previous frame ± speed / fps."""
    done, robot = result
    free = np.abs(np.diff(done.motion.tracks["joints"].data, axis=0)).max() * 30.0
    limit = 2.0
    assert free > limit  # without the limit some joint is faster: the test can fail
    limited = _clip_onto(robot, retarget.Options(max_joint_speed=limit))
    speed = np.abs(np.diff(limited.motion.tracks["joints"].data, axis=0)) * 30.0
    assert speed.max() <= limit + 1e-9


def test_smoothing_lowers_the_joints_acceleration_for_a_little_tracking(
        result: tuple[retarget.Retargeted, Skeleton]) -> None:
    """``smoothing=10``: each frame's joints pulled toward constant speed from the two
    before. Measured: RMS joint acceleration 47 → 34 rad/s², worst 639 → 380, mean
    tracking error +0.1 mm; the joint limits still hold."""
    done, robot = result
    smooth = _clip_onto(robot, retarget.Options(smoothing=10.0))

    def acceleration(q: np.ndarray) -> np.ndarray:
        return np.diff(q, 2, axis=0) * 30.0**2

    free, held = (acceleration(r.motion.tracks["joints"].data) for r in (done, smooth))
    assert np.sqrt((held**2).mean()) < 0.8 * np.sqrt((free**2).mean())
    assert np.abs(held).max() < 0.7 * np.abs(free).max()
    assert smooth.position_errors.mean() < done.position_errors.mean() + 1e-3
    q = smooth.motion.tracks["joints"].data
    assert np.all(q >= robot.lower[6:] - 1e-9) and np.all(q <= robot.upper[6:] + 1e-9)


@pytest.mark.parametrize("options", [{"smoothing": 0.0}, {"smoothing": float("nan")},
                                     {"smoothing": 1.0, "like_gmr": True}])
def test_smoothing_must_be_a_positive_weight_outside_gmr_mode(options: dict[str, object]) -> None:
    with pytest.raises(mk.ConversionError):
        retarget.Options(**options)  # type: ignore[arg-type]


def test_the_source_and_the_robot_show_side_by_side(
        result: tuple[retarget.Retargeted, Skeleton], tmp_path: Path) -> None:
    """``motionkit view human.bvh out.pkl --model g1.xml``: the BVH moves its own skeleton,
    the model moves the robot's joint values."""
    from motionkit.view import build_scene

    done, robot = result
    model = str(corpus_file("retarget", "g1_mocap_29dof_nomesh.xml"))
    out = tmp_path / "out.pkl"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mk.write(out, done.motion, format="gmr", character=model)
        scene = build_scene(str(corpus_file("bvh", "test_freebvh.bvh")), str(out), model=model)
    human, machine = scene.actors
    assert human.labels[0] == "mixamorig:Hips"
    assert machine.labels == [body.name for body in robot.bodies]
    expected = link_poses(robot, done.motion).data[:, :, :3]
    assert np.abs(machine.positions - expected[machine.frames]).max() < 1e-5

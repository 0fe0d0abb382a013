"""robomimic and Isaac Lab HDF5 episode files: the corpus files against robomimic's own
reading of them (the stored oracle JSON; robomimic is not installed here), Isaac Lab's
recorder layouts (sim_args and env_kwargs), and broken files."""

from __future__ import annotations

import importlib
import json
import shutil
import warnings
from pathlib import Path

import numpy as np
import pytest

import motionkit as mk
from conftest import _require, corpus_file
from motionkit.errors import FormatError, MotionkitWarning
from motionkit.model import Motion

# in the test extra: missing, it is a broken install, which CI (MOTIONKIT_REQUIRE_CORPUS) fails
h5py = importlib.import_module("h5py") if _require() else pytest.importorskip("h5py")
from motionkit.formats.hdf5 import episodes  # noqa: E402  (needs h5py)

OBS = ["robot0_joint_pos", "robot0_joint_vel", "robot0_eef_pos", "robot0_eef_quat",
       "robot0_gripper_qpos"]


def _robomimic() -> Path:
    return corpus_file("episodes", "hdf5", "robomimic_tiny.hdf5")


def _isaaclab() -> Path:
    return corpus_file("episodes", "hdf5", "isaaclab_tiny.hdf5")


def _oracle() -> dict[str, object]:
    return json.loads(corpus_file("episodes", "hdf5", "robomimic_tiny.oracle.json").read_text())


def _track(motion: Motion, key: str) -> np.ndarray:
    return motion.tracks["joints" if key == "robot0_joint_pos" else f"obs/{key}"].data


# ------------------------------------------------------------------ robomimic
def test_robomimic_demos_masks_and_shapes_equal_robomimics() -> None:
    oracle = _oracle()
    demos = episodes.read_demos(_robomimic())
    assert [m.meta["name"] for m in demos] == ["demo_0", "demo_1", "demo_2"]
    assert sum(m.frames for m in demos) == oracle["SequenceDataset(seq_length=1)"]["None"]["len"]
    train = episodes.read_demos(_robomimic(), mask="train")
    assert [m.meta["name"] for m in train] == oracle["get_demos_for_filter_key(train)"]
    assert sum(m.frames for m in train) == oracle["SequenceDataset(seq_length=1)"]["train"]["len"]
    valid = episodes.read_demos(_robomimic(), mask="valid")
    assert [m.meta["name"] for m in valid] == oracle["get_demos_for_filter_key(valid)"]
    shapes = oracle["get_shape_metadata_from_dataset"]
    first = demos[0]
    assert first.tracks["actions"].data.shape[1] == shapes["ac_dim"]
    for key, shape in shapes["all_shapes"].items():
        assert list(_track(first, key).shape[1:]) == shape
    assert first.meta["hdf5"]["env_args"] == oracle["get_env_metadata_from_dataset"]


@pytest.mark.parametrize("mask", [None, "train"])
def test_robomimic_items_equal_robomimics_sequence_dataset(mask: str | None) -> None:
    """SequenceDataset's item i is the i-th step over the (masked) demos in their order."""
    result = _oracle()["SequenceDataset(seq_length=1)"][str(mask)]
    demos = episodes.read_demos(_robomimic(), mask=mask)
    steps = [(motion, frame) for motion in demos for frame in range(motion.frames)]
    assert len(steps) == result["len"]
    for index, item in result["items"].items():
        motion, frame = steps[int(index)]
        for key, value in item["obs"].items():
            assert np.array_equal(_track(motion, key)[frame], np.asarray(value)[0]), key
        assert np.array_equal(motion.tracks["actions"].data[frame], np.asarray(item["actions"])[0])
        assert motion.tracks["rewards"].data[frame, 0] == item["rewards"][0]
        assert motion.tracks["dones"].data[frame, 0] == item["dones"][0]


def test_robomimic_rate_joint_names_and_quaternions() -> None:
    with pytest.warns(MotionkitWarning, match="3 demos; read demo_0"):
        motion = mk.read(_robomimic())
    assert isinstance(motion, Motion) and motion.meta["source_format"] == "hdf5"
    joints = motion.tracks["joints"]
    assert joints.timeline.rate == 20.0  # robosuite's control_freq
    assert motion.meta["hdf5"]["fps"] == "env_args.env_kwargs.control_freq"
    assert joints.labels == [f"joint_{i}" for i in range(7)]
    assert "assumed" in motion.meta["hdf5"]["joint_names"]
    quat = motion.tracks["obs/robot0_eef_quat"]
    assert quat.kind == "quaternion" and np.array_equal(quat.data[0], [1.0, 0, 0, 0])  # xyzw kept
    names = [f"panda_joint{i}" for i in range(1, 8)]
    named = mk.read(_robomimic(), demo=2, joint_names=names, fps=10)
    assert isinstance(named, Motion)
    assert named.tracks["joints"].labels == names and named.frames == 12
    assert named.tracks["joints"].timeline.rate == 10.0
    lines = mk.formats.registry.by_name("hdf5").describe(named)
    assert lines[:3] == ["robomimic file: demo_2 of 3 demos (demo=N reads another)",
                         "rate from: the fps option", "joint names: the joint_names option"]
    with pytest.raises(FormatError, match="no demo_1 in mask 'train'"):
        mk.read(_robomimic(), demo=1, mask="train")


# ------------------------------------------------------------------ Isaac Lab
def test_isaaclab_recorder_file() -> None:
    with pytest.warns(MotionkitWarning, match=r"no frame rate; its frames are numbered only \(fps=N"):
        demos = episodes.read_demos(_isaaclab())
    assert [(m.meta["name"], m.frames) for m in demos] == [("demo_0", 16), ("demo_1", 10)]
    first = demos[0]
    own = first.meta["hdf5"]
    assert own["layout"] == "isaaclab"
    assert own["attrs"] == {"num_samples": 16, "seed": 42, "success": True}
    assert demos[1].meta["hdf5"]["attrs"]["success"] is False
    joints = first.tracks["joints"]
    assert own["joints"] == "states/articulation/robot/joint_position"
    assert joints.data.shape == (16, 9) and joints.data.dtype == np.float32
    assert joints.timeline.frame_numbered  # no rate in this file: frames only
    root = first.tracks["states/articulation/robot/root_pose"]
    assert root.kind == "pose" and np.array_equal(root.data[0], [0, 0, 0, 0, 0, 0, 1])  # wxyz → xyzw
    cube = first.tracks["states/rigid_object/cube_1/root_pose"]
    assert np.allclose(cube.data[0], [0.5, 0, 0.0203, 0, 0, 0, 1])
    assert np.array_equal(first.tracks["obs/eef_quat"].data[0], [1, 0, 0, 0])  # w=0,x=1 → xyzw
    assert list(own["initial_state"]) == [
        "initial_state/articulation/robot/joint_position",
        "initial_state/articulation/robot/joint_velocity",
        "initial_state/articulation/robot/root_pose",
        "initial_state/articulation/robot/root_velocity",
        "initial_state/rigid_object/cube_1/root_pose",
        "initial_state/rigid_object/cube_1/root_velocity"]
    assert np.array_equal(own["initial_state"]["initial_state/articulation/robot/joint_position"],
                          joints.data[:1])


def _with_env_args(tmp_path: Path, env_args: dict[str, object], next_obs: bool = False) -> Path:
    path = tmp_path / "isaaclab.hdf5"
    shutil.copy(_isaaclab(), path)
    with h5py.File(path, "r+") as handle:
        handle["data"].attrs["env_args"] = json.dumps(env_args)
        if next_obs:
            for name in handle["data"]:
                obs = handle["data"][name]["obs/joint_pos"][()]
                handle["data"][name]["next_obs/joint_pos"] = np.concatenate([obs[1:], obs[-1:]])
    return path


@pytest.mark.parametrize("key", ["sim_args", "env_kwargs"])
def test_isaaclab_rate_from_either_layout(tmp_path: Path, key: str) -> None:
    args = {"env_name": "Isaac-Stack-Cube-Franka-IK-Rel-v0", "type": 2,
            key: {"dt": 0.01, "decimation": 2, "render_interval": 2, "num_envs": 1}}
    path = _with_env_args(tmp_path, args, next_obs=key == "env_kwargs")
    motion = episodes.read(path, demo=0)
    assert motion.tracks["joints"].timeline.rate == pytest.approx(50.0)
    assert "dt × decimation" in motion.meta["hdf5"]["fps"]
    if key == "env_kwargs":  # the fork's robomimic-0.5 layout adds next_obs
        assert motion.tracks["next_obs/joint_pos"].frames == 16


def test_isaaclab_to_lerobot_with_names_and_rate(tmp_path: Path) -> None:
    names = [f"panda_joint{i}" for i in range(1, 8)] + ["finger_1", "finger_2"]
    motion = episodes.read(_isaaclab(), demo=1, joint_names=names, fps=30)
    small = Motion({"joints": motion.tracks["joints"], "actions": motion.tracks["actions"]},
                   meta={"task": "stack"})
    mk.write(tmp_path / "ds", small, format="lerobot")
    back = mk.read(tmp_path / "ds")
    assert isinstance(back, Motion)
    assert back.tracks["joints"].labels == names
    assert np.array_equal(back.tracks["joints"].data, motion.tracks["joints"].data)


# ------------------------------------------------------------------ broken files
def test_a_demo_whose_arrays_differ_in_length_is_one_error(tmp_path: Path) -> None:
    path = tmp_path / "bad.hdf5"
    shutil.copy(_robomimic(), path)
    with h5py.File(path, "r+") as handle:
        del handle["data/demo_1/obs/robot0_eef_pos"]
        handle["data/demo_1/obs/robot0_eef_pos"] = np.zeros((14, 3))
    with pytest.raises(FormatError, match="demo_1: obs/robot0_eef_pos has 14 rows but actions "
                                          "has 15") as caught:
        episodes.read_demos(path, fps=10)
    assert caught.value.path == str(path)
    assert episodes.read(path, demo=0).frames == 20  # the other demos still read


def test_num_samples_disagreeing_with_the_arrays(tmp_path: Path) -> None:
    path = tmp_path / "bad.hdf5"
    shutil.copy(_robomimic(), path)
    with h5py.File(path, "r+") as handle:
        handle["data/demo_0"].attrs["num_samples"] = 21
    with pytest.raises(FormatError, match="num_samples is 21 but the arrays have 20"):
        episodes.read(path, demo=0)
    for value in ("20", np.array([20, 20])):
        with h5py.File(path, "r+") as handle:
            handle["data/demo_0"].attrs["num_samples"] = value
        with pytest.raises(FormatError, match="num_samples must be one integer"):
            episodes.read(path, demo=0)


def test_demos_sort_by_number_and_odd_names_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "many.hdf5"
    with h5py.File(path, "w") as handle:
        for number in (10, 9, 2):
            handle[f"data/demo_{number}/actions"] = np.full((3, 2), number, dtype=np.float64)
    names = [m.meta["name"] for m in episodes.read_demos(path, fps=10)]
    assert names == ["demo_2", "demo_9", "demo_10"]
    with h5py.File(path, "r+") as handle:
        handle["data/extra/actions"] = np.zeros((3, 2))
    with pytest.raises(FormatError, match="data/extra is not named demo_N"):
        episodes.read_demos(path, fps=10)


def test_links_to_other_files_are_refused(tmp_path: Path) -> None:
    other = tmp_path / "other.hdf5"
    with h5py.File(other, "w") as handle:
        handle["secret"] = np.zeros((3, 2))
    path = tmp_path / "linked.hdf5"
    with h5py.File(path, "w") as handle:
        handle["data/demo_0/actions"] = np.zeros((3, 2))
        handle["data/demo_0/obs"] = h5py.ExternalLink(str(other), "/secret")
    with pytest.raises(FormatError, match="ExternalLink"):
        episodes.read(path, fps=10)


@pytest.mark.parametrize("kind", ["external", "soft"])
def test_a_link_on_a_later_demo_is_refused_by_every_read(tmp_path: Path, kind: str) -> None:
    other = tmp_path / "other.hdf5"
    with h5py.File(other, "w") as handle:
        handle["stolen/actions"] = np.full((3, 2), 42.0)
    path = tmp_path / "linked.hdf5"
    with h5py.File(path, "w") as handle:
        handle["data/demo_0/actions"] = np.zeros((3, 2))
        handle["hidden/actions"] = np.full((3, 2), 7.0)
        handle["data/demo_1"] = (h5py.ExternalLink(str(other), "/stolen") if kind == "external"
                                 else h5py.SoftLink("/hidden"))
    link = "ExternalLink" if kind == "external" else "SoftLink"
    for read in (lambda: episodes.read_demos(path, fps=10),
                 lambda: episodes.read(path, demo=1, fps=10),
                 lambda: episodes.read(path, demo=0, fps=10)):
        with pytest.raises(FormatError, match=f"/data/demo_1 is a {link}"):
            read()


def test_the_array_budget_is_summed_over_the_demos_of_a_read(tmp_path: Path) -> None:
    path = tmp_path / "zeros.hdf5"
    with h5py.File(path, "w") as handle:
        for i in range(3):  # 32 MB of zeros each, a few kB of gzip: each alone fits
            handle.create_dataset(f"data/demo_{i}/actions", data=np.zeros((1_000_000, 4)),
                                  compression="gzip", chunks=(100_000, 4))
    assert episodes.read(path, demo=2, fps=10).frames == 1_000_000
    with pytest.raises(FormatError, match="array byte budget"):
        episodes.read_demos(path, fps=10)


def test_not_hdf5_and_unknown_masks(tmp_path: Path) -> None:
    path = tmp_path / "fake.hdf5"
    path.write_bytes(b"not hdf5 at all")
    with pytest.raises(FormatError, match="not a readable HDF5 file"):
        mk.read(path)
    with pytest.raises(FormatError, match="no mask 'test' \\(masks: train, valid\\)"):
        episodes.read_demos(_robomimic(), mask="test")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert episodes.read(_robomimic(), demo=0).frames == 20  # a chosen demo: no warning

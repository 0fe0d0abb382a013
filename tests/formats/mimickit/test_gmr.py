"""GMR robot motions. No GMR file exists in public repositories, so the fixtures are made
here as GMR's scripts make them: from the real MimicKit g1 walk (root exp-map made an
x y z w quaternion, DOFs as dof_pos, fps 120) and from a go2 gait whose body positions
come from MuJoCo with the root at the origin."""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from mimickit_helpers import mujoco_model, quaternions

import motionkit as mk
from conftest import corpus_file, require_peer
from motionkit.formats import registry
from motionkit.formats.shared.pickles import safepickle


def _g1_frames() -> np.ndarray:
    path = corpus_file("mimickit", "g1_walk.pkl")
    values = safepickle.loads(path.read_bytes(), path, "test", allowed={})
    return np.array(values["frames"], dtype=np.float64)


def _g1_gmr(tmp_path: Path) -> Path:
    """The g1 walk as GMR's single-file scripts save it (NumPy 2 names, protocol 4)."""
    frames = _g1_frames()
    values = {"fps": 120, "root_pos": frames[:, :3].copy(), "root_rot": quaternions(frames[:, 3:6]),
              "dof_pos": frames[:, 6:].copy(), "local_body_pos": None, "link_body_list": None}
    path = tmp_path / "g1_walk_gmr.pkl"
    path.write_bytes(pickle.dumps(values, protocol=4))
    return path


def _go2_gmr(tmp_path: Path, mujoco: Any) -> tuple[Path, dict[str, Any]]:
    """A go2 gait with body positions from MuJoCo (root at the origin, no rotation), float
    fps and the BVH dataset script's key order."""
    model = mujoco_model(mujoco, corpus_file("mimickit", "go2.xml"))
    data = mujoco.MjData(model)
    rng = np.random.default_rng(3)
    count = 10
    rot = rng.normal(size=(count, 4))
    rot /= np.linalg.norm(rot, axis=1, keepdims=True)
    dofs = rng.uniform(-1, 1, (count, 12))
    bodies = np.empty((count, model.nbody - 1, 3), np.float32)
    for frame in range(count):
        data.qpos[:] = np.concatenate([[0, 0, 0, 1, 0, 0, 0], dofs[frame]])
        mujoco.mj_kinematics(model, data)
        bodies[frame] = data.xpos[1:]
    values = {"root_pos": rng.uniform(-1, 1, (count, 3)), "root_rot": rot, "dof_pos": dofs,
              "local_body_pos": bodies, "fps": 29.97,
              "link_body_list": [model.body(i).name for i in range(1, model.nbody)]}
    path = tmp_path / "go2_gmr.pkl"
    path.write_bytes(pickle.dumps(values, protocol=4))
    return path, values


@pytest.mark.corpus
def test_a_gmr_file_is_sniffed_and_read(tmp_path: Path) -> None:
    path = _g1_gmr(tmp_path)
    assert registry.for_reading(path).name == "gmr"
    motion = mk.read(path)
    frames = _g1_frames()
    root = motion.tracks["root"]
    assert root.timeline.rate == 120 and root.frames == 125
    np.testing.assert_array_equal(root.data[:, :3], frames[:, :3])
    np.testing.assert_array_equal(root.data[:, 3:], quaternions(frames[:, 3:6]))
    np.testing.assert_array_equal(motion.tracks["joints"].data, frames[:, 6:])
    assert "body_positions" not in motion.tracks
    assert motion.meta["gmr"] == {"fps": 120, "fps_key": "fps", "key_order": [
        "fps", "root_pos", "root_rot", "dof_pos", "local_body_pos", "link_body_list"],
        "protocol": 4, "numpy_module": "numpy._core"}


@pytest.mark.corpus
def test_the_writer_uses_numpy_1_names_and_gmr_key_order(tmp_path: Path) -> None:
    motion = mk.read(_g1_gmr(tmp_path))
    mk.write(tmp_path / "out.pkl", motion, format="gmr")
    data = (tmp_path / "out.pkl").read_bytes()
    assert b"numpy.core.multiarray" in data and b"numpy._core" not in data
    values = safepickle.loads(data, "out.pkl", "test")
    assert list(values) == ["fps", "root_pos", "root_rot", "dof_pos", "local_body_pos",
                            "link_body_list"]
    assert type(values["fps"]) is int and values["local_body_pos"] is None
    again = mk.read(tmp_path / "out.pkl")
    for name in ("root", "joints"):
        np.testing.assert_array_equal(again.tracks[name].data, motion.tracks[name].data)
    mk.write(tmp_path / "twice.pkl", again, format="gmr")
    assert (tmp_path / "twice.pkl").read_bytes() == data


@pytest.mark.corpus
def test_with_the_robot_mjcf_joints_are_labelled_and_fk_matches_mujoco(tmp_path: Path) -> None:
    mujoco = require_peer("mujoco")
    path, values = _go2_gmr(tmp_path, mujoco)
    go2 = corpus_file("mimickit", "go2.xml")
    motion = mk.read(path, character=go2)
    model = mujoco_model(mujoco, go2)
    data = mujoco.MjData(model)
    assert motion.tracks["joints"].labels == [model.joint(i).name for i in range(1, model.njnt)]
    bodies = motion.tracks["body_positions"]
    assert bodies.labels == values["link_body_list"] and bodies.data.dtype == np.float32
    assert bodies.attrs["frame"].startswith("root")
    assert motion.tracks["root"].timeline.rate == pytest.approx(29.97)
    assert motion.skeleton is not None
    links = mk.kinematics.link_motion(motion.skeleton, motion).tracks["links"].data
    for frame in range(10):
        rot = values["root_rot"][frame]
        data.qpos[:] = np.concatenate([values["root_pos"][frame], [rot[3], *rot[:3]],
                                       values["dof_pos"][frame]])
        mujoco.mj_kinematics(model, data)
        np.testing.assert_allclose(links[frame, :, :3], data.xpos[1:], rtol=0, atol=1e-12)
    mk.write(tmp_path / "out.pkl", motion, format="gmr", character=go2)
    written = safepickle.loads((tmp_path / "out.pkl").read_bytes(), "out.pkl", "test")
    assert written["fps"] == 29.97 and written["link_body_list"] == values["link_body_list"]
    np.testing.assert_array_equal(written["local_body_pos"], values["local_body_pos"])
    np.testing.assert_array_equal(written["dof_pos"], values["dof_pos"])
    np.testing.assert_array_equal(written["root_rot"], values["root_rot"])


@pytest.mark.corpus
def test_a_robot_of_another_size_is_named(tmp_path: Path) -> None:
    with pytest.raises(mk.FormatError, match=r"GMR dof_pos has 29 columns, robot 'go2_description' has "
                                             r"nq - 7 = 12"):
        mk.read(_g1_gmr(tmp_path), character=corpus_file("mimickit", "go2.xml"))


def test_missing_fps_defaults_to_30_with_a_warning(tmp_path: Path) -> None:
    rot = np.tile([0.0, 0.0, 0.0, 1.0], (3, 1))
    values = {"root_pos": np.zeros((3, 3)), "root_rot": rot, "dof_pos": np.zeros((3, 2))}
    (tmp_path / "a.pkl").write_bytes(pickle.dumps(values, protocol=4))
    with pytest.warns(mk.MotionkitWarning, match="no fps; using 30"):
        motion = mk.read(tmp_path / "a.pkl")
    assert motion.tracks["root"].timeline.rate == 30
    (tmp_path / "b.pkl").write_bytes(pickle.dumps({**values, "mocap_frame_rate": 50}, protocol=4))
    assert mk.read(tmp_path / "b.pkl").meta["gmr"]["fps_key"] == "mocap_frame_rate"


@pytest.mark.corpus
def test_gmr_and_mimickit_convert_both_ways(tmp_path: Path) -> None:
    """GMR's g1 dof_pos are MimicKit's g1 DOFs: columns copied, root exp-map recomputed."""
    source = corpus_file("mimickit", "g1_walk.pkl")
    with pytest.raises(mk.ConversionError, match="the meaning of track 'joints'"):
        mk.convert(_g1_gmr(tmp_path), tmp_path / "mk.pkl", to_format="mimickit")  # qpos != DOFs
    with pytest.warns(mk.MotionkitWarning, match="the meaning of track 'joints'"):  # g1: they are
        mk.convert(_g1_gmr(tmp_path), tmp_path / "mk.pkl", to_format="mimickit", lossy=True)
    back = safepickle.loads((tmp_path / "mk.pkl").read_bytes(), "mk.pkl", "test")
    frames = np.array(back["frames"])
    original = _g1_frames()
    np.testing.assert_array_equal(frames[:, 6:], original[:, 6:])
    np.testing.assert_array_equal(frames[:, :3], original[:, :3])
    np.testing.assert_allclose(frames[:, 3:6], original[:, 3:6], rtol=0, atol=1e-12)
    with pytest.raises(mk.ConversionError, match="metadata 'loop_mode'"):
        mk.convert(source, tmp_path / "gmr.pkl", to_format="gmr")
    with pytest.warns(mk.MotionkitWarning, match="loop_mode"):
        mk.convert(source, tmp_path / "gmr.pkl", to_format="gmr", lossy=True)
    gmr = mk.read(tmp_path / "gmr.pkl")
    mimickit = mk.read(source)
    for name in ("root", "joints"):
        np.testing.assert_array_equal(gmr.tracks[name].data, mimickit.tracks[name].data)


@pytest.mark.parametrize("protocol", [2, 4, 5])
def test_a_long_gmr_script_motion_is_detected(tmp_path: Path, protocol: int) -> None:
    # GMR's scripts save local_body_pos = None with pickle.dump; in a long motion root_pos
    # and root_rot fill the first 64 KiB, so dof_pos is beyond any sniffing head.
    rng = np.random.default_rng(7)
    frames = 2400
    rot = rng.normal(size=(frames, 4))
    values = {"fps": 30, "root_pos": rng.normal(size=(frames, 3)),
              "root_rot": rot / np.linalg.norm(rot, axis=1, keepdims=True),
              "dof_pos": rng.normal(size=(frames, 29)), "local_body_pos": None,
              "link_body_list": None}
    path = tmp_path / "long.pkl"
    path.write_bytes(pickle.dumps(values, protocol=protocol))
    assert path.read_bytes().find(b"dof_pos") > registry.SNIFF_BYTES
    assert registry.for_reading(path).name == "gmr"
    motion = mk.read(path)
    assert isinstance(motion, mk.Motion)
    assert np.array_equal(motion.tracks["joints"].data, values["dof_pos"])
    assert np.array_equal(motion.tracks["root"].data[:, :3], values["root_pos"])
    assert "body_positions" not in motion.tracks


def test_gmr_sniff_leaves_the_other_pickles_of_the_corpus_alone() -> None:
    paths = [corpus_file("mimickit", "g1_walk.pkl"), corpus_file("mimickit",
             "humanoid_platform05.pkl"), corpus_file("parc", "ms", "sfu.pkl"),
             corpus_file("parc", "ms", "TEASER_TERRAIN.pkl"),
             corpus_file("parc", "legacy_v0.1", "TEASER_TERRAIN.pkl")]
    for path in paths:
        head = path.read_bytes()[:registry.SNIFF_BYTES]
        assert not registry.by_name("gmr").sniff(head), path

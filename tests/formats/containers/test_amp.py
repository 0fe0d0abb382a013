"""Isaac Lab AMP .npz: the real humanoid_run.npz read, its rotations reproduced by FK from
its DOFs, files written from FK that Isaac Lab's MotionLoader rules accept, round trips."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation

import motionkit as mk
from conftest import corpus_file
from motionkit.formats.containers import _derive
from motionkit.formats.shared.mjcf.character import load_character
from motionkit.kinematics import character_poses
from motionkit.model.character import Character


def _run() -> Path:
    return corpus_file("containers", "isaaclab", "humanoid_run.npz")


def _isaac_humanoid() -> Character:
    """The PARC humanoid with the elbows turning about local y, as Isaac Lab's does (§2)."""
    char = copy.copy(load_character(corpus_file("parc", "character", "humanoid.xml")))
    char.axes = char.axes.copy()
    for name in ("right_elbow", "left_elbow"):
        char.axes[char.joint_names.index(name), 0] = (0.0, 1.0, 0.0)
    return char


def test_reads_the_real_file() -> None:
    motion = mk.read(_run())
    assert motion.meta["source_format"] == "isaaclab-amp"
    raw = np.load(_run())
    assert motion.tracks["root"].timeline.rate == 60 and motion.frames == 82
    assert motion.tracks["joints"].labels == raw["dof_names"].tolist()
    assert motion.tracks["links"].labels == raw["body_names"].tolist()
    wxyz = raw["body_rotations"][:, 0]
    assert np.array_equal(motion.tracks["root"].data[:, 3:], wxyz[:, [1, 2, 3, 0]])
    assert any("w x y z" in line for line in mk.formats.registry.by_name("isaaclab-amp")
               .describe(motion))


def test_rotations_from_dof_positions_match_the_file() -> None:
    char = _isaac_humanoid()
    motion = mk.read(_run(), character=char)
    root = motion.tracks["root"].data
    _, rot = character_poses(char, root[:, :3], root[:, 3:], motion.tracks["joint_rotations"].data)
    stored = motion.tracks["links"].data[..., 3:]
    assert motion.tracks["links"].labels == char.body_names
    assert (1 - np.abs((rot * stored).sum(-1))).max() < 1e-6


def _loader_sample(arrays: np.lib.npyio.NpzFile, times: np.ndarray) -> dict[str, np.ndarray]:
    """Isaac Lab's MotionLoader rule (spec §2): duration (N−1)/fps, index round(phase·(N−1)),
    blend towards the next frame, slerp on w x y z."""
    frames = arrays["dof_positions"].shape[0]
    duration = (frames - 1) / float(arrays["fps"])
    phase = np.clip(times / duration, 0, 1)
    index0 = np.round(phase * (frames - 1)).astype(int)
    index1 = np.minimum(index0 + 1, frames - 1)
    blend = (phase * (frames - 1) - index0)[:, None]
    dofs = (1 - blend) * arrays["dof_positions"][index0] + blend * arrays["dof_positions"][index1]
    return {"dof_positions": dofs, "body_rotations": arrays["body_rotations"][index0]}


def test_written_from_fk_follows_the_loader(tmp_path: Path) -> None:
    char = _isaac_humanoid()
    source = mk.read(_run(), character=char)
    motion = mk.Motion({name: source.tracks[name] for name in ("root", "joint_rotations")})
    out = tmp_path / "amp.npz"
    mk.write(out, motion, format="isaaclab-amp", character=char)
    arrays = np.load(out)
    raw = np.load(_run())
    assert arrays["fps"].dtype == np.int64 and arrays["fps"].shape == ()
    assert arrays["body_names"].tolist() == raw["body_names"].tolist()
    assert arrays["dof_names"].tolist() == raw["dof_names"].tolist()
    for key in ("dof_positions", "body_positions", "body_rotations", "body_linear_velocities"):
        assert arrays[key].dtype == np.float32
    times = np.arange(82) / 60.0
    sampled = _loader_sample(arrays, times)
    assert np.abs(sampled["dof_positions"] - raw["dof_positions"]).max() < 1e-5
    dot = np.abs((sampled["body_rotations"] * raw["body_rotations"]).sum(-1))
    assert (1 - dot).max() < 1e-6
    assert (arrays["body_rotations"][..., 0] >= 0).all()
    # velocities: the time derivative at each frame, as the loader interpolates them
    expected = np.gradient(arrays["body_positions"].astype(np.float64), 1 / 60.0, axis=0)
    assert np.abs(arrays["body_linear_velocities"] - expected).max() < 1e-3
    assert np.abs(arrays["dof_velocities"][1:-1] - (arrays["dof_positions"][2:]
                  - arrays["dof_positions"][:-2]) * 30.0).max() < 1e-3
    stated = json.loads(str(arrays["motionkit_conventions"]))
    assert stated["quaternion_order"] == "wxyz" and stated["body_order"] == char.body_names


def test_read_back_keeps_everything(tmp_path: Path) -> None:
    out = tmp_path / "again.npz"
    mk.write(out, mk.read(_run()), format="isaaclab-amp")
    before, after = np.load(_run()), np.load(out)
    for key in before.files:
        assert before[key].dtype == after[key].dtype
        assert np.array_equal(before[key], after[key]), key


def test_refusals(tmp_path: Path) -> None:
    path = tmp_path / "broken.npz"
    np.savez(path, fps=np.array(30), dof_names=np.array(["a"]), body_rotations=np.zeros((1, 1, 4)))
    with pytest.raises(mk.FormatError, match=r"not an Isaac Lab AMP motion: no .*dof_positions"):
        mk.read(path, format="isaaclab-amp")
    motion = mk.read(_run())
    del motion.tracks["links"]
    with pytest.raises(mk.ConversionError, match="character"):
        mk.write(tmp_path / "x.npz", motion, format="isaaclab-amp", lossy=True)


def test_angular_velocity_of_a_steady_turn() -> None:
    times = np.arange(10) / 50.0
    quats = Rotation.from_rotvec(np.outer(times, [0.0, 0.0, 2.0])).as_quat()
    assert np.allclose(_derive.angular_velocity(quats, 1 / 50.0), [0, 0, 2.0])


@settings(max_examples=25, deadline=None)
@given(frames=st.integers(1, 8), seed=st.integers(0, 2**31), fps=st.sampled_from([30.0, 50.0, 59.94]))
def test_round_trip(tmp_path_factory: pytest.TempPathFactory, frames: int, seed: int,
                    fps: float) -> None:
    rng = np.random.default_rng(seed)
    timeline = mk.Timeline.uniform(fps, frames)
    rot = Rotation.random(frames * 3, random_state=seed).as_quat().reshape(frames, 3, 4)
    links = np.concatenate([rng.normal(size=(frames, 3, 3)), rot], axis=-1)
    motion = mk.Motion()
    motion.add(mk.Track("root", "pose", links[:, 0], timeline))
    motion.add(mk.Track("joints", "value", rng.normal(size=(frames, 4)), timeline,
                        ["a_x", "a_y", "a_z", "knee"]))
    motion.add(mk.Track("links", "pose", links, timeline, ["pelvis", "thigh", "shin"]))
    out = tmp_path_factory.mktemp("amp") / "m.npz"
    mk.write(out, motion, format="isaaclab-amp")
    again = mk.read(out)
    assert again.tracks["root"].timeline.rate == pytest.approx(fps)
    assert again.tracks["links"].labels == ["pelvis", "thigh", "shin"]
    assert np.allclose(again.tracks["joints"].data, motion.tracks["joints"].data, atol=1e-6)
    dot = np.abs((again.tracks["links"].data[..., 3:] * rot).sum(-1))
    assert (1 - dot).max() < 1e-6
    assert np.allclose(again.tracks["links"].data[..., :3], links[..., :3], atol=1e-5)

"""MimicKit motion pickles: the real files byte for byte, their frame layout decoded here
with NumPy, FK against MuJoCo, the stored variants (float/numpy/torch fps, array frames)
and the writer's rules."""

from __future__ import annotations

import pickle
import struct
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from mimickit_helpers import mujoco_model, quaternions

import motionkit as mk
from conftest import corpus_file, require_peer
from motionkit.formats import registry
from motionkit.formats.shared.mjcf.character import load_character
from motionkit.formats.shared.pickles import safepickle

REAL = {"g1_walk.pkl": (125, 35, 120, 1), "humanoid_platform05.pkl": (271, 34, 30, 0)}


def _humanoid() -> Path:
    return corpus_file("parc", "character", "humanoid.xml")


def _file_values(path: Path) -> dict[str, Any]:
    values = safepickle.loads(path.read_bytes(), path, "test", allowed={})
    assert isinstance(values, dict)
    return values


# ----------------------------------------------------------------------- the real files
@pytest.mark.corpus
@pytest.mark.parametrize("name", list(REAL))
def test_real_files_are_rewritten_byte_for_byte(tmp_path: Path, name: str) -> None:
    source = corpus_file("mimickit", name)
    motion = mk.read(source)
    assert motion.meta["source_format"] == "mimickit"
    mk.write(tmp_path / "out.pkl", motion, format="mimickit")
    assert (tmp_path / "out.pkl").read_bytes() == source.read_bytes()
    mk.convert(source, tmp_path / "cli.pkl", to_format="mimickit")
    assert (tmp_path / "cli.pkl").read_bytes() == source.read_bytes()


@pytest.mark.corpus
def test_a_motion_read_with_its_character_is_rewritten_byte_for_byte(tmp_path: Path) -> None:
    source = corpus_file("mimickit", "humanoid_platform05.pkl")
    mk.convert(source, tmp_path / "out.pkl", to_format="mimickit", character=_humanoid())
    assert (tmp_path / "out.pkl").read_bytes() == source.read_bytes()


@pytest.mark.corpus
@pytest.mark.parametrize("name", list(REAL))
def test_frame_layout_decoded_with_numpy(name: str) -> None:
    """Columns 0-2 root position, 3-5 root exp-map, then the DOFs; int loop mode, fps."""
    source = corpus_file("mimickit", name)
    rows, width, fps, loop = REAL[name]
    values = _file_values(source)
    assert list(values) == ["loop_mode", "fps", "frames"]
    assert type(values["frames"]) is list and type(values["frames"][0]) is list
    frames = np.array(values["frames"], dtype=np.float64)
    assert frames.shape == (rows, width)
    motion = mk.read(source)
    root = motion.tracks["root"]
    assert root.timeline.rate == fps == values["fps"] and root.frames == rows
    assert motion.meta["loop_mode"] == ("CLAMP", "WRAP")[loop] and values["loop_mode"] == loop
    np.testing.assert_array_equal(root.data[:, :3], frames[:, :3])
    np.testing.assert_allclose(root.data[:, 3:], quaternions(frames[:, 3:6]), rtol=0, atol=1e-15)
    np.testing.assert_array_equal(motion.tracks["joints"].data, frames[:, 6:])
    assert motion.tracks["joints"].labels is None
    assert motion.meta["mimickit"] == {"protocol": 3, "fps": fps, "fps_type": "int",
                                       "frames_container": "list"}


@pytest.mark.corpus
def test_the_character_labels_the_dofs_and_adds_rotations() -> None:
    motion = mk.read(corpus_file("mimickit", "humanoid_platform05.pkl"), character=_humanoid())
    labels = motion.tracks["joints"].labels
    assert labels is not None and len(labels) == 28
    # MimicKit's documented order: abdomen(3) neck(3) right_shoulder(3) right_elbow(1) ...
    assert labels[:10] == ["abdomen_x", "abdomen_y", "abdomen_z", "neck_x", "neck_y", "neck_z",
                           "right_shoulder_x", "right_shoulder_y", "right_shoulder_z",
                           "right_elbow"]
    rotations = motion.tracks["joint_rotations"]
    assert rotations.data.shape == (271, 14, 4) and rotations.labels is not None
    assert motion.skeleton is not None and len(motion.skeleton.bodies) == 15
    with pytest.raises(mk.FormatError, match=r"29 DOFs \(width 35\).*has 28 \(width 34\)"):
        mk.read(corpus_file("mimickit", "g1_walk.pkl"), character=_humanoid())


# ----------------------------------------------------------------------- FK vs MuJoCo
def _links(motion: mk.Motion) -> np.ndarray:
    assert motion.skeleton is not None
    return mk.kinematics.link_motion(motion.skeleton, motion).tracks["links"].data


@pytest.mark.corpus
def test_fk_of_the_humanoid_motion_matches_mujoco() -> None:
    mujoco = require_peer("mujoco")
    motion = mk.read(corpus_file("mimickit", "humanoid_platform05.pkl"), character=_humanoid())
    model = mujoco_model(mujoco, _humanoid())
    data = mujoco.MjData(model)
    char = load_character(_humanoid())
    root = motion.tracks["root"].data
    qpos = char.to_qpos(root[:, :3], root[:, 3:], motion.tracks["joint_rotations"].data)
    links = _links(motion)
    for frame in (0, 100, 270):
        data.qpos[:] = qpos[frame]
        mujoco.mj_kinematics(model, data)
        np.testing.assert_allclose(links[frame, :, :3], data.xpos[1:], rtol=0, atol=1e-12)
        dots = np.abs(np.sum(links[frame, :, 3:] * data.xquat[1:][:, [1, 2, 3, 0]], axis=1))
        np.testing.assert_allclose(dots, 1.0, rtol=0, atol=1e-12)


def _go2_frames(count: int = 12) -> list[list[float]]:
    """Go2 rows: root position, root exp-map, 12 hinge angles (a made-up gait)."""
    rng = np.random.default_rng(7)
    rows = np.zeros((count, 18))
    rows[:, :3] = rng.uniform(-1, 1, (count, 3)) + np.array([0, 0, 0.3])
    rows[:, 3:6] = rng.uniform(-1.5, 1.5, (count, 3))
    rows[:, 6:] = rng.uniform(-1.0, 1.0, (count, 12))
    return rows.tolist()


@pytest.mark.corpus
def test_fk_of_a_go2_motion_matches_mujoco(tmp_path: Path) -> None:
    """An all-hinge robot: MuJoCo's qpos is the row itself (exp-map made a quaternion)."""
    mujoco = require_peer("mujoco")
    go2 = corpus_file("mimickit", "go2.xml")
    path = tmp_path / "go2_gait.pkl"
    path.write_bytes(pickle.dumps({"loop_mode": 1, "fps": 50, "frames": _go2_frames()},
                                  protocol=4))
    motion = mk.read(path, character=go2)
    model = mujoco_model(mujoco, go2)
    data = mujoco.MjData(model)
    assert motion.tracks["joints"].labels == [model.joint(i).name for i in range(1, model.njnt)]
    frames = np.array(_go2_frames())
    links = _links(motion)
    for frame in range(len(frames)):
        q = quaternions(frames[frame:frame + 1, 3:6])[0]
        data.qpos[:] = np.concatenate([frames[frame, :3], [q[3], *q[:3]], frames[frame, 6:]])
        mujoco.mj_kinematics(model, data)
        np.testing.assert_allclose(links[frame, :, :3], data.xpos[1:], rtol=0, atol=1e-12)


# ----------------------------------------------------------------------- detection
@pytest.mark.corpus
def test_sniffing_tells_mimickit_from_parc() -> None:
    mimickit = registry.by_name("mimickit")
    for name in REAL:
        path = corpus_file("mimickit", name)
        assert registry.for_reading(path).name == "mimickit"
        assert mimickit.sniff(path.read_bytes()[:65536])
    for parts in (("parc", "legacy_v0.1", "TEASER_TERRAIN.pkl"), ("parc", "ms", "sfu.pkl")):
        path = corpus_file(*parts)
        assert not mimickit.sniff(path.read_bytes()[:65536])
        assert registry.for_reading(path).name == "parc"


@pytest.mark.corpus
def test_parc_files_fed_to_the_mimickit_reader_name_the_right_format() -> None:
    with pytest.raises(mk.FormatError, match=r"PARC legacy motion; read it with format='parc'"):
        mk.read(corpus_file("parc", "legacy_v0.1", "TEASER_TERRAIN.pkl"), format="mimickit")
    with pytest.raises(mk.FormatError, match=r"PARC MS container.*format='parc'"):
        mk.read(corpus_file("parc", "ms", "sfu.pkl"), format="mimickit")


def test_writing_pkl_without_naming_the_format_stays_parc() -> None:
    assert registry.for_writing("x.pkl").name == "parc"
    assert registry.for_writing("x.pkl", "mimickit").name == "mimickit"


# ----------------------------------------------------------------------- stored variants
ROWS = [[0.1 * i, 0.0, 0.9, 0.0, 0.0, 0.5, 0.25, -0.5] for i in range(4)]


def _write(tmp_path: Path, values: Any, protocol: int = 4) -> Path:
    path = tmp_path / "m.pkl"
    path.write_bytes(pickle.dumps(values, protocol=protocol))
    return path


@pytest.mark.parametrize("protocol", [2, 3, 4, 5])
@pytest.mark.parametrize("fps", [30, 60.0, 29.97])
def test_protocol_and_fps_type_survive_a_round_trip(tmp_path: Path, protocol: int,
                                                    fps: float) -> None:
    path = _write(tmp_path, {"loop_mode": 1, "fps": fps, "frames": ROWS}, protocol)
    motion = mk.read(path)
    assert motion.meta["mimickit"]["fps_type"] == type(fps).__name__
    mk.write(tmp_path / "again.pkl", motion, format="mimickit")
    assert (tmp_path / "again.pkl").read_bytes() == path.read_bytes()


def test_numpy_scalar_fps_and_array_frames(tmp_path: Path) -> None:
    frames = np.array(ROWS, dtype=np.float32)
    path = _write(tmp_path, {"loop_mode": np.int64(0), "fps": np.float64(30.0), "frames": frames})
    motion = mk.read(path)
    assert motion.meta["mimickit"] == {"protocol": 4, "fps": 30.0, "fps_type": "numpy",
                                       "frames_container": "ndarray"}
    np.testing.assert_array_equal(motion.tracks["joints"].data, frames[:, 6:])
    mk.write(tmp_path / "plain.pkl", motion, format="mimickit")
    values = _file_values(tmp_path / "plain.pkl")
    assert values["fps"] == 30 and type(values["fps"]) is int  # written as MimicKit's ints
    assert np.array_equal(values["frames"], frames.astype(np.float64).tolist())


def test_a_leading_axis_of_one_is_dropped_with_a_warning(tmp_path: Path) -> None:
    path = _write(tmp_path, {"loop_mode": 0, "fps": 30, "frames": np.array([ROWS])})
    with pytest.warns(mk.MotionkitWarning, match="extra leading axis"):
        motion = mk.read(path)
    assert motion.tracks["root"].frames == 4


def _torch_scalar(value: float) -> bytes:
    """A 0-d float32 tensor as torch pickles it: _rebuild_tensor_v2 over a legacy
    torch.save stream (as in MimicKit's humanoid_double_kong.pkl, whose fps is one)."""
    def text(word: str) -> bytes:
        return b"X" + struct.pack("<I", len(word)) + word.encode()

    storage = (b"\x80\x02(" + text("storage") + b"ctorch\nFloatStorage\n" + text("0")
               + text("cpu") + b"J\x01\x00\x00\x00NtQ.")
    stream = (pickle.dumps(0x1950A86A20F9469CFC6C, protocol=2) + pickle.dumps(1001, protocol=2)
              + pickle.dumps({"protocol_version": 1001, "little_endian": True,
                              "type_sizes": {"short": 2, "int": 4, "long": 4}}, protocol=2)
              + storage + pickle.dumps(["0"], protocol=2) + struct.pack("<q", 1)
              + struct.pack("<f", value))
    return (b"ctorch._utils\n_rebuild_tensor_v2\n(ctorch.storage\n_load_from_bytes\n"
            + b"B" + struct.pack("<I", len(stream)) + stream + b"\x85RK\x00))\x89}tR")


def test_torch_tensor_fps_is_read_without_torch(tmp_path: Path) -> None:
    frames = pickle.dumps(ROWS, protocol=3)[2:-1]  # the list's opcodes, no PROTO/STOP
    data = (b"\x80\x03}(" + b"X\t\x00\x00\x00loop_modeK\x00" + b"X\x03\x00\x00\x00fps"
            + _torch_scalar(30.0) + b"X\x06\x00\x00\x00frames" + frames + b"u.")
    path = tmp_path / "kong.pkl"
    path.write_bytes(data)
    assert registry.for_reading(path).name == "mimickit"
    motion = mk.read(path)
    assert motion.tracks["root"].timeline.rate == 30.0
    assert motion.meta["mimickit"]["fps_type"] == "array"
    mk.write(tmp_path / "plain.pkl", motion, format="mimickit")
    assert _file_values(tmp_path / "plain.pkl")["fps"] == 30


def test_extra_keys_are_named_in_a_warning(tmp_path: Path) -> None:
    path = _write(tmp_path, {"loop_mode": 0, "fps": 30, "frames": ROWS, "note": "x"})
    with pytest.warns(mk.MotionkitWarning, match="keys note ignored"):
        mk.read(path)


# ----------------------------------------------------------------------- writing
def _motion(frames: int = 4, rate: float = 30.0) -> mk.Motion:
    timeline = mk.Timeline.uniform(rate, frames)
    root = np.zeros((frames, 7))
    root[:, 0] = np.arange(frames)
    root[:, 3:] = [0.0, 0.0, np.sin(0.4), np.cos(0.4)]
    motion = mk.Motion(meta={"loop_mode": "WRAP"})
    motion.add(mk.Track("root", "pose", root, timeline))
    motion.add(mk.Track("joints", "value", np.full((frames, 2), 0.5), timeline,
                        attrs={"layout": "mimickit-dof"}))  # what the columns mean
    return motion


def test_the_writer_lays_out_rows_as_mimickit(tmp_path: Path) -> None:
    mk.write(tmp_path / "w.pkl", _motion(), format="mimickit")
    data = (tmp_path / "w.pkl").read_bytes()
    assert data[:2] == b"\x80\x04"  # protocol 4 by default
    values = _file_values(tmp_path / "w.pkl")
    assert list(values) == ["loop_mode", "fps", "frames"]
    assert values["loop_mode"] == 1 and values["fps"] == 30 and type(values["fps"]) is int
    row = values["frames"][2]
    assert type(row) is list and row[:3] == [2.0, 0.0, 0.0]
    np.testing.assert_allclose(row[3:6], [0.0, 0.0, 0.8], rtol=0, atol=1e-15)
    assert row[6:] == [0.5, 0.5]


def test_the_writer_refuses_what_mimickit_cannot_load(tmp_path: Path) -> None:
    with pytest.raises(mk.ConversionError, match="2 frames or more"):
        mk.write(tmp_path / "one.pkl", _motion(frames=1), format="mimickit")
    motion = _motion()
    timeline = motion.tracks["root"].timeline
    motion.add(mk.Track("contacts", "value", np.zeros((4, 3)), timeline))
    with pytest.raises(mk.ConversionError, match="'contacts'"):
        mk.write(tmp_path / "c.pkl", motion, format="mimickit")
    with pytest.warns(mk.MotionkitWarning, match="'contacts'"):
        mk.write(tmp_path / "c.pkl", motion, format="mimickit", lossy=True)
    rotations = _motion()
    del rotations.tracks["joints"]
    rotations.add(mk.Track("joint_rotations", "quaternion", np.tile([0, 0, 0, 1.0], (4, 14, 1)),
                           timeline))
    with pytest.raises(mk.ConversionError, match="need a character"):
        mk.write(tmp_path / "r.pkl", rotations, format="mimickit")
    stamped = mk.Motion(meta={})
    stamped.add(mk.Track("root", "pose", _motion().tracks["root"].data,
                         mk.Timeline.stamped([0.0, 0.1, 0.3, 0.4])))
    with pytest.raises(mk.ConversionError, match="time stamps"):
        mk.write(tmp_path / "s.pkl", stamped, format="mimickit")


@pytest.mark.corpus
def test_joint_rotations_become_dofs_through_the_character(tmp_path: Path) -> None:
    source = corpus_file("mimickit", "humanoid_platform05.pkl")
    motion = mk.read(source, character=_humanoid())
    del motion.tracks["joints"]
    mk.write(tmp_path / "r.pkl", motion, format="mimickit", character=_humanoid())
    again = np.array(_file_values(tmp_path / "r.pkl")["frames"])
    original = np.array(_file_values(source)["frames"])
    # spherical exp-maps come back as the same rotations; the angles here stay below pi
    np.testing.assert_allclose(again, original, rtol=0, atol=1e-9)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert mk.read(tmp_path / "r.pkl").tracks["root"].frames == 271


def test_track_attributes_mimickit_cannot_hold_are_named(tmp_path: Path) -> None:
    motion = mk.read(corpus_file("mimickit", "humanoid_platform05.pkl"))
    assert isinstance(motion, mk.Motion)
    motion.tracks["root"].attrs["frame"] = "odom"
    motion.tracks["joints"].attrs["units"] = "deg"
    with pytest.raises(mk.ConversionError, match=r"'frame' of track 'root'.*'units' of track 'joints'"):
        mk.write(tmp_path / "attrs.pkl", motion, format="mimickit")

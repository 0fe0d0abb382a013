"""AMASS .npz: the corpus's synthetic SMPL+H / SMPL-X files against the oracle of
ProtoMotions' mapping and MuJoCo's FK, the layout kept on writing, refusals."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation

import motionkit as mk
from conftest import corpus_file, require_peer
from motionkit.formats.containers import amass

CASES = [("amass_smplh_120fps", "smpl"), ("amass_smplx_60fps", "smpl"),
         ("amass_smplx_60fps", "smplx")]


def _files(name: str, model: str) -> tuple[Path, Path, np.lib.npyio.NpzFile]:
    source = corpus_file("containers", "amass", f"{name}.npz")
    standin = corpus_file("containers", "amass", f"{model}_topology_standin.xml")
    oracle = np.load(corpus_file("containers", "amass", f"oracle_{name}__{model}.npz"))
    return source, standin, oracle


@pytest.mark.parametrize(("name", "model"), CASES)
def test_fk_through_protomotions_mapping_equals_oracle(name: str, model: str) -> None:
    source, standin, oracle = _files(name, model)
    motion = mk.read(source, character=standin)
    assert motion.skeleton is not None
    links = mk.kinematics.link_poses(motion.skeleton, motion)
    assert links.labels == [str(n) for n in oracle["body_names"]]
    assert np.abs(links.data[..., :3] - oracle["body_pos"]).max() < 1e-9
    # MuJoCo's qpos is the intrinsic XYZ Euler triple of each joint rotation
    char = mk.model.character.Character.of(motion.skeleton)
    root = motion.tracks["root"].data
    qpos = char.to_qpos(root[:, :3], root[:, 3:], motion.tracks["joint_rotations"].data)
    assert np.abs(qpos[:, 7:] - oracle["qpos_mujoco"][:, 7:]).max() < 1e-9


@pytest.mark.parametrize(("name", "model"), CASES)
def test_fk_equals_mujoco(name: str, model: str) -> None:
    mujoco = require_peer("mujoco")
    source, standin, _ = _files(name, model)
    motion = mk.read(source, character=standin)
    assert motion.skeleton is not None
    links = mk.kinematics.link_poses(motion.skeleton, motion)
    char = mk.model.character.Character.of(motion.skeleton)
    root = motion.tracks["root"].data
    qpos = char.to_qpos(root[:, :3], root[:, 3:], motion.tracks["joint_rotations"].data)
    model_ = mujoco.MjModel.from_xml_path(str(standin))  # type: ignore[attr-defined]
    data = mujoco.MjData(model_)  # type: ignore[attr-defined]
    for frame in range(len(qpos)):
        data.qpos[:] = qpos[frame]
        mujoco.mj_kinematics(model_, data)  # type: ignore[attr-defined]
        assert np.abs(data.xpos[1:] - links.data[frame, :, :3]).max() < 1e-9


def test_layouts_names_and_conventions() -> None:
    smplh = mk.read(corpus_file("containers", "amass", "amass_smplh_120fps.npz"))
    smplx = mk.read(corpus_file("containers", "amass", "amass_smplx_60fps.npz"))
    assert smplh.meta["amass"]["layout"] == "smplh"
    assert smplh.meta["amass"]["gender"] == "female"
    assert smplh.meta["amass"]["gender_type"] == "bytes"
    assert smplh.meta["amass"]["fps_key"] == "mocap_framerate"
    assert smplx.meta["amass"]["layout"] == "smplx"
    assert smplx.meta["amass"]["gender_type"] == "str"
    assert smplx.meta["amass"]["fps_key"] == "mocap_frame_rate"
    assert smplh.tracks["root"].timeline.rate == 120.0
    assert smplh.tracks["joint_rotations"].labels[:3] == ["L_Hip", "R_Hip", "Torso"]
    assert smplx.tracks["joint_rotations"].labels[21:24] == ["Jaw", "L_Eye", "R_Eye"]
    poses = np.load(corpus_file("containers", "amass", "amass_smplh_120fps.npz"))["poses"]
    expected = Rotation.from_rotvec(poses[:, 3:6]).as_quat()
    got = smplh.tracks["joint_rotations"].data[:, 0]
    assert np.abs(np.abs((got * expected).sum(-1)) - 1).max() < 1e-12
    lines = mk.formats.registry.by_name("amass").describe(smplh)
    assert any("Z-up" in line for line in lines)


@pytest.mark.parametrize(("name", "model"), [*CASES, ("amass_smplx_60fps", None)])
def test_write_back_keeps_the_layout(tmp_path: Path, name: str, model: str | None) -> None:
    source = corpus_file("containers", "amass", f"{name}.npz")
    standin = (corpus_file("containers", "amass", f"{model}_topology_standin.xml")
               if model else None)
    motion = mk.read(source, character=standin)
    out = tmp_path / "out.npz"
    mk.write(out, motion, format="amass", character=standin)
    before, after = np.load(source), np.load(out)
    assert [k for k in after.files if k != "motionkit_conventions"] == before.files
    for key in before.files:
        if before[key].dtype.kind == "f":
            assert np.abs(after[key] - before[key]).max() < 1e-12, key
        else:
            assert before[key].dtype == after[key].dtype and (before[key] == after[key]).all()
    stated = json.loads(str(after["motionkit_conventions"]))
    assert stated["layout"] == motion.meta["amass"]["layout"] and stated["units"] == "m"


def _save(path: Path, **arrays: np.ndarray) -> Path:
    np.savez(path, **arrays)  # type: ignore[arg-type]
    return path


def test_unknown_width_is_refused(tmp_path: Path) -> None:
    path = _save(tmp_path / "w.npz", poses=np.zeros((4, 72)), trans=np.zeros((4, 3)),
                 mocap_framerate=np.array(30.0))
    with pytest.raises(mk.FormatError, match="72 wide"):
        mk.read(path)


def test_contradicting_model_type_is_refused(tmp_path: Path) -> None:
    path = _save(tmp_path / "x.npz", poses=np.zeros((4, 156)), trans=np.zeros((4, 3)),
                 mocap_frame_rate=np.array(30.0), surface_model_type=np.array("smplx"))
    with pytest.raises(mk.FormatError, match="ambiguous"):
        mk.read(path)


def test_object_arrays_are_refused_never_unpickled(tmp_path: Path) -> None:
    path = tmp_path / "o.npz"
    np.savez(path, poses=np.zeros((4, 156)), trans=np.zeros((4, 3)),
             mocap_framerate=np.array(30.0), extra=np.array([{"a": 1}], dtype=object))
    with pytest.raises(mk.FormatError, match="Python objects"):
        mk.read(path, format="amass")


def test_declared_size_beyond_the_member_is_refused(tmp_path: Path) -> None:
    header = np.lib.format
    path = tmp_path / "big.npz"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive, \
            archive.open("poses.npy", "w") as handle:
        header.write_array_header_1_0(handle, {"descr": "<f8", "fortran_order": False,
                                               "shape": (10**9, 156)})
        handle.write(b"\0" * 64)
    with pytest.raises(mk.FormatError, match="declares"):
        mk.read(path, format="amass")


def test_split_keys_without_poses(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    path = _save(tmp_path / "split.npz", trans=rng.normal(size=(5, 3)),
                 root_orient=rng.normal(size=(5, 3)), pose_body=rng.normal(size=(5, 63)),
                 mocap_frame_rate=np.array(60.0), gender=np.array(b"male"))
    motion = mk.read(path)
    assert motion.meta["amass"]["layout"] == "smplx"
    assert motion.meta["amass"]["filled"] == ["pose_jaw", "pose_eye", "pose_hand"]
    out = tmp_path / "again.npz"
    mk.write(out, motion, format="amass")
    assert set(np.load(out).files) == {"trans", "root_orient", "pose_body", "mocap_frame_rate",
                                       "gender", "motionkit_conventions"}


@settings(max_examples=25, deadline=None)
@given(layout=st.sampled_from(["smplh", "smplx"]), frames=st.integers(1, 6),
       seed=st.integers(0, 2**31), through_model=st.booleans())
def test_round_trip(tmp_path_factory: pytest.TempPathFactory, layout: str, frames: int,
                    seed: int, through_model: bool) -> None:
    rng = np.random.default_rng(seed)
    width = 3 * len(amass.LAYOUTS[layout])
    poses = Rotation.random(frames * width // 3, random_state=seed).as_rotvec()
    poses = poses.reshape(frames, width)
    key = amass.FPS_KEYS[layout]
    path = _save(tmp_path_factory.mktemp("rt") / "a.npz", poses=poses,
                 trans=rng.normal(size=(frames, 3)), **{key: np.array(float(rng.integers(1, 200)))})
    standin = None
    if through_model:
        model = "smplx" if layout == "smplx" else "smpl"
        standin = corpus_file("containers", "amass", f"{model}_topology_standin.xml")
    motion = mk.read(path, character=standin)
    out = path.with_name("b.npz")
    mk.write(out, motion, format="amass", character=standin)
    again = np.load(out)
    a = Rotation.from_rotvec(poses.reshape(-1, 3)).as_quat()
    b = Rotation.from_rotvec(again["poses"].reshape(-1, 3)).as_quat()
    assert np.abs(np.abs((a * b).sum(-1)) - 1).max() < 1e-9
    assert np.array_equal(again["trans"], np.load(path)["trans"])
    assert float(again[key]) == float(np.load(path)[key])


@pytest.mark.parametrize("cut", [100, 5000, 40000])
def test_a_damaged_archive_is_one_format_error(tmp_path: Path, cut: int) -> None:
    data = bytearray(corpus_file("containers", "amass", "amass_smplh_120fps.npz").read_bytes())
    data[cut] ^= 0xFF  # one flipped byte: a CRC, a header or a directory entry breaks
    path = tmp_path / "bad.npz"
    path.write_bytes(bytes(data))
    with pytest.raises(mk.FormatError):
        amass.read(path)
    (tmp_path / "short.npz").write_bytes(bytes(data[:cut]))
    with pytest.raises(mk.FormatError):
        amass.read(tmp_path / "short.npz")


@pytest.mark.parametrize(("name", "model", "low", "high"),
                         [("amass_smplh_120fps", "smpl", 0.043, 0.044),
                          ("amass_smplx_60fps", "smplx", 0.061, 0.062)])
def test_protomotions_exp_map_in_mujoco_qpos_is_centimetres_off(name: str, model: str,
                                                                low: float, high: float) -> None:
    """The spec's warning: ProtoMotions' dof_pos (exponential maps) is no MuJoCo qpos."""
    mujoco = require_peer("mujoco")
    source, standin, oracle = _files(name, model)
    motion = mk.read(source, character=standin)
    assert motion.skeleton is not None
    links = mk.kinematics.link_poses(motion.skeleton, motion).data[..., :3]
    model_ = mujoco.MjModel.from_xml_path(str(standin))  # type: ignore[attr-defined]
    data = mujoco.MjData(model_)  # type: ignore[attr-defined]
    worst = 0.0
    for frame in range(links.shape[0]):
        data.qpos[:7] = oracle["qpos_mujoco"][frame, :7]
        data.qpos[7:] = oracle["dof_pos_protomotions_expmap"][frame]
        mujoco.mj_kinematics(model_, data)  # type: ignore[attr-defined]
        worst = max(worst, float(np.abs(data.xpos[1:] - links[frame]).max()))
    assert low < worst < high


def test_an_archive_of_no_known_layout_names_the_formats(tmp_path: Path) -> None:
    path = _save(tmp_path / "other.npz", a=np.zeros(3))
    with pytest.raises(mk.FormatError, match="--from amass, isaaclab-amp or beyondmimic"):
        mk.read(path)
    assert mk.read(corpus_file("containers", "isaaclab", "humanoid_run.npz")).meta[
        "source_format"] == "isaaclab-amp"
    assert mk.read(corpus_file("containers", "amass", "amass_smplx_60fps.npz")).meta[
        "source_format"] == "amass"


def test_resampled_through_a_model_the_kept_joints_are_a_named_loss(tmp_path: Path) -> None:
    source, standin, _ = _files("amass_smplh_120fps", "smpl")  # fingers not in the model
    motion = mk.ops.resample(mk.read(source, character=standin), 30.0)
    with pytest.raises(mk.ConversionError, match=r"L_Index1.*dmpls"):
        mk.write(tmp_path / "a.npz", motion, format="amass", character=standin)
    with pytest.warns(mk.MotionkitWarning, match=r"L_Index1.*dmpls"):
        mk.write(tmp_path / "a.npz", motion, format="amass", character=standin, lossy=True)
    assert np.load(tmp_path / "a.npz")["poses"].shape == (15, 156)


def test_a_compression_bomb_is_refused_before_it_is_inflated(tmp_path: Path) -> None:
    path = tmp_path / "bomb.npz"
    np.savez_compressed(path, poses=np.zeros((200_000, 156)), trans=np.zeros((200_000, 3)),
                        mocap_framerate=np.array(30.0))  # 250 MB of zeros in a small file
    assert path.stat().st_size < 1_000_000
    with pytest.raises(mk.FormatError, match="budget"):
        mk.read(path)

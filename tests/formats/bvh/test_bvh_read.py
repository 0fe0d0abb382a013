"""Reading BVH: the real files against bvhio's world positions, the tolerances real files
need, units and up axes, and the semantics the readers agree on."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from bvh_text import ROOT_CHANNELS, basic_bvh

import motionkit as mk
from conftest import corpus_file, require_peer

pytestmark = pytest.mark.filterwarnings("ignore:Importing PyGLM:PendingDeprecationWarning")
REAL = ["example.bvh", "sinusoidal.bvh", "test_freebvh.bvh", "test_mocapbank.bvh"]
#: Y-up file axes → Z-up model axes: (x, y, z) ↦ (x, −z, y).
Y_TO_Z = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]])


def oracle_positions(path: Path, frames: list[int]) -> np.ndarray:
    """bvhio's world joint positions (file units, file axes) at ``frames``."""
    bvhio = require_peer("bvhio")
    root = bvhio.readAsHierarchy(str(path))  # type: ignore[attr-defined]
    out = []
    for frame in frames:
        root.loadPose(frame)
        out.append([list(joint.PositionWorld) for joint, _, _ in root.layout()])
    return np.array(out)


def joint_positions(motion: mk.Motion) -> np.ndarray:
    """motionkit's world positions of the BVH joints (not the translation bodies)."""
    skeleton = motion.skeleton
    assert skeleton is not None
    poses = mk.kinematics.link_motion(skeleton, motion).tracks["links"].data
    keep = [i for i, body in enumerate(skeleton.bodies) if not body.name.endswith("__translation")]
    return poses[:, keep, :3]


@pytest.mark.corpus
@pytest.mark.parametrize("name", REAL)
def test_real_files_match_bvhio_world_positions(name: str) -> None:
    path = corpus_file("bvh", name)
    motion = mk.read(path)
    assert isinstance(motion, mk.Motion) and motion.skeleton is not None
    frames = sorted({0, motion.frames // 3, motion.frames // 2, motion.frames - 1})
    expected = oracle_positions(path, frames) * 0.01 @ Y_TO_Z.T
    ours = joint_positions(motion)[frames]
    assert ours.shape == expected.shape
    np.testing.assert_allclose(ours, expected, rtol=0, atol=1e-6 * np.abs(expected).max())


@pytest.mark.corpus
def test_what_a_read_motion_holds() -> None:
    motion = mk.read(corpus_file("bvh", "test_freebvh.bvh"))
    assert isinstance(motion, mk.Motion) and motion.skeleton is not None
    assert motion.frames == 69 and motion.tracks["root"].timeline.rate == 30.0
    assert motion.meta["bvh"]["frame_time"] == "0.0333333"
    hips = motion.skeleton.bodies[0]
    assert hips.name == "mixamorig:Hips" and hips.joint.type == "euler"
    rotations = motion.tracks["joint_rotations"]
    assert rotations.labels is not None and rotations.labels[0] == "mixamorig:Spine"
    assert rotations.data.shape == (69, 54, 4)
    joints = motion.tracks["joints"]
    assert joints.labels == motion.skeleton.dof_names
    assert motion.skeleton.bodies[5].attrs["bvh_channels"] == ["Zrotation", "Yrotation", "Xrotation"]
    # ZYX channels in a Y-up file: Z ↦ −y, Y ↦ z, X ↦ x in the model
    assert motion.skeleton.bodies[5].joint.axis_order == "yzx"
    assert mk.formats.registry.by_name("bvh").describe(motion) == [
        "BVH: frame time 0.0333333 (snapped to a whole rate), read as unit cm with y up"]


def _basic(tmp_path: Path, root: str = ROOT_CHANNELS,
           rows: str = "10 20 30 0 0 0 90 0 0\n10 20 30 90 0 0 0 0 0", name: str = "b.bvh") -> Path:
    path = tmp_path / name
    path.write_text(basic_bvh(root, rows))
    return path


def test_position_channels_replace_the_offset_and_units_and_axes_convert(tmp_path: Path) -> None:
    motion = mk.read(_basic(tmp_path))
    assert isinstance(motion, mk.Motion)
    root = motion.tracks["root"].data
    np.testing.assert_array_equal(root[0, :3], [0.1, -0.3, 0.2])  # cm → m, y up → z up
    positions = joint_positions(motion)
    # frame 0: the leg turns 90° about z (file) = −y (model); its offset is straight down
    np.testing.assert_allclose(positions[0, 1], [0.1, -0.3, 0.1], atol=1e-15)
    # frame 1: the root turns 90° about file z: the leg's offset (0, −10, 0) swings to +x
    np.testing.assert_allclose(positions[1, 1], [0.2, -0.3, 0.2], atol=1e-15)
    same = mk.read(_basic(tmp_path), unit="m", up="z")
    assert isinstance(same, mk.Motion)
    np.testing.assert_array_equal(same.tracks["root"].data[0, :3], [10, 20, 30])
    inches = mk.read(_basic(tmp_path), unit=0.0254)
    assert isinstance(inches, mk.Motion)
    np.testing.assert_allclose(inches.tracks["root"].data[0, :3], [0.254, -0.762, 0.508])


def test_real_file_tolerances(tmp_path: Path) -> None:
    """CRLF, tabs, blank lines, odd keyword case, named End Sites, wrapped rows, names
    with colons and spaces all read the same as the plain file."""
    plain = mk.read(_basic(tmp_path))
    text = basic_bvh(root="  OFFSET 1 2 3\n  CHANNELS 6 Xposition Yposition Zposition "
                        "ZROTATION xrotation Yrotation",
                        rows="10 20 30 0 0 0\n 90 0 0\n\n\t10 20 30 90 0 0 0 0 0   ")
    text = text.replace("End Site", "End Site LeftToe").replace("\n", "\r\n\t")
    text = text.replace("Frames:", "Frames:  ").replace("ROOT Hips", "root mixamorig: Hips")
    odd = tmp_path / "odd.bvh"
    odd.write_bytes(text.encode())
    again = mk.read(odd)
    assert isinstance(plain, mk.Motion) and isinstance(again, mk.Motion)
    assert again.skeleton is not None and again.skeleton.bodies[0].name == "mixamorig:_Hips"
    for name in ("root", "joints", "joint_rotations"):
        np.testing.assert_array_equal(again.tracks[name].data, plain.tracks[name].data)


@pytest.mark.corpus
def test_a_wrong_unit_is_pointed_out() -> None:
    with pytest.warns(mk.MotionkitWarning, match=r"measures 194 m at rest when read in unit 'm'"):
        mk.read(corpus_file("bvh", "test_freebvh.bvh"), unit="m")


def test_inner_position_channels_and_short_channel_lists(tmp_path: Path) -> None:
    text = """HIERARCHY
ROOT R
{
  OFFSET 0 0 0
  CHANNELS 3 Yrotation Xrotation Zrotation
  JOINT Slide
  {
    OFFSET 5 6 7
    CHANNELS 4 Yposition Xrotation Zrotation Xposition
    JOINT Hinge
    {
      OFFSET 0 3 0
      CHANNELS 1 Zrotation
      JOINT Fixed
      {
        OFFSET 1 0 0
        CHANNELS 0
        End Site
        {
          OFFSET 0 1 0
        }
      }
    }
  }
}
MOTION
Frames: 1
Frame Time: 0.04
10 20 30 1 45 -30 2 60
"""
    path = tmp_path / "short.bvh"
    path.write_text(text)
    motion = mk.read(path, unit="m")
    assert isinstance(motion, mk.Motion) and motion.skeleton is not None
    types = [(b.name, b.joint.type) for b in motion.skeleton.bodies]
    assert types == [("R", "euler"), ("Slide__translation", "translational"), ("Slide", "universal"),
                     ("Hinge", "revolute"), ("Fixed", "weld")]
    assert motion.tracks["root"].timeline.rate == 25.0
    np.testing.assert_allclose(joint_positions(motion)[0], _by_hand(), atol=1e-12)
    # written back (positions first, OFFSET before CHANNELS), bvhio agrees
    mk.write(tmp_path / "again.bvh", motion, unit="m")
    expected = oracle_positions(tmp_path / "again.bvh", [0])[0] @ Y_TO_Z.T
    np.testing.assert_allclose(joint_positions(motion)[0], expected, atol=1e-5)


def _by_hand() -> np.ndarray:
    """World positions of the file above, in file axes, computed with SciPy."""
    from scipy.spatial.transform import Rotation

    r_root = Rotation.from_euler("YXZ", [10, 20, 30], degrees=True)
    slide = r_root.apply([2, 1, 7])  # X and Y replaced by the channels, Z kept
    r_slide = r_root * Rotation.from_euler("XZ", [45, -30], degrees=True)
    hinge = slide + r_slide.apply([0, 3, 0])
    r_hinge = r_slide * Rotation.from_euler("Z", 60, degrees=True)
    fixed = hinge + r_hinge.apply([1, 0, 0])
    return np.array([[0, 0, 0], slide, hinge, fixed]) @ Y_TO_Z.T


@pytest.mark.corpus
@pytest.mark.parametrize("name", REAL)
def test_polars_and_numpy_read_the_same_bits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             name: str) -> None:
    """Both number paths, on the real files and on their canonical rewrites (one blank
    between numbers: the polars path), give bit-identical motions."""
    from conftest import use_polars

    source = corpus_file("bvh", name)
    first = mk.read(source)
    assert isinstance(first, mk.Motion)
    mk.write(tmp_path / "canonical.bvh", first)
    for path in (source, tmp_path / "canonical.bvh"):
        found = []
        for on in (True, False):
            use_polars(monkeypatch, on)
            motion = mk.read(path)
            assert isinstance(motion, mk.Motion)
            found.append(motion.tracks["joints"].data)
        assert found[0].tobytes() == found[1].tobytes()

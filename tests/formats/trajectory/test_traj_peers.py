"""Every trajectory corpus file reads, and agrees with trajectopy's and evo's own readers;
the peers read what we write."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

import motionkit as mk
from conftest import corpus_file, require_peer
from motionkit.errors import MotionkitWarning

TRAJECTOPY_FILES = ["KITTI_ORB.traj", "KITTI_gt.traj", "generated_trajectory.traj"]
TUM_FILES = ["fr2_desk_groundtruth.txt", "fr2_desk_ORB.txt", "freiburg1_xyz-groundtruth.txt",
             "freiburg1_xyz-rgbdslam.txt"]
KITTI_FILES = ["KITTI_00_gt.txt", "KITTI_00_ORB.txt"]


def _same_rotation(a: np.ndarray, b: np.ndarray, tol: float) -> None:
    """Quaternions equal up to sign (and norm: evo keeps non-unit file values)."""
    b = b / np.linalg.norm(b, axis=1, keepdims=True)
    sign = np.sign(np.sum(a * b, axis=1, keepdims=True))
    np.testing.assert_allclose(a, b * sign, atol=tol, rtol=0)


def _trajectopy(path: Path):
    require_peer("trajectopy")
    import trajectopy

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return trajectopy.Trajectory.from_file(str(path))


@pytest.mark.parametrize("name", TRAJECTOPY_FILES)
def test_trajectopy_corpus_matches_trajectopy(name: str) -> None:
    path = corpus_file("trajectopy", name)
    ours = mk.read(path)
    assert ours.meta["source_format"] == "traj"
    peer = _trajectopy(path)
    root = ours.tracks["root"]
    assert root.frames == len(peer.timestamps)
    np.testing.assert_allclose(root.times, peer.timestamps, atol=1e-9, rtol=0)
    np.testing.assert_allclose(root.data[:, :3], peer.positions.xyz, atol=1e-9, rtol=0)
    _same_rotation(root.data[:, 3:], peer.rotations.as_quat(), 1e-9)
    if "arc_length" in ours.tracks:
        np.testing.assert_allclose(ours.tracks["arc_length"].data[:, 0], peer.path_lengths,
                                   atol=1e-9)
    if "velocity" in ours.tracks:
        np.testing.assert_allclose(ours.tracks["velocity"].data, peer.velocity_xyz, atol=1e-9)
    assert ours.meta["name"] == peer.name


@pytest.mark.parametrize("name", TRAJECTOPY_FILES)
def test_trajectopy_reads_our_traj(name: str, tmp_path: Path) -> None:
    ours = mk.read(corpus_file("trajectopy", name))
    out = tmp_path / "out.traj"
    mk.write(out, ours)
    peer = _trajectopy(out)
    root = ours.tracks["root"]
    np.testing.assert_allclose(peer.timestamps, root.times, atol=1e-9, rtol=0)
    np.testing.assert_allclose(peer.positions.xyz, root.data[:, :3], atol=1e-9, rtol=0)
    _same_rotation(peer.rotations.as_quat(), root.data[:, 3:], 1e-9)
    again = mk.read(out)
    assert np.array_equal(again.tracks["root"].data, root.data)  # full precision: exact
    assert np.array_equal(again.tracks["root"].times, root.times)


def _evo(reader: str, path: Path):
    """``evo.tools.file_interface.<reader>`` applied to ``path`` (evo is the oracle)."""
    require_peer("evo")
    from evo.tools import file_interface

    return getattr(file_interface, reader)(str(path))


def _evo_tum(path: Path):
    return _evo("read_tum_trajectory_file", path)


@pytest.mark.parametrize("name", TUM_FILES)
def test_tum_corpus_matches_evo(name: str) -> None:
    path = corpus_file("evo", name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MotionkitWarning)
        ours = mk.read(path)
    assert ours.meta["source_format"] == "tum"
    peer = _evo_tum(path)
    root = ours.tracks["root"]
    np.testing.assert_allclose(root.times, peer.timestamps, atol=1e-9, rtol=0)
    np.testing.assert_allclose(root.data[:, :3], peer.positions_xyz, atol=1e-9, rtol=0)
    wxyz = peer.orientations_quat_wxyz
    _same_rotation(root.data[:, 3:], wxyz[:, [1, 2, 3, 0]], 1e-9)


@pytest.mark.parametrize("name", TUM_FILES[1:3])
def test_evo_reads_our_tum(name: str, tmp_path: Path) -> None:
    ours = mk.read(corpus_file("evo", name))
    out = tmp_path / "out.tum"
    mk.write(out, ours, precision=12)
    peer = _evo_tum(out)
    root = ours.tracks["root"]
    np.testing.assert_allclose(peer.timestamps, root.times, atol=1e-9, rtol=0)
    np.testing.assert_allclose(peer.positions_xyz, root.data[:, :3], atol=1e-9, rtol=0)
    text = out.read_text()
    assert "e+" not in text and "e-" not in text  # fixed-point, never scientific


def _evo_kitti(path: Path):
    return _evo("read_kitti_poses_file", path)


@pytest.mark.parametrize("name", KITTI_FILES)
def test_kitti_corpus_matches_evo(name: str) -> None:
    path = corpus_file("evo", name)
    ours = mk.read(path)
    assert ours.meta["source_format"] == "kitti"
    peer = _evo_kitti(path)
    root = ours.tracks["root"]
    np.testing.assert_allclose(root.data[:, :3], peer.positions_xyz, atol=1e-9, rtol=0)
    # the matrices are not exactly orthonormal (6-9 digits); both sides find the same
    # nearest rotation (measured: 3e-15)
    _same_rotation(root.data[:, 3:], peer.orientations_quat_wxyz[:, [1, 2, 3, 0]], 1e-9)


def test_kitti_with_times_and_evo_reads_our_kitti(tmp_path: Path) -> None:
    times = corpus_file("evo", "KITTI_00_gt_times.txt")
    ours = mk.read(corpus_file("evo", "KITTI_00_ORB.txt"), times=times)
    np.testing.assert_allclose(ours.tracks["root"].times[[0, 1, -1]],
                               [0.0, 0.1037359, 470.5816], atol=1e-12)
    with pytest.raises(mk.ConversionError, match="time stamps"):
        mk.write(tmp_path / "x.kitti", ours)
    mk.write(tmp_path / "x.kitti", ours, times=tmp_path / "times.txt")
    peer = _evo_kitti(tmp_path / "x.kitti")
    np.testing.assert_allclose(peer.positions_xyz, ours.tracks["root"].data[:, :3], atol=1e-9)
    again = mk.read(tmp_path / "x.kitti", times=tmp_path / "times.txt")
    np.testing.assert_allclose(again.tracks["root"].times, ours.tracks["root"].times,
                               atol=1e-9)
    _same_rotation(again.tracks["root"].data[:, 3:], ours.tracks["root"].data[:, 3:], 1e-8)


def test_euroc_corpus_matches_evo(tmp_path: Path) -> None:
    path = corpus_file("evo", "V102_groundtruth.csv")
    ours = mk.read(path)
    assert ours.meta["source_format"] == "euroc"
    peer = _evo("read_euroc_csv_trajectory", path)
    root = ours.tracks["root"]
    assert root.timeline.stamps_ns is not None
    assert int(root.timeline.stamps_ns[0]) == 1403715524907143168  # exact ns
    np.testing.assert_allclose(root.times, peer.timestamps, atol=1e-9, rtol=0)
    np.testing.assert_allclose(root.data[:, :3], peer.positions_xyz, atol=1e-9, rtol=0)
    _same_rotation(root.data[:, 3:], peer.orientations_quat_wxyz[:, [1, 2, 3, 0]], 1e-9)
    assert set(ours.tracks) == {"root", "velocity", "gyro_bias", "accel_bias"}
    out = tmp_path / "out.csv"
    mk.write(out, ours, format="euroc")
    again = mk.read(out)
    assert np.array_equal(again.tracks["root"].timeline.stamps_ns, root.timeline.stamps_ns)
    np.testing.assert_allclose(again.tracks["velocity"].data, ours.tracks["velocity"].data)
    evo_again = _evo("read_euroc_csv_trajectory", out)
    np.testing.assert_allclose(evo_again.positions_xyz, peer.positions_xyz, atol=1e-9)


def test_euroc_to_tum_keeps_ns_and_refuses_loss(tmp_path: Path) -> None:
    ours = mk.read(corpus_file("evo", "V102_groundtruth.csv"))
    with pytest.raises(mk.ConversionError, match="velocity"):
        mk.write(tmp_path / "x.tum", ours)
    with pytest.warns(MotionkitWarning, match="dropped"):
        mk.write(tmp_path / "x.tum", ours, lossy=True)
    first = (tmp_path / "x.tum").read_text().split("\n", 1)[0]
    assert first.startswith("1403715524.907143168 ")

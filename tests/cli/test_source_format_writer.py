"""The source's format writes a shared extension only where it holds the motion whole
(review of issue 25, finding 3): KITTI poses read with a times file keep their stamps
when written to ``.txt``, by the API, ``convert`` with -R or -O, and ``batch``."""

from __future__ import annotations

import shutil
import warnings
from pathlib import Path

import numpy as np
import pytest

import motionkit as mk
from conftest import corpus_file
from motionkit.api import read_motion
from motionkit.formats import registry
from test_cli import run_cli


def _kitti(tmp_path: Path) -> tuple[Path, Path]:
    poses, times = tmp_path / "k.txt", tmp_path / "kt.txt"
    shutil.copy(corpus_file("evo", "KITTI_00_gt.txt"), poses)
    shutil.copy(corpus_file("evo", "KITTI_00_gt_times.txt"), times)
    return poses, times


def _stamps(path: Path) -> np.ndarray:
    return np.asarray(read_motion(path).tracks["root"].times)


def test_stamped_kitti_poses_written_to_txt_keep_their_stamps(tmp_path: Path) -> None:
    poses, times = _kitti(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mk.MotionkitWarning)
        motion = read_motion(poses, format="kitti", times=times)
    expected = np.asarray(motion.tracks["root"].times)
    assert registry.for_writing(tmp_path / "o.txt", like="kitti", obj=motion).name == "traj"
    mk.write(tmp_path / "o.txt", motion)
    np.testing.assert_allclose(_stamps(tmp_path / "o.txt"), expected, atol=1e-6)
    mk.convert(poses, tmp_path / "c.txt", from_format="kitti", times=times)
    np.testing.assert_allclose(_stamps(tmp_path / "c.txt"), expected, atol=1e-6)


def test_unstamped_kitti_poses_stay_kitti(tmp_path: Path) -> None:
    poses, _ = _kitti(tmp_path)
    motion = read_motion(poses, format="kitti")
    assert registry.for_writing(tmp_path / "o.txt", like="kitti", obj=motion).name == "kitti"
    assert registry.for_writing(tmp_path / "o.txt", like="kitti").name == "traj"  # no object


@pytest.mark.parametrize("flag", ["-R", "-O"])
def test_convert_with_a_times_file_says_which_writer(tmp_path: Path, flag: str,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    poses, times = _kitti(tmp_path)
    out = tmp_path / "o.txt"
    code, stdout, err = run_cli(["convert", str(poses), str(out), "--from", "kitti",
                                 flag, f"times={times}"], capsys)
    assert code == 0, err
    assert " as traj " in stdout and "not kitti" in stdout
    np.testing.assert_allclose(_stamps(out), np.loadtxt(times), atol=1e-6)


def test_batch_convert_with_a_times_file_keeps_the_stamps(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]
                                                           ) -> None:
    poses, times = _kitti(tmp_path)
    code, _, err = run_cli(["batch", "convert", str(poses), "--from", "kitti", "-R",
                            f"times={times}", "--out", str(tmp_path / "out"), "-j", "1"],
                           capsys)
    assert code == 0, err
    written = next((tmp_path / "out").rglob("*.txt"))
    np.testing.assert_allclose(_stamps(written), np.loadtxt(times), atol=1e-6)

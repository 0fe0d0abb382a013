"""Trajectory files whose content fits another format, or no poses at all: refused with
a hint that names what does fit, never read as a guess (issue 25)."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

import motionkit as mk
from conftest import corpus_file, require_peer
from test_cli import run_cli

TIMING_HEADER = ("# timestamp (sec),tracking,propagation,msckf update,slam update,"
                 "slam delayed,re-tri & marg,total\n")


def _timing_table(path: Path) -> Path:
    """A table shaped like open_vins' timing output: a stamp and seven durations."""
    rng = np.random.default_rng(7)
    rows = [f"{1413393212.0 + 0.05 * i:.6f}," + ",".join(f"{v:.6f}" for v in
                                                       rng.uniform(0.001, 0.2, 7))
            for i in range(20)]
    path.write_text(TIMING_HEADER + "\n".join(rows) + "\n")
    return path


@pytest.mark.parametrize("suffix", [".txt", ".csv"])
def test_a_timing_table_is_no_trajectory(tmp_path: Path, suffix: str) -> None:
    path = _timing_table(tmp_path / f"timing{suffix}")
    with pytest.raises(mk.FormatError) as caught:
        mk.read(path)
    assert "not poses" in caught.value.message


def test_a_timing_table_named_tum_is_refused_for_its_norms(tmp_path: Path) -> None:
    """Refused for its "quaternions" (norms 0.002-0.4 from the first row on), with the
    option that would read it anyway. evo refuses this file too, but for its commas: its
    TUM reader splits on spaces, so it says nothing of the norms (see test_tum_norms)."""
    path = _timing_table(tmp_path / "timing.txt")
    with pytest.raises(mk.FormatError) as caught:
        mk.read(path, format="tum")
    assert caught.value.line == 2 and "not poses" in caught.value.message
    assert "normalize=True" in caught.value.message
    require_peer("evo")
    from evo.tools import file_interface

    with pytest.raises(file_interface.FileInterfaceException):
        file_interface.read_tum_trajectory_file(str(path))


def test_tum_rows_with_rounded_quaternions_still_read(tmp_path: Path) -> None:
    path = tmp_path / "rounded.txt"
    path.write_text("1.0 0 0 0 0.0 0.0 0.707 0.707\n2.0 0 0 0 0.0 0.0 0.0 1.0\n")
    motion = mk.read(path)
    assert motion.meta["source_format"] == "tum"


def test_kitti_rows_in_a_tum_file_are_refused_with_the_kitti_hint(tmp_path: Path) -> None:
    path = tmp_path / "poses.tum"
    shutil.copy(corpus_file("evo", "KITTI_00_gt.txt"), path)
    with pytest.raises(mk.FormatError) as caught:
        mk.read(path)
    assert "format='kitti'" in caught.value.message
    assert mk.read(path, format="kitti").frames == 4541


def test_tum_rows_in_a_csv_get_the_tum_hint(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "gt.csv"
    shutil.copy(corpus_file("evo", "fr2_desk_groundtruth.txt"), path)
    with pytest.raises(mk.FormatError) as caught:
        mk.read(path)
    assert "format='tum'" in caught.value.message
    code, _, err = run_cli(["info", str(path)], capsys)
    assert code == 2 and "--from tum" in err
    code, _, err = run_cli(["info", "--from", "tum", str(path)], capsys)
    assert code == 0, err


def test_thirteen_kitti_columns_get_no_tum_hint(tmp_path: Path) -> None:
    rows = corpus_file("evo", "KITTI_00_gt.txt").read_text().splitlines()[:50]
    path = tmp_path / "stamped.txt"
    path.write_text("".join(f"{0.1 * i:.1f} {row}\n" for i, row in enumerate(rows)))
    with pytest.raises(mk.FormatError) as caught:
        mk.read(path)
    assert "tum" not in caught.value.message.split(";", 1)[1]
    assert "format='kitti'" in caught.value.message


def test_euroc_in_csv_out_stays_euroc(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "est.csv"
    code, out, err = run_cli(["convert", str(corpus_file("evo", "V102_groundtruth.csv")),
                              str(target)], capsys)
    assert code == 0, err
    assert " as euroc " in out and "trajectopy" not in err
    assert mk.read(target).meta["source_format"] == "euroc"


def test_a_shared_extension_says_which_writer_was_chosen(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "est.csv"
    code, out, err = run_cli(["convert", str(corpus_file("evo", "fr2_desk_groundtruth.txt")),
                              str(target)], capsys)
    assert code == 0, err
    assert " as traj " in out and "--to euroc" in out
    code, out, _ = run_cli(["convert", str(corpus_file("evo", "fr2_desk_groundtruth.txt")),
                            str(tmp_path / "named.csv"), "--to", "euroc"], capsys)
    assert code == 0 and " as " not in out


@pytest.mark.parametrize("suffix", [".txt", ".tum"])
def test_tum_rows_with_four_extra_columns_stay_tum(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"extras{suffix}"
    path.write_text("0.0 1 0 0 0 0 0.6 0.8 0.1 0.2 0.3 0.4\n"
                    "0.1 1 0 0 0 0 0.6 0.8 0.1 0.2 0.3 0.4\n")
    with pytest.warns(mk.MotionkitWarning, match="columns after the 8th ignored"):
        motion = mk.read(path, format="tum" if suffix == ".txt" else None)
    assert motion.meta["source_format"] == "tum" and motion.frames == 2
    if suffix == ".txt":  # twelve numbers, but no rotation in KITTI's places
        with pytest.raises(mk.FormatError, match="TUM's eight and 4 more"):
            mk.read(path)


EUROC_HEADER = ("#timestamp [ns],p_RS_R_x [m],p_RS_R_y [m],p_RS_R_z [m],q_RS_w [],q_RS_x [],"
                "q_RS_y [],q_RS_z []\n")


def test_a_euroc_header_over_seconds_gets_no_tum_hint(tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """Read as TUM (x y z w), EuRoC's w-first columns would turn identity into a half turn
    (review of issue 25, finding 10): the hint names the order, and following it gives
    the rotation the header says."""
    path = tmp_path / "sec.csv"
    path.write_text(EUROC_HEADER + "1403636579.758555,0,0,0,1,0,0,0\n"
                    "1403636579.808555,1,0,0,1,0,0,0\n")
    code, _, err = run_cli(["info", str(path)], capsys)
    assert code == 2 and "reads as tum" not in err
    assert "--from tum -R quaternion_order=wxyz" in err
    motion = mk.read(path, format="tum", quaternion_order="wxyz")
    np.testing.assert_array_equal(motion.tracks["root"].data[:, 3:], [[0, 0, 0, 1]] * 2)


def test_tum_names_in_a_header_still_sniff(tmp_path: Path) -> None:
    path = tmp_path / "named.csv"
    path.write_text("# timestamp tx ty tz qw qx qy qz\n1.5 0 0 0 1 0 0 0\n2.5 0 0 0 1 0 0 0\n")
    with pytest.raises(mk.FormatError, match="format='tum'"):
        mk.read(path)
    motion = mk.read(path, format="tum")
    np.testing.assert_array_equal(motion.tracks["root"].data[:, 3:], [[0, 0, 0, 1]] * 2)

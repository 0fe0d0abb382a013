"""TUM quaternions off unit length (review of issue 25, finding 4): a few drifting rows
after a first row that is a rotation read normalised, with a warning that counts them (as
evo reads such files); a first row off or many rows off are no poses, refused with the
read option (``normalize``) that reads them anyway."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

import motionkit as mk
from conftest import require_peer
from motionkit.errors import MotionkitWarning
from motionkit.formats.shared.poses import FAR_SHARE
from test_cli import run_cli

ROWS = 100


def _tum(path: Path, off: list[int], w: float = 1.08) -> Path:
    rows = np.column_stack([np.arange(ROWS) * 0.1, np.arange(ROWS) * 0.01, np.zeros((ROWS, 2)),
                            np.zeros((ROWS, 3)), np.ones(ROWS)])
    rows[off, 7] = w
    np.savetxt(path, rows, fmt="%.6f")
    return path


def _read(path: Path, **options: object) -> tuple[mk.Motion, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", MotionkitWarning)
        motion = mk.read(path, **options)
    return motion, [str(w.message) for w in caught if issubclass(w.category, MotionkitWarning)]


def test_one_drifting_row_reads_normalised_with_a_warning(tmp_path: Path) -> None:
    path = _tum(tmp_path / "drift.tum", [50])
    motion, said = _read(path)
    assert motion.frames == ROWS
    np.testing.assert_array_equal(motion.tracks["root"].data[50, 3:], [0, 0, 0, 1])
    assert len(said) == 1 and "1 of 100 rows" in said[0] and "line 51" in said[0]
    require_peer("evo")
    from evo.tools import file_interface

    theirs = file_interface.read_tum_trajectory_file(str(path))
    assert theirs.num_poses == motion.frames  # evo reads it too (keeping the norm)
    np.testing.assert_allclose(theirs.positions_xyz, motion.tracks["root"].data[:, :3])


def test_rows_off_up_to_the_share_read_and_beyond_it_are_refused(tmp_path: Path) -> None:
    most = int(FAR_SHARE * ROWS)
    motion, said = _read(_tum(tmp_path / "some.tum", list(range(1, most + 1))))
    assert motion.frames == ROWS and f"{most} of 100 rows" in said[0]
    with pytest.raises(mk.FormatError) as caught:
        mk.read(_tum(tmp_path / "many.tum", list(range(1, most + 2))))
    assert caught.value.line == 2 and "normalize=True" in caught.value.message


def test_a_first_row_off_is_refused(tmp_path: Path) -> None:
    with pytest.raises(mk.FormatError) as caught:
        mk.read(_tum(tmp_path / "first.tum", [0]))
    assert caught.value.line == 1 and "not poses" in caught.value.message


def test_scaled_quaternions_read_with_normalize(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    path = _tum(tmp_path / "scaled.tum", list(range(ROWS)), w=0.9)
    with pytest.raises(mk.FormatError, match="normalize=True"):
        mk.read(path)
    code, _, err = run_cli(["info", str(path)], capsys)
    assert code == 2 and "-R normalize=true" in err and len(err.strip().splitlines()) == 1
    motion, said = _read(path, normalize=True)
    assert motion.frames == ROWS and "100 of 100 rows" in said[0]
    np.testing.assert_array_equal(motion.tracks["root"].data[:, 6], np.ones(ROWS))
    code, _, err = run_cli(["info", str(path), "-R", "normalize=true"], capsys)
    assert code == 0, err


def test_the_hint_for_a_txt_of_scaled_rows_names_the_option(tmp_path: Path) -> None:
    path = _tum(tmp_path / "scaled.txt", list(range(ROWS)), w=0.9)
    with pytest.raises(mk.FormatError) as caught:
        mk.read(path)
    assert "format='tum'" in caught.value.message and "normalize=True" in caught.value.message
    assert _read(path, format="tum", normalize=True)[0].frames == ROWS

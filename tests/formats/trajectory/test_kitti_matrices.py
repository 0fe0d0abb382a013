"""KITTI's rotation matrices travel in the root track as written, for evaluation only."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
from click.testing import CliRunner

import motionkit as mk
from conftest import corpus_file
from motionkit.cli import cli


def test_the_matrices_as_written_ride_along_and_are_never_written(tmp_path: Path) -> None:
    path = corpus_file("evo", "KITTI_00_gt.txt")
    motion = mk.read(path)
    rows = np.loadtxt(path).reshape(-1, 3, 4)
    assert np.array_equal(motion.tracks["root"].attrs["matrices"], rows)
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        mk.write(tmp_path / "out.seq", motion, lossy=True)  # .seq keeps track attributes
    assert said and not any("matrices" in str(w.message) for w in said)  # not a loss
    assert "matrices" not in (tmp_path / "out.seq").read_text()
    assert "matrices" not in mk.read(tmp_path / "out.seq").tracks["root"].attrs


def test_info_does_not_list_them() -> None:
    result = CliRunner().invoke(cli, ["info", str(corpus_file("evo", "KITTI_00_gt.txt"))])
    assert result.exit_code == 0 and "matrices" not in result.output

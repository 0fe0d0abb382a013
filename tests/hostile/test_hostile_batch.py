"""Batches on hostile input sets: refused before they start, with one line."""

from __future__ import annotations

import shutil
from pathlib import Path

from hostile_run import run_cli

from conftest import corpus_file


def test_two_inputs_with_one_output_name_are_refused_naming_both(tmp_path: Path) -> None:
    inputs = tmp_path / "in"
    inputs.mkdir()
    source = corpus_file("evo", "fr2_desk_groundtruth.txt")
    shutil.copy(source, inputs / "w.tum")
    shutil.copy(corpus_file("trajectopy", "KITTI_gt.traj"), inputs / "w.traj")
    result = run_cli(["batch", "convert", str(inputs), "--out", str(tmp_path / "out"),
                      "--to", "traj", "-j", "1"], source.stat().st_size, timeout=120)
    assert result.returncode == 2
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("motionkit: error: ")
    assert str(inputs / "w.tum") in lines[0] and str(inputs / "w.traj") in lines[0]
    assert not (tmp_path / "out").exists()

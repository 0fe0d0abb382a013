"""Batches on hostile input sets: refused before they start, with one line."""

from __future__ import annotations

import shutil
from pathlib import Path

import polars as pl
import pytest
from hostile_files import many_geoms_mjcf
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


@pytest.mark.parametrize("limit", [["--timeout", "1"], ["--memory", "200"]],
                         ids=["timeout", "memory"])
def test_a_file_over_its_limit_fails_alone_with_one_line(limit: list[str],
                                                         tmp_path: Path) -> None:
    """100,000 geoms (the most a model may have) take ~6 s and ~300 MB; the small
    trajectory beside them still converts, and the batch lists the one failure."""
    inputs = tmp_path / "in"
    inputs.mkdir()
    (inputs / "geoms.xml").write_bytes(many_geoms_mjcf(100_000))
    shutil.copy(corpus_file("evo", "fr2_desk_groundtruth.txt"), inputs / "w.tum")
    out = tmp_path / "out"
    result = run_cli(["batch", "validate", str(inputs), "--out", str(out), "-j", "1", *limit],
                     5_000_000, timeout=120)
    assert result.returncode == 2, result.stderr
    assert result.stdout.splitlines() == [
        f"{inputs / 'geoms.xml'}: " + ("took longer than 1 s (--timeout); stopped"
                                       if limit[0] == "--timeout" else
                                       "needed more than 200 MB (--memory); stopped")]
    rows = {Path(row["path"]).name: row["status"]
            for row in pl.read_parquet(out / "catalog.parquet").to_dicts()}
    assert rows == {"geoms.xml": "failed", "w.tum": "ok"}


def test_a_batch_never_replaces_its_inputs(tmp_path: Path) -> None:
    """``--out`` the input folder with the input's own format: every output would be its
    input; refused before anything runs (with --force too)."""
    source = corpus_file("evo", "fr2_desk_groundtruth.txt")
    shutil.copy(source, tmp_path / "w.tum")
    before = (tmp_path / "w.tum").read_bytes()
    result = run_cli(["batch", "convert", str(tmp_path), "--out", str(tmp_path), "--to", "tum",
                      "--force", "-j", "1"], source.stat().st_size, timeout=120)
    assert result.returncode == 2
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and "replaced by its own output" in lines[0]
    assert (tmp_path / "w.tum").read_bytes() == before


@pytest.mark.parametrize("command", [["view", "{src}", "--html", "{src}"],
                                     ["fk", "{model}", "{src}", "{src}"]])
def test_view_and_fk_never_write_over_an_input(command: list[str], tmp_path: Path) -> None:
    source = tmp_path / "w.tum"
    shutil.copy(corpus_file("evo", "fr2_desk_groundtruth.txt"), source)
    model = corpus_file("choreonoid", "SR1.body")
    before = source.read_bytes()
    args = [part.format(src=source, model=model) for part in command]
    result = run_cli(args, len(before), timeout=120)
    assert result.returncode == 2 and len(result.stderr.splitlines()) == 1
    assert "is an input of this command" in result.stderr
    assert source.read_bytes() == before

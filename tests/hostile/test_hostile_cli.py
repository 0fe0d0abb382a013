"""The CLI on hostile files: one escaped line per message, bounded output, exit 2."""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import pytest
from hostile_files import (
    MATHTEXT_NAMES,
    V2_HEAD,
    bvh_frame_time,
    chain_body,
    deep_flow_seq,
    escape_labels_seq,
    far_stamp_tum,
    forged_line_seq,
    joints_seq,
    unknown_encoding_mjcf,
    wide_alias_list,
)
from hostile_run import run_cli

import motionkit as mk
from conftest import corpus_file
from motionkit.cli.info import MAX_LINES, render


def _write(folder: Path, name: str, data: bytes) -> Path:
    path = folder / name
    path.write_bytes(data)
    return path


def _one_error_line(result_stderr: str) -> None:
    lines = result_stderr.splitlines()
    assert len(lines) == 1, result_stderr
    assert lines[0].startswith("motionkit: error: "), lines
    assert "Traceback" not in result_stderr and "internal error" not in result_stderr


def test_deep_nesting_is_one_error_line_not_a_segfault(tmp_path: Path) -> None:
    path = _write(tmp_path, "deep.seq", deep_flow_seq())
    result = run_cli(["info", str(path)], path.stat().st_size)
    assert result.returncode == 2
    _one_error_line(result.stderr)


def test_validate_prints_one_line_per_file_and_cannot_be_forged(tmp_path: Path) -> None:
    forged = _write(tmp_path, "forged.seq", forged_line_seq())
    good = _write(tmp_path, "good.seq", V2_HEAD.encode())
    result = run_cli(["validate", str(forged), str(good)], 1000)
    lines = result.stdout.splitlines()
    assert result.returncode == 2
    assert [line.split(":")[0] for line in lines] == [str(forged), str(good)], lines
    assert "\\nother.seq: ok" in lines[0]
    assert lines[1] == f"{good}: ok"
    assert not any(line.startswith("other.seq") for line in lines)
    assert "\x1b" not in result.stdout and "\x07" not in result.stdout


def test_info_escapes_terminal_controls(tmp_path: Path) -> None:
    path = _write(tmp_path, "escape.seq", escape_labels_seq())
    result = run_cli(["info", str(path)], path.stat().st_size)
    assert result.returncode == 0, result.stderr
    assert "\\x1b]0;pwned\\x07" in result.stdout
    assert not any(ord(c) < 32 and c != "\n" for c in result.stdout + result.stderr)


def test_resample_choreonoid_of_a_far_stamp_is_refused(tmp_path: Path) -> None:
    source = _write(tmp_path, "far.tum", far_stamp_tum())
    target = tmp_path / "out.seq"
    result = run_cli(["resample", str(source), str(target), "--rate", "100", "--method",
                      "choreonoid"], source.stat().st_size, timeout=20)
    assert result.returncode == 2
    _one_error_line(result.stderr)
    assert os.listdir(tmp_path) == ["far.tum"]


def test_info_on_a_deep_chain_is_linear_and_capped(tmp_path: Path) -> None:
    path = _write(tmp_path, "chain.body", chain_body())
    result = run_cli(["info", str(path)], path.stat().st_size, timeout=60)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) <= MAX_LINES + 1
    assert "more bodies" in lines[-1]
    assert max(len(line) for line in lines) < 200


def test_info_on_aliased_metadata_is_bounded(tmp_path: Path) -> None:
    path = _write(tmp_path, "wide.yaml", wide_alias_list())
    result = run_cli(["info", str(path)], path.stat().st_size)
    assert result.returncode == 0, result.stderr
    assert len(result.stdout) < 200_000
    json_result = run_cli(["info", "--json", str(path)], path.stat().st_size)
    assert json_result.returncode == 0 and len(json_result.stdout) < 2_000_000


def test_motion_list_variables_show_as_variables(tmp_path: Path) -> None:
    path = _write(tmp_path, "list.yaml",
                  b"motions:\n  - file: $MK_HOSTILE_SECRET/walk.seq\n    weight: 1\n")
    os.environ["MK_HOSTILE_SECRET"] = "top-secret-value"
    try:
        result = run_cli(["info", str(path)], 1000)
    finally:
        del os.environ["MK_HOSTILE_SECRET"]
    assert result.returncode == 0, result.stderr
    assert "$MK_HOSTILE_SECRET/walk.seq" in result.stdout
    assert "top-secret-value" not in result.stdout + result.stderr


def test_info_tree_of_an_ordinary_model_is_unchanged() -> None:
    """Below the depth and line caps the linear tree draws what ``summary_text`` does."""
    for path in (corpus_file("choreonoid", "SR1.body"),
                 corpus_file("dart", "skel", "test", "double_pendulum.skel")):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", mk.MotionkitWarning)
            model = mk.read(path)
        assert render(str(path), "x", model).split("\n")[1:] == model.summary_text().split("\n")


def test_an_unknown_xml_encoding_is_one_error_while_choosing_the_format(tmp_path: Path) -> None:
    path = _write(tmp_path, "enc.xml", unknown_encoding_mjcf())  # .xml: sniffed, then accepts()
    result = run_cli(["info", str(path)], path.stat().st_size)
    assert result.returncode == 2
    _one_error_line(result.stderr)
    assert result.stderr.startswith(f"motionkit: error: {path}:1: ")


@pytest.mark.parametrize("name", MATHTEXT_NAMES, ids=["unclosed", "40 deep"])
def test_plot_draws_names_from_files_as_plain_text(name: str, tmp_path: Path) -> None:
    path = _write(tmp_path, "joints.seq", joints_seq([name, "j1"]))
    result = run_cli(["plot", str(path), "-o", str(tmp_path / "out.png"), "--kind", "joints"],
                     path.stat().st_size, timeout=60)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "out.png").stat().st_size > 0


def test_plot_caps_its_panels_and_says_so(tmp_path: Path) -> None:
    path = _write(tmp_path, "joints.seq", joints_seq([f"j{i}" for i in range(300)]))
    result = run_cli(["plot", str(path), "-o", str(tmp_path / "out.png"), "--kind", "joints"],
                     path.stat().st_size, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "first 64" in result.stderr and "--joints" in result.stderr


def test_non_finite_bvh_channels_are_said(tmp_path: Path) -> None:
    path = _write(tmp_path, "nan.bvh", bvh_frame_time("0.04", "nan 1 inf"))
    result = run_cli(["info", str(path)], path.stat().st_size)
    assert result.returncode == 0, result.stderr
    assert "2 channel values are NaN or infinite (the first in frame 1)" in result.stderr

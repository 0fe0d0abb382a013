"""``batch eval --offset/--n-align``: each result equals the one-file ``eval ape`` with the
same options, and the options reach the metric (an offset clock lines up)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from .walks import noisy_pair


def _motionkit(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "motionkit", *args], capture_output=True,
                          text=True, timeout=300)


@pytest.fixture
def pair(tmp_path: Path) -> tuple[Path, Path]:
    """A reference walk and its estimate, noisy, on a clock 0.5 s late."""
    return noisy_pair(tmp_path, 80, 0.5)


@pytest.mark.parametrize("options", [["--offset", "-0.5"], ["--offset", "auto"],
                                     ["--offset", "-0.5", "--align", "se3", "--n-align", "10"]])
def test_batch_eval_takes_the_offset_and_n_align_of_eval(pair: tuple[Path, Path],
                                                         tmp_path: Path,
                                                         options: list[str]) -> None:
    ref, est = pair
    done = _motionkit("batch", "eval", str(est.parent), "--ref", str(ref.parent / "{name}"),
                      "--out", str(tmp_path / "res"), "--engine", "local", "-j", "1", *options)
    assert done.returncode == 0, done.stderr
    batched = json.loads((tmp_path / "res" / "a.tum.json").read_text())
    one = _motionkit("eval", "ape", str(ref), str(est), "--json", *options)
    assert one.returncode == 0, one.stderr
    alone = json.loads(one.stdout)
    assert batched["stats"] == pytest.approx(alone["stats"])
    assert batched["stats"]["rmse"] < 0.05  # the clocks lined up


def test_without_the_offset_the_clocks_do_not_line_up(pair: tuple[Path, Path],
                                                      tmp_path: Path) -> None:
    ref, est = pair
    late = _motionkit("batch", "eval", str(est.parent), "--ref", str(ref.parent / "{name}"),
                      "--out", str(tmp_path / "late"), "--engine", "local", "-j", "1")
    assert late.returncode == 0, late.stderr
    assert json.loads((tmp_path / "late" / "a.tum.json").read_text())["stats"]["rmse"] > 0.5


def test_bad_eval_options_are_one_line(pair: tuple[Path, Path], tmp_path: Path) -> None:
    ref, est = pair
    for wrong in (["--offset", "soon"], ["--n-align", "0"], ["--max-gap", "0"]):
        done = _motionkit("batch", "eval", str(est.parent), "--ref", str(ref.parent / "{name}"),
                          "--out", str(tmp_path / "res"), "--engine", "local", *wrong)
        assert done.returncode == 2 and done.stderr.count("\n") == 1, (wrong, done.stderr)
        assert not (tmp_path / "res").exists()

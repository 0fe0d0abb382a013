"""``plot --kind check``: a panel per check over time, its threshold, the failing frames."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

import motionkit as mk
from conftest import corpus_file, require_peer
from motionkit.plot.check import check_figure
from test_cli import run_cli

require_peer("matplotlib")


def test_each_check_is_drawn_with_its_threshold_and_failing_frames() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        skeleton = mk.read(corpus_file("parc", "character", "humanoid.xml"))
        motion = mk.read(corpus_file("mimickit", "humanoid_platform05.pkl"))
    assert isinstance(motion, mk.Motion) and isinstance(skeleton, mk.Skeleton)
    report = mk.check(motion, skeleton)
    figure = check_figure(report)
    axes = figure.axes
    drawn = [r for r in report.results if r.series is not None]
    assert [ax.get_title(loc="left").split(":")[0] for ax in axes] == [r.name for r in drawn]
    floating = axes[[r.name for r in drawn].index("floating")]
    line, marks = floating.get_lines()[0], floating.get_lines()[-1]
    result = report.result("floating")
    assert result.failing is not None
    assert len(marks.get_xdata()) == int(result.failing.sum()) > 0  # type: ignore[arg-type]
    assert np.allclose(np.asarray(line.get_ydata()), result.series)  # type: ignore[arg-type]
    threshold = [ln for ln in floating.get_lines() if ln.get_linestyle() == "--"]
    assert np.allclose(np.asarray(threshold[0].get_ydata()), 0.2)  # type: ignore[arg-type]
    assert "FAIL" in floating.get_title(loc="left")


def test_the_command_writes_the_same_bytes_twice(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    args = ["plot", str(corpus_file("parc", "ms", "sfu.pkl")), "--kind", "check", "--model",
            str(corpus_file("parc", "character", "humanoid.xml"))]
    first, second = tmp_path / "a.svg", tmp_path / "b.svg"
    assert run_cli([*args, "-o", str(first)], capsys)[0] == 0
    assert run_cli([*args, "-o", str(second)], capsys)[0] == 0
    assert first.read_bytes() == second.read_bytes()

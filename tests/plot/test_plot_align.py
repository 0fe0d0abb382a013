"""``plot --ref FILE --align KIND``: each path fitted onto the reference first, as evo_traj
--ref --align draws it (issue 25)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import motionkit as mk
from conftest import corpus_file, require_peer
from test_cli import run_cli

require_peer("matplotlib")

GT = ("evo", "freiburg1_xyz-groundtruth.txt")
EST = ("evo", "freiburg1_xyz-rgbdslam.txt")


@pytest.mark.parametrize("kind", ["se3", "sim3"])
def test_the_drawn_estimate_is_evo_s_aligned_estimate(kind: str) -> None:
    require_peer("evo")
    from evo.core import sync
    from evo.tools import file_interface

    ref_file, est_file = corpus_file(*GT), corpus_file(*EST)
    figure = mk.plot(est_file, ref=ref_file, align=kind)
    top = figure.axes[0]
    labels = [t.get_text() for t in top.get_legend().get_texts()]
    assert labels == [f"{ref_file.name} (reference)", f"{est_file.name} ({kind} aligned)"]
    drawn = np.column_stack([top.get_lines()[3].get_xdata(), top.get_lines()[3].get_ydata()])

    ref = file_interface.read_tum_trajectory_file(str(ref_file))
    est = file_interface.read_tum_trajectory_file(str(est_file))
    whole = file_interface.read_tum_trajectory_file(str(est_file))
    ref, est = sync.associate_trajectories(ref, est, max_diff=0.01)
    rotation, translation, scale = est.align(ref, correct_scale=kind == "sim3")
    expected = scale * whole.positions_xyz @ rotation.T + translation
    np.testing.assert_allclose(drawn, expected[:, :2], atol=1e-9)


def test_without_align_the_paths_are_drawn_as_they_are() -> None:
    figure = mk.plot(corpus_file(*EST), ref=corpus_file(*GT))
    top = figure.axes[0]
    est = mk.read(corpus_file(*EST)).tracks["root"].data
    np.testing.assert_array_equal(top.get_lines()[3].get_xdata(), est[:, 0])


def test_cli_plot_aligns_and_refuses_align_without_ref(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "aligned.png"
    code, _, err = run_cli(["plot", str(corpus_file(*EST)), "--ref", str(corpus_file(*GT)),
                            "--align", "posyaw", "-o", str(out)], capsys)
    assert code == 0, err
    assert out.read_bytes().startswith(b"\x89PNG")
    code, _, err = run_cli(["plot", str(corpus_file(*EST)), "--align", "se3", "-o",
                            str(tmp_path / "x.png")], capsys)
    assert code == 2 and "--ref" in err


def test_the_eval_figure_shows_each_y_label_once() -> None:
    """The colour bar's label stood beside the middle panel's y label: the same words twice."""
    from motionkit import evaluation as ev
    from motionkit.plot.evaluation import evaluation_figure

    ref, est = ev.read_poses(corpus_file(*GT)), ev.read_poses(corpus_file(*EST))
    figure = evaluation_figure(ev.ape(ref, est, align="se3"), ref, est)
    figure.canvas.draw()
    middle = figure.axes[1]
    label = middle.get_ylabel()
    upright = [text for axes in figure.axes for text in (axes.yaxis.label, axes.xaxis.label)
               if text.get_text().endswith(label) and text.get_visible()
               and text.get_rotation() == 90 and text.get_window_extent().width > 0]
    assert [text.get_text() for text in upright] == [label]

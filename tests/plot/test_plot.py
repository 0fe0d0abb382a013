"""Plots: the drawn data is the input's, every axis has a title and units, files are
deterministic, and the CLI and ``mk.plot`` reach the same code."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import motionkit as mk
from conftest import corpus_file, require_peer
from motionkit import Motion, Terrain, Timeline, Track
from motionkit.cli import main
from motionkit.plot import save
from motionkit.plot.motion import MAX_POINTS, rpy_degrees

require_peer("matplotlib")  # in the test extra: a missing one fails under CI


def _turning(frames: int = 400, name: str = "turn") -> Motion:
    """A circle walked twice: yaw passes ±180° twice, z rises."""
    t = np.linspace(0, 4 * np.pi, frames)
    yaw = t + np.pi / 2
    pose = np.column_stack([np.cos(t), np.sin(t), 0.1 * t, np.zeros(frames), np.zeros(frames),
                            np.sin(yaw / 2), np.cos(yaw / 2)])
    return Motion({"root": Track("root", "pose", pose, Timeline.uniform(100.0, frames))},
                  meta={"name": name})


def _labelled(figure: object) -> None:
    for axes in figure.axes:  # type: ignore[attr-defined]
        if not axes.get_visible() or axes.get_label() == "<colorbar>":
            continue
        assert axes.get_title(), "every panel has a title"
        assert "(" in axes.get_xlabel() and "(" in axes.get_ylabel(), (axes.get_title(),
                                                                        "axes carry units")


def test_trajectory_panels_hold_the_input() -> None:
    motion = _turning()
    figure = mk.plot(motion, _turning(200, "other"))
    _labelled(figure)
    top, _x, _y, z, _roll, _pitch, yaw = figure.axes
    pose = motion.tracks["root"].data
    line = top.get_lines()[0]
    assert line.get_label() == "turn"
    np.testing.assert_array_equal(line.get_xdata(), pose[:, 0])
    np.testing.assert_array_equal(line.get_ydata(), pose[:, 1])
    start, end = top.get_lines()[1:3]
    assert (start.get_xdata()[0], end.get_xdata()[0]) == (pose[0, 0], pose[-1, 0])
    np.testing.assert_array_equal(z.get_lines()[0].get_ydata(), pose[:, 2])
    np.testing.assert_allclose(z.get_lines()[0].get_xdata(), np.arange(400) / 100.0)
    angles = yaw.get_lines()[0].get_ydata()
    assert np.all(np.abs(np.diff(angles)) < 10), "yaw is unwrapped: no ±180° jumps"
    assert angles[-1] - angles[0] == pytest.approx(720, abs=2)
    assert top.get_aspect() == 1.0
    assert [t.get_text() for t in top.get_legend().get_texts()] == ["turn", "other"]


def test_rpy_of_known_rotations() -> None:
    from motionkit.spatial.quaternion import from_rpy

    rpy = np.array([[0.1, -0.2, 0.3], [-0.5, 0.4, 3.0]])
    np.testing.assert_allclose(rpy_degrees(from_rpy(rpy)), np.degrees(rpy), atol=1e-9)


def test_big_inputs_are_thinned_for_drawing_only() -> None:
    motion = _turning(3 * MAX_POINTS + 7)
    before = motion.tracks["root"].data.copy()
    figure = mk.plot(motion)
    drawn = figure.axes[0].get_lines()[0].get_xdata()
    assert len(drawn) <= MAX_POINTS + 1
    np.testing.assert_array_equal(drawn, before[::4, 0])
    np.testing.assert_array_equal(motion.tracks["root"].data, before)


def test_joints_grid_for_sr1_and_a_subset() -> None:
    walk = corpus_file("choreonoid", "SR1WalkPattern1.seq")
    figure = mk.plot(walk)
    shown = [a for a in figure.axes if a.get_visible()]
    assert len(shown) == 29
    _labelled(figure)
    data = mk.read(walk).tracks["joints"].data
    np.testing.assert_array_equal(shown[7].get_lines()[0].get_ydata(), data[:, 7])
    labels = [f"joint {i}" for i in (3, 9)]
    subset = mk.plot(walk, joints=labels, kind="joints")
    titles = [a.get_title() for a in subset.axes if a.get_visible()]
    assert titles == labels


def test_terrain_with_the_root_path() -> None:
    path = corpus_file("parc", "ms", "dec2024_teaser_717_1_modified_opt.pkl")
    motion = mk.read(path)
    figure = mk.plot(path)
    axes = figure.axes[0]
    _labelled(figure)
    image = axes.get_images()[0]
    np.testing.assert_array_equal(image.get_array(), np.asarray(motion.terrain.heights, float).T)
    np.testing.assert_array_equal(axes.get_lines()[0].get_xdata(), motion.tracks["root"].data[:, 0])
    assert figure.axes[1].get_ylabel() == "height (m)"


def test_terrain_of_a_made_motion() -> None:
    motion = _turning()
    motion.terrain = Terrain(np.arange(12.0).reshape(4, 3), np.array([-1.0, -1.0]), 0.5)
    figure = mk.plot(motion, kind="terrain")
    left, right, bottom, top = figure.axes[0].get_images()[0].get_extent()
    assert (left, right, bottom, top) == (-1.25, 0.75, -1.25, 0.25)


@pytest.mark.parametrize("suffix", ["png", "svg", "pdf"])
def test_files_are_deterministic(tmp_path: Path, suffix: str) -> None:
    first = save(mk.plot(_turning()), tmp_path / f"a.{suffix}").read_bytes()
    second = save(mk.plot(_turning()), tmp_path / f"b.{suffix}").read_bytes()
    assert len(first) > 1000 and first == second


def test_cli_plot_and_its_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ref = corpus_file("evo", "fr2_desk_groundtruth.txt")
    est = corpus_file("evo", "fr2_desk_ORB.txt")
    out = tmp_path / "paths.png"
    with pytest.raises(SystemExit) as done:
        main(["plot", str(ref), str(est), "-o", str(out)])
    assert done.value.code == 0 and out.stat().st_size > 10_000
    with pytest.raises(SystemExit) as done:
        main(["plot", str(ref), "-o", str(tmp_path / "paths.gif")])
    assert done.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("motionkit: error:") and ".png, .svg or .pdf" in err[-1]
    with pytest.raises(SystemExit) as done:
        main(["plot", str(ref), "--kind", "joints", "-o", str(tmp_path / "j.png")])
    assert done.value.code == 2


def test_eval_plot_uses_the_same_code(tmp_path: Path) -> None:
    from motionkit import evaluation as ev
    from motionkit.plot.evaluation import evaluation_figure

    ref = ev.read_poses(corpus_file("evo", "freiburg1_xyz-groundtruth.txt"))
    est = ev.read_poses(corpus_file("evo", "freiburg1_xyz-rgbdslam.txt"))
    result = ev.ape(ref, est, align="se3")
    figure = evaluation_figure(result, ref, est)
    top, middle, histogram = figure.axes[:3]
    dots = top.collections[0]
    np.testing.assert_array_equal(dots.get_array(), result.errors)
    np.testing.assert_allclose(dots.get_offsets()[:, 0],
                               result.alignment.apply(est).positions[result.est_index, 0])
    np.testing.assert_array_equal(middle.get_lines()[0].get_ydata()[:10], result.errors[:10])
    assert sum(p.get_height() for p in histogram.patches) == result.pairs
    from motionkit.plot.evaluation import save_evaluation as eval_plot

    a = eval_plot(result, ref, est, tmp_path / "a.png").read_bytes()
    b = save(evaluation_figure(result, ref, est), tmp_path / "b.png").read_bytes()
    assert a == b


def test_import_stays_light() -> None:
    code = ("import sys, motionkit; motionkit.plot; motionkit.view; "
            "print(sorted(m for m in ('matplotlib', 'viser') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_model_names_sr1_joint_columns(tmp_path: Path) -> None:
    walk = corpus_file("choreonoid", "SR1WalkPattern1.seq")
    body = corpus_file("choreonoid", "SR1.body")
    skeleton = mk.read(body)
    figure = mk.plot(walk, model=body, joints=["RLEG_KNEE"])
    (panel,) = [a for a in figure.axes if a.get_visible()]
    assert panel.get_title() == "RLEG_KNEE"
    column = {int(j.attrs["joint_id"]): j.name for j in skeleton.joints
              if "joint_id" in j.attrs}
    knee = next(c for c, n in column.items() if n == "RLEG_KNEE")
    np.testing.assert_array_equal(panel.get_lines()[0].get_ydata(),
                                  mk.read(walk).tracks["joints"].data[:, knee])
    out = tmp_path / "knee.svg"
    with pytest.raises(SystemExit) as done:
        main(["plot", str(walk), "--model", str(body), "--joints", "RLEG_KNEE,LLEG_KNEE", "-o", str(out)])
    assert done.value.code == 0 and b"LLEG_KNEE" in out.read_bytes()


def test_svg_clip_ids_do_not_depend_on_the_run() -> None:
    """matplotlib hashes a clip path's transform text into its id, which can change from
    one run to the next: ids are renumbered in order of use."""
    from motionkit.plot import _numbered_clip_ids

    one = (b'<path clip-path="url(#pb58f99e653)"/><clipPath id="pb58f99e653"/>'
           b'<g clip-path="url(#p0123456789)"/>')
    two = one.replace(b"pb58f99e653", b"p35a52ce225")
    assert _numbered_clip_ids(one) == _numbered_clip_ids(two) == (
        b'<path clip-path="url(#clip0)"/><clipPath id="clip0"/><g clip-path="url(#clip1)"/>')

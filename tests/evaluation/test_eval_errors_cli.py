"""Bad input is one clear error (library: ConversionError; CLI: one line, exit 2); the CLI's
summaries, JSON, saved results and tables."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from conftest import require_peer
from motionkit import ConversionError
from motionkit import evaluation as ev
from motionkit.cli import main
from motionkit.evaluation import result as result_module
from motionkit.spatial.quaternion import from_rpy


def _poses(n: int = 50, t0: float = 0.0, line: bool = False) -> ev.Poses:
    t = t0 + np.arange(n) * 0.1
    if line:
        pos = np.outer(np.arange(n) * 0.3, [0.48, -0.6, 0.64])  # a straight, not axis-parallel line
    else:
        pos = np.column_stack([np.cos(t), np.sin(2 * t), 0.1 * t])
    return ev.Poses(t, pos, from_rpy(np.column_stack([0.1 * t, 0 * t, t])))


def _tum(path: Path, poses: ev.Poses) -> str:
    table = np.column_stack([poses.times, poses.positions, poses.quaternions])
    np.savetxt(path, table, fmt="%.17g")
    return str(path)


def _nan() -> ev.Poses:
    p = _poses()
    positions = p.positions.copy()
    positions[7, 1] = np.nan
    return ev.Poses(p.times, positions, p.quaternions)


BAD = {
    "disjoint": (lambda: (_poses(), _poses(t0=100.0)), {},
                 "only 0 of 50 reference and 50 estimate poses matched"),
    "one_pose": (lambda: (_poses(), _poses(1)), {}, "has 1 pose; evaluation needs at least 2"),
    "nan": (lambda: (_poses(), _nan()), {}, "1 of 50 poses hold NaN or infinite values (first at frame 7)"),
    "collinear_sim3": (lambda: (_poses(line=True), _poses(line=True)), {"align": "sim3"},
                       "coincident or on one line"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_input_is_one_clear_error(case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    make, options, message = BAD[case]
    ref, est = make()
    with pytest.raises(ConversionError, match=message.replace("(", r"\(").replace(")", r"\)")):
        ev.ape(ref, est, **options)
    argv = ["eval", "ape", _tum(tmp_path / "ref.tum", ref), _tum(tmp_path / "est.tum", est)]
    argv += [f"--{k}={v}" for k, v in options.items()]
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("motionkit: "), err


def test_more_refusals() -> None:
    ref = _poses()
    with pytest.raises(ConversionError, match="no pose pair"):
        ev.rpe(ref, ref, delta=1000, unit="m")
    with pytest.raises(ConversionError, match="whole number of frames"):
        ev.rpe(ref, ref, delta=1.5)
    with pytest.raises(ConversionError, match="unknown relation"):
        ev.ape(ref, ref, relation="bogus")  # type: ignore[arg-type]
    with pytest.raises(ConversionError, match="shorter than the shortest segment"):
        ev.kitti_odometry(ref, ref)
    with pytest.raises(ConversionError, match="at least 3"):
        ev.align(ref.take(np.arange(2)), ref.take(np.arange(2)), "se3")
    vertical = ev.Poses(ref.times, np.outer(np.arange(50.0), [0, 0, 1]), ref.quaternions)
    with pytest.raises(ConversionError, match="fix no yaw"):
        ev.align(vertical, vertical, "posyaw")


def test_cli_summary_json_save_and_table(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    ref = _poses(400)
    rng = np.random.default_rng(3)
    est = ev.Poses(ref.times + 0.002, ref.positions + rng.normal(0, 0.01, (400, 3)), ref.quaternions)
    r, e = _tum(tmp_path / "ref.tum", ref), _tum(tmp_path / "est.tum", est)

    def run(*args: str) -> str:
        with pytest.raises(SystemExit) as exit_info:
            main(["eval", *args])
        assert exit_info.value.code == 0
        return capsys.readouterr().out

    text = run("ape", r, e, "--align", "se3")
    assert "pairs: 400" in text and "rmse" in text and "alignment: se3 on 400 poses" in text
    doc = json.loads(run("rpe", r, e, "--json", "--delta", "2"))
    assert doc["metric"] == "rpe" and doc["pairs"] == 199 and len(doc["errors"]["error"]) == 199
    assert doc["settings"]["delta"] == 2 and set(doc["stats"]) == set(result_module.STAT_KEYS)
    assert doc["errors"]["ref_index_start"][:2] == [0, 2] and doc["errors"]["ref_index"][:2] == [2, 4]
    run("ape", r, e, "--save", str(tmp_path / "small.json"))
    monkeypatch.setattr(result_module, "INLINE_PAIRS", 10)
    run("ape", r, e, "--align", "sim3", "--match", "interpolate", "--save", str(tmp_path / "big.json"))
    assert (tmp_path / "big.errors.parquet").exists() and "errors" not in json.loads(
        (tmp_path / "big.json").read_text())
    run("rpe", r, e, "--save", str(tmp_path / "rpe.json"))
    loaded_rpe = ev.load(tmp_path / "rpe.json")
    assert loaded_rpe.ref_start is not None and loaded_rpe.ref_start.tolist() == list(range(399))
    assert loaded_rpe.stats == ev.rpe(ref, est).stats
    for name in ("small", "big"):
        loaded = ev.load(tmp_path / f"{name}.json")
        again = ev.ape(ref, est, align="sim3" if name == "big" else "none",
                       match="interpolate" if name == "big" else "nearest")
        assert loaded.stats == again.stats
        np.testing.assert_array_equal(loaded.errors, again.errors)
        np.testing.assert_array_equal(loaded.t_ref, again.t_ref)
    table = run("table", str(tmp_path / "small.json"), str(tmp_path / "big.json"))
    assert table.count("\n") == 6 and "| small.json | ape |" in table
    assert table.startswith(f"ref and est under {tmp_path}/\n")  # named once, not per row
    assert "| ref.tum | est.tum |" in table and str(tmp_path) not in table.split("\n", 1)[1]
    for suffix in ("csv", "md", "parquet"):
        run("table", str(tmp_path / "small.json"), str(tmp_path / "big.json"), "-o",
            str(tmp_path / f"t.{suffix}"))
    import polars as pl

    frame = pl.read_csv(tmp_path / "t.csv")
    expected = [ev.load(tmp_path / f"{n}.json").stats["rmse"] for n in ("small", "big")]
    assert frame["rmse"].to_list() == expected
    assert pl.read_parquet(tmp_path / "t.parquet").shape == frame.shape


def test_cli_bad_offset_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    r = _tum(tmp_path / "ref.tum", _poses())
    with pytest.raises(SystemExit) as exit_info:
        main(["eval", "ape", r, r, "--offset", "soon"])
    assert exit_info.value.code == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


@pytest.mark.parametrize("metric", ["ape", "kitti"])
def test_cli_plot_writes_a_png(metric: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    require_peer("matplotlib")
    t = np.arange(0.0, 600.0, 1.0)
    ref = ev.Poses(t, np.column_stack([100 * np.cos(t / 60), 100 * np.sin(t / 60), 0 * t]),
                   from_rpy(np.column_stack([0 * t, 0 * t, t / 60])))
    est = ev.Poses(t, ref.positions * 1.01, ref.quaternions)
    r, e = _tum(tmp_path / "ref.tum", ref), _tum(tmp_path / "est.tum", est)
    with pytest.raises(SystemExit) as exit_info:
        main(["eval", metric, r, e, "--plot", str(tmp_path / "p.png")])
    assert exit_info.value.code == 0, capsys.readouterr().err
    assert (tmp_path / "p.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_evaluation_import_stays_light() -> None:
    """scipy, polars and matplotlib load only when a function needs them."""
    import subprocess
    import sys

    code = ("import sys, motionkit.evaluation, motionkit.cli.eval; "
            "print(sorted(m for m in ('scipy', 'polars', 'matplotlib') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_kitti_rows_reordered_by_the_reader_keep_their_own_rotations(tmp_path: Path) -> None:
    yaw = np.radians([0.0, 20.0, 10.0, 30.0])
    rows = []
    for k, angle in enumerate(yaw):
        c, s = np.cos(angle), np.sin(angle)
        rows.append(f"{c} {-s} 0 {float(k)} {s} {c} 0 0 0 0 1 0")
    path = tmp_path / "p.kitti"
    path.write_text("\n".join(rows) + "\n")
    (tmp_path / "t.txt").write_text("0.0\n0.2\n0.1\n0.3\n")  # row 2 comes before row 1 in time
    poses = ev.read_poses(path, times=tmp_path / "t.txt", sort=True)
    np.testing.assert_array_equal(poses.positions[:, 0], [0.0, 2.0, 1.0, 3.0])
    from scipy.spatial.transform import Rotation

    yaw_of_matrices = Rotation.from_matrix(poses.rotation_matrices()).as_euler("xyz")[:, 2]
    np.testing.assert_allclose(np.degrees(yaw_of_matrices), [0.0, 10.0, 20.0, 30.0], atol=1e-9)
    comma = tmp_path / "c.kitti"
    comma.write_text("\n".join(row.replace(" ", ",") for row in rows) + "\n")
    assert len(ev.read_poses(comma)) == 4  # our reader takes commas; no raw NumPy error


def test_position_only_inputs_allow_translation_errors_only(tmp_path: Path) -> None:
    reference = _poses()
    positions = tmp_path / "p.traj"
    positions.write_text("#fields t,px,py,pz\n" + "".join(
        f"{t!r},{x!r},{y!r},{z!r}\n" for t, (x, y, z) in zip(reference.times.tolist(),
                                                            reference.positions.tolist(),
                                                            strict=True)))
    estimate = ev.read_poses(positions)
    assert ev.ape(reference, estimate).stats["rmse"] == pytest.approx(0.0, abs=1e-12)
    for call in (lambda: ev.ape(reference, estimate, relation="rotation_angle"),
                 lambda: ev.rpe(reference, estimate),
                 lambda: ev.kitti_odometry(reference, estimate)):
        with pytest.raises(ConversionError, match="positions only"):
            call()

"""``motionkit check``: one report per file with every constant, exit status 0 / 1 / 2,
JSON, the ground options, and ``--fix`` (lifted within 1 mm; a second check passes; the
fixes listed in the written file's metadata)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest

import motionkit as mk
from conftest import corpus_file
from quality.clips import sunk_sfu
from test_cli import run_cli

HUMANOID = ("parc", "character", "humanoid.xml")


def _sunk_sfu(tmp_path: Path) -> Path:
    return sunk_sfu(tmp_path / "clips")[1]


def test_a_good_clip_passes_and_every_constant_is_printed(capsys: pytest.CaptureFixture[str]
                                                          ) -> None:
    code, out, _ = run_cli(["check", str(corpus_file("parc", "ms", "sfu.pkl")), "--character",
                            str(corpus_file(*HUMANOID))], capsys)
    assert code == 0
    assert ": pass (15 frames at 30 fps, preset default)" in out
    for constant in ("threshold_m=-0.05", "threshold_mps=15", "threshold_radps=40",
                     "height_m=0.2", "time_s=1", "tolerance=0.05", "distance_m=0.2",
                     "speed_mps=0.3", "depth_m=0.05", "gap_factor=1.5",
                     "speed < 0.15 m/s and height < 0.1 m"):
        assert constant in out, constant
    assert "nearest cell as PARC samples it" in out


def test_a_failing_check_exits_1_and_an_error_2(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    sunk = _sunk_sfu(tmp_path)
    code, out, _ = run_cli(["check", str(sunk), "--character", str(corpus_file(*HUMANOID))],
                           capsys)
    assert code == 1 and "FAIL below_ground" in out and "first frame 7" in out
    broken = tmp_path / "broken.pkl"
    broken.write_bytes(b"not a pickle")
    code, out, err = run_cli(["check", str(broken), str(sunk), "--character",
                              str(corpus_file(*HUMANOID))], capsys)
    assert code == 2
    assert len([line for line in err.splitlines() if "error" in line]) == 1
    assert "Traceback" not in err and "FAIL below_ground" in out  # the other file still checked
    code, _, err = run_cli(["check", str(sunk)], capsys)  # no model
    assert code == 2 and "--model/--character" in err


def test_json_and_the_protomotions_preset(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(["check", str(corpus_file("mimickit", "humanoid_platform05.pkl")),
                            "--character", str(corpus_file(*HUMANOID)), "--preset",
                            "protomotions", "--json"], capsys)
    assert code == 1
    (report,) = json.loads(out)
    assert report["verdict"] == "fail:floating"
    assert [c["name"] for c in report["checks"]] == ["below_ground", "body_speed", "joint_speed",
                                                     "floating", "self_penetration"]
    floating = report["checks"][3]
    assert (floating["value"], floating["threshold"]) == (33, 30)


def test_the_ground_options(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["check", str(corpus_file("mimickit", "g1_walk.pkl")), "--model",
            str(corpus_file("containers", "characters", "g1.xml")), "--json"]
    code, out, _ = run_cli([*args, "--ground", "auto"], capsys)
    (report,) = json.loads(out)
    assert report["ground"]["source"].startswith("auto: flat plane z = ")
    assert report["ground"]["height"] < 0  # its capsule soles dip a few mm below z = 0
    code, out, _ = run_cli([*args, "--ground", "0.5"], capsys)
    (report,) = json.loads(out)
    assert code == 1 and "below_ground" in report["failed"] and report["ground"]["height"] == 0.5
    code, _, err = run_cli([*args, "--ground", "terrain"], capsys)
    assert code == 2 and "has no terrain" in err
    code, _, err = run_cli([*args, "--ground", "sky"], capsys)
    assert code == 2 and "--ground must be" in err


def test_fix_lifts_onto_the_ground_and_the_second_check_passes(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sunk, out_path = _sunk_sfu(tmp_path), tmp_path / "fixed.pkl"
    code, out, _ = run_cli(["check", str(sunk), "--character", str(corpus_file(*HUMANOID)),
                            "--fix", str(out_path)], capsys)
    assert code == 0, out
    assert "fixed: lift: root moved +0." in out
    fixed = mk.read(out_path, character=corpus_file(*HUMANOID))
    assert isinstance(fixed, mk.Motion)
    assert any(line.startswith("lift:") for line in fixed.meta["quality_fixes"])  # type: ignore[union-attr]
    again = mk.check(fixed, mk.read(corpus_file(*HUMANOID)))  # type: ignore[arg-type]
    assert again.passed
    assert abs(again.result("below_ground").value) < 1e-3
    code, _, err = run_cli(["check", str(sunk), "--character", str(corpus_file(*HUMANOID)),
                            "--fix", str(sunk)], capsys)
    assert code == 2 and "input" in err  # never over the source


def test_contacts_writes_the_labels_as_a_track(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "labelled.pkl"
    source = corpus_file("parc", "ms", "dec2024_teaser_717_1_modified_opt.pkl")
    code, _, _ = run_cli(["check", str(source), "--character", str(corpus_file(*HUMANOID)),
                          "--contacts", str(out)], capsys)
    assert code == 0
    labelled = mk.read(out, character=corpus_file(*HUMANOID))
    assert isinstance(labelled, mk.Motion)
    skeleton = mk.read(corpus_file(*HUMANOID))
    report = mk.check(labelled, skeleton)  # type: ignore[arg-type]
    assert report.contacts is not None
    assert np.array_equal(labelled.tracks["contacts"].data > 0.5, report.contacts)
    assert report.contact_agreement is not None and report.contact_agreement["agreement"] == 1.0


def test_fix_and_contacts_to_one_file_are_refused(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    sunk, same = _sunk_sfu(tmp_path), tmp_path / "same.pkl"
    args = ["check", str(sunk), "--character", str(corpus_file(*HUMANOID))]
    code, _, err = run_cli([*args, "--fix", str(same), "--contacts", str(same)], capsys)
    lines = [line for line in err.splitlines() if line.startswith("motionkit:")]
    assert code == 2 and len(lines) == 1 and "same file" in lines[0]
    assert not same.exists()  # refused before anything is written
    other = tmp_path / "sub" / ".." / "same.pkl"  # another spelling of the path
    code, _, err = run_cli([*args, "--fix", str(same), "--contacts", str(other)], capsys)
    assert code == 2 and "same file" in err and not same.exists()


def test_with_fix_both_verdicts_are_printed_and_the_fixed_copy_decides_the_status(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sunk, out_path = _sunk_sfu(tmp_path), tmp_path / "fixed.pkl"
    code, out, _ = run_cli(["check", str(sunk), "--character", str(corpus_file(*HUMANOID)),
                            "--fix", str(out_path)], capsys)
    assert code == 0  # the original fails below_ground, its fixed copy passes
    (summary,) = [line for line in out.splitlines() if line.startswith("verdicts:")]
    assert "original" in summary and "fail:below_ground" in summary
    assert f"fixed copy {out_path}: pass" in summary
    # a failure --fix cannot repair (ProtoMotions' floating) keeps the status 1
    floating = tmp_path / "floating.pkl"
    code, out, _ = run_cli(["check", str(corpus_file("mimickit", "humanoid_platform05.pkl")),
                            "--character", str(corpus_file(*HUMANOID)), "--preset",
                            "protomotions", "--fix", str(floating)], capsys)
    (summary,) = [line for line in out.splitlines() if line.startswith("verdicts:")]
    assert code == 1 and summary.count("fail:floating") == 2


def test_check_json_is_strict_with_a_frame_that_is_not_a_number(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        motion = mk.read(corpus_file("parc", "ms", "sfu.pkl"))
    assert isinstance(motion, mk.Motion)
    root = np.asarray(motion.tracks["root"].data, dtype=np.float64).copy()
    root[5, :3] = np.nan
    motion.tracks["root"] = motion.tracks["root"].with_data(root.astype(np.float32))
    path = tmp_path / "nan.pkl"
    mk.write(path, motion)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        code, out, _ = run_cli(["check", str(path), "--character", str(corpus_file(*HUMANOID)),
                                "--json"], capsys)

    def refuse(constant: str) -> object:
        raise AssertionError(f"{constant} in check --json")

    (report,) = json.loads(out, parse_constant=refuse)
    assert code == 1 and "foot_skating" in report["failed"]


def test_agreement_with_a_parc_files_contacts_is_reported_in_text_and_json(
        capsys: pytest.CaptureFixture[str]) -> None:
    args = ["check", str(corpus_file("parc", "ms", "sfu.pkl")), "--character",
            str(corpus_file(*HUMANOID))]
    code, out, _ = run_cli(args, capsys)
    (line,) = [line for line in out.splitlines() if "agree with the file's" in line]
    code, out, _ = run_cli([*args, "--json"], capsys)
    (report,) = json.loads(out)
    agreement = report["contact_agreement"]
    assert code == 0 and 0.9 < agreement["agreement"] <= 1.0
    assert agreement["compared"] == 15 * 15  # 15 frames, 15 bodies
    assert f"on {agreement['agreement']:.6g} of 225 (frame, body) labels" in line
    assert set(agreement["feet"]) == {"right_foot", "left_foot"}


def test_a_motion_without_contacts_says_so(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    """MimicKit motion files hold no contacts (spec character-bridges: its saver writes
    none; they live in the simulator's configs), so a ``contacts`` key is not read, with
    a warning, and the report says there was nothing to compare."""
    import pickle

    with corpus_file("mimickit", "g1_walk.pkl").open("rb") as handle:
        values = pickle.load(handle)
    values["contacts"] = [[1.0] * 31 for _ in values["frames"]]
    with_key = tmp_path / "with_contacts.pkl"
    with_key.write_bytes(pickle.dumps(values))
    model = str(corpus_file("containers", "characters", "g1.xml"))
    for path in (corpus_file("mimickit", "g1_walk.pkl"), with_key):
        code, out, err = run_cli(["check", str(path), "--model", model], capsys)
        assert code == 0 and "contacts: the file holds no contacts of these bodies" in out
        code, out, _ = run_cli(["check", str(path), "--model", model, "--json"], capsys)
        (report,) = json.loads(out)
        assert code == 0
        assert report["contact_agreement"]["compared"] == 0
        assert report["contact_agreement"]["agreement"] is None
    assert "keys contacts ignored" in err


def test_bad_options_are_one_line_whatever_the_number_of_files(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good, sunk = sunk_sfu(tmp_path / "clips")
    for wrong, said in ((["-T", "body_speed=-1"], "body_speed=-1"),
                        (["--ground", "sky"], "--ground must be"),
                        (["--feet", "hoof"], "no foot body 'hoof'")):
        code, out, err = run_cli(["check", str(good), str(sunk), "--character",
                                  str(corpus_file(*HUMANOID)), *wrong], capsys)
        lines = [line for line in err.splitlines() if line.startswith("motionkit:")]
        assert code == 2 and len(lines) == 1 and said in lines[0], (wrong, err)
        assert out == ""  # no file was checked

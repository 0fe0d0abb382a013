"""``motionkit fix IN OUT``: each fix made printed and listed in the written file's
``quality_fixes``, "nothing to fix", steps left alone and said so, the options refused
before anything is read, never over the source or through a link, exit status 0 / 2."""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path

import numpy as np
import pytest

import motionkit as mk
from conftest import corpus_file
from quality.clips import clip, sunk_sfu
from test_cli import run_cli

HUMANOID = str(corpus_file("parc", "character", "humanoid.xml"))
G1 = str(corpus_file("containers", "characters", "g1.xml"))


def _read(path: Path, model: str) -> mk.Motion:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        motion = mk.read(path, character=model)
    assert isinstance(motion, mk.Motion)
    return motion


def _skeleton(model: str) -> mk.Skeleton:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        skeleton = mk.read(model)
    assert isinstance(skeleton, mk.Skeleton)
    return skeleton


def test_fix_lifts_a_sunk_clip_and_lists_the_fix_in_the_file(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sunk = sunk_sfu(tmp_path / "clips")[1]
    out = tmp_path / "fixed.pkl"
    code, text, _ = run_cli(["fix", str(sunk), str(out), "--character", HUMANOID], capsys)
    assert code == 0, text
    assert "1 fix(es)" in text and "  fixed: lift: root moved +0.1" in text
    assert "check of the fixed copy: pass" in text and f"wrote {out}" in text
    fixed = _read(out, HUMANOID)
    (line,) = fixed.meta["quality_fixes"]  # type: ignore[misc]
    assert line.startswith("lift: root moved +0.1")
    lowest = mk.check(fixed, _skeleton(HUMANOID)).result("below_ground").value  # type: ignore[attr-defined]
    assert abs(lowest) < 1e-3
    # a second fix of the fixed file finds nothing, and keeps the list
    again = tmp_path / "again.pkl"
    code, text, _ = run_cli(["fix", str(out), str(again), "--character", HUMANOID, "--json"],
                            capsys)
    document = json.loads(text)
    assert code == 0 and document["fixes"] == [] and document["fixed_check"]["verdict"] == "pass"
    assert _read(again, HUMANOID).meta["quality_fixes"] == [line]


def test_nothing_to_fix_writes_the_copy_without_a_list(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = corpus_file("parc", "ms", "sfu.pkl")
    out = tmp_path / "copy.pkl"
    code, text, _ = run_cli(["fix", str(source), str(out), "--character", HUMANOID,
                             "--only", "spikes"], capsys)
    assert code == 0 and "nothing to fix" in text and "fixed:" not in text
    assert "" not in text.splitlines()  # no empty line where no fix is listed
    assert "quality_fixes" not in _read(out, HUMANOID).meta


def _g1_with(tmp_path: Path, start: int, stop: int, by: float) -> Path:
    """The G1 walk with its root moved ``by`` m in x on frames [start, stop)."""
    motion, _ = clip("g1_walk")
    root = np.asarray(motion.tracks["root"].data, dtype=np.float64).copy()
    root[start:stop, 0] += by
    motion.tracks["root"] = motion.tracks["root"].with_data(root)
    path = tmp_path / "g1.pkl"
    mk.write(path, motion, character=G1)
    return path


def test_a_spike_of_several_frames_is_refilled_and_a_step_left_alone(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spiky, out = _g1_with(tmp_path, 40, 44, 0.4), tmp_path / "fixed.pkl"
    code, text, _ = run_cli(["fix", str(spiky), str(out), "--model", G1, "--only", "spikes"],
                            capsys)
    assert code == 0, text
    assert "fixed: spikes: dropped frames [40, 41, 42, 43]" in text
    assert "at most 12 frame(s) (0.1 s at 120 fps)" in text
    (line,) = _read(out, G1).meta["quality_fixes"]  # type: ignore[misc]
    assert line.startswith("spikes: dropped frames [40, 41, 42, 43]")
    # shorter runs only: the same spike is a pair of steps, left alone, and said so
    code, text, _ = run_cli(["fix", str(spiky), str(out), "--model", G1, "--only", "spikes",
                             "--max-spike", "0.02"], capsys)
    assert code == 0 and "nothing to fix" in text
    assert "left: spikes: the jumps after frames [39, 43]" in text and "a step" in text
    assert "FAIL" not in text and "check of the fixed copy: fail:body_speed" in text
    stepped = _g1_with(tmp_path, 60, 125, 0.4)
    code, text, _ = run_cli(["fix", stepped.as_posix(), str(out), "--model", G1, "--json"],
                            capsys)
    document = json.loads(text)
    assert code == 0 and not any(f.startswith("spikes") for f in document["fixes"])
    assert any("after frames [59]" in f for f in document["left"])


def test_bad_options_are_one_line_before_anything_is_read(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    broken, out = tmp_path / "broken.pkl", tmp_path / "out.pkl"
    broken.write_bytes(b"not a pickle")
    for wrong, said in ((["--only", "lift,sky"], "unknown fix 'sky'"),
                        (["--only", ","], "--only names no fix"),
                        (["-T", "body_speed=-1"], "body_speed=-1"),
                        (["-T", "speed=3"], "unknown check threshold"),
                        (["--max-spike", "-1"], "longest spike")):
        code, _, err = run_cli(["fix", str(broken), str(out), "--character", HUMANOID, *wrong],
                               capsys)
        lines = [line for line in err.splitlines() if line.startswith("motionkit:")]
        assert code == 2 and len(lines) == 1 and said in lines[0], (wrong, err)
    assert not out.exists()
    code, _, err = run_cli(["fix", str(broken), str(out), "--character", HUMANOID], capsys)
    assert code == 2 and "Traceback" not in err and not out.exists()
    sunk = sunk_sfu(tmp_path / "clips")[1]
    code, _, err = run_cli(["fix", str(sunk), str(out), "--character", HUMANOID, "--feet",
                            "hoof"], capsys)
    assert code == 2 and "no foot body 'hoof'" in err and not out.exists()


def test_never_over_the_source_nor_through_a_link(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good, sunk = sunk_sfu(tmp_path / "clips")
    before = sunk.read_bytes()
    link = tmp_path / "link.pkl"
    link.symlink_to(sunk)
    for target in (sunk, link, tmp_path / "clips" / ".." / "clips" / "sunk.pkl"):
        code, _, err = run_cli(["fix", str(sunk), str(target), "--character", HUMANOID],
                               capsys)
        assert code == 2 and "is an input of this command" in err
    assert sunk.read_bytes() == before
    other = tmp_path / "other.pkl"
    other.write_bytes(b"kept")
    elsewhere = tmp_path / "elsewhere.pkl"
    elsewhere.symlink_to(other)
    code, text, _ = run_cli(["fix", str(sunk), str(elsewhere), "--character", HUMANOID], capsys)
    assert code == 0 and f"replaced the link {elsewhere} (the link's target {other} unchanged)" \
        in text
    assert other.read_bytes() == b"kept" and not elsewhere.is_symlink()
    assert "quality_fixes" in _read(elsewhere, HUMANOID).meta
    assert sorted(os.listdir(tmp_path / "clips")) == ["good.pkl", "sunk.pkl"]  # no temporary
    assert good.exists()


def test_the_loss_rule_holds_for_the_copy(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    sunk = sunk_sfu(tmp_path / "clips")[1]
    out = tmp_path / "fixed.seq"
    code, _, err = run_cli(["fix", str(sunk), str(out), "--character", HUMANOID], capsys)
    assert code == 2 and "terrain" in err and "--lossy" in err and not out.exists()
    code, text, err = run_cli(["fix", str(sunk), str(out), "--character", HUMANOID, "--lossy",
                               "--json"], capsys)
    assert code == 0 and "dropped the terrain" in err
    # the copy is checked as written: on z = 0, its terrain gone
    assert "no terrain in the file" in json.loads(text)["fixed_check"]["ground"]
    assert any(line.startswith("lift:") for line in  # a .seq holds plain metadata
               mk.read(out).meta["quality_fixes"])  # type: ignore[union-attr]


def test_a_format_without_metadata_refuses_the_list_unless_lossy(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """MimicKit's files hold loop_mode, fps and frames only: the fixes' list is a loss."""
    out = tmp_path / "fixed.pkl"
    args = ["fix", str(corpus_file("mimickit", "g1_walk.pkl")), str(out), "--model", G1,
            "--to", "mimickit"]
    code, _, err = run_cli(args, capsys)
    assert code == 2 and "metadata 'quality_fixes'" in err and not out.exists()
    code, text, err = run_cli([*args, "--lossy"], capsys)
    assert code == 0 and "fixed: lift:" in text and "quality_fixes" in err
    written = _read(out, G1)
    assert written.meta["source_format"] == "mimickit" and "quality_fixes" not in written.meta


def test_fix_o_takes_writer_options_only(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    source, out = corpus_file("parc", "ms", "sfu.pkl"), tmp_path / "fixed.pkl"
    for key in ("misc=whatever", "nosuch=1"):  # a PARC reader's key; no side's key
        code, text, err = run_cli(["fix", str(source), str(out), "--character", HUMANOID,
                                   "-O", key], capsys)
        lines = [line for line in err.splitlines() if line.startswith("motionkit:")]
        assert code == 2 and len(lines) == 1, (key, text, err)
        assert "fix -O takes the writer's options" in lines[0] and "-R is for the reader" in \
            lines[0] and "convert" not in lines[0] and key.split("=")[0] in lines[0]
        assert not out.exists()


def _g1_edited(tmp_path: Path, name: str, frames: slice, value: float | None) -> Path:
    """The G1 walk cut to ``frames`` (root x set to ``value`` on frames 60..89 when given)."""
    motion, _ = clip("g1_walk")
    tracks = {key: track.with_data(np.asarray(track.data)[frames],
                                   mk.Timeline.uniform(120.0, len(np.asarray(track.data)[frames])))
              for key, track in motion.tracks.items()}
    if value is not None:
        root = np.asarray(tracks["root"].data, dtype=np.float64).copy()
        root[60:90, 0] = value
        tracks["root"] = tracks["root"].with_data(root)
    path = tmp_path / name
    mk.write(path, mk.Motion(tracks, motion.skeleton, motion.terrain, dict(motion.meta)),
             character=G1)
    return path


def test_frames_not_numbers_and_a_clip_without_frames_are_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "fixed.pkl"
    broken = _g1_edited(tmp_path, "nan.pkl", slice(None), float("nan"))
    code, _, err = run_cli(["fix", str(broken), str(out), "--model", G1], capsys)
    lines = [line for line in err.splitlines() if line.startswith("motionkit:")]
    assert code == 2 and len(lines) == 1 and "frames [60..89] are not numbers" in lines[0]
    assert not out.exists()
    empty = _g1_edited(tmp_path, "empty.pkl", slice(0, 0), None)
    for args in (["fix", str(empty), str(out)], ["check", str(empty)],
                 ["check", str(empty), "--fix", str(out)]):
        code, _, err = run_cli([*args, "--model", G1], capsys)
        lines = [line for line in err.splitlines() if line.startswith("motionkit:")]
        assert code == 2 and len(lines) == 1 and "the motion has no frames to check" in \
            lines[0], (args, err)
        assert not out.exists()


def test_check_fix_says_what_fix_says(tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    from motionkit.quality.fix import fix

    motion, skeleton = clip("g1_walk")
    lifted = fix(motion, skeleton, fixes=("lift",))  # on the ground: only the step is left
    del lifted.meta["quality_fixes"]
    root = np.asarray(lifted.tracks["root"].data, dtype=np.float64).copy()
    root[60:, 0] += 0.4
    lifted.tracks["root"] = lifted.tracks["root"].with_data(root)
    stepped, out = tmp_path / "stepped.pkl", tmp_path / "fixed.pkl"
    mk.write(stepped, lifted, character=G1)
    args = ["check", str(stepped), "--model", G1, "--fix", str(out)]
    code, text, _ = run_cli(args, capsys)
    assert "  fix: nothing to fix" in text and "  left: spikes: the jumps after frames [59]" \
        in text, text
    code, text, _ = run_cli(["fix", str(stepped), str(out), "--model", G1], capsys)
    assert f"{stepped}: nothing to fix" in text
    # the JSON holds the fixes made and those left alone, as fix --json does
    code, text, _ = run_cli([*args, "--json"], capsys)
    original, copy = json.loads(text)
    assert "fixes" not in original and copy["fixes"] == []
    assert any("after frames [59]" in line for line in copy["left"])
    sunk = sunk_sfu(tmp_path / "clips")[1]
    code, text, _ = run_cli(["check", str(sunk), "--character", HUMANOID, "--fix", str(out),
                             "--json"], capsys)
    copy = json.loads(text)[1]
    assert code == 0 and len(copy["fixes"]) == 1 and copy["fixes"][0].startswith("lift:")

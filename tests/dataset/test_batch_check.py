"""``batch check``, ``batch fix`` and ``batch convert --where check.ok``: each clip's report
as FILE.json equal to the one-file check's, the verdict and worst values as catalog
columns, exit 1 when a clip fails, a converted dataset that holds only the passing clips,
fixed copies as ``motionkit fix`` writes them, and bad options refused before any file."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from conftest import corpus_file
from quality.clips import sunk_sfu

HUMANOID = ("parc", "character", "humanoid.xml")


def _motionkit(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "motionkit", *args], capture_output=True,
                          text=True, timeout=300)


@pytest.fixture
def clips(tmp_path: Path) -> Path:
    """PARC's sfu clip as it is (it passes) and with frame 7 pushed 0.12 m into the ground."""
    return sunk_sfu(tmp_path / "clips")[0].parent


def test_batch_check_writes_reports_and_catalog_columns(clips: Path, tmp_path: Path) -> None:
    out = tmp_path / "checked"
    model = str(corpus_file(*HUMANOID))
    done = _motionkit("batch", "check", str(clips), "--out", str(out), "--model", model,
                      "--engine", "local", "-j", "1")
    assert done.returncode == 1, done.stderr  # one clip fails a check; none is an error
    catalog = pl.read_parquet(out / "catalog.parquet").sort("path")
    assert [Path(p).name for p in catalog["path"]] == ["good.pkl", "sunk.pkl"]
    assert catalog["check.ok"].to_list() == [True, False]
    assert catalog["check.below_ground.ok"].to_list() == [True, False]
    assert catalog["check.verdict"][1].startswith("fail")
    one = _motionkit("check", str(clips / "sunk.pkl"), "--character", model, "--json")
    (alone,) = json.loads(one.stdout)
    batched = json.loads((out / "sunk.pkl.json").read_text())
    alone.pop("name"), batched.pop("name")
    assert batched == alone
    assert catalog["check.below_ground"][1] == pytest.approx(
        next(c["value"] for c in alone["checks"] if c["name"] == "below_ground"))
    rerun = _motionkit("batch", "check", str(clips), "--out", str(out), "--model", model,
                       "--engine", "local", "-j", "1", "-T", "below_ground=-0.2")
    assert rerun.returncode == 0, rerun.stderr  # checked again, with the new threshold
    assert pl.read_parquet(out / "catalog.parquet")["check.ok"].to_list() == [True, True]


def test_batch_convert_where_check_ok_keeps_the_passing_clips(clips: Path,
                                                              tmp_path: Path) -> None:
    out = tmp_path / "clean"
    done = _motionkit("batch", "convert", str(clips), "--out", str(out), "--model",
                      str(corpus_file(*HUMANOID)), "--where", "check.ok", "--engine", "local",
                      "-j", "1")
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in out.glob("*.pkl")) == ["good.pkl"]
    assert "1 filtered" in done.stderr
    catalog = pl.read_parquet(out / "catalog.parquet").sort("path")
    assert catalog["check.ok"].to_list() == [True, False]


def test_an_unknown_where_condition_is_one_line(clips: Path, tmp_path: Path) -> None:
    done = _motionkit("batch", "convert", str(clips), "--out", str(tmp_path / "o"),
                      "--where", "check.bad", "--engine", "local")
    assert done.returncode == 2 and "Traceback" not in done.stderr


def test_batch_fix_writes_each_fixed_copy_as_fix_does(clips: Path, tmp_path: Path) -> None:
    import warnings

    import motionkit as mk

    out, model = tmp_path / "fixed", str(corpus_file(*HUMANOID))
    args = ("batch", "fix", str(clips), "--out", str(out), "--model", model, "--engine",
            "local", "-j", "1")
    done = _motionkit(*args)
    assert done.returncode == 0, done.stderr
    assert "2 fixed" in done.stderr and "0 failed" in done.stderr
    catalog = pl.read_parquet(out / "catalog.parquet").sort("path")
    assert catalog["check.ok"].to_list() == [True, True]  # the copies pass
    assert catalog["fix.count"].to_list() == [1, 1]
    alone = tmp_path / "alone.pkl"
    one = _motionkit("fix", str(clips / "sunk.pkl"), str(alone), "--model", model)
    assert one.returncode == 0, one.stderr
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        batched, single = (mk.read(path, character=model) for path in (out / "sunk.pkl", alone))
    assert isinstance(batched, mk.Motion) and isinstance(single, mk.Motion)
    assert batched.meta["quality_fixes"] == single.meta["quality_fixes"] == \
        catalog["fix.made"][1].to_list()
    assert np.array_equal(batched.tracks["root"].data, single.tracks["root"].data)
    # a rerun redoes them (the copies depend on the model and the options, not only the
    # clips), and its catalog keeps the fix and check columns
    again = _motionkit(*args)
    assert again.returncode == 0 and "2 fixed" in again.stderr
    assert pl.read_parquet(out / "catalog.parquet").sort("path")["fix.count"].to_list() == [1, 1]
    nothing = _motionkit("batch", "fix", str(clips), "--out", str(tmp_path / "copies"),
                         "--model", model, "--only", "spikes", "--engine", "local", "-j", "1")
    assert nothing.returncode == 0 and "2 written" in nothing.stderr
    copies = pl.read_parquet(tmp_path / "copies" / "catalog.parquet")
    assert copies["fix.count"].to_list() == [0, 0]


@pytest.mark.parametrize("verb, wrong, said", [
    ("check", ["-T", "body_speed=-1"], "body_speed=-1"),
    ("check", ["-T", "speed=3"], "unknown check threshold 'speed'"),
    ("check", ["--ground", "sky"], "--ground must be"),
    ("check", ["--feet", "hoof"], "no foot body 'hoof'"),
    ("check", ["--from", "nosuch"], "unknown format 'nosuch'"),
    ("fix", ["--only", "lift,sky"], "unknown fix 'sky'"),
    ("fix", ["-T", "joint_speed=x"], "joint_speed='x'"),
    ("fix", ["--to", "nosuch"], "unknown format 'nosuch'"),
    ("convert", ["--where", "check.ok", "-T", "float_time=-2"], "float_time=-2"),
    ("validate", ["--from", "nosuch"], "unknown format 'nosuch'"),
])
def test_bad_options_fail_the_batch_up_front(clips: Path, tmp_path: Path, verb: str,
                                             wrong: list[str], said: str) -> None:
    out = tmp_path / "out"
    model = [] if verb == "validate" else ["--model", str(corpus_file(*HUMANOID))]
    done = _motionkit("batch", verb, str(clips), "--out", str(out), *model, *wrong,
                      "--engine", "local", "-j", "1")
    errors = [line for line in done.stderr.splitlines() if line.startswith("motionkit:")]
    assert done.returncode == 2 and len(errors) == 1 and said in errors[0], done.stderr
    assert "Traceback" not in done.stderr and not out.exists()  # no file was processed

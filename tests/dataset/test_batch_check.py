"""``batch check`` and ``batch convert --where check.ok``: each clip's report as FILE.json
equal to the one-file check's, the verdict and worst values as catalog columns, exit 1 when
a clip fails, and a converted dataset that holds only the passing clips."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

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

"""Hints name options as their reader passes them: Python spelling from the library,
command-line spelling from ``motionkit`` (issue 25)."""

from __future__ import annotations

from pathlib import Path

import pytest

import motionkit as mk
from conftest import corpus_file
from motionkit.errors import HINTS_ENV, for_cli, format_hint, option_hint
from test_cli import run_cli

DUPLICATE = "1.0 0 0 0 0 0 0 1\n1.0 1 0 0 0 0 0 1\n2.0 2 0 0 0 0 0 1\n"


def test_the_library_spells_hints_in_python(tmp_path: Path) -> None:
    path = tmp_path / "dup.tum"
    path.write_text(DUPLICATE)
    with pytest.warns(mk.MotionkitWarning, match=r"read with dedupe=True to drop them"):
        mk.read(path)


def test_the_cli_spells_them_as_options_that_work(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "dup.tum"
    path.write_text(DUPLICATE)
    code, out, err = run_cli(["info", str(path)], capsys)
    assert code == 0 and "read with -R dedupe=true to drop them" in err
    code, out, err = run_cli(["info", "-R", "dedupe=true", str(path)], capsys)
    assert code == 0 and "frames: 2 " in out and "warning" not in err
    code, _, err = run_cli(["convert", "-R", "dedupe=true", str(path), str(tmp_path / "o.tum")],
                           capsys)
    assert code == 0 and "warning" not in err
    assert not for_cli()  # the command restores the library's spelling when it ends


def test_one_place_decides(monkeypatch: pytest.MonkeyPatch) -> None:
    assert (option_hint("dedupe", True), format_hint("tum")) == ("dedupe=True", "format='tum'")
    assert option_hint("lossy", True, "write") == "lossy=True"
    monkeypatch.setenv(HINTS_ENV, "cli")
    assert option_hint("dedupe", True) == "-R dedupe=true"
    assert option_hint("dedupe", True, "write") == "-O dedupe=true"
    assert option_hint("lossy", True, "write") == "--lossy"
    assert format_hint("kitti") == "--from kitti" and format_hint("tum", "write") == "--to tum"


def test_a_metadata_only_loss_says_that_is_all(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    motion = corpus_file("mimickit", "humanoid_platform05.pkl")
    character = corpus_file("parc", "character", "humanoid.xml")
    with pytest.raises(mk.ConversionError) as caught:
        mk.convert(motion, tmp_path / "hp.bvh", character=character)
    assert "metadata 'loop_mode' — that is all: every track and frame is written" in str(caught.value)
    assert "lossy=True" in str(caught.value)
    code, _, err = run_cli(["convert", str(motion), str(tmp_path / "hp.bvh"), "--character",
                            str(character)], capsys)
    assert code == 2 and "that is all" in err and "(pass --lossy to drop it)" in err
    code, _, err = run_cli(["convert", str(corpus_file("parc", "ms", "sfu.pkl")),
                            str(tmp_path / "sfu.bvh"), "--character", str(character)], capsys)
    assert code == 2 and "that is all" not in err  # tracks and the terrain are lost too


def test_links_a_one_pose_writer_drops_are_named(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    import numpy as np

    links = np.zeros((3, 3, 7))
    links[..., 6] = 1.0
    motion = mk.Motion()
    timeline = mk.Timeline.uniform(10.0, 3)
    motion.add(mk.Track("links", "pose", links, timeline, labels=["WAIST", "CHEST", "HEAD"]))
    seq = tmp_path / "walk.seq"
    mk.write(seq, motion)
    with pytest.raises(mk.ConversionError) as caught:
        mk.convert(seq, tmp_path / "w.tum")
    assert ("the poses of links CHEST, HEAD (only the first link, WAIST, is written, as the "
            "root; write another with link='NAME')") in str(caught.value)
    assert "parts" not in str(caught.value)
    code, _, err = run_cli(["convert", str(seq), str(tmp_path / "w.tum")], capsys)
    assert code == 2 and "write another with -O link=NAME" in err


def test_an_option_both_sides_take_is_answered_in_each_spelling(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Not "convert in two steps (mk.read …)" on a command line, where -R gives a reader
    option to the reader alone (review of issue 25, finding 15)."""
    source = tmp_path / "a.kitti"
    source.write_text("1 0 0 0 0 1 0 0 0 0 1 0\n1 0 0 1 0 1 0 0 0 0 1 0\n")
    (tmp_path / "t.txt").write_text("0.0\n0.1\n")
    with pytest.raises(mk.MotionkitError, match=r"read_options=\{'times': 'VALUE'\}"):
        mk.convert(source, tmp_path / "b.kitti", times=tmp_path / "t.txt")
    code, _, err = run_cli(["convert", str(source), str(tmp_path / "b.kitti"), "-O",
                            f"times={tmp_path / 't.txt'}"], capsys)
    assert code == 2 and "-R times=VALUE" in err and "mk.read" not in err


def test_command_options_are_spelled_in_one_place(monkeypatch: pytest.MonkeyPatch) -> None:
    assert option_hint("model", "MODEL", "command") == "model=..."
    assert option_hint("times", "FILE", "reader-only") == "read_options={'times': 'FILE'}"
    monkeypatch.setenv(HINTS_ENV, "cli")
    assert option_hint("model", "MODEL", "command") == "--model MODEL"
    assert option_hint("times", "FILE", "reader-only") == "-R times=FILE"

"""PARC <-> Choreonoid .seq conversions, the CLI on PARC files, and the memory-mapped read."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import motionkit as mk
from conftest import corpus_file
from motionkit.cli import cli
from motionkit.errors import ConversionError, FormatError
from motionkit.formats.parc import ms

TRACKS = ("root", "joint_rotations", "contacts")


def _humanoid() -> Path:
    return corpus_file("parc", "character", "humanoid.xml")


def test_pkl_to_seq_needs_lossy_for_terrain(tmp_path: Path) -> None:
    with pytest.raises(ConversionError, match="terrain"):
        mk.convert(corpus_file("parc", "ms", "sfu.pkl"), tmp_path / "a.seq")
    assert not (tmp_path / "a.seq").exists()


@pytest.mark.parametrize("with_character", [False, True])
def test_pkl_seq_pkl_round_trip(with_character: bool, tmp_path: Path) -> None:
    source = corpus_file("parc", "ms", "TEASER_TERRAIN.pkl")
    options = {"character": _humanoid()} if with_character else {}
    seq = tmp_path / "m.seq"
    with pytest.warns(mk.MotionkitWarning, match="terrain") as caught:
        mk.convert(source, seq, lossy=True, **options)
    # the misc arrays (path_nodes) are not plain data for .seq: dropped, and said so
    assert any("parc" in str(w.message) for w in caught)
    middle = mk.read(seq)
    assert middle.tracks["root"].data.shape == (58, 7)
    if with_character:  # JointDisplacement through the character's DOFs
        assert middle.tracks["joints"].data.shape == (58, 28)
        assert middle.tracks["joints"].labels[:2] == ["abdomen_x", "abdomen_y"]
    back = tmp_path / "back.pkl"
    mk.convert(seq, back, **options)
    want, got = mk.read(source), mk.read(back)
    for name in TRACKS:
        assert np.abs(got.tracks[name].data - want.tracks[name].data).max() < 1e-6, name
    assert got.meta["loop_mode"] == "CLAMP"


def test_seq_joint_values_become_rotations_through_the_character(tmp_path: Path) -> None:
    source = corpus_file("parc", "ms", "sfu.pkl")
    seq = tmp_path / "m.seq"
    with pytest.warns(mk.MotionkitWarning, match="terrain"):
        mk.convert(source, seq, lossy=True, character=_humanoid())
    motion = mk.read(seq)
    del motion.tracks["joint_rotations"]  # a motion that has only joint values
    out = tmp_path / "j.pkl"
    with pytest.raises(ConversionError, match="character"):
        mk.write(out, motion)
    mk.write(out, motion, character=_humanoid())
    got = mk.read(out).tracks["joint_rotations"].data
    want = mk.read(source).tracks["joint_rotations"].data
    assert np.abs(got - want).max() < 1e-6


def test_cli_info_validate_convert(tmp_path: Path) -> None:
    runner = CliRunner()
    teaser = str(corpus_file("parc", "ms", "TEASER_TERRAIN.pkl"))
    result = runner.invoke(cli, ["info", "--json", teaser])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert doc["format"] == "parc" and doc["frames"] == 58
    assert doc["terrain"]["shape"] == [102, 102]
    assert set(doc["meta"]["parc"]["misc"]) == {"path_nodes", "opt:body_constraints"}
    result = runner.invoke(cli, ["validate", "--character", str(_humanoid()), teaser])
    assert result.exit_code == 0, result.output
    legacy = str(corpus_file("parc", "legacy_v0.1", "TEASER_TERRAIN.pkl"))
    out = tmp_path / "conv.pkl"
    result = runner.invoke(cli, ["convert", legacy, str(out), "--character", str(_humanoid())])
    assert result.exit_code == 0, result.output
    assert mk.read(out).tracks["joint_rotations"].data.shape == (58, 14, 4)


def test_validate_against_a_mismatched_character(tmp_path: Path) -> None:
    small = tmp_path / "small.xml"
    small.write_text("<mujoco model='s'><default/><worldbody><body name='a'>"
                     "<body name='b'><joint axis='1 0 0'/></body></body></worldbody></mujoco>")
    with pytest.raises(FormatError, match="joint_rot has 14 joints"):
        mk.read(corpus_file("parc", "ms", "sfu.pkl"), character=small)


def test_describe_misc() -> None:
    misc = mk.read(corpus_file("parc", "ms", "TEASER_TERRAIN.pkl")).meta["parc"]["misc"]
    assert ms.describe_misc(misc) == {"path_nodes": "array float32 [10, 3]",
                                      "opt:body_constraints": "list of 15 (list)"}


def test_blobs_decoded_in_place_and_broken_files(tmp_path: Path) -> None:
    motion = mk.read(corpus_file("parc", "ms", "dec2024_teaser_717_1_modified_opt.pkl"))
    assert len(motion.meta["parc"]["misc"]["hf_mask_inds"]) == 142
    evil = tmp_path / "evil.pkl"
    evil.write_bytes(b"\x80\x04\x8e" + (1 << 50).to_bytes(8, "little") + b"x.")
    with pytest.raises(FormatError, match="declares"):
        mk.read(evil, format="parc")
    empty = tmp_path / "empty.pkl"
    empty.write_bytes(b"")
    with pytest.raises(FormatError):
        mk.read(empty, format="parc")


def test_cli_refuses_values_beyond_float32(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """r05: the CLI used to say "wrote" and exit 0 for a file with infinities in it."""
    from motionkit.cli import main
    from motionkit.model import Motion, Timeline, Track

    timeline = Timeline.uniform(30.0, 2)
    root = np.array([[1e39, 0, 0, 0, 0, 0, 1], [0, 0, 0, 0, 0, 0, 1]], dtype=np.float64)
    motion = Motion({"root": Track("root", "pose", root, timeline),
                     "joint_rotations": Track("joint_rotations", "quaternion",
                                              np.tile([0.0, 0, 0, 1], (2, 1, 1)), timeline)})
    source, target = tmp_path / "big.seq", tmp_path / "big.pkl"
    mk.write(source, motion)
    with pytest.raises(SystemExit) as exit_info:
        main(["convert", str(source), str(target), "--lossy"])
    assert exit_info.value.code == 2
    assert "float32" in capsys.readouterr().err and not target.exists()


def test_seq_pkl_seq_keeps_metadata_and_labels(tmp_path: Path) -> None:
    """r06: what PARC has no field for survives PARC on its way between other formats."""
    from motionkit.model import Motion, Timeline, Track

    timeline = Timeline.uniform(30.0, 3)
    motion = Motion({
        "root": Track("root", "pose", np.tile([0.0, 0, 1, 0, 0, 0, 1], (3, 1)), timeline),
        "joint_rotations": Track("joint_rotations", "quaternion", np.tile([0.0, 0, 0, 1], (3, 2, 1)),
                                 timeline, labels=["hip", "knee"]),
        "contacts": Track("contacts", "value", np.ones((3, 2)), timeline, labels=["l", "r"])},
        meta={"subject": "S07", "epsg": 32633})
    first, middle, last = tmp_path / "a.seq", tmp_path / "b.pkl", tmp_path / "c.seq"
    mk.write(first, motion)
    mk.convert(first, middle)
    mk.convert(middle, last)
    back = mk.read(last)
    assert back.meta["subject"] == "S07" and back.meta["epsg"] == 32633
    assert back.tracks["joint_rotations"].labels == ["hip", "knee"]
    assert back.tracks["contacts"].labels == ["l", "r"]

"""G1 CSV dialects: the quaternion order is given, never guessed; written with the
dialect's conventions stated; round trips."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation

import motionkit as mk
from conftest import corpus_file
from motionkit.formats.containers.g1csv import G1_JOINTS


def _kimodo() -> Path:
    return corpus_file("containers", "isaaclab", "g1_kimodo_walk.csv")


def _lafan() -> Path:
    return corpus_file("containers", "isaaclab", "g1_walk_lafan_layout.csv")


def test_both_dialects_give_the_same_motion() -> None:
    kimodo = mk.read(_kimodo(), format="g1csv-kimodo")
    lafan = mk.read(_lafan(), format="g1csv-lafan")
    assert kimodo.frames == 150 and lafan.frames == 60
    assert np.abs(kimodo.tracks["root"].data[:60] - lafan.tracks["root"].data).max() < 1e-8
    assert np.abs(kimodo.tracks["joints"].data[:60] - lafan.tracks["joints"].data).max() < 1e-8
    assert kimodo.tracks["joints"].labels == list(G1_JOINTS)
    # upright: the pelvis z axis points up
    up = Rotation.from_quat(kimodo.tracks["root"].data[:, 3:]).apply([0, 0, 1])[:, 2]
    assert up.min() > 0.9
    generic = mk.read(_kimodo(), format="g1csv", quat="wxyz")
    assert np.array_equal(generic.tracks["root"].data, kimodo.tracks["root"].data)
    lines = mk.formats.registry.by_name("g1csv-kimodo").describe(kimodo)
    assert any("assumed" in line for line in lines)


def test_without_a_quaternion_order_it_is_refused() -> None:
    with pytest.raises(mk.FormatError, match="cannot be detected"):
        mk.read(_kimodo(), format="g1csv")


def test_wrong_width_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "short.csv"
    path.write_text("1,2,3\n")
    with pytest.raises(mk.FormatError, match="36 columns"):
        mk.read(path, format="g1csv-lafan")


def test_written_file_states_its_dialect_and_numpy_loadtxt_reads_it(tmp_path: Path) -> None:
    motion = mk.read(_kimodo(), format="g1csv-kimodo")
    out = tmp_path / "walk.csv"
    mk.write(out, motion, format="g1csv-lafan")
    first = out.read_text().splitlines()[0]
    assert first.startswith("# motionkit g1csv-lafan") and "x y z w" in first
    rows = np.loadtxt(out, delimiter=",")  # as BeyondMimic's csv_to_npz reads it
    source = np.loadtxt(_kimodo(), delimiter=",")
    assert np.array_equal(rows[:, 3:7], source[:, [4, 5, 6, 3]])
    assert np.array_equal(rows[:, 7:], source[:, 7:])
    with pytest.raises(mk.ConversionError, match="quat="):
        mk.write(out, motion, format="g1csv")
    # the stated order is a header: the generic reader takes it without quat=
    again = mk.read(out, format="g1csv")
    assert np.array_equal(again.tracks["root"].data, motion.tracks["root"].data)


@settings(max_examples=25, deadline=None)
@given(frames=st.integers(1, 6), seed=st.integers(0, 2**31),
       dialect=st.sampled_from(["g1csv-lafan", "g1csv-kimodo"]),
       rate=st.sampled_from([30.0, 50.0, 1 / 3, 29.97]))
def test_round_trip(tmp_path_factory: pytest.TempPathFactory, frames: int, seed: int,
                    dialect: str, rate: float) -> None:
    rng = np.random.default_rng(seed)
    timeline = mk.Timeline.uniform(rate, frames)
    root = np.concatenate([rng.normal(size=(frames, 3)),
                           Rotation.random(frames, random_state=seed).as_quat()], axis=1)
    motion = mk.Motion()
    motion.add(mk.Track("root", "pose", root, timeline))
    motion.add(mk.Track("joints", "value", rng.normal(size=(frames, 29)), timeline,
                        list(G1_JOINTS)))
    out = tmp_path_factory.mktemp("g1") / "m.csv"
    mk.write(out, motion, format=dialect)
    again = mk.read(out, format=dialect)
    assert np.array_equal(again.tracks["root"].data, root)
    assert np.array_equal(again.tracks["joints"].data, motion.tracks["joints"].data)
    assert again.tracks["root"].timeline.rate == rate  # stated by motionkit's first line


def test_joints_that_are_not_g1_joints_are_a_named_loss(tmp_path: Path) -> None:
    timeline = mk.Timeline.uniform(50.0, 4)
    root = np.zeros((4, 7))
    root[:, 6] = 1
    motion = mk.Motion(meta={"name": "x"})
    motion.add(mk.Track("root", "pose", root, timeline))
    motion.add(mk.Track("joints", "value", np.ones((4, 31)), timeline,
                        [*G1_JOINTS, "extra_a", "extra_b"]))
    out = tmp_path / "g1.csv"
    for dialect in ("g1csv-lafan", "g1csv-kimodo", "g1csv-seed"):
        with pytest.raises(mk.ConversionError, match="joints extra_a, extra_b \\(not G1"):
            mk.write(out, motion, format=dialect)
    assert not out.exists()
    with pytest.warns(mk.MotionkitWarning, match="extra_a, extra_b"):
        mk.write(out, motion, format="g1csv-lafan", lossy=True)
    again = mk.read(out, format="g1csv-lafan")
    assert again.tracks["joints"].data.shape == (4, 29)
    assert again.tracks["root"].timeline.rate == 50.0
    said = mk.formats.registry.by_name("g1csv-lafan").describe(again)
    assert any("50 fps: stated by motionkit's first line" in line for line in said)
    assert mk.read(out, format="g1csv-lafan", fps=25).tracks["root"].timeline.rate == 25.0


def test_a_file_without_motionkits_line_is_read_at_the_default_rate_said_so() -> None:
    motion = mk.read(_kimodo(), format="g1csv-kimodo")
    assert motion.tracks["root"].timeline.rate == 30.0
    said = mk.formats.registry.by_name("g1csv-kimodo").describe(motion)
    assert any("30 fps: assumed" in line for line in said)


def test_seed_dialect_round_trip_and_units(tmp_path: Path) -> None:
    motion = mk.read(_kimodo(), format="g1csv-kimodo")
    out = tmp_path / "seed.csv"
    with pytest.warns(mk.MotionkitWarning, match="frame rate 30 fps .*readers assume 120"):
        mk.write(out, motion, format="g1csv-seed", lossy=True)  # the file has no rate
    with pytest.raises(mk.ConversionError, match="frame rate 30 fps"):
        mk.write(tmp_path / "refused.csv", motion, format="g1csv-seed")
    header = out.read_text().splitlines()[0].split(",")
    assert header[:7] == ["Frame", "root_translateX", "root_translateY", "root_translateZ",
                          "root_rotateX", "root_rotateY", "root_rotateZ"]
    assert len(header) == 36 and header[7] == "left_hip_pitch_dof"
    rows = np.loadtxt(out, delimiter=",", skiprows=1)  # as ProtoMotions' converter reads it
    assert np.allclose(rows[:, 1:4] / 100.0, motion.tracks["root"].data[:, :3])
    assert np.allclose(np.radians(rows[:, 7:]), motion.tracks["joints"].data)
    turned = Rotation.from_euler("xyz", rows[:, 4:7], degrees=True)
    stored = motion.tracks["root"].data[:, 3:]
    stored = stored / np.linalg.norm(stored, axis=1, keepdims=True)  # float32 text, ~1e-7 off
    assert (1 - np.abs((turned.as_quat() * stored).sum(-1))).max() < 1e-12
    again = mk.read(out, format="g1csv-seed", fps=30)
    assert np.allclose(again.tracks["joints"].data, motion.tracks["joints"].data, atol=1e-12)
    seed = mk.formats.registry.by_name("g1csv-seed")
    assert any("degrees" in line for line in seed.describe(again))
    assert any("30 fps: given" in line for line in seed.describe(again))
    default = mk.read(out, format="g1csv-seed")
    assert default.tracks["root"].timeline.rate == 120.0
    assert any("120 fps: assumed" in line for line in seed.describe(default))
    with pytest.raises(mk.FormatError, match="header"):
        mk.read(_kimodo(), format="g1csv-seed")


def test_a_csv_of_36_numbers_a_row_names_the_g1_dialects_never_picks_one(
        tmp_path: Path) -> None:
    path = tmp_path / "walk.csv"
    shutil.copy(corpus_file("containers", "isaaclab", "g1_kimodo_walk.csv"), path)
    with pytest.raises(mk.FormatError) as caught:
        mk.read(path)
    message = str(caught.value)
    for named in ("format='g1csv-lafan'", "format='g1csv-kimodo'", "format='g1csv'",
                  "quat='wxyz|xyzw'"):
        assert named in message
    lafan = tmp_path / "lafan.csv"  # the xyzw dialect: the same hint, the order not guessed
    shutil.copy(corpus_file("containers", "isaaclab", "g1_walk_lafan_layout.csv"), lafan)
    with pytest.raises(mk.FormatError, match="g1csv-lafan"):
        mk.read(lafan)


def test_the_hint_on_the_command_line_and_for_the_seed_header(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from motionkit.cli import main

    path = tmp_path / "walk.csv"
    shutil.copy(corpus_file("containers", "isaaclab", "g1_kimodo_walk.csv"), path)
    with pytest.raises(SystemExit) as caught:
        main(["info", str(path)])
    assert caught.value.code == 2
    err = capsys.readouterr().err
    assert "--from g1csv-lafan" in err and "--from g1csv-kimodo" in err
    assert "--from g1csv -R quat=wxyz|xyzw" in err
    seed = tmp_path / "seed.csv"
    mk.write(tmp_path / "seed.g1csv", mk.read(path, format="g1csv-kimodo", fps=120.0),
             format="g1csv-seed")
    seed.write_bytes((tmp_path / "seed.g1csv").read_bytes())
    with pytest.raises(mk.FormatError, match="format='g1csv-seed'"):
        mk.read(seed)

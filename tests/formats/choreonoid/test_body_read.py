"""Choreonoid .body models, SR1 link poses from its walking pattern, and the fk command."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from scipy.spatial.transform import Rotation

import motionkit as mk
from conftest import corpus_file
from motionkit.cli import cli, main
from motionkit.kinematics.motion import coordinates, link_poses

SR1_JOINTS = ["RLEG_HIP_R", "RLEG_HIP_P", "RLEG_HIP_Y", "RLEG_KNEE", "RLEG_ANKLE_P",
              "RLEG_ANKLE_R", "RARM_SHOULDER_P", "RARM_SHOULDER_R", "RARM_SHOULDER_Y",
              "RARM_ELBOW", "RARM_WRIST_Y", "RARM_WRIST_P", "RARM_WRIST_R", "LLEG_HIP_R",
              "LLEG_HIP_P", "LLEG_HIP_Y", "LLEG_KNEE", "LLEG_ANKLE_P", "LLEG_ANKLE_R",
              "LARM_SHOULDER_P", "LARM_SHOULDER_R", "LARM_SHOULDER_Y", "LARM_ELBOW",
              "LARM_WRIST_Y", "LARM_WRIST_P", "LARM_WRIST_R", "WAIST_P", "WAIST_R", "CHEST"]


@pytest.fixture(scope="module")
def sr1() -> mk.Skeleton:
    skeleton = mk.read(corpus_file("choreonoid", "SR1.body"))
    assert isinstance(skeleton, mk.Skeleton)
    return skeleton


def test_sr1_model(sr1: mk.Skeleton) -> None:
    assert sr1.name == "SR1"
    assert len(sr1.bodies) == 30 and sr1.dof_count == 6 + 29
    assert sr1.bodies[0].name == "WAIST" and sr1.joints[0].type == "free"
    ids = sr1.joint_id_columns()
    assert sorted(ids) == list(range(29))
    by_id = {int(j.attrs["joint_id"]): j.name for j in sr1.joints if "joint_id" in j.attrs}
    assert [by_id[i] for i in range(29)] == SR1_JOINTS
    knee = sr1.joint("LLEG_KNEE")
    assert knee.axes.tolist() == [[0, 1, 0]]
    assert sr1.joint("CHEST").axes.tolist() == [[0, 0, 1]]  # no joint_axis: Choreonoid's z
    assert (knee.lower[0], knee.upper[0]) == (0.0, pytest.approx(np.radians(150)))
    assert sr1.joint("WAIST_P").upper[0] == pytest.approx(np.pi / 2)  # [-90, 90] degrees
    assert sr1.bodies[0].inertia.mass == 27.0
    np.testing.assert_allclose(sr1.bodies[0].rest_pose[:3, 3], [0, 0, 0.7135])
    for index, body in enumerate(sr1.bodies):  # depth-first: a subtree is contiguous
        assert body.parent < index
    assert sr1.describe() == {"name": "SR1", "bodies": 30, "joints": 30, "dofs": 35}
    assert "RLEG_ANKLE_R" in sr1.summary_text()


def test_sr1_walk_keeps_feet_level_on_the_ground(sr1: mk.Skeleton) -> None:
    motion = mk.read(corpus_file("choreonoid", "SR1WalkPattern1.seq"))
    track = link_poses(sr1, motion)
    assert track.data.shape == (6701, 30, 7)
    feet = [sr1.body_index("LLEG_ANKLE_R"), sr1.body_index("RLEG_ANKLE_R")]
    heights = track.data[:, feet, 2]
    tilt = Rotation.from_quat(track.data[:, feet, 3:].reshape(-1, 4)).as_euler("xyz")
    # soles stay level (roll and pitch below 0.1 degree) through the whole walk
    assert np.degrees(np.abs(tilt[:, :2])).max() < 0.1
    # The pattern has no root trajectory, so the waist stays put: after crouching, the
    # walk (frames 1000-6000) keeps the stance foot — the lower one — at one height
    # (within 0.5 mm) while the other foot swings up to 3 cm, each foot in turn.
    walk = heights[1000:6000]
    stance = walk.min(axis=1)
    assert np.abs(stance - np.median(stance)).max() < 5e-4
    swing = walk - stance[:, None]
    assert ((swing > 0.02).sum(axis=0) > 500).all()
    assert swing.max() < 0.035
    assert abs(heights[:, 0].min() - heights[:, 1].min()) < 1e-6


def test_coordinates_by_label_and_by_count(sr1: mk.Skeleton) -> None:
    timeline = mk.Timeline.uniform(100.0, 2)
    labelled = mk.Motion()
    labelled.add(mk.Track("joints", "value", np.array([[0.5], [0.25]]), timeline,
                          labels=["LLEG_KNEE"]))
    q, root = coordinates(sr1, labelled)
    assert root is None and q[:, sr1.joint("LLEG_KNEE").dof_offset].tolist() == [0.5, 0.25]
    bad = mk.Motion()
    bad.add(mk.Track("joints", "value", np.zeros((2, 1)), timeline, labels=["nope"]))
    with pytest.raises(mk.ConversionError, match="nope"):
        coordinates(sr1, bad)
    too_many = mk.Motion()
    too_many.add(mk.Track("joints", "value", np.zeros((2, 31)), timeline))
    with pytest.raises(mk.ConversionError, match="31 joint columns"):
        coordinates(sr1, too_many)


HEADER = "format: ChoreonoidBody\nformatVersion: 1.0\n"
BAD_BODIES = {
    "unknown parent": (HEADER + "links:\n  - name: A\n    jointType: free\n"
                       "  - name: B\n    parent: Z\n", 'parent link "Z" of "B"', 6),
    "bad type": (HEADER + "links:\n  - name: A\n    jointType: hinge\n",
                 'illegal jointType value "hinge"', 5),
    "bad axis": (HEADER + "links:\n  - name: A\n    jointType: free\n  - name: B\n"
                 "    parent: A\n    jointType: revolute\n    jointAxis: W\n",
                 'illegal axis value "W"', 9),
    "short translation": (HEADER + "links:\n  - name: A\n    translation: [ 1, 2 ]\n",
                          "3 x 1 vector", 5),
    "no parent": (HEADER + "rootLink: A\nlinks:\n  - name: A\n  - name: B\n",
                  'parent of "B" is not specified', 6),
    "yaml": ("links: [\n", "YAML", None),
    "no format": ("formatVersion: 1.0\nlinks:\n  - name: A\n", "neither format", 1),
    "no version": ("format: ChoreonoidBody\nlinks:\n  - name: A\n", "version", 1),
}


@pytest.mark.parametrize("case", sorted(BAD_BODIES))
def test_bad_body_files(case: str, tmp_path: Path) -> None:
    text, message, line = BAD_BODIES[case]
    path = tmp_path / "bad.body"
    path.write_text(text)
    with pytest.raises(mk.FormatError, match=message) as info:
        mk.read(path)
    if line is not None:
        assert info.value.line == line


def test_radian_unit_and_rotation_lists(tmp_path: Path) -> None:
    path = tmp_path / "r.body"
    path.write_text("format: ChoreonoidBody\nformatVersion: 1.0\nangleUnit: radian\nlinks:\n"
                    "  - name: A\n    jointType: free\n"
                    "  - name: B\n    parent: A\n    jointType: revolute\n    jointAxis: -X\n"
                    "    jointRange: [ -1, 1 ]\n    translation: [ 0, 0, 1 ]\n"
                    "    rotation: [ [ 0, 0, 1, 1.5707963267948966 ], [ 1, 0, 0, 0 ] ]\n")
    skeleton = mk.read(path)
    joint = skeleton.joints[1]
    assert joint.axes.tolist() == [[-1, 0, 0]] and joint.upper[0] == 1.0
    np.testing.assert_allclose(skeleton.bodies[1].rest_pose[:3, :3],
                               [[0, -1, 0], [1, 0, 0], [0, 0, 1]], atol=1e-15)


def test_fk_command_writes_every_link(tmp_path: Path) -> None:
    out = tmp_path / "links.seq"
    result = CliRunner().invoke(cli, ["fk", str(corpus_file("choreonoid", "SR1.body")),
                                      str(corpus_file("choreonoid", "SR1WalkPattern3.seq")),
                                      str(out)])
    assert result.exit_code == 0, result.output
    back = mk.read(out)
    links = back.tracks["links"]
    assert links.data.shape == (4451, 30, 7)
    skeleton = mk.read(corpus_file("choreonoid", "SR1.body"))
    expected = link_poses(skeleton, mk.read(corpus_file("choreonoid", "SR1WalkPattern3.seq")))
    # the .seq writer keeps 9 significant digits
    np.testing.assert_allclose(links.data[..., :3], expected.data[..., :3], atol=1e-8)
    assert back.tracks["joints"].data.shape == (4451, 29)


def test_fk_command_one_body_and_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                        ) -> None:
    body, seq = corpus_file("choreonoid", "SR1.body"), corpus_file("choreonoid",
                                                                    "SR1WalkPattern3.seq")
    out = tmp_path / "foot.traj"
    result = CliRunner().invoke(cli, ["fk", str(body), str(seq), str(out), "--body",
                                      "RLEG_ANKLE_R"])
    assert result.exit_code == 0, result.output
    back = mk.read(out)
    assert back.tracks["root"].data.shape == (4451, 7)
    with pytest.raises(SystemExit) as info:
        main(["fk", str(body), str(seq), str(tmp_path / "x.traj"), "--body", "NOPE"])
    assert info.value.code == 2
    assert "no body 'NOPE'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["fk", str(seq), str(seq), str(tmp_path / "y.seq")])
    assert "not a model" in capsys.readouterr().err

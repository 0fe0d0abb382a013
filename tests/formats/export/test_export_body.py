"""Choreonoid ``.body`` export, checked by motionkit's own ``.body`` reader: the same links,
joints, axes, offsets, ranges, IDs and FK, and the header and keys the spec asks for."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import yaml
from export_models import CORPUS, corpus_ids, every_joint, random_q, skeletons, world_poses, write_or_refuse

import motionkit as mk
from motionkit.formats.shared.chains import link_name
from motionkit.formats.urdf import step_values
from motionkit.model.skeleton import Skeleton


def _bodyable() -> Skeleton:
    """The every-joint chain without joint damping (a .body file has no key for it), with
    initial positions on its hinge and slider (written as ``joint_displacement``)."""
    skeleton = every_joint()
    hinge, slider = skeleton.joint("hinge_joint").dofs[0], skeleton.joint("slider_joint").dofs[0]
    hinge.damping, hinge.position, slider.position = 0.0, 0.5, -0.25
    return skeleton


def _fk_error(skeleton: Skeleton, back: Skeleton, seed: int = 0) -> float:
    """Worst difference of every body's pose relative to the first body."""
    q = random_q(skeleton, seed)
    values = step_values(skeleton, q)
    coords = np.zeros(back.dof_count)
    for joint in back.joints:
        if joint.dof_count == 1 and joint.name in values:
            coords[joint.dof_offset] = values[joint.name]
    mine, theirs = world_poses(skeleton, q), world_poses(back, coords)
    base = np.linalg.inv(theirs[back.body_index(link_name(skeleton, 0))])
    return max(float(np.abs(np.linalg.inv(mine[0]) @ mine[i]
                            - base @ theirs[back.body_index(link_name(skeleton, i))]).max())
               for i in range(len(skeleton.bodies)))


def test_every_joint_type_reads_back_with_the_same_kinematics(tmp_path: Path) -> None:
    skeleton = _bodyable()
    path = tmp_path / "every.body"
    mk.write(path, skeleton)
    back = mk.read(path)
    assert isinstance(back, Skeleton)
    for seed in range(3):
        assert _fk_error(skeleton, back, seed) <= 1e-9
    hinge = back.joint("hinge_joint")
    assert hinge.lower[0] == pytest.approx(-1.5, abs=1e-14)
    assert hinge.upper[0] == pytest.approx(2.0, abs=1e-14)
    assert np.linalg.norm(hinge.axes[0]) == pytest.approx(1.0, abs=1e-15)
    body = back.bodies[back.body_index("slider_link")]
    assert body.inertia.mass == 3.0
    np.testing.assert_allclose(body.inertia.com, skeleton.bodies[2].inertia.com, atol=1e-15)
    assert hinge.dofs[0].position == pytest.approx(0.5, abs=1e-15)
    assert back.joint("slider_joint").dofs[0].position == -0.25
    kinds = sorted(s.kind for s in back.bodies[back.body_index("hinge_link")].shapes)
    assert kinds == ["box", "cylinder", "sphere"]


def test_the_header_and_keys_follow_the_spec(tmp_path: Path) -> None:
    path = tmp_path / "every.body"
    mk.write(path, _bodyable())
    document = yaml.safe_load(path.read_text())
    assert document["format"] == "ChoreonoidBody" and document["format_version"] == 2.0
    assert document["angle_unit"] == "degree" and document["root_link"] == "root_link"
    links = document["links"]
    assert links[0]["name"] == "root_link" and links[0]["joint_type"] == "free"
    for link in links:
        assert {"mass", "center_of_mass", "inertia"} <= set(link)
        assert len(link["inertia"]) == 9
        if link["joint_type"] in ("revolute", "prismatic"):
            assert len(link["joint_axis"]) == 3


@pytest.mark.corpus
def test_sr1_keeps_links_joint_ids_axes_and_ranges(tmp_path: Path) -> None:
    skeleton = skeletons("choreonoid/SR1.body")[0]
    path = tmp_path / "SR1.body"
    mk.write(path, skeleton)  # SR1 holds nothing a .body file cannot
    back = mk.read(path)
    assert isinstance(back, Skeleton)
    assert [b.name for b in back.bodies] == [b.name for b in skeleton.bodies]
    assert back.joint_id_columns() == skeleton.joint_id_columns()
    for mine, theirs in zip(skeleton.joints, back.joints, strict=True):
        assert (mine.type, mine.name) == (theirs.type, theirs.name)
        np.testing.assert_allclose(theirs.axes, mine.axes, atol=1e-15)
        np.testing.assert_allclose(theirs.parent_to_joint, mine.parent_to_joint, atol=1e-14)
        np.testing.assert_allclose(theirs.lower, mine.lower, rtol=1e-14)
        np.testing.assert_allclose(theirs.upper, mine.upper, rtol=1e-14)
    assert _fk_error(skeleton, back) <= 1e-9


@pytest.mark.corpus
def test_sr1_devices_come_back_on_the_same_links_and_frames(tmp_path: Path) -> None:
    skeleton = skeletons("choreonoid/SR1.body")[0]
    path = tmp_path / "SR1.body"
    mk.write(path, skeleton)  # SR1 holds nothing a .body cannot: no loss
    back = mk.read(path)
    assert isinstance(back, Skeleton) and len(back.devices) == len(skeleton.devices) == 7
    pose_keys = {"translation", "rotation"}
    for mine, theirs in zip(skeleton.devices, back.devices, strict=True):
        assert (theirs.name, theirs.kind, theirs.body) == (mine.name, mine.kind, mine.body)
        np.testing.assert_allclose(theirs.transform, mine.transform, atol=1e-14)
        assert ({k: v for k, v in theirs.attrs["info"].items() if k not in pose_keys}
                == {k: v for k, v in mine.attrs["info"].items() if k not in pose_keys})


def test_urdf_and_mjcf_name_the_devices_they_leave_out(tmp_path: Path) -> None:
    skeleton = every_joint()
    skeleton.devices.append(mk.model.skeleton.Device("gyro", "RateGyroSensor", 1))
    for target in ("x.urdf", "x.xml"):
        with pytest.raises(mk.ConversionError, match=r"devices \(left out\) on 'gyro'"):
            mk.write(tmp_path / target, skeleton)


@pytest.mark.corpus
@pytest.mark.filterwarnings("ignore::motionkit.errors.MotionkitWarning")  # lossy writes
@pytest.mark.parametrize("relative", CORPUS, ids=corpus_ids())
def test_corpus_models_read_back_with_the_same_fk(relative: str, tmp_path: Path) -> None:
    for number, skeleton in enumerate(skeletons(relative)):
        path = tmp_path / f"model{number}.body"
        if not write_or_refuse(path, skeleton):
            continue
        back = mk.read(path)
        assert isinstance(back, Skeleton)
        assert _fk_error(skeleton, back) <= 1e-9


def test_what_a_body_file_cannot_hold_is_refused_by_name(tmp_path: Path) -> None:
    skeleton = every_joint()
    skeleton.bodies[2].joint.type = "screw"
    skeleton.bodies[3].shapes.append(mk.model.skeleton.Shape("ellipsoid",
                                                              {"size": np.ones(3)}))
    with pytest.raises(mk.ConversionError) as caught:
        mk.write(tmp_path / "x.body", skeleton)
    assert re.search(r"screw joints \(.*\) on 'slider_joint'", str(caught.value))
    assert "ellipsoid shapes (left out) on 'cardan_link'" in str(caught.value)
    assert "damping (left out) on 'hinge_joint'" in str(caught.value)


def test_names_from_files_are_quoted(tmp_path: Path) -> None:
    skeleton = _bodyable()
    skeleton.bodies[1].name = 'odd: "name" # [x]'
    path = tmp_path / "odd.body"
    mk.write(path, skeleton)
    back = mk.read(path)
    assert isinstance(back, Skeleton)
    assert back.bodies[back.body_index('odd: "name" # [x]')].name == 'odd: "name" # [x]'

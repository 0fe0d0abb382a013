"""URDF reading: joints written with ``name=""`` (unitree files), checked against yourdfpy
loading the same file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import motionkit as mk
from conftest import require_peer
from motionkit.kinematics import forward, poses_to_matrices

_INERTIAL = ('<inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" '
             'iyz="0"/></inertial>')
_UNNAMED = f"""<robot name="r">
  <link name="base"/>
  <link name="a">{_INERTIAL}</link>
  <link name="b">{_INERTIAL}</link>
  <link name="c"/>
  <joint name="" type="fixed"><parent link="base"/><child link="a"/>
    <origin xyz="0 0 1" rpy="0.1 0.2 0.3"/></joint>
  <joint name="" type="revolute"><parent link="a"/><child link="b"/><origin xyz="0.5 0 0"/>
    <axis xyz="0 1 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
  <joint name="c_hinge" type="continuous"><parent link="b"/><child link="c"/>
    <origin xyz="0 0.25 0" rpy="0 0.5 0"/><axis xyz="1 0 0"/></joint>
</robot>
"""


def _read(path: Path) -> mk.Skeleton:
    with pytest.warns(mk.MotionkitWarning, match="empty name"):
        skeleton = mk.read(path)
    assert isinstance(skeleton, mk.Skeleton)
    return skeleton


def test_unnamed_joints_are_read_with_fk_equal_to_yourdfpy(tmp_path: Path) -> None:
    yourdfpy: Any = require_peer("yourdfpy")
    path = tmp_path / "unnamed.urdf"
    path.write_text(_UNNAMED)
    skeleton = _read(path)
    assert [j.name for j in skeleton.joints] == ["base_root", "a__joint", "b__joint", "c_hinge"]
    assert [d.name for d in skeleton.dofs][-2:] == ["b__joint", "c_hinge"]
    model = yourdfpy.URDF.load(str(path), load_meshes=False, load_collision_meshes=False)
    for q in ([0.0, 0.0], [0.7, -1.9]):
        model.update_cfg({"": q[0], "c_hinge": q[1]})
        free = skeleton.dof_count - 2  # the root's floating base, at the origin
        ours = poses_to_matrices(forward(skeleton, np.concatenate([np.zeros(free), q])))
        base = np.linalg.inv(ours[0])
        for index, body in enumerate(skeleton.bodies):
            assert np.allclose(base @ ours[index], model.get_transform(body.name, "base"),
                               atol=1e-12), body.name


def test_a_generated_name_never_takes_a_written_one(tmp_path: Path) -> None:
    path = tmp_path / "clash.urdf"
    path.write_text(_UNNAMED.replace('name="c_hinge"', 'name="b__joint"'))
    skeleton = _read(path)
    names = [j.name for j in skeleton.joints]
    assert names == ["base_root", "a__joint", "b__joint2", "b__joint"]


def test_a_joint_without_a_name_attribute_is_still_refused(tmp_path: Path) -> None:
    path = tmp_path / "bad.urdf"
    path.write_text(_UNNAMED.replace('<joint name="" type="fixed">', '<joint type="fixed">'))
    with pytest.raises(mk.FormatError, match="unique name") as info:
        mk.read(path)
    assert info.value.line == 6

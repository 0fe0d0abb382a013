"""MJCF characters read as MuJoCo compiles them: ``mujoco`` is the oracle.

Limits are compared with ``MjModel.jnt_range``, body frames with ``body_pos`` /
``body_quat``, hinge axes with ``jnt_axis`` and link poses with ``mj_kinematics`` — on
every character of the corpus and on a file of our own that uses every frame form,
``<compiler>`` settings placed anywhere, default classes and ``<frame>``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import motionkit as mk
from conftest import corpus_file, require_peer
from motionkit.formats.parc import character as ch
from motionkit.formats.shared.mjcf.character import load_character

FORMS = """<mujoco model="forms">
  <default>
    <joint axis="0 1 0" range="-30 30"/>
    <geom type="capsule" size="0.05 0.1"/>
    <default class="arm">
      <joint axis="1 0 0" range="-45 90"/>
      <default class="wide"><joint range="-120 10"/></default>
    </default>
  </default>
  <worldbody>
    <body name="root" pos="0 0 1" euler="10 20 30">
      <freejoint name="root"/>
      <geom/>
      <body name="a" pos="0.1 0 0" axisangle="0 0 2 90" childclass="arm">
        <joint name="a"/><geom/>
        <body name="b" pos="0 0.2 0" xyaxes="0 1 0 -1 0 0.5">
          <joint name="b" class="wide"/><geom/>
          <body name="c" zaxis="1 0 1" pos="0 0 0.1">
            <joint name="c" class="main"/>
            <geom type="box" fromto="0 0 0 0 0 0.3" size="0.02"/>
          </body>
        </body>
      </body>
      <frame pos="0 0 -0.2" euler="0 0 90">
        <body name="d" quat="2 0 0 0" pos="0.05 0 0">
          <joint name="d_x" axis="1 0 0" range="-1 1"/>
          <joint name="d_y" axis="0 1 0" limited="false" range="-2 2"/>
          <joint name="d_z" axis="0 0 1"/><geom/>
        </body>
      </frame>
      <body name="e" pos="0 0.3 0" euler="5 0 0"><joint name="e" range="0 45"/><geom/></body>
    </body>
  </worldbody>
  <compiler angle="radian"/>
  <compiler eulerseq="zyx"/>
</mujoco>
"""


def _mujoco() -> Any:
    return require_peer("mujoco")


def _without_meshes(text: str) -> str:
    """The corpus ships no mesh files: drop mesh assets and mesh geoms (kinematics stays)."""
    text = re.sub(r"<mesh [^>]*/>", "", text)
    text = re.sub(r"<geom[^>]*type=\"mesh\"[^>]*/>", "", text)
    text = re.sub(r"<geom mesh=[^>]*/>", "", text)
    return re.sub(r'<geom name="floor"[^>]*/>', "", text)  # humanoid's undefined material


def _check(path: Path, text: str) -> None:
    mujoco = _mujoco()
    model = mujoco.MjModel.from_xml_string(_without_meshes(text))
    character = load_character(path)
    hinge_axes, ranges = [], []
    for b in range(1, character.body_count):
        for k in range({"hinge": 1, "spherical": 3}.get(character.kinds[b], 0)):
            hinge_axes.append(character.axes[b, k])
            ranges.append(character.limits[b, k])
    limited = model.jnt_limited[1:].astype(bool)
    ours = np.array(ranges)
    assert (~np.isnan(ours[:, 0]) == limited).all()
    np.testing.assert_allclose(ours[limited], model.jnt_range[1:][limited], atol=1e-12)
    np.testing.assert_allclose(hinge_axes, model.jnt_axis[1:], atol=1e-12)
    np.testing.assert_allclose(character.local_pos[1:], model.body_pos[2:], atol=1e-12)
    theirs = model.body_quat[2:][:, [1, 2, 3, 0]]
    dots = np.abs(np.sum(character.local_rot[1:] * theirs, axis=1))
    np.testing.assert_allclose(dots, 1.0, atol=1e-12)
    # FK at a random posture: MuJoCo's hinges vs motionkit's skeleton
    skeleton = ch.read(path)
    data = mujoco.MjData(model)
    rng = np.random.default_rng(7)
    hinges = rng.uniform(-0.8, 0.8, model.nq - 7)
    data.qpos[:] = np.concatenate([model.qpos0[:7], hinges])
    mujoco.mj_kinematics(model, data)
    q = np.zeros(skeleton.dof_count)
    at = 0
    for b, body in zip(range(character.body_count), skeleton.bodies, strict=True):
        count = {"hinge": 1, "spherical": 3}.get(character.kinds[b], 0)
        if count == 1:
            q[body.joint.dof_offset] = hinges[at]
        elif count == 3:  # three hinges = a ball joint: the rotation vector of R1·R2·R3
            rot = Rotation.identity()
            for k in range(3):
                rot = rot * Rotation.from_rotvec(character.axes[b, k] * hinges[at + k])
            q[body.joint.dof_slice] = rot.as_rotvec()
        at += count
    poses = mk.kinematics.forward(skeleton, q)
    np.testing.assert_allclose(poses[:, :3], data.xpos[1:], atol=1e-9)
    theirs = data.xquat[1:][:, [1, 2, 3, 0]]
    np.testing.assert_allclose(np.abs(np.sum(poses[:, 3:] * theirs, axis=1)), 1.0, atol=1e-9)


def test_every_frame_form_default_class_and_compiler_setting(tmp_path: Path) -> None:
    path = tmp_path / "forms.xml"
    path.write_text(FORMS)
    _check(path, FORMS)
    character = load_character(path)
    assert character.kinds == ["root", "hinge", "hinge", "hinge", "spherical", "hinge"]
    b = character.body_names.index("b")
    assert character.limits[b, 0].tolist() == [-120, 10]  # class "wide", radians as written


@pytest.mark.parametrize("parts", [("mimickit", "go2.xml"), ("parc", "character", "humanoid.xml")])
def test_corpus_characters_equal_mujoco(parts: tuple[str, ...]) -> None:
    path = corpus_file(*parts)
    _check(path, path.read_text())


def test_radian_compiler_keeps_limits_as_written() -> None:
    character = load_character(corpus_file("mimickit", "go2.xml"))
    hip = character.body_names.index("FL_hip")
    assert character.limits[hip, 0].tolist() == [-1.0472, 1.0472]


def test_mesh_geoms_name_their_file_and_scale(tmp_path: Path) -> None:
    (tmp_path / "meshes").mkdir()
    path = tmp_path / "m.xml"
    path.write_text('<mujoco><compiler meshdir="meshes"/><asset>'
                    '<mesh name="shell" file="parts/shell.stl" scale="0.001 0.001 0.002"/>'
                    '<mesh file="other.obj"/></asset><worldbody><body name="r">'
                    '<freejoint/><geom type="mesh" mesh="shell" contype="0" conaffinity="0"/>'
                    '<geom type="mesh" mesh="other"/></body></worldbody></mujoco>')
    shell, other = ch.read(path).bodies[0].shapes
    assert shell.params["file_name"] == str(tmp_path / "meshes" / "parts" / "shell.stl")
    assert shell.params["scale"].tolist() == [0.001, 0.001, 0.002]
    assert shell.role == "visual" and other.role == "collision"
    assert other.params["file_name"] == str(tmp_path / "meshes" / "other.obj")


_MESHY = """<mujoco model="meshy"><compiler meshdir="meshes"/>
<asset><mesh name="part" file="part.obj" scale="0.5 0.5 2"/></asset>
<worldbody><body name="r"><freejoint/><geom type="mesh" mesh="part"/>
<geom type="sphere" size="0.1"/><body name="c" pos="0 0 1"><joint axis="1 0 0"/>
<geom type="mesh" mesh="part" contype="0" conaffinity="0"/></body></body></worldbody>
</mujoco>"""
_TETRAHEDRON = "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 2 3\nf 1 2 4\nf 1 3 4\nf 2 3 4\n"


def test_character_with_meshes_writes_a_skel_dartpy_loads(tmp_path: Path) -> None:
    dart = require_peer("dartpy")
    (tmp_path / "meshes").mkdir()
    (tmp_path / "meshes" / "part.obj").write_text(_TETRAHEDRON)
    (tmp_path / "c.xml").write_text(_MESHY)
    (tmp_path / "out").mkdir()
    out = tmp_path / "out" / "c.skel"
    mk.write(out, ch.read(tmp_path / "c.xml"))
    world = dart.utils.SkelParser.readWorld(str(out))
    found = []
    for k in range(world.getSkeleton(0).getNumBodyNodes()):
        node = world.getSkeleton(0).getBodyNode(k)
        for n in range(node.getNumShapeNodes()):
            shape = node.getShapeNode(n).getShape()
            if shape.getType() == "MeshShape":
                found.append((node.getName(), Path(shape.getMeshPath()).resolve(),
                               shape.getScale().tolist()))
    mesh = (tmp_path / "meshes" / "part.obj").resolve()
    assert found == [("r", mesh, [0.5, 0.5, 2.0]), ("c", mesh, [0.5, 0.5, 2.0])]
    back = mk.read(out).skeletons[0]
    assert back.bodies[1].shapes[0].params["scale"].tolist() == [0.5, 0.5, 2.0]


def test_character_with_a_missing_mesh_file_is_refused_with_the_reason(tmp_path: Path) -> None:
    (tmp_path / "c.xml").write_text(_MESHY)
    skeleton = ch.read(tmp_path / "c.xml")
    with pytest.raises(mk.ConversionError, match=r"body 'r': mesh file .*part.obj' does not "
                       r"exist \(left out\)"):
        mk.write(tmp_path / "c.skel", skeleton)
    with pytest.warns(mk.MotionkitWarning, match="does not exist"):
        mk.write(tmp_path / "c.skel", skeleton, lossy=True)
    assert [s.kind for s in mk.read(tmp_path / "c.skel").skeletons[0].bodies[0].shapes] == [
        "sphere"]


def test_a_vrml_mesh_dart_cannot_load_is_refused(tmp_path: Path) -> None:
    (tmp_path / "box.wrl").write_text("#VRML V2.0 utf8\nShape { geometry Box { } }\n")
    (tmp_path / "c.body").write_text(
        "format: ChoreonoidBody\nformatVersion: 1.0\nlinks:\n  - name: R\n    jointType: free"
        "\n    elements: { Resource: { uri: box.wrl } }\n")
    with pytest.raises(mk.ConversionError, match=r"DART \(Assimp\) cannot load the mesh"):
        mk.write(tmp_path / "c.skel", mk.read(tmp_path / "c.body"))

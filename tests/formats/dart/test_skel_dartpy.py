"""``.skel`` read as dartpy 6.20 reads it, on every corpus file dartpy loads: skeleton,
body, joint and DOF names (DART's renaming included), mass, centre of mass, every moment
of inertia (given or derived from shapes), initial positions and FK at random postures.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import motionkit as mk
from conftest import corpus_file, corpus_names, corpus_root, require_peer
from motionkit.kinematics import forward_transforms
from motionkit.model.skeleton import World

ROOT = corpus_root()
FILES = sorted([p.relative_to(ROOT).as_posix() for p in (ROOT / "dart" / "skel").rglob("*.skel")]
               + [p.relative_to(ROOT).as_posix() for p in (ROOT / "dartenv").glob("*.skel")])
NOT_IN_DART = {"dart/skel/test/test_single_body.skel"}  # dartpy refuses it


def _ours(path: Path) -> World:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mk.MotionkitWarning)
        world = mk.read(path)
    assert isinstance(world, World)
    return world


def _theirs(path: Path) -> Any:
    dart = require_peer("dartpy")
    world = dart.utils.SkelParser.readWorld(str(path))  # type: ignore[attr-defined]
    assert world is not None
    return world


@pytest.mark.slow
@pytest.mark.parametrize("name", corpus_names([f for f in FILES if f not in NOT_IN_DART]))
def test_names_inertia_and_fk_equal_dartpy(name: str) -> None:
    path = corpus_file(*name.split("/"))
    ours, theirs = _ours(path), _theirs(path)
    assert [s.name for s in ours.skeletons] == [
        theirs.getSkeleton(i).getName() for i in range(theirs.getNumSkeletons())]
    rng = np.random.default_rng(5)
    for index, skeleton in enumerate(ours.skeletons):
        other = theirs.getSkeleton(index)
        assert [b.name for b in skeleton.bodies] == [
            other.getBodyNode(k).getName() for k in range(other.getNumBodyNodes())]
        assert [j.name for j in skeleton.joints] == [
            other.getJoint(k).getName() for k in range(other.getNumJoints())]
        assert skeleton.dof_names == [other.getDof(k).getName()
                                      for k in range(other.getNumDofs())]
        for k, body in enumerate(skeleton.bodies):
            node = other.getBodyNode(k)
            inertia = node.getInertia()
            assert body.inertia.mass == inertia.getMass(), body.name
            np.testing.assert_array_equal(body.inertia.com, inertia.getLocalCOM(), body.name)
            np.testing.assert_allclose(body.inertia.moment, inertia.getMoment(), rtol=1e-9,
                                       atol=1e-15, err_msg=f"{name}: {body.name}")
            soft = body.soft_shape is not None  # DART keeps the soft shape as a node too
            assert node.getNumShapeNodes() == len(body.shapes) + soft, body.name
        np.testing.assert_array_equal(skeleton.initial_positions, other.getPositions())
        lo = np.where(np.isfinite(skeleton.lower), skeleton.lower, -1.0)
        hi = np.where(np.isfinite(skeleton.upper), skeleton.upper, 1.0)
        q = rng.uniform(lo, hi, size=(2, skeleton.dof_count))
        rot, pos = forward_transforms(skeleton, q)
        for frame in range(2):
            other.setPositions(q[frame])
            for k in range(other.getNumBodyNodes()):
                matrix = other.getBodyNode(k).getWorldTransform().matrix()
                assert np.abs(matrix[:3, :3] - rot[frame, k]).max() <= 1e-9
                assert np.abs(matrix[:3, 3] - pos[frame, k]).max() <= 1e-9


def test_dartenv_files_need_what_the_issue_says() -> None:
    """The four DartEnv files read, each for the reason it is in the corpus."""
    with pytest.warns(mk.MotionkitWarning, match=r"comment is not well-formed XML"):
        mk.read(corpus_file("dartenv", "UpperBodyCapsules_datadriven.skel"))
    with pytest.warns(mk.MotionkitWarning, match=r"'0\.0\.0' read as 0\.0"):
        puzzle = mk.read(corpus_file("dartenv", "cross_puzzle.skel"))
    assert isinstance(puzzle, World)
    with pytest.warns(mk.MotionkitWarning, match=r"renamed 'j_torso\(1\)'"):
        walker = mk.read(corpus_file("dartenv", "walker3d_waist.skel"))
    assert isinstance(walker, World)
    joints = [j.name for j in walker.skeleton("walker").joints]
    assert joints[:2] == ["j_torso", "j_torso(1)"]
    assert walker.skeleton("walker").joints[1].attrs["skel_name"] == "j_torso"


def test_names_as_dart_issues_them(tmp_path: Path) -> None:
    path = tmp_path / "names.skel"
    planar = ("<joint type='planar' name='{0}'><parent>world</parent><child>{1}</child>"
              "<plane type='{2}'/></joint>")
    path.write_text(
        "<skel><world><skeleton name='s'><body name='a'/><body name='b'/><body name='c'/>"
        "<body name='d'/>" + planar.format("p", "a", "xy") + planar.format("p", "b", "zx")
        + "<joint type='revolute' name='default'><parent>a</parent><child>c</child></joint>"
        "<joint type='revolute'><parent>b</parent><child>d</child></joint>"
        "</skeleton><skeleton name='s'/><skeleton/></world></skel>")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mk.MotionkitWarning)
        world = mk.read(path)
    assert isinstance(world, World)
    assert [s.name for s in world.skeletons] == ["s", "s(1)", "skeleton"]
    first = world.skeletons[0]
    assert [j.name for j in first.joints] == ["p", "p(1)", "default", "default(1)"]
    # one DOF namespace per skeleton: the planar rotations are unnamed ("default"), and the
    # revolute joints' DOFs take their joints' names, already taken there
    assert first.dof_names == ["p_x", "p_y", "default", "p(1)_z", "p(1)_x", "default(1)",
                               "default(2)", "default(1)(1)"]
    theirs = _theirs(path)
    other = theirs.getSkeleton(0)
    assert [other.getDof(k).getName() for k in range(other.getNumDofs())] == first.dof_names
    assert [theirs.getSkeleton(i).getName() for i in range(3)] == ["s", "s(1)", "skeleton"]


@pytest.mark.slow
@pytest.mark.parametrize("name", corpus_names([f for f in FILES if f.startswith("dartenv/")]))
def test_read_write_read_keeps_dartpys_own_dynamics(name: str, tmp_path: Path) -> None:
    original = _theirs(corpus_file(*name.split("/")))
    out = tmp_path / "copy.skel"
    mk.write(out, _ours(corpus_file(*name.split("/"))))
    copy = _theirs(out)
    assert copy.getNumSkeletons() == original.getNumSkeletons()
    for index in range(original.getNumSkeletons()):
        a, b = original.getSkeleton(index), copy.getSkeleton(index)
        assert a.getName() == b.getName() and a.getNumDofs() == b.getNumDofs()
        assert [a.getDof(k).getName() for k in range(a.getNumDofs())] == \
            [b.getDof(k).getName() for k in range(b.getNumDofs())]
        for k in range(a.getNumBodyNodes()):
            x, y = a.getBodyNode(k).getInertia(), b.getBodyNode(k).getInertia()
            assert x.getMass() == y.getMass()
            np.testing.assert_allclose(x.getMoment(), y.getMoment(), rtol=1e-12, atol=1e-15)
        q = np.random.default_rng(3).uniform(-0.5, 0.5, a.getNumDofs())
        a.setPositions(q)
        b.setPositions(q)
        np.testing.assert_allclose(a.getMassMatrix(), b.getMassMatrix(), rtol=1e-9, atol=1e-12)
        for k in range(a.getNumBodyNodes()):
            np.testing.assert_allclose(a.getBodyNode(k).getWorldTransform().matrix(),
                                       b.getBodyNode(k).getWorldTransform().matrix(), atol=1e-9)


@pytest.mark.parametrize("mass, expected", [
    ("<!-- c -->2", 2.0), ("2<!-- c -->3", 2.0), ("2<![CDATA[5]]>", 2.0),
    ("<![CDATA[2.5]]>", 2.5), ("&#50;.5", 2.5), ("3\t", 3.0), ("2<!-- a --->", 2.0)])
def test_element_text_as_dart_takes_it(mass: str, expected: float, tmp_path: Path) -> None:
    path = tmp_path / "m.skel"
    path.write_text(f"<skel><world><skeleton name='s'><body name='a'><inertia><mass>{mass}"
                    "</mass><offset>0 0 0</offset><moment_of_inertia><ixx>1</ixx><iyy>1</iyy>"
                    "<izz>1</izz><ixy>0</ixy><ixz>0</ixz><iyz>0</iyz></moment_of_inertia>"
                    "</inertia></body><joint type='free' name='j'><parent>world</parent>"
                    "<child>a</child></joint></skeleton></world></skel>")
    ours = _ours(path)
    assert ours.skeletons[0].bodies[0].inertia.mass == expected
    theirs = _theirs(path)
    assert theirs.getSkeleton(0).getBodyNode(0).getMass() == expected


DATA = Path(__file__).resolve().parents[2] / "data" / "dart"
_MESH_BODY = ("<skel><world><skeleton name='s'><body name='a'><visualization_shape><geometry>"
              "<mesh><file_name>{}</file_name><scale>1.5 -1 1</scale></mesh></geometry>"
              "</visualization_shape><collision_shape><geometry><box><size>0.1 0.2 0.3</size>"
              "</box></geometry></collision_shape><inertia><mass>2</mass><offset>0.01 0 0"
              "</offset></inertia></body><joint type='free' name='j'><parent>world</parent>"
              "<child>a</child></joint></skeleton></world></skel>")


def test_collada_mesh_box_as_dartpy_derives_it(tmp_path: Path) -> None:
    """A COLLADA file with nested node transforms, two instances, a unit of 1 cm, a line
    (dropped) and a negative scale: the derived moment equals dartpy's."""
    (tmp_path / "instanced.dae").write_bytes((DATA / "instanced.dae").read_bytes())
    path = tmp_path / "m.skel"
    path.write_text(_MESH_BODY.format("instanced.dae"))
    ours = _ours(path).skeletons[0].bodies[0].inertia.moment
    theirs = _theirs(path).getSkeleton(0).getBodyNode(0).getInertia().getMoment()
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-18)


def test_a_missing_mesh_whose_inertia_dart_would_derive_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "m.skel"
    path.write_text(_MESH_BODY.format("nowhere.obj"))
    with pytest.raises(mk.FormatError, match="DART crashes deriving this inertia") as info:
        mk.read(path)
    assert info.value.line == 1


@pytest.mark.parametrize("content", [
    b"<COLLADA><library_visual_scenes><visual_scene><node><instance_geometry url='#nope'/>"
    b"</node></visual_scene></library_visual_scenes></COLLADA>",
    b"<COLLADA><library_geometries><geometry id='g'><mesh><triangles><input semantic='VERTEX'"
    b" source='#v' offset='0'/><p>0 1 2</p></triangles></mesh></geometry></library_geometries>"
    b"<library_visual_scenes><visual_scene><node><instance_geometry url='#g'/></node>"
    b"</visual_scene></library_visual_scenes></COLLADA>",
    b"<COLLADA><broken", b"v 1 2 x\nf 1 1 1\n"])
def test_a_broken_mesh_is_a_format_error(content: bytes, tmp_path: Path) -> None:
    name = "m.obj" if content.startswith(b"v ") else "m.dae"
    (tmp_path / name).write_bytes(content)
    path = tmp_path / "m.skel"
    path.write_text(_MESH_BODY.format(name))
    with pytest.raises(mk.FormatError, match=r"cannot be read|has no polygons"):
        mk.read(path)

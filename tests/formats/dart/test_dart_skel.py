"""DART .skel: every corpus file, round trips, dartpy reading what we write, bad input."""

from __future__ import annotations

import tempfile
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation

import motionkit as mk
from conftest import corpus_file, corpus_names, corpus_root, require_peer
from motionkit.formats.dart.skel_write import euler_xyz, transformation
from motionkit.kinematics import forward_transforms
from motionkit.model.skeleton import Body, Joint, Skeleton, World

SKEL_DIR = corpus_root() / "dart" / "skel"
SKEL_FILES = sorted(p.relative_to(SKEL_DIR).as_posix() for p in SKEL_DIR.rglob("*.skel"))
BAD_IN_DART = {"test/test_single_body.skel"}
GOOD_FILES = corpus_names([f for f in SKEL_FILES if f not in BAD_IN_DART])


def skel(name: str) -> Path:
    return corpus_file("dart", "skel", *name.split("/"))


def quiet_read(path: Path | str) -> World:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mk.MotionkitWarning)
        world = mk.read(path)
    assert isinstance(world, World)
    return world


def random_q(skeleton: Skeleton, rng: np.random.Generator, frames: int) -> np.ndarray:
    lo = np.where(np.isfinite(skeleton.lower), skeleton.lower, -1.0)
    hi = np.where(np.isfinite(skeleton.upper), skeleton.upper, 1.0)
    return rng.uniform(lo, hi, size=(frames, skeleton.dof_count))


def test_corpus_present() -> None:
    corpus_file("dart", "skel", "cube.skel")
    assert len(SKEL_FILES) >= 38, SKEL_FILES


@pytest.mark.parametrize("name", GOOD_FILES)
def test_every_corpus_file_reads(name: str) -> None:
    world = quiet_read(skel(name))
    for skeleton in world.skeletons:
        assert skeleton.dof_count == sum(j.dof_count for j in skeleton.joints)
        for index, body in enumerate(skeleton.bodies):
            assert body.parent < index
            assert np.isfinite(body.inertia.moment).all()


def test_the_file_dartpy_rejects_gives_a_clear_error() -> None:
    with pytest.raises(mk.FormatError, match="frags") as info:
        mk.read(skel("test/test_single_body.skel"))
    assert info.value.line == 19


def test_known_contents() -> None:
    world = quiet_read(skel("test/planar_joint.skel"))
    assert world.time_step == pytest.approx(0.001)
    sk = world.skeletons[0]
    planes = [j.plane for j in sk.joints if j.type == "planar"]
    assert planes == ["xy", "yz", "zx", "arbitrary"]
    joint = sk.joints[1]
    assert list(joint.lower) == [-1, -2, -3] and list(joint.upper) == [1, 2, 3]
    assert list(joint.initial_positions) == [1, 2, 3]
    assert list(joint.initial_velocities) == [4, 5, 6]
    assert [d.damping for d in joint.dofs] == [1, 2, 3]
    vehicle = quiet_read(skel("vehicle.skel"))
    assert vehicle.collision_detector == "bullet"
    assert list(vehicle.gravity) == [0, -9.81, 0]
    actuators = [j.actuator for s in quiet_read(
        skel("test/collision_of_prescribed_joints_test.skel")).skeletons for j in s.joints]
    assert {"force", "passive", "servo", "acceleration", "velocity", "locked"} <= set(actuators)
    dofs = quiet_read(skel("test/dof_attribute_test.skel")).skeletons[0]
    renamed = [d for d in dofs.dofs if d.velocity_upper != np.inf]
    assert renamed, "velocity limits from <dof> elements"


def test_describe_and_summary() -> None:
    world = quiet_read(skel("skateboard.skel"))
    doc = world.describe()
    assert doc["skeletons"] == [{"name": "skateboard_skeleton", "bodies": 5, "joints": 5,
                                 "dofs": 12}]
    text = world.summary_text()
    assert "universal joint" in text and "free joint" in text and "└─" in text


def _same_model(a: World, b: World) -> None:
    assert len(a.skeletons) == len(b.skeletons)
    assert a.time_step == b.time_step and np.array_equal(a.gravity, b.gravity)
    assert a.collision_detector == b.collision_detector
    for sa, sb in zip(a.skeletons, b.skeletons, strict=True):
        assert sa.name == sb.name and sa.mobile == sb.mobile
        assert [x.name for x in sa.bodies] == [x.name for x in sb.bodies]
        for ba, bb in zip(sa.bodies, sb.bodies, strict=True):
            assert ba.parent == bb.parent and ba.gravity == bb.gravity
            np.testing.assert_allclose(ba.rest_pose, bb.rest_pose, atol=1e-12)
            assert ba.inertia.mass == bb.inertia.mass
            np.testing.assert_allclose(ba.inertia.moment, bb.inertia.moment, atol=1e-15)
            np.testing.assert_array_equal(ba.inertia.com, bb.inertia.com)
            assert [(s.kind, s.role, s.collidable) for s in ba.shapes] == \
                [(s.kind, s.role, s.collidable) for s in bb.shapes]
            for sha, shb in zip(ba.shapes, bb.shapes, strict=True):
                np.testing.assert_allclose(sha.transform, shb.transform, atol=1e-12)
                assert (sha.color is None) == (shb.color is None)
            assert (ba.soft_shape is None) == (bb.soft_shape is None)
            ja, jb = ba.joint, bb.joint
            assert (ja.name, ja.type, ja.actuator, ja.axis_order, ja.plane) == \
                (jb.name, jb.type, jb.actuator, jb.axis_order, jb.plane)
            np.testing.assert_allclose(ja.parent_to_joint, jb.parent_to_joint, atol=1e-12)
            np.testing.assert_allclose(ja.child_to_joint, jb.child_to_joint, atol=1e-12)
            np.testing.assert_array_equal(ja.axes, jb.axes)
            for da, db in zip(ja.dofs, jb.dofs, strict=True):
                assert vars(da) == vars(db)


@pytest.mark.parametrize("name", GOOD_FILES)
def test_round_trip(name: str, tmp_path: Path) -> None:
    first = quiet_read(skel(name))
    out = tmp_path / "copy.skel"
    mk.write(out, first)
    second = quiet_read(out)
    _same_model(first, second)


@pytest.mark.slow
@pytest.mark.parametrize("name", GOOD_FILES)
def test_dartpy_loads_what_we_write(name: str, tmp_path: Path) -> None:
    dart = require_peer("dartpy")
    ours = quiet_read(skel(name))
    out = tmp_path / "ours.skel"
    mk.write(out, ours)
    world = dart.utils.SkelParser.readWorld(str(out))  # type: ignore[attr-defined]
    assert world is not None
    assert world.getNumSkeletons() == len(ours.skeletons)
    rng = np.random.default_rng(11)
    for index, skeleton in enumerate(ours.skeletons):
        theirs = world.getSkeleton(index)
        assert theirs.getNumDofs() == skeleton.dof_count
        assert theirs.getName() == skeleton.name
        np.testing.assert_allclose(theirs.getPositions(), skeleton.initial_positions)
        for k, body in enumerate(skeleton.bodies):
            node = theirs.getBodyNode(k)
            assert node.getName() == body.name
            assert node.getMass() == pytest.approx(body.inertia.mass)
        q = random_q(skeleton, rng, 3)
        rot, pos = forward_transforms(skeleton, q)
        for frame in range(3):
            theirs.setPositions(q[frame])
            for k in range(theirs.getNumBodyNodes()):
                matrix = theirs.getBodyNode(k).getWorldTransform().matrix()
                assert np.abs(matrix[:3, :3] - rot[frame, k]).max() <= 1e-9
                assert np.abs(matrix[:3, 3] - pos[frame, k]).max() <= 1e-9


@pytest.mark.slow
def test_derived_inertia_matches_dartpy() -> None:
    dart = require_peer("dartpy")
    checked: set[str] = set()
    for name in ("cubes.skel", "shapes.skel", "test/dof_attribute_test.skel"):
        ours = quiet_read(skel(name))
        world = dart.utils.SkelParser.readWorld(str(skel(name)))  # type: ignore[attr-defined]
        for index, skeleton in enumerate(ours.skeletons):
            theirs = world.getSkeleton(index)
            for k, body in enumerate(skeleton.bodies):
                if not body.inertia.derived:
                    continue
                checked.add(body.shapes[0].kind)
                moment = theirs.getBodyNode(k).getInertia().getMoment()
                # Assimp reads meshes in float32: 1e-6 there, 1e-9 elsewhere
                rtol = 1e-6 if body.shapes[0].kind == "mesh" else 1e-9
                np.testing.assert_allclose(body.inertia.moment, moment, rtol=rtol, atol=1e-12,
                                           err_msg=f"{name}: {body.name}")
    assert checked == {"box", "sphere", "ellipsoid", "cylinder", "capsule", "cone",
                       "multi_sphere", "mesh"}


def test_sibling_form_and_world_defaults(tmp_path: Path) -> None:
    path = tmp_path / "sib.skel"
    path.write_text('<skel><skeleton name="s"><body name="b"/>'
                    '<joint type="revolute" name="j"><parent>world</parent><child>b</child>'
                    '<axis><xyz>0 0 2</xyz><limit><lower>-1</lower></limit></axis>'
                    '</joint></skeleton></skel>')
    world = mk.read(path)
    assert world.skeletons[0].joints[0].axes.tolist() == [[0, 0, 1]]
    assert world.skeletons[0].joints[0].lower.tolist() == [-1]
    assert world.skeletons[0].bodies[0].inertia.mass == 1.0
    assert list(world.gravity) == [0, 0, -9.81]


def test_parent_without_joint_gets_free_root(tmp_path: Path) -> None:
    path = tmp_path / "root.skel"
    path.write_text('<skel><world><skeleton name="s">'
                    '<body name="a"><transformation>1 2 3 0 0 0</transformation></body>'
                    '<body name="b"/>'
                    '<joint type="weld" name="j"><parent>a</parent><child>b</child></joint>'
                    '</skeleton></world></skel>')
    with pytest.warns(mk.MotionkitWarning, match="free joint"):
        sk = mk.read(path).skeletons[0]
    assert [b.name for b in sk.bodies] == ["a", "b"]
    assert sk.joints[0].type == "free" and sk.joints[0].name == "root"
    positions = forward_transforms(sk, np.zeros((1, 6)))[1][0]
    assert positions.tolist() == [[1, 2, 3], [0, 0, 0]]


BAD = {
    "malformed": ("<skel><world><skeleton name='s'>\n<body name='a'>\n</skeleton></world></skel>",
                  "malformed XML", 3),
    "unknown type": ("<skel><world><skeleton name='s'><body name='a'/>\n"
                     "<joint type='hinge' name='j'><parent>world</parent><child>a</child>"
                     "</joint></skeleton></world></skel>", "unknown joint type", 2),
    "cycle": ("<skel><world><skeleton name='s'><body name='a'/><body name='b'/>\n"
              "<joint type='weld' name='j1'><parent>b</parent><child>a</child></joint>\n"
              "<joint type='weld' name='j2'><parent>a</parent><child>b</child></joint>"
              "</skeleton></world></skel>", "cycle", None),
    "orphan": ("<skel><world><skeleton name='s'><body name='a'/>\n<body name='lost'/>\n"
               "<joint type='weld' name='j'><parent>world</parent><child>a</child></joint>"
               "</skeleton></world></skel>", "orphan", 2),
    "token": ("<skel><world><skeleton name='s'>\n<body name='a'>\n"
              "<transformation>1 x 3 0 0 0</transformation></body>"
              "<joint type='weld' name='j'><parent>world</parent><child>a</child></joint>"
              "</skeleton></world></skel>", "'x' is not a number", 3),
    "overflow": ("<skel><world><physics>\n<time_step>1e400</time_step></physics>"
                 "</world></skel>", "out of range", 2),
    "unknown parent": ("<skel><world><skeleton name='s'><body name='a'/>\n"
                       "<joint type='weld' name='j'>\n<parent> world </parent><child>a</child>"
                       "</joint></skeleton></world></skel>", "no body named ' world '", 3),
    "entity": ('<?xml version="1.0"?>\n<!DOCTYPE skel [<!ENTITY x "boom">]>\n'
               "<skel><world/></skel>", "entity", 2),
    "external": ('<?xml version="1.0"?>\n<!DOCTYPE skel SYSTEM "http://example.com/x.dtd">\n'
                 "<skel>&ext;</skel>", "external XML entities", 3),
    "not a number": ("<skel><world><physics>\n<time_step>fast</time_step></physics>"
                     "</world></skel>", "not a number", 2),
    "euler order missing": ("<skel><world><skeleton name='s'><body name='a'/>\n"
                            "<joint type='euler' name='j'><parent>world</parent>"
                            "<child>a</child></joint></skeleton></world></skel>",
                            "axis_order", 2),
    "wrong root": ("<robot/>", "not <skel>", 1),
    "mass missing": ("<skel><world><skeleton name='s'><body name='a'>\n<inertia/></body>"
                     "<joint type='weld' name='j'><parent>world</parent><child>a</child>"
                     "</joint></skeleton></world></skel>", "mass", 2),
    "nan slices": ("<skel><world><skeleton name='s'><body name='a'><soft_shape>"
                   "<total_mass>1</total_mass><geometry><sphere><radius>1</radius>\n"
                   "<num_slices>nan</num_slices></sphere></geometry></soft_shape></body>"
                   "<joint type='free' name='j'><parent>world</parent><child>a</child></joint>"
                   "</skeleton></world></skel>", "'nan' is not a whole number", 2),
    "huge frags": ("<skel><world><skeleton name='s'><body name='a'><soft_shape>"
                   "<total_mass>1</total_mass><geometry><box><size>1 1 1</size>\n"
                   "<frags>1e400 2 3</frags></box></geometry></soft_shape></body>"
                   "<joint type='free' name='j'><parent>world</parent><child>a</child></joint>"
                   "</skeleton></world></skel>", "'1e400' is out of range", 2),
    "zero plane axis": ("<skel><world><skeleton name='s'><body name='a'/>"
                        "<joint type='planar' name='j'><parent>world</parent><child>a</child>"
                        "<plane type='arbitrary'><translation_axis1>\n<xyz>0 0 0</xyz>"
                        "</translation_axis1><translation_axis2><xyz>0 1 0</xyz>"
                        "</translation_axis2></plane></joint></skeleton></world></skel>",
                        "zero <translation_axis1>", 2),
    "parallel plane axes": ("<skel><world><skeleton name='s'><body name='a'/>"
                            "<joint type='planar' name='j'><parent>world</parent><child>a"
                            "</child>\n<plane type='arbitrary'><translation_axis1><xyz>1 0 0"
                            "</xyz></translation_axis1><translation_axis2><xyz>2 0 0</xyz>"
                            "</translation_axis2></plane></joint></skeleton></world></skel>",
                            "parallel", 2),
}


def test_a_non_unit_universal_axis_is_normalised_with_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "uni.skel"
    path.write_text("<skel><world><skeleton name='s'><body name='a'/>"
                    "<joint type='universal' name='j'><parent>world</parent><child>a</child>"
                    "<axis><xyz>0 0 2</xyz></axis><axis2><xyz>0 1 0</xyz></axis2></joint>"
                    "</skeleton></world></skel>")
    with pytest.warns(mk.MotionkitWarning, match="universal axis is not unit; it is normalised"):
        skeleton = mk.read(path).skeletons[0]
    np.testing.assert_array_equal(skeleton.joints[0].axes, [[0, 0, 1], [0, 1, 0]])
    rot, _ = forward_transforms(skeleton, [0.3, 0.5])
    expected = Rotation.from_rotvec([0, 0, 0.3]) * Rotation.from_rotvec([0, 0.5, 0])
    np.testing.assert_allclose(rot[0], expected.as_matrix(), atol=1e-12)


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_input_is_one_format_error_with_a_line(case: str, tmp_path: Path) -> None:
    text, message, line = BAD[case]
    path = tmp_path / "bad.skel"
    path.write_text(text)
    with pytest.raises(mk.FormatError, match=message) as info:
        mk.read(path)
    assert info.value.path == str(path)
    assert info.value.line is not None
    if line is not None:
        assert info.value.line == line
        assert info.value.column is not None


def test_legacy_text_skel_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "old.skel"
    path.write_text("dofs {\n  0 { 0.0, -10.0, 10.0 }\n}\nmass {\n}\n")
    with pytest.raises(mk.FormatError, match="legacy DART text"):
        mk.read(path)


def test_lenient_where_dart_is(tmp_path: Path) -> None:
    path = tmp_path / "lenient.skel"
    path.write_text("<skel><world><skeleton name='s'><body name='a'/><body name='b'/>"
                    "<joint type='euler' name='j' actuator='torque'><parent>world</parent>"
                    "<child>a</child><axis_order>yxz</axis_order></joint>"
                    "<joint type='planar' name='p'><parent>a</parent><child>b</child></joint>"
                    "</skeleton></world></skel>")
    with pytest.warns(mk.MotionkitWarning) as record:
        sk = mk.read(path).skeletons[0]
    text = " ".join(str(w.message) for w in record)
    assert "actuator" in text and "axis order" in text and "plane" in text
    assert {w.filename for w in record} == {__file__}  # the caller's line, not the library's
    assert sk.joints[0].axis_order == "xyz" and sk.joints[0].actuator == "force"
    assert sk.joints[1].plane == "xy"


def test_writer_refuses_what_dart_cannot_build(tmp_path: Path) -> None:
    screw = Skeleton("s", [Body("a", Joint("j", "screw", axes=[[0, 0, 1]], pitch=0.2))])
    with pytest.raises(mk.ConversionError, match="screw"):
        mk.write(tmp_path / "x.skel", screw)
    assert not (tmp_path / "x.skel").exists()
    with pytest.warns(mk.MotionkitWarning, match="screw"):
        mk.write(tmp_path / "x.skel", screw, lossy=True)
    back = quiet_read(tmp_path / "x.skel").skeletons[0]
    assert back.joints[0].type == "screw" and back.joints[0].pitch == 0.2
    odd = Skeleton("s", [Body("a", Joint("j", "euler", axis_order="yzx"))])
    with pytest.raises(mk.ConversionError, match="Euler order"):
        mk.write(tmp_path / "y.skel", odd)
    with pytest.raises(mk.ConversionError, match="motion has no skeleton"):
        mk.write(tmp_path / "z.skel", mk.Motion())


def test_euler_decomposition_handles_gimbal_lock() -> None:
    rng = np.random.default_rng(3)
    angles = [rng.uniform(-3, 3, 3) for _ in range(50)] + [
        np.array([0.3, np.pi / 2, -0.2]), np.array([1.0, -np.pi / 2, 0.5])]
    for abc in angles:
        r = Rotation.from_euler("XYZ", abc).as_matrix()
        back = Rotation.from_euler("XYZ", euler_xyz(r)).as_matrix()
        np.testing.assert_allclose(back, r, atol=1e-12)
    assert transformation(np.eye(4)) == "0 0 0 0 0 0"


def _transform(rng: np.random.Generator) -> np.ndarray:
    from scipy.spatial.transform import Rotation

    out = np.eye(4)
    out[:3, :3] = Rotation.random(random_state=int(rng.integers(1 << 30))).as_matrix()
    out[:3, 3] = rng.uniform(-1, 1, 3)
    return out


BUILDABLE = ["ball", "euler", "free", "planar", "prismatic", "revolute", "translational",
             "universal", "weld"]


@settings(max_examples=25, deadline=None)
@given(st.lists(st.sampled_from(BUILDABLE), min_size=1, max_size=6), st.integers(0, 2**31))
def test_written_random_skeletons_read_back_and_load_in_dartpy(kinds: list[str], seed: int
                                                               ) -> None:
    rng = np.random.default_rng(seed)
    bodies = []
    for index, kind in enumerate(kinds):
        extra: dict[str, object] = {}
        if kind in ("revolute", "prismatic"):
            extra["axes"] = [rng.normal(size=3)]
        if kind == "universal":
            extra["axes"] = [v / np.linalg.norm(v) for v in rng.normal(size=(2, 3))]
        if kind == "euler":
            extra["axis_order"] = str(rng.choice(["xyz", "zyx"]))
        if kind == "planar":
            extra["plane"] = str(rng.choice(["xy", "yz", "zx", "arbitrary"]))
            extra["axes"] = rng.normal(size=(2, 3)) if extra["plane"] == "arbitrary" else []
        joint = Joint(f"joint {index}", kind, _transform(rng), _transform(rng),
                      **extra)  # type: ignore[arg-type]
        for dof in joint.dofs:
            dof.lower, dof.upper = sorted(rng.uniform(-2, 2, 2))
            dof.position = float(rng.uniform(-1, 1))
        body = Body(f"body<{index}>&", joint, parent=int(rng.integers(-1, index)) if index else -1)
        body.inertia.mass = float(rng.uniform(0.1, 5))
        bodies.append(body)
    skeleton = Skeleton("random 'one'", bodies)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "r.skel"
        mk.write(path, skeleton)
        back = mk.read(path).skeletons[0]
        q = random_q(skeleton, rng, 3)
        rot, pos = forward_transforms(skeleton, q)
        rot2, pos2 = forward_transforms(back, q)
        assert np.abs(rot - rot2).max() <= 1e-12 and np.abs(pos - pos2).max() <= 1e-12
        assert back.name == skeleton.name and [b.name for b in back.bodies] == \
            [b.name for b in bodies]
        np.testing.assert_array_equal(back.lower, skeleton.lower)
        np.testing.assert_array_equal(back.initial_positions, skeleton.initial_positions)
        try:
            import dartpy
        except ImportError:
            return
        theirs = dartpy.utils.SkelParser.readWorld(str(path)).getSkeleton(0)
        np.testing.assert_allclose(theirs.getPositionLowerLimits(), skeleton.lower)
        np.testing.assert_allclose(theirs.getPositions(), skeleton.initial_positions)
        for frame in range(3):
            theirs.setPositions(q[frame])
            for k in range(len(bodies)):
                matrix = theirs.getBodyNode(k).getWorldTransform().matrix()
                assert np.abs(matrix[:3, :3] - rot[frame, k]).max() <= 1e-9
                assert np.abs(matrix[:3, 3] - pos[frame, k]).max() <= 1e-9


@pytest.mark.slow
def test_choreonoid_body_converts_to_skel_that_dartpy_loads(tmp_path: Path) -> None:
    dart = require_peer("dartpy")
    source = corpus_file("choreonoid", "SR1.body")
    out = tmp_path / "sr1.skel"
    mk.convert(source, out)
    sr1 = mk.read(source)
    back = quiet_read(out).skeletons[0]
    assert [b.name for b in back.bodies] == [b.name for b in sr1.bodies]
    q = random_q(sr1, np.random.default_rng(4), 3)
    rot, pos = forward_transforms(sr1, q)
    theirs = dart.utils.SkelParser.readWorld(str(out)).getSkeleton(0)  # type: ignore[attr-defined]
    assert theirs.getNumDofs() == sr1.dof_count
    for frame in range(3):
        theirs.setPositions(q[frame])
        for k in range(len(sr1.bodies)):
            matrix = theirs.getBodyNode(k).getWorldTransform().matrix()
            assert np.abs(matrix[:3, :3] - rot[frame, k]).max() <= 1e-9
            assert np.abs(matrix[:3, 3] - pos[frame, k]).max() <= 1e-9


def test_markers_planes_pyramids_and_colors_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "extra.skel"
    path.write_text(
        "<skel><world><skeleton name='s'><body name='a'>"
        "<marker name='m1'><offset>0.1 0.2 0.3</offset></marker>"
        "<visualization_shape><geometry><pyramid><base_width>1</base_width>"
        "<base_depth>2</base_depth><height>3</height></pyramid></geometry>"
        "<color>0.1 0.2 0.3 0.5</color></visualization_shape>"
        "<collision_shape><geometry><plane><normal>0 0 1</normal><offset>0.5</offset></plane>"
        "</geometry><collidable>0</collidable></collision_shape>"
        "<inertia><mass>2</mass><offset>0 0 1</offset></inertia></body>"
        "<joint type='translational' name='t'><parent>world</parent><child>a</child>"
        "<dof local_index='2' name='up'><velocity lower='-3' upper='4'/>"
        "<force initial='7'/></dof></joint></skeleton></world></skel>")
    first = mk.read(path)
    body = first.skeletons[0].bodies[0]
    # dartpy 6.20: pyramid V = 1·2·3/3 = 2 with its unscaled identity moment, the plane
    # weighs 1 as a point mass; both at 1 m from the COM: E + 2·diag(1, 1, 0)
    np.testing.assert_allclose(body.inertia.moment, np.diag([3.0, 3.0, 1.0]), atol=1e-15)
    assert body.markers[0].name == "m1" and body.markers[0].offset.tolist() == [0.1, 0.2, 0.3]
    assert [s.kind for s in body.shapes] == ["pyramid", "plane"]
    assert body.shapes[1].collidable is False and body.shapes[0].color.tolist() == \
        [0.1, 0.2, 0.3, 0.5]
    assert body.inertia.derived and body.inertia.com.tolist() == [0, 0, 1]
    dof = body.joint.dofs[2]
    assert (dof.name, dof.velocity_lower, dof.velocity_upper, dof.force) == ("up", -3, 4, 7)
    mk.write(tmp_path / "copy.skel", first)
    second = mk.read(tmp_path / "copy.skel")
    _same_model(first, second)
    again = second.skeletons[0].bodies[0]
    assert again.markers[0].offset.tolist() == [0.1, 0.2, 0.3]
    assert again.shapes[1].params["normal"].tolist() == [0, 0, 1]
    assert again.shapes[1].params["offset"] == 0.5
    assert again.shapes[0].params["base_depth"] == 2.0
    assert not again.inertia.derived

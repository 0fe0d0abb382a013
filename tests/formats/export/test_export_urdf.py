"""URDF export: yourdfpy and dartpy's URDF loader give every body the pose motionkit's FK
gives (≤ 1e-9) at random configurations, for every corpus model and every joint type."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from export_models import CORPUS, corpus_ids, every_joint, random_q, skeletons, world_poses, write_or_refuse
from scipy.spatial.transform import Rotation

import motionkit as mk
from conftest import corpus_file, require_peer
from motionkit.formats.shared.chains import expand, link_name
from motionkit.formats.urdf import step_values
from motionkit.model.skeleton import Skeleton

yourdfpy = require_peer("yourdfpy")


def _relative(skeleton: Skeleton, poses: np.ndarray) -> tuple[str, np.ndarray]:
    """The URDF root link and every body's pose relative to it (loaders place the root)."""
    root = expand(skeleton).root
    if root == link_name(skeleton, 0):
        return root, np.linalg.inv(poses[0]) @ poses
    return root, poses


def _check_yourdfpy(skeleton: Skeleton, path: Path) -> float:
    model = yourdfpy.URDF.load(str(path), load_meshes=False, load_collision_meshes=False)
    q = random_q(skeleton)
    values = step_values(skeleton, q)
    assert set(values) == set(model.actuated_joint_names)
    model.update_cfg(values)
    root, expected = _relative(skeleton, world_poses(skeleton, q))
    return max((float(np.abs(model.get_transform(link_name(skeleton, i), root)
                              - expected[i]).max())
                for i in range(len(skeleton.bodies))), default=0.0)


def _check_dart(skeleton: Skeleton, path: Path) -> float:
    dart = require_peer("dartpy")
    model = dart.utils.DartLoader().parseSkeleton(str(path))
    q = random_q(skeleton, 1)
    for name, value in step_values(skeleton, q).items():
        model.getJoint(name).setPosition(0, value)
    root, expected = _relative(skeleton, world_poses(skeleton, q))
    base = np.eye(4)
    if root == link_name(skeleton, 0):
        base = np.linalg.inv(model.getBodyNode(root).getWorldTransform().matrix())
    return max(float(np.abs(base @ model.getBodyNode(link_name(skeleton, i))
                            .getWorldTransform().matrix() - expected[i]).max())
               for i in range(len(skeleton.bodies)))


def test_every_joint_type_matches_yourdfpy_and_dart(tmp_path: Path) -> None:
    skeleton = every_joint()
    path = tmp_path / "every.urdf"
    with pytest.warns(mk.MotionkitWarning, match="starting pose of the free root link 'root_link'"):
        mk.write(path, skeleton, lossy=True)  # the root link is at the origin: a named loss
    assert _check_yourdfpy(skeleton, path) <= 1e-9
    assert _check_dart(skeleton, path) <= 1e-9
    text = path.read_text()
    assert "inf" not in text and "capsule" not in text
    assert 'name="hinge_joint" type="revolute"' in text  # limited: revolute
    assert 'lower="-1.5" upper="2.0"' in text and 'damping="0.25"' in text
    assert 'name="shoulder_joint__rx" type="continuous"' in text  # ball: three Euler steps
    assert 'name="wrist_link__joint"' in text and 'name="wrist_link__offset"' in text
    for axis in re.findall(r'<axis xyz="([^"]*)"', text):
        assert np.linalg.norm([float(v) for v in axis.split()]) == pytest.approx(1.0, abs=1e-15)


@pytest.mark.corpus
@pytest.mark.filterwarnings("ignore::motionkit.errors.MotionkitWarning")  # lossy writes
@pytest.mark.parametrize("relative", CORPUS, ids=corpus_ids())
def test_corpus_models_match_yourdfpy_and_dart(relative: str, tmp_path: Path) -> None:
    for number, skeleton in enumerate(skeletons(relative)):
        path = tmp_path / f"model{number}.urdf"
        if not write_or_refuse(path, skeleton):
            continue
        assert _check_yourdfpy(skeleton, path) <= 1e-9
        for body in skeleton.bodies:  # DART refuses a model whose mesh files are missing
            body.shapes = [s for s in body.shapes if s.kind != "mesh"]
        mk.write(path, skeleton, lossy=True)
        assert _check_dart(skeleton, path) <= 1e-9


def test_capsules_and_screws_are_refused_by_name_unless_lossy(tmp_path: Path) -> None:
    skeleton = every_joint()
    skeleton.bodies[1].shapes.append(mk.model.skeleton.Shape("capsule", {"radius": 0.1,
                                                                        "height": 0.3}))
    skeleton.bodies[2].joint.type = "screw"
    skeleton.joint("hinge_joint").dofs[0].spring_stiffness = 3.0
    with pytest.raises(mk.ConversionError, match=r"capsules .*'hinge_link'.*") as caught:
        mk.write(tmp_path / "x.urdf", skeleton)
    assert "springs (left out) on 'hinge_joint'" in str(caught.value)
    assert re.search(r"screw joints \(.*\) on 'slider_joint'", str(caught.value))
    assert not (tmp_path / "x.urdf").exists()
    with pytest.warns(mk.MotionkitWarning, match="capsules"):
        mk.write(tmp_path / "x.urdf", skeleton, lossy=True)
    assert "<cylinder" in (tmp_path / "x.urdf").read_text()


def test_a_world_of_several_skeletons_writes_the_first_only_when_lossy(tmp_path: Path) -> None:
    world = mk.World([every_joint(1), every_joint(2)])
    world.skeletons[1].name = "other"
    with pytest.raises(mk.ConversionError, match="'other'"):
        mk.write(tmp_path / "w.urdf", world)


def test_names_from_files_are_escaped(tmp_path: Path) -> None:
    skeleton = _rooted_at_origin()
    skeleton.bodies[1].name = 'a<b>&"c'
    skeleton.name = "<robot>"
    path = tmp_path / "e.urdf"
    mk.write(path, skeleton)
    model = yourdfpy.URDF.load(str(path), load_meshes=False, load_collision_meshes=False)
    assert 'a<b>&"c' in model.link_map and model.robot.name == "<robot>"


def _mapped_error(skeleton: Skeleton, back: Skeleton, seed: int = 0) -> float:
    """Poses of the original bodies in the read-back model, driven by name from the
    neutral coordinates (relative to the first body: the URDF root floats)."""
    q = random_q(skeleton, seed)
    values = step_values(skeleton, q)
    coords = np.zeros(back.dof_count)
    for joint in back.joints:
        if joint.dof_count == 1:
            coords[joint.dof_offset] = values[joint.name]
    mine, theirs = world_poses(skeleton, q), world_poses(back, coords)
    base = np.linalg.inv(theirs[back.body_index(skeleton.bodies[0].name)])
    return max(float(np.abs(np.linalg.inv(mine[0]) @ mine[i]
                            - base @ theirs[back.body_index(b.name)]).max())
               for i, b in enumerate(skeleton.bodies))


def test_read_back_every_joint_type_with_values_mapped_by_name(tmp_path: Path) -> None:
    skeleton = _rooted_at_origin()
    path = tmp_path / "every.urdf"
    mk.write(path, skeleton)
    back = mk.read(path)
    assert isinstance(back, Skeleton)
    for seed in range(3):
        assert _mapped_error(skeleton, back, seed) <= 1e-9
    hinge = back.joint("hinge_joint")
    assert (hinge.lower[0], hinge.upper[0], hinge.dofs[0].damping) == (-1.5, 2.0, 0.25)
    assert back.joint("shoulder_joint__rx").upper[0] == np.inf  # continuous
    body = back.bodies[back.body_index("slider_link")]
    assert body.inertia.mass == 3.0
    np.testing.assert_array_equal(body.inertia.com, skeleton.bodies[2].inertia.com)
    assert back.bodies[back.body_index("shoulder_link__1")].inertia.mass == 1e-6
    assert sorted(s.kind for s in body.shapes) == ["box", "cylinder", "sphere"]


@pytest.mark.corpus
@pytest.mark.filterwarnings("ignore::motionkit.errors.MotionkitWarning")  # lossy writes
@pytest.mark.parametrize("relative", ["dartenv/walker3d_waist.skel", "choreonoid/SR1.body",
                                      "parc/character/humanoid.xml"])
def test_corpus_models_round_trip_through_urdf(relative: str, tmp_path: Path) -> None:
    for number, skeleton in enumerate(skeletons(relative)):
        path = tmp_path / f"m{number}.urdf"
        mk.write(path, skeleton, lossy=True)
        back = mk.read(path)
        assert isinstance(back, Skeleton)
        assert _mapped_error(skeleton, back) <= 1e-9
        again = tmp_path / f"again{number}.urdf"
        mk.write(again, back)  # the same links and joints (rpy to rounding only)
        pattern = r'<(link|joint) name="([^"]*)"(?: type="([^"]*)")?'
        assert (re.findall(pattern, again.read_text())
                == re.findall(pattern, path.read_text()))


@pytest.mark.parametrize(("text", "message"), [
    ('<robot name="r"><link name="a"/><link name="b"/></robot>', "2 root links"),
    ('<robot name="r"><link name="a"/><link name="b"/><joint name="j" type="revolute">'
     '<parent link="a"/><child link="b"/></joint></robot>', "needs <limit>"),
    ('<robot name="r"><link name="a"/><link name="b"/><joint name="j" type="hinge">'
     '<parent link="a"/><child link="b"/></joint></robot>', "unknown type 'hinge'"),
    ('<robot name="r"><link name="a"/><link name="b"/><joint name="j" type="fixed">'
     '<parent link="a"/><child link="c"/></joint></robot>', "no link 'c'"),
    ('<robot name="r"><link name="a"><visual><geometry><capsule radius="1" length="1"/>'
     '</geometry></visual></link></robot>', "unknown geometry <capsule>"),
    ('<robot name="r"><link name="a"/><link name="b"/><joint name="j" type="prismatic">'
     '<parent link="a"/><child link="b"/><limit lower="-inf" upper="1" effort="1" '
     'velocity="1"/></joint></robot>', "finite numbers"),
])
def test_broken_urdf_is_one_clear_error(text: str, message: str, tmp_path: Path) -> None:
    path = tmp_path / "bad.urdf"
    path.write_text(text)
    with pytest.raises(mk.FormatError, match=re.escape(message)) as caught:
        mk.read(path)
    assert "bad.urdf:1:" in str(caught.value)


@pytest.mark.corpus
@pytest.mark.parametrize("suffix", [".urdf", ".xml", ".body"])
def test_a_bvh_converts_to_its_skeleton_only_when_lossy(suffix: str, tmp_path: Path) -> None:
    source = skeletons("bvh/example.bvh")[0]
    bvh = corpus_file("bvh", "example.bvh")
    target = tmp_path / ("walk" + suffix)
    with pytest.raises(mk.ConversionError, match="track 'joint_rotations'"):
        mk.convert(bvh, target)
    with pytest.warns(mk.MotionkitWarning, match="dropped track"):
        mk.convert(bvh, target, lossy=True)
    if suffix == ".urdf":
        assert _check_yourdfpy(source, target) <= 1e-9
    else:
        back = mk.read(target)
        assert isinstance(back, Skeleton)
        assert {b.name for b in source.bodies} <= {b.name for b in back.bodies}


def test_a_floating_base_hangs_from_world_and_reads_back_free(tmp_path: Path) -> None:
    skeleton = every_joint()
    path = tmp_path / "floating.urdf"
    mk.write(path, skeleton, floating_base="world")
    text = path.read_text()
    assert '<link name="world"/>' in text and 'name="root_joint" type="floating"' in text
    q = random_q(skeleton)
    values = step_values(skeleton, q)
    expected = world_poses(skeleton, q)
    back = mk.read(path)
    assert isinstance(back, Skeleton) and back.joint("root_joint").type == "free"
    coords = np.zeros(back.dof_count)
    for joint in back.joints:
        if joint.name == "root_joint":
            coords[joint.dof_slice] = q[:6]  # the floating joint: the neutral coordinates
        elif joint.dof_count == 1:
            coords[joint.dof_offset] = values[joint.name]
    theirs = world_poses(back, coords)
    for number in range(len(skeleton.bodies)):
        index = back.body_index(link_name(skeleton, number))
        assert np.abs(theirs[index] - expected[number]).max() <= 1e-9
    dart = require_peer("dartpy")
    model = dart.utils.DartLoader().parseSkeleton(str(path))
    for name, value in values.items():
        model.getJoint(name).setPosition(0, value)
    motion = np.eye(4)  # the neutral free joint's Q(q), which DART's FreeJoint applies too
    motion[:3, :3], motion[:3, 3] = Rotation.from_rotvec(q[:3]).as_matrix(), q[3:6]
    model.getJoint("root_joint").setPositions(dart.dynamics.FreeJoint.convertToPositions(motion))
    for number in range(len(skeleton.bodies)):
        pose = model.getBodyNode(link_name(skeleton, number)).getWorldTransform().matrix()
        assert np.abs(pose - expected[number]).max() <= 1e-9


@pytest.mark.corpus
@pytest.mark.filterwarnings("ignore::motionkit.errors.MotionkitWarning")  # SR1's sensors
def test_a_free_roots_starting_pose_is_kept_on_world_or_named(tmp_path: Path) -> None:
    """SR1 stands 0.7135 m up: yourdfpy and pinocchio put its root link there with
    floating_base=world; as the root link itself it would sink, which is a named loss."""
    skeleton = mk.read(corpus_file("choreonoid", "SR1.body"))
    assert isinstance(skeleton, Skeleton)
    start = world_poses(skeleton, skeleton.initial_positions)[0]
    assert start[2, 3] == 0.7135
    with pytest.raises(mk.ConversionError, match=r"starting pose of the free root link 'WAIST' "
                                                 r"\(at 0 0 0\.7135 m;.*floating_base='?world"):
        mk.write(tmp_path / "sr1.urdf", skeleton)
    path = tmp_path / "world.urdf"
    with pytest.warns(mk.MotionkitWarning) as caught:
        mk.write(path, skeleton, floating_base="world", lossy=True)
    assert not any("starting pose" in str(w.message) for w in caught)
    model = yourdfpy.URDF.load(str(path), load_meshes=False, load_collision_meshes=False)
    np.testing.assert_allclose(model.get_transform("WAIST", "world"), start, rtol=0, atol=1e-12)
    pin = require_peer("pinocchio")
    robot = pin.buildModelFromUrdf(str(path))
    data = robot.createData()
    pin.forwardKinematics(robot, data, pin.neutral(robot))
    pin.updateFramePlacements(robot, data)
    frame = robot.getFrameId("WAIST", pin.FrameType.BODY)
    np.testing.assert_allclose(data.oMf[frame].homogeneous, start, rtol=0, atol=1e-12)


def _rooted_at_origin(seed: int = 7) -> Skeleton:
    """:func:`every_joint` with its free root's frames the identity: nothing lost in URDF."""
    skeleton = every_joint(seed)
    skeleton.bodies[0].joint.parent_to_joint = np.eye(4)
    skeleton.bodies[0].joint.child_to_joint = np.eye(4)
    return skeleton


def test_a_root_at_the_origin_loses_nothing(tmp_path: Path) -> None:
    mk.write(tmp_path / "origin.urdf", _rooted_at_origin())  # refused if anything were lost


def test_floating_base_takes_root_or_world(tmp_path: Path) -> None:
    with pytest.raises(mk.ConversionError, match="floating_base"):
        mk.write(tmp_path / "x.urdf", every_joint(), floating_base="sky")


def test_every_corpus_model_still_reads(corpus: Path) -> None:  # skips (or fails) without it
    from export_models import READABLE

    assert len(CORPUS) == READABLE, "a corpus model stopped reading (or a new one reads: update)"

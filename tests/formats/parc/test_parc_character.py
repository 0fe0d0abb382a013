"""PARC character XML -> Skeleton; DOF / qpos conversions; forward kinematics on real data."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation

import motionkit as mk
from conftest import corpus_file, require_peer
from motionkit.errors import ConversionError, FormatError
from motionkit.formats.shared.mjcf import parse as mjcf
from motionkit.formats.shared.mjcf.character import load_character
from motionkit.kinematics import character_poses
from motionkit.model import Skeleton
from motionkit.model.character import Character
from motionkit.spatial import quaternion

# body, parent, joint kind, DOF start, local position (spec table 7.5)
TABLE = [
    ("pelvis", -1, "root", 0, (0, 0, 0)),
    ("torso", 0, "spherical", 0, (0, 0, 0.236151)),
    ("head", 1, "spherical", 3, (0, 0, 0.223894)),
    ("right_upper_arm", 1, "spherical", 6, (-0.02405, -0.18311, 0.2435)),
    ("right_lower_arm", 3, "hinge", 9, (0, -0.274788, 0)),
    ("right_hand", 4, "fixed", 10, (0, -0.258947, 0)),
    ("left_upper_arm", 1, "spherical", 10, (-0.02405, 0.18311, 0.2435)),
    ("left_lower_arm", 6, "hinge", 13, (0, 0.274788, 0)),
    ("left_hand", 7, "fixed", 14, (0, 0.258947, 0)),
    ("right_thigh", 0, "spherical", 14, (0, -0.084887, 0)),
    ("right_shin", 9, "hinge", 17, (0, 0, -0.421546)),
    ("right_foot", 10, "spherical", 18, (0, 0, -0.40987)),
    ("left_thigh", 0, "spherical", 21, (0, 0.084887, 0)),
    ("left_shin", 12, "hinge", 24, (0, 0, -0.421546)),
    ("left_foot", 13, "spherical", 25, (0, 0, -0.40987)),
]


@pytest.fixture(scope="module")
def humanoid() -> Character:
    return load_character(corpus_file("parc", "character", "humanoid.xml"))


def test_body_table(humanoid: Character) -> None:
    assert humanoid.body_names == [row[0] for row in TABLE]
    assert humanoid.parents.tolist() == [row[1] for row in TABLE]
    assert humanoid.kinds == [row[2] for row in TABLE]
    assert humanoid.dof_offsets.tolist() == [row[3] for row in TABLE]
    assert np.allclose(humanoid.local_pos, [row[4] for row in TABLE])
    assert np.array_equal(humanoid.local_rot, np.tile([0, 0, 0, 1.0], (15, 1)))
    assert humanoid.dof_count == 28 and humanoid.qpos_size == 35
    assert humanoid.joint_names[1] == "abdomen" and humanoid.joint_names[4] == "right_elbow"
    assert np.allclose(humanoid.axes[4, 0], [0, 0, 1]) and np.allclose(humanoid.axes[10, 0],
                                                                        [0, 1, 0])
    assert np.allclose(np.degrees(humanoid.limits[4, 0]), [0, 160])
    assert np.allclose(np.degrees(humanoid.limits[1]), [[-60, 60], [-60, 90], [-70, 70]])


def test_read_returns_a_skeleton() -> None:
    skeleton = mk.read(corpus_file("parc", "character", "humanoid.xml"))
    assert isinstance(skeleton, Skeleton)
    assert [b.name for b in skeleton.bodies] == [row[0] for row in TABLE]
    assert [b.joint.type for b in skeleton.bodies][:6] == ["free", "ball", "ball", "ball",
                                                           "revolute", "weld"]
    assert skeleton.dof_count == 6 + 28
    elbow = skeleton.joint("right_elbow")
    assert elbow.dofs[0].upper == pytest.approx(np.radians(160))
    assert np.allclose(skeleton.bodies[11].rest_pose[:3, 3], [0, -0.084887, -0.831416])
    again = Character.from_skeleton(skeleton)
    assert again is skeleton.attrs["parc_character"]


def test_character_rebuilt_from_a_generic_skeleton(humanoid: Character) -> None:
    skeleton = humanoid.to_skeleton()
    del skeleton.attrs["parc_character"]
    rebuilt = Character.from_skeleton(skeleton)
    assert rebuilt.kinds == humanoid.kinds
    assert np.allclose(rebuilt.local_pos, humanoid.local_pos)
    q = np.random.default_rng(1).normal(size=(5, 28))
    assert np.allclose(rebuilt.dofs_to_quats(q), humanoid.dofs_to_quats(q))


def test_dofs_match_the_corpus_legacy_and_ms_pair(humanoid: Character) -> None:
    legacy = mk.read(corpus_file("parc", "legacy_v0.1", "TEASER_TERRAIN.pkl"))
    ms = mk.read(corpus_file("parc", "ms", "TEASER_TERRAIN.pkl"))
    dofs = legacy.tracks["joints"].data
    quats = ms.tracks["joint_rotations"].data
    assert np.abs(quaternion.positive_w(humanoid.dofs_to_quats(dofs)) - quats).max() < 1e-6
    assert np.abs(humanoid.quats_to_dofs(quats) - dofs).max() < 1e-5


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31), frames=st.integers(1, 6))
def test_dof_quaternion_round_trip(seed: int, frames: int) -> None:
    humanoid = load_character(corpus_file("parc", "character", "humanoid.xml"))
    rng = np.random.default_rng(seed)
    dofs = rng.uniform(-1.0, 1.0, size=(frames, 28))  # exp-map angles below pi
    quats = humanoid.dofs_to_quats(dofs)
    assert np.allclose(np.linalg.norm(quats, axis=-1), 1)
    assert np.allclose(humanoid.quats_to_dofs(quats), dofs, atol=1e-9)


def test_exp_map_wraps_and_matches_scipy() -> None:
    rng = np.random.default_rng(2)
    v = rng.normal(size=(50, 3))
    q = quaternion.from_exp_map(v)
    ref = Rotation.from_rotvec(v).as_quat()
    assert np.allclose(np.abs(np.sum(q * ref, axis=-1)), 1)
    assert np.all(q[:, 3] >= -1e-12)
    assert np.allclose(quaternion.from_exp_map(np.zeros((1, 3))), [[0, 0, 0, 1]])
    back = quaternion.to_exp_map(q)
    assert np.all(np.linalg.norm(back, axis=-1) <= np.pi + 1e-9)
    assert np.allclose(Rotation.from_rotvec(back).as_quat() * np.sign(q[:, 3:]), q, atol=1e-9)


def test_qpos_is_intrinsic_xyz_euler(humanoid: Character) -> None:
    motion = mk.read(corpus_file("parc", "ms", "sfu.pkl"))
    root = motion.tracks["root"].data.astype(np.float64)
    rot = motion.tracks["joint_rotations"].data.astype(np.float64)
    qpos = humanoid.to_qpos(root[:, :3], root[:, 3:], rot)
    assert qpos.shape == (15, 35)
    assert np.allclose(qpos[:, 3:7], root[:, [6, 3, 4, 5]])  # MuJoCo root quaternion w-first
    a, b, c = qpos[:, 7], qpos[:, 8], qpos[:, 9]  # abdomen x, y, z hinges
    rebuilt = (Rotation.from_rotvec(np.outer(a, [1, 0, 0])) * Rotation.from_rotvec(
        np.outer(b, [0, 1, 0])) * Rotation.from_rotvec(np.outer(c, [0, 0, 1])))
    assert np.allclose(np.abs(np.sum(rebuilt.as_quat() * rot[:, 0], axis=-1)), 1, atol=1e-6)
    elbow = qpos[:, 7 + 9]  # torso 3, head 3, right shoulder 3, then right elbow
    assert np.allclose(elbow, humanoid.quats_to_dofs(rot)[:, 9], atol=1e-6)
    pos, root_rot, back = humanoid.from_qpos(qpos)
    assert np.allclose(pos, root[:, :3]) and np.allclose(root_rot, root[:, 3:])
    assert np.abs(back - quaternion.positive_w(rot)).max() < 1e-6


def test_forward_kinematics_puts_feet_on_the_terrain(humanoid: Character) -> None:
    """At contact frames the ankles are ~5 cm (sole height) above the heightfield.

    Not checked on ``dec2024_…_modified_opt.pkl``: its terrain was edited after the motion
    was made (the contact feet sit a constant 25 cm above the lowered cells).
    """
    for name in ("TEASER_TERRAIN.pkl", "sfu.pkl"):
        motion = mk.read(corpus_file("parc", "ms", name))
        root = motion.tracks["root"].data
        pos, rot = character_poses(humanoid, root[:, :3], root[:, 3:],
                                               motion.tracks["joint_rotations"].data)
        assert pos.shape == (len(root), 15, 3) and rot.shape == (len(root), 15, 4)
        heights = []
        for foot in (11, 14):
            touching = motion.tracks["contacts"].data[:, foot] > 0.5
            above = pos[touching, foot, 2] - motion.terrain.height_at(pos[touching, foot],
                                                                      "nearest")
            heights.append(above)
        above = np.concatenate(heights)
        assert above.size > 5
        assert 0.02 < np.median(above) < 0.10, (name, np.median(above))
        assert above.min() > 0.0


def test_forward_kinematics_matches_generic_rotation_chain(humanoid: Character) -> None:
    rng = np.random.default_rng(3)
    dofs = rng.uniform(-1, 1, size=(2, 28))
    quats = humanoid.dofs_to_quats(dofs)
    root_rot = Rotation.random(2, random_state=4).as_quat()
    pos, rot = character_poses(humanoid, np.zeros((2, 3)), root_rot, quats)
    # left foot: pelvis -> left_thigh -> left_shin -> left_foot, by matrices
    chain = Rotation.from_quat(root_rot)
    point = np.zeros((2, 3))
    for body in (12, 13, 14):
        point = point + chain.apply(humanoid.local_pos[body])
        chain = chain * Rotation.from_quat(quats[:, body - 1])
    assert np.allclose(pos[:, 14], point)
    assert np.allclose(np.abs(np.sum(rot[:, 14] * chain.as_quat(), axis=-1)), 1)


def test_wrong_shapes_are_refused(humanoid: Character) -> None:
    with pytest.raises(ConversionError, match="28 DOFs"):
        humanoid.dofs_to_quats(np.zeros((2, 27)))
    with pytest.raises(ConversionError, match="14, 4"):
        character_poses(humanoid, np.zeros((1, 3)), np.zeros((1, 4)), np.zeros((1, 13, 4)))


def _xml(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "c.xml"
    path.write_text(f"<mujoco model='m'><default/><worldbody>{body}</worldbody></mujoco>")
    return path


def test_custom_contact_info_and_body_quat(tmp_path: Path) -> None:
    path = tmp_path / "c.xml"
    path.write_text("""<mujoco model="m"><default/><worldbody>
      <body name="a"><freejoint name="root"/>
        <body name="b" pos="1 0 0" quat="0 0 0 1"><joint name="j" axis="1 0 0" range="-10 10"/>
        </body></body></worldbody>
      <custom_contact_info><body name="b"/></custom_contact_info></mujoco>""")
    char = load_character(path)
    assert char.contact_bodies == ["b"]
    assert np.allclose(char.local_rot[1], [0, 0, 1, 0])  # w x y z = 0 0 0 1 -> x y z w
    pos, rot = character_poses(char, np.zeros((1, 3)), np.array([[0, 0, 0, 1.0]]),
                                       np.array([[[0, 0, 0, 1.0]]]))
    assert np.allclose(pos[0, 1], [1, 0, 0]) and np.allclose(np.abs(rot[0, 1, 2]), 1)


@pytest.mark.parametrize(("body", "match"), [
    ("<body name='a'><body name='b'><joint/><joint/></body></body>", "series"),
    ("<body name='a'><body name='b'><joint type='slide'/></body></body>", "slide"),
    ("<body name='a'><body name='b'><joint pos='1 0 0'/></body></body>", "pos"),
    ("<body name='a' pos='1 2'/>", "3 numbers"),
    ("<geom/>", "no <body>"),
])
def test_bad_character_files(body: str, match: str, tmp_path: Path) -> None:
    with pytest.raises(FormatError, match=match):
        load_character(_xml(tmp_path, body))


def test_xml_errors_and_entities(tmp_path: Path) -> None:
    broken = tmp_path / "b.xml"
    broken.write_text("<mujoco>\n<worldbody>\n</mujoco>")
    with pytest.raises(FormatError) as info:
        load_character(broken)
    assert info.value.line == 3
    bomb = tmp_path / "e.xml"
    bomb.write_text('<?xml version="1.0"?><!DOCTYPE m [<!ENTITY a "aaaa">]>'
                    "<mujoco><worldbody><body name='&a;'/></worldbody></mujoco>")
    with pytest.raises(FormatError, match="refused"):
        load_character(bomb)
    other = tmp_path / "robot.xml"
    other.write_text("<robot/>")
    with pytest.raises(FormatError, match="not a MuJoCo"):
        load_character(other)


def _mujoco_model(mujoco, path: Path):  # type: ignore[no-untyped-def]
    """MuJoCo refuses humanoid.xml as shipped (floor material 'grid' is undefined)."""
    text = path.read_text()
    text = text.replace(text[text.index('<geom name="floor"'):].split("/>", 1)[0] + "/>", "")
    return mujoco.MjModel.from_xml_string(text)


@pytest.mark.slow
def test_mujoco_agrees_on_tree_qpos_and_forward_kinematics(humanoid: Character) -> None:
    """Peer oracle: MuJoCo's own FK from our qpos equals PARC-convention FK."""
    mujoco = require_peer("mujoco")
    model = _mujoco_model(mujoco, corpus_file("parc", "character", "humanoid.xml"))
    data = mujoco.MjData(model)
    assert model.nq == humanoid.qpos_size
    assert [model.body(i).name for i in range(1, model.nbody)] == humanoid.body_names
    assert (model.body_parentid[1:] - 1).tolist()[1:] == humanoid.parents.tolist()[1:]
    assert np.allclose(model.body_pos[2:], humanoid.local_pos[1:])
    hinge_ranges = model.jnt_range[1:]  # joint 0 is the free joint
    ours = [humanoid.limits[b, k] for b in range(1, 15)
            for k in range({"hinge": 1, "spherical": 3}.get(humanoid.kinds[b], 0))]
    assert np.allclose(hinge_ranges, ours)
    worst_pos = worst_rot = worst_back = 0.0
    for name in ("TEASER_TERRAIN.pkl", "dec2024_teaser_717_1_modified_opt.pkl"):
        motion = mk.read(corpus_file("parc", "ms", name))
        root = motion.tracks["root"].data.astype(np.float64)
        rot = motion.tracks["joint_rotations"].data.astype(np.float64)
        qpos = humanoid.to_qpos(root[:, :3], root[:, 3:], rot)
        pos, body_rot = character_poses(humanoid, root[:, :3], root[:, 3:], rot)
        for k in range(len(qpos)):
            data.qpos[:] = qpos[k]
            mujoco.mj_kinematics(model, data)
            worst_pos = max(worst_pos, float(np.abs(data.xpos[1:] - pos[k]).max()))
            theirs = data.xquat[1:][:, [1, 2, 3, 0]]
            worst_rot = max(worst_rot, float((1 - np.abs(np.sum(theirs * body_rot[k], -1))).max()))
        _, _, back = humanoid.from_qpos(qpos)
        worst_back = max(worst_back, float(np.abs(back - quaternion.positive_w(rot)).max()))
    print(f"mujoco: body position {worst_pos:.1e} m, rotation 1-|dot| {worst_rot:.1e}, "
          f"qpos round trip {worst_back:.1e}")
    assert worst_pos < 1e-6 and worst_rot < 1e-6 and worst_back < 1e-6


def test_geoms_become_shapes() -> None:
    skeleton = mk.read(corpus_file("parc", "character", "humanoid.xml"))
    foot = skeleton.bodies[11].shapes[0]
    assert foot.kind == "box" and np.allclose(foot.params["size"], [0.177, 0.09, 0.055])
    sole = foot.transform[2, 3] - foot.params["size"][2] / 2
    assert sole == pytest.approx(-0.05)  # why ankles sit ~5 cm above the ground
    arm = skeleton.bodies[3].shapes[0]  # fromto="0 -0.03 0 0 -0.23 0"
    assert arm.kind == "capsule" and arm.params == {"radius": 0.045, "height": pytest.approx(0.2)}
    assert np.allclose(arm.transform[:3, 3], [0, -0.13, 0])
    assert np.allclose(arm.transform[:3, 2], [0, -1, 0])  # capsule axis along the segment
    assert [s.kind for s in skeleton.bodies[0].shapes] == ["sphere", "sphere"]
    assert skeleton.bodies[0].shapes[0].attrs == {"name": "pelvis", "density": "2226"}


def test_generic_kinematics_on_the_skeleton_matches_parc_fk(humanoid: Character) -> None:
    """The Skeleton's DART layout (free: rotvec + position; ball: exp-map) gives PARC's FK."""
    skeleton = mk.read(corpus_file("parc", "character", "humanoid.xml"))
    motion = mk.read(corpus_file("parc", "ms", "TEASER_TERRAIN.pkl"))
    root = motion.tracks["root"].data.astype(np.float64)
    rot = motion.tracks["joint_rotations"].data.astype(np.float64)
    q = np.concatenate([Rotation.from_quat(root[:, 3:]).as_rotvec(), root[:, :3],
                        humanoid.quats_to_dofs(rot)], axis=1)
    poses = mk.kinematics.forward(skeleton, q)
    pos, body_rot = character_poses(humanoid, root[:, :3], root[:, 3:], rot)
    assert np.abs(poses[..., :3] - pos).max() < 1e-9
    assert np.abs(np.abs(np.sum(poses[..., 3:] * body_rot, axis=-1)) - 1).max() < 1e-9


# ------------------------------------------------- security review (findings 9 and 10)

_BODY = "<mujoco model='m'><worldbody><body name='root'>{}</body></worldbody></mujoco>"


@pytest.mark.parametrize(("inner", "match", "line"), [
    ("\n<geom type='sphere' size='abc'/>", "not numbers", 2),
    ("\n<geom type='sphere' size=' '/>", "needs 1 to 3 numbers, got 0", 2),
    ("\n\n<geom type='box' size='1 1 1' quat='0 0 0 0'/>", "zero quaternion", 3),
    ("\n<body name='b' quat='0 0 0 0'><joint axis='1 0 0'/></body>", "zero quaternion", 2),
    ("\n<body name='b'><joint axis='0 0 0'/></body>", "zero joint axis", 2),
    ("\n<geom type='capsule' size='0.1' fromto='0 0 0 nan 0 1'/>", "finite", 2),
    ("\n<body name='b' pos='1 2'/>", "needs 3 numbers", 2),
])
def test_bad_attributes_are_format_errors_with_a_line(inner: str, match: str, line: int,
                                                      tmp_path: Path) -> None:
    path = tmp_path / "bad.xml"
    path.write_text(_BODY.format(inner))
    with pytest.raises(FormatError, match=match) as info:
        load_character(path)
    assert info.value.line == line and info.value.column is not None


def _chain(depth: int) -> str:
    return _BODY.format("<body><joint axis='1 0 0'/>" * depth + "</body>" * depth)


def test_body_count_and_depth_are_capped(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "deep.xml"
    path.write_text(_chain(mjcf.MAX_BODY_DEPTH + 5))
    with pytest.raises(FormatError, match="nest deeper"):
        load_character(path)
    monkeypatch.setattr(mjcf, "MAX_BODIES", 50)
    path.write_text(_BODY.format("<body><joint axis='1 0 0'/></body>" * 60))
    with pytest.raises(FormatError, match="more than 50 bodies"):
        load_character(path)


def test_deep_and_wide_characters_list_quickly(tmp_path: Path) -> None:
    """10: the tree listing walks with its own stack and finds children once."""
    path = tmp_path / "deep.xml"
    path.write_text(_chain(mjcf.MAX_BODY_DEPTH))
    deep = mk.read(path)
    lines = deep.summary_text().splitlines()
    assert len(lines) == 2 + mjcf.MAX_BODY_DEPTH + 1 and "body1000" in lines[-1]
    path.write_text(_BODY.format("<body><joint axis='1 0 0'/></body>" * 9000))
    wide = mk.read(path)
    assert len(wide.summary_text().splitlines()) == 2 + 9001

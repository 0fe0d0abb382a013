"""General MJCF reading (``format="mjcf"``) against MuJoCo itself: for files motionkit writes
from every corpus model, the corpus MJCFs and small synthetic files, motionkit's FK of every
body at random configurations equals ``mj_kinematics`` (≤ 1e-9) through ``q_to_qpos``;
masses and limits equal MuJoCo's compiled ``body_mass`` and ``jnt_range``."""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np
import pytest
from export_models import (
    CORPUS,
    corpus_ids,
    every_joint,
    random_q,
    skeletons,
    two_skeleton_world,
    write_or_refuse,
)
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from test_export_mjcf import _qpos

import motionkit as mk
from conftest import corpus_file, require_peer
from motionkit.formats.mujoco import mjcf
from motionkit.kinematics import forward, poses_to_matrices
from motionkit.model.skeleton import Skeleton

mujoco = require_peer("mujoco")


def _skeletons(obj: object) -> list[Skeleton]:
    if isinstance(obj, mk.World):
        return list(obj.skeletons)
    assert isinstance(obj, Skeleton)
    return [obj]


def _model(path: Path) -> object:
    """MuJoCo's model of ``path``; corpus files lose what MuJoCo cannot load here (PARC's
    undefined floor material, mesh files the corpus does not ship)."""
    text = path.read_text()
    if '<geom name="floor"' in text and 'material="grid"' in text:  # PARC's humanoid.xml
        text = text.replace(text[text.index('<geom name="floor"'):].split("/>", 1)[0] + "/>", "")
    text = re.sub(r"<mesh [^>]*/>", "", re.sub(r"<geom [^>]*type=\"mesh\"[^>]*/>", "", text))
    return mujoco.MjModel.from_xml_string(text)


def _oracle(path: Path, seeds: int = 2) -> tuple[list[Skeleton], object]:
    """Read ``path`` as general MJCF and check FK, masses and limits against MuJoCo."""
    read = _skeletons(mk.read(path, format="mjcf"))
    model = _model(path)
    data = mujoco.MjData(model)
    for seed in range(seeds):
        qpos = np.array(model.qpos0)  # type: ignore[attr-defined]
        qs = [random_q(s, seed + 10 * n) for n, s in enumerate(read)]
        for skeleton, q in zip(read, qs, strict=True):
            qpos = mjcf.q_to_qpos(skeleton, q, qpos)
            assert np.allclose(mjcf.qpos_to_q(skeleton, qpos), q, rtol=0, atol=1e-12)
        data.qpos[:] = qpos
        mujoco.mj_kinematics(model, data)
        index = 0  # neutral bodies but the chain's come in MuJoCo's body order
        for skeleton, q in zip(read, qs, strict=True):
            poses = poses_to_matrices(forward(skeleton, q))
            for number, body in enumerate(skeleton.bodies):
                if body.attrs.get("mujoco_chain"):
                    continue
                index += 1
                name = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_BODY, index)
                assert name in (body.name, None), (name, body.name)
                assert np.abs(data.xpos[index] - poses[number, :3, 3]).max() <= 1e-9
                assert np.abs(data.xmat[index].reshape(3, 3) - poses[number, :3, :3]).max() \
                    <= 1e-9, body.name
    counter = 0  # neutral joints come in MuJoCo's joint order
    balanced = 'balanceinertia="true"' in path.read_text()
    index = 0
    for skeleton in read:
        for body in skeleton.bodies:
            if body.attrs.get("mujoco_chain"):
                continue
            index += 1
            if "inertia" in body.attrs:  # mesh geoms not counted
                continue
            assert body.inertia.mass == pytest.approx(model.body_mass[index], rel=1e-12,
                                                      abs=1e-12), body.name
            values = np.sort(np.linalg.eigvalsh(body.inertia.moment))
            if body.inertia.mass > 0 and not balanced and \
                    values[0] + values[1] > values[2] * (1 + 1e-9):  # else MuJoCo mends them
                turn = np.zeros(9)
                mujoco.mju_quat2Mat(turn, model.body_iquat[index])
                turn = turn.reshape(3, 3)
                moment = turn @ np.diag(model.body_inertia[index]) @ turn.T
                assert np.allclose(body.inertia.moment, moment, rtol=1e-9, atol=1e-12), body.name
                assert np.allclose(body.inertia.com, model.body_ipos[index], atol=1e-12)
        for joint in skeleton.joints:
            record = joint.attrs.get("mujoco")
            if not record:
                continue
            for k, (name, kind, ref) in enumerate(zip(record["joints"], record["kinds"],
                                                      record["ref"], strict=True)):
                jindex = counter
                counter += 1
                if name:
                    assert jindex == mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, name)
                limited = bool(model.jnt_limited[jindex])
                if kind in ("hinge", "slide"):
                    dof = joint.dofs[k]
                    assert np.isfinite(dof.lower) == limited
                    if limited:
                        assert dof.lower + ref == pytest.approx(model.jnt_range[jindex][0])
                        assert dof.upper + ref == pytest.approx(model.jnt_range[jindex][1])
                    assert model.qpos0[model.jnt_qposadr[jindex]] == pytest.approx(ref)
                elif kind == "ball" and limited:
                    assert joint.attrs["cone_limit"] == pytest.approx(model.jnt_range[jindex][1])
    return read, model


# ------------------------------------------------------------------ (a) written by motionkit

@pytest.mark.corpus
@pytest.mark.filterwarnings("ignore::motionkit.errors.MotionkitWarning")  # lossy writes
@pytest.mark.parametrize("relative", CORPUS, ids=corpus_ids())
def test_written_corpus_models_read_back_like_mujoco(relative: str, tmp_path: Path) -> None:
    for number, skeleton in enumerate(skeletons(relative)[:2]):
        path = tmp_path / f"model{number}.xml"
        if not write_or_refuse(path, skeleton):
            continue
        read, model = _oracle(path, seeds=1)
        # round trip: the original's FK at q equals the read model's at the same qpos
        back = read[0]
        q = random_q(skeleton, 3)
        poses = poses_to_matrices(forward(skeleton, q))
        qpos = _qpos(model, skeleton, q, poses)
        mine = poses_to_matrices(forward(back, mjcf.qpos_to_q(back, qpos)))
        kept = [i for i, b in enumerate(back.bodies) if not b.attrs.get("mujoco_chain")]
        assert len(kept) == len(skeleton.bodies)
        names = [back.bodies[i].name for i in kept]
        for index, body in enumerate(skeleton.bodies):  # by name; by order where unnamed
            other = back.body_index(body.name) if body.name in names else kept[index]
            assert np.abs(mine[other] - poses[index]).max() <= 1e-9, body.name


def test_every_joint_type_round_trips(tmp_path: Path) -> None:
    skeleton = every_joint()
    path = tmp_path / "every.xml"
    mk.write(path, skeleton)
    read, _ = _oracle(path, seeds=3)
    back = read[0]
    types = {b.name: b.joint.type for b in back.bodies}
    assert types["hinge_link"] == "revolute" and types["slider_link"] == "prismatic"
    assert types["cardan_link"] == "universal" and types["shoulder_link"] == "ball"
    assert types["wrist_link"] == "euler" and back.joint("wrist_joint").axis_order == "zxy"
    assert types["root_link"] == "free" and types["tip_link"] == "weld"
    hinge = back.joint("hinge_joint")
    assert (hinge.dofs[0].lower, hinge.dofs[0].upper, hinge.dofs[0].damping) == (-1.5, 2.0, 0.25)
    # a second write of what was read gives the same file
    again = tmp_path / "again.xml"
    mk.write(again, back)
    assert again.read_text().replace("again", "every") == path.read_text() or \
        _oracle(again, seeds=1)


def test_a_world_reads_back_as_a_world(tmp_path: Path) -> None:
    world = two_skeleton_world()
    path = tmp_path / "w.xml"
    mk.write(path, world)
    read, _ = _oracle(path)
    assert [s.name for s in read] == ["root_link", "root_link_2"]


# ------------------------------------------------------------------ (b) the corpus MJCFs

@pytest.mark.corpus
@pytest.mark.parametrize("parts", [("mimickit", "go2.xml"),
                                   ("parc", "character", "humanoid.xml")])
def test_corpus_mjcf_files_read_like_mujoco(parts: tuple[str, ...]) -> None:
    path = corpus_file(*parts)
    read, model = _oracle(path)
    assert sum(len(s.bodies) for s in read) == model.nbody - 1  # type: ignore[attr-defined]


# ------------------------------------------------------------------ (c) synthetic files

SYNTHETIC = {
    "slide_ball_free_ref": """
<mujoco model="t"><compiler angle="degree"/>
  <worldbody>
    <body name="base" pos="0 0 1" euler="0 0 90"><freejoint name="root"/>
      <inertial pos="0.1 0 0" mass="2" diaginertia="1 2 3" euler="10 0 0"/>
      <body name="a" pos="0.1 0 0"><joint name="s" type="slide" axis="1 1 0" range="-1 1" ref="0.2"/>
        <inertial pos="0 0 0" mass="1" fullinertia="2 3 4 0.1 0.2 0.3"/>
        <body name="b" pos="0 0.2 0" euler="10 20 30">
          <joint name="h1" axis="1 0 0" pos="0.1 0 0" range="-90 90"/>
          <joint name="h2" axis="0 1 0" pos="0.1 0 0" ref="30" range="-45 60"/>
          <inertial pos="0 0 0" mass="1" diaginertia="1 1 1"/>
          <body name="c" xyaxes="0 1 0 -1 0 0"><joint name="bl" type="ball" pos="0 0 0.3" range="0 60"/>
            <geom type="box" size="0.1 0.2 0.3" mass="1"/>
            <geom type="cylinder" size="0.05 0.2" pos="0.1 0 0" euler="0 90 0" density="500"/>
            <geom type="ellipsoid" size="0.1 0.2 0.05" group="2" pos="0 0.3 0"/>
            <geom type="capsule" size="0.04" fromto="0 0 0 0.2 0.1 0.3"/>
            <geom type="sphere" size="0.3" group="7"/></body>
          <body name="d" zaxis="1 1 0"><joint name="x1" axis="0 0 -1"/>
            <joint name="x2" type="slide" axis="0 1 0" ref="0.3"/>
            <geom size="0.1" mass="1"/><site name="tip" pos="0 0 1"/></body>
        </body>
      </body>
    </body>
    <body name="crate" pos="2 0 0"><geom type="box" size="1 1 1"/></body>
  </worldbody>
</mujoco>""",
    "euler_frames_classes": """
<mujoco model="e"><compiler angle="radian" eulerseq="zyx"/>
  <default><joint damping="0.5"/><default class="arm"><joint axis="0 1 0" range="-1 1"/></default></default>
  <worldbody>
    <body name="root"><joint type="slide" axis="1 0 0"/><joint type="slide" axis="0 1 0"/>
      <joint type="slide" axis="0 0 1"/>
      <inertial pos="0 0 0" mass="1" diaginertia="1 1 1"/>
      <frame pos="0 0 1" euler="0 0 1.5">
        <body name="e" axisangle="1 1 0 0.4" childclass="arm">
          <joint name="e_z" axis="0 0 1" pos="0.2 0 0"/><joint name="e_x" axis="1 0 0" pos="0.2 0 0"/>
          <joint name="e_y" pos="0.2 0 0"/>
          <inertial pos="0 0 0" mass="1" diaginertia="1 1 1"/>
          <body name="p" euler="0.1 0.2 0.3">
            <joint name="p1" type="slide" axis="0 0 1" class="main"/>
              <joint name="p2" type="slide" axis="1 0 0" class="main"/>
            <joint name="p3" axis="0 1 0" pos="0.1 0.2 0.3" ref="0.5"/>
            <inertial pos="0 0 0" mass="1" diaginertia="1 1 1"/>
            <body name="off" pos="0 0 0.4"><joint name="o" axis="1 2 3" pos="0.3 -0.2 0.1" ref="-0.7"/>
              <inertial pos="0 0 0" mass="1" diaginertia="1 1 1"/></body>
            <body name="flip"><joint name="f1" axis="0 0 -1"/><joint name="f2" axis="1 0 0"/>
              <joint name="f3" axis="0 1 0"/>
              <inertial pos="0 0 0" mass="1" diaginertia="1 1 1"/></body>
            <body name="skew"><joint name="s1" axis="1 0 0"/><joint name="s2" axis="1 1 0"/>
              <joint name="s3" axis="0 0 1"/>
              <inertial pos="0 0 0" mass="1" diaginertia="1 1 1"/></body>
          </body>
        </body>
      </frame>
    </body>
  </worldbody>
</mujoco>""",
}


@pytest.mark.parametrize("name", sorted(SYNTHETIC))
def test_synthetic_files_read_like_mujoco(name: str, tmp_path: Path) -> None:
    path = tmp_path / f"{name}.xml"
    path.write_text(SYNTHETIC[name])
    read, _ = _oracle(path, seeds=3)
    types = {b.name: b.joint.type for s in read for b in s.bodies}
    if name == "slide_ball_free_ref":
        assert types == {"base": "free", "a": "prismatic", "b": "universal", "c": "ball",
                         "d__x1": "revolute", "d": "prismatic", "crate": "weld"}
        assert read[0].bodies[-1].markers[0].name == "tip"
    else:
        assert types["root"] == "translational" and types["e"] == "euler"
        assert read[0].joint("e").axis_order == "zxy"
        assert types["p"] == "planar" and types["off"] == "revolute"
        assert types["flip"] == "euler"  # any orthonormal triple, the frame turned onto it
        assert types["skew"] == types["skew__s1"] == types["skew__s2"] == "revolute"
        assert read[0].joint("e").dofs[0].damping == 0.5


def test_dispatch_parc_first_then_general(tmp_path: Path) -> None:
    path = tmp_path / "s.xml"
    path.write_text(SYNTHETIC["slide_ball_free_ref"])
    assert mk.formats.registry.for_reading(path).name == "mjcf"
    assert isinstance(mk.read(path), mk.World)
    with pytest.raises(mk.FormatError, match="not supported by PARC") as caught:
        mk.read(path, format="parc-character")
    assert caught.value.line is not None
    include = tmp_path / "i.xml"
    include.write_text("<mujoco>\n<include file='x.xml'/><worldbody><body/></worldbody></mujoco>")
    with pytest.raises(mk.FormatError, match=r"include file='x\.xml'.*no such file") as caught:
        mk.read(include, format="mjcf")
    assert caught.value.line == 2


@pytest.mark.parametrize(("body", "expected"), [
    ("<body name='a'><freejoint/><geom size='0.1'/></body>"
     "<body name='b'><freejoint/><geom size='0.1'/></body>", mk.World),  # a scene
    ("<body name='base'><geom size='0.1'/><body name='arm'><joint axis='0 0 1'/>"
     "<geom size='0.1'/></body></body>", Skeleton)])  # a fixed base
def test_what_a_character_reading_would_shorten_goes_to_the_general_reader(
        body: str, expected: type, tmp_path: Path) -> None:
    # both fit the PARC subset, which would drop the second body or free the fixed base
    path = tmp_path / "m.xml"
    path.write_text(f"<mujoco><worldbody>{body}</worldbody></mujoco>")
    assert mk.formats.registry.for_reading(path).name == "mjcf"
    model = mk.read(path)
    assert isinstance(model, expected)
    root = (model.skeletons[0] if isinstance(model, mk.World) else model).bodies[0]
    assert root.joint.type == ("free" if expected is mk.World else "weld")


def test_a_joint_ref_or_hinges_off_the_axes_go_to_the_general_reader(tmp_path: Path) -> None:
    with_ref = ("<body name='base'><freejoint/><geom size='0.1'/><body name='thigh'>"
                "<joint name='hip' axis='0 1 0' ref='30' range='-45 60'/><geom size='0.1'/>"
                "</body></body>")
    tilted = ("<body name='base'><freejoint/><geom size='0.1'/><body name='ball'>"
              "<joint axis='1 0 0'/><joint axis='1 1 0'/><joint axis='0 0 1'/>"
              "<geom size='0.1'/></body></body>")
    for number, body in enumerate((with_ref, tilted)):
        path = tmp_path / f"m{number}.xml"
        path.write_text(f"<mujoco><worldbody>{body}</worldbody></mujoco>")
        assert mk.formats.registry.for_reading(path).name == "mjcf"
    hip = mk.read(tmp_path / "m0.xml").bodies[1].joint.dofs[0]
    # the neutral value is qpos − ref, so MuJoCo's range moves by ref
    assert np.degrees([hip.lower, hip.upper]) == pytest.approx([-75, 30])


@pytest.mark.corpus
def test_parc_characters_carry_what_mujoco_gives_their_bodies() -> None:
    path = corpus_file("parc", "character", "humanoid.xml")
    parc = mk.read(path)
    general = mk.read(path, format="mjcf")
    assert isinstance(parc, Skeleton) and isinstance(general, Skeleton)
    masses = {body.name: body.inertia.mass for body in general.bodies}
    assert {body.name: body.inertia.mass for body in parc.bodies} == masses
    assert sum(masses.values()) > 30  # from the geoms, as MuJoCo infers them


@pytest.mark.corpus
def test_parc_characters_still_read_as_parc() -> None:
    path = corpus_file("parc", "character", "humanoid.xml")
    assert mk.formats.registry.for_reading(path).name == "parc-character"


_AXES = st.sampled_from(["1 0 0", "0 1 0", "0 0 1", "0 0 -1", "1 2 3", "-1 0.5 0"])
_JOINT = st.tuples(st.sampled_from(["hinge", "slide", "ball"]), _AXES,
                   st.sampled_from(["0 0 0", "0.1 -0.2 0.3"]),
                   st.sampled_from(["", ' ref="0.4"']))


@settings(max_examples=25, deadline=None)
@given(st.lists(st.lists(_JOINT, min_size=0, max_size=3), min_size=1, max_size=4),
       st.sampled_from(["", ' euler="10 20 30"', ' quat="1 1 0 0"']))
def test_any_joint_stack_reads_like_mujoco(tmp_path_factory: pytest.TempPathFactory,
                                           stacks: list[list[tuple[str, str, str, str]]],
                                           turn: str) -> None:
    text = "<mujoco><worldbody>"
    for number, stack in enumerate(stacks):
        text += f'<body name="b{number}" pos="0 0.1 0.2"{turn}>'
        kinds = [kind for kind, *_ in stack if kind != "slide"]
        assume("ball" not in kinds[:-1])  # MuJoCo: "ball followed by rotation"
        for kind, axis, pos, ref in stack:
            if kind == "ball" and ref:
                ref = ""
            text += f'<joint type="{kind}" axis="{axis}" pos="{pos}"{ref}/>'
        text += '<inertial pos="0 0 0" mass="1" diaginertia="1 1 1"/>'
    text += "</body>" * len(stacks) + "</worldbody></mujoco>"
    path = tmp_path_factory.mktemp("h") / "h.xml"
    path.write_text(text)
    _oracle(path, seeds=1)


# ------------------------------------------------------------------ CLI

def test_cli_info_and_convert_through_the_general_reader(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from motionkit.cli import cli

    path = tmp_path / "robot.xml"
    path.write_text(SYNTHETIC["euler_frames_classes"])
    shown = CliRunner().invoke(cli, ["info", str(path)])
    assert shown.exit_code == 0, shown.output
    assert "(mjcf)" in shown.output and "planar joint" in shown.output
    assert "skew__s1" in shown.output and "intermediate bodies" in shown.output
    named = CliRunner().invoke(cli, ["info", "--from", "mjcf", "--json", str(path)])
    assert named.exit_code == 0 and '"format": "mjcf"' in named.output
    urdf = tmp_path / "robot.urdf"
    made = CliRunner().invoke(cli, ["convert", "--lossy", str(path), str(urdf)])
    assert made.exit_code == 0, made.output
    back = mk.read(urdf)
    assert isinstance(back, Skeleton)
    source = mk.read(path)
    assert isinstance(source, Skeleton)
    q = random_q(source, 5)
    mine = poses_to_matrices(forward(source, q))
    # the URDF has a free root and one joint per coordinate, in the same order
    theirs = poses_to_matrices(forward(back, q))
    for index, body in enumerate(source.bodies):
        other = back.body_index(body.name)
        assert np.abs(mine[index] - theirs[other]).max() <= 1e-9, body.name


@pytest.mark.parametrize(("inner", "match"), [
    ("<body name='a'><body name='b'>\n<freejoint/></body></body>", "top-level body"),
    ("<body name='a'>\n<joint type='screw'/></body>", "hinge, slide, ball or free"),
    ("<body name='a'>\n<inertial mass='1'/></body>", "diaginertia or fullinertia"),
    ("<body name='a'>\n<geom size='0.1' mass='x'/></body>", "not numbers"),
    ("<body name='a'>\n<joint ref='1 2'/></body>", "ref"),
])
def test_general_reader_errors_name_the_line(inner: str, match: str, tmp_path: Path) -> None:
    path = tmp_path / "bad.xml"
    path.write_text(f"<mujoco><worldbody>{inner}</worldbody></mujoco>")
    with pytest.raises(mk.FormatError, match=match) as caught:
        mk.read(path, format="mjcf")
    assert caught.value.line == 2 and caught.value.column is not None


def test_what_the_reader_does_not_apply_is_said(tmp_path: Path) -> None:
    path = tmp_path / "m.xml"
    path.write_text("<mujoco><compiler settotalmass='10' boundmass='0.5'/><worldbody>"
                    "<body><freejoint/><geom size='0.1' shellinertia='true'/></body>"
                    "</worldbody></mujoco>")
    with pytest.warns(mk.MotionkitWarning, match="without MuJoCo's boundmass, settotalmass, "
                                                 "geom shellinertia"):
        mk.read(path, format="mjcf")


@pytest.mark.parametrize(("defaults", "geom", "match"), [
    ("", "<geom size='1_0'/>", "not numbers"),
    ("<default>" * 120 + "</default>" * 120, "<geom size='1'/>", "nest deeper than 100"),
])
def test_numbers_and_default_classes_are_checked(defaults: str, geom: str, match: str,
                                                 tmp_path: Path) -> None:
    path = tmp_path / "m.xml"
    path.write_text(f"<mujoco>{defaults}<worldbody><body><freejoint/>{geom}"
                    "</body></worldbody></mujoco>")
    with pytest.raises(mk.FormatError, match=match) as caught:
        mk.read(path, format="mjcf")
    assert caught.value.line is not None


_ROBOT = """<mujoco>
  <include file="parts/defaults.xml"/>
  <worldbody>
    <body name="base" pos="0 0 1"><freejoint/><geom size="0.1"/>
      <body name="arm" pos="0.2 0 0"><joint class="arm" name="shoulder"/><geom size="{size}"/>
      </body>
    </body>
  </worldbody>
</mujoco>
"""
_DEFAULTS = """<mujoco>
  <default><default class="arm"><joint axis="0 1 0" range="-30 60"/></default></default>
</mujoco>
"""


def _split_model(folder: Path, size: str = "0.05") -> Path:
    (folder / "parts").mkdir()
    (folder / "parts" / "robot.xml").write_text(_ROBOT.format(size=size))
    (folder / "parts" / "defaults.xml").write_text(_DEFAULTS)
    scene = folder / "scene.xml"
    scene.write_text('<mujoco model="scene">\n  <include file="parts/robot.xml"/>\n</mujoco>\n')
    return scene


def test_included_files_are_read_as_mujoco_reads_them(tmp_path: Path) -> None:
    # nested includes, paths from the main file's folder, as MuJoCo itself resolves them
    scene = _split_model(tmp_path)
    model = mujoco.MjModel.from_xml_path(str(scene))
    skeleton = mk.read(scene, format="mjcf")
    assert isinstance(skeleton, Skeleton)
    assert [body.name for body in skeleton.bodies] == ["base", "arm"]
    shoulder = skeleton.bodies[1].joint
    np.testing.assert_allclose([shoulder.dofs[0].lower, shoulder.dofs[0].upper],
                               model.jnt_range[1], atol=1e-12)  # type: ignore[attr-defined]
    data = mujoco.MjData(model)
    q = random_q(skeleton, 3)
    data.qpos[:] = mjcf.q_to_qpos(skeleton, q)
    mujoco.mj_kinematics(model, data)
    ours = poses_to_matrices(forward(skeleton, q))
    np.testing.assert_allclose(ours[:, :3, 3], data.xpos[1:], atol=1e-9)


def test_an_error_in_an_included_file_names_that_file(tmp_path: Path) -> None:
    scene = _split_model(tmp_path, size="x")
    with pytest.raises(mk.FormatError, match="not numbers") as caught:
        mk.read(scene, format="mjcf")
    assert caught.value.path is not None and str(caught.value.path).endswith("robot.xml")
    assert caught.value.line == 5


@pytest.mark.parametrize(("include", "match"), [
    ("<include file='../outside.xml'/>", "outside the model's folder"),
    ("<include file='/etc/hostname'/>", "outside the model's folder"),
    ("<include file='a.xml'/><include file='a.xml'/>", "included twice"),
    ("<include/>", "needs a file"),
    ("<include file='pipe'/>", "no such file"),  # a FIFO is never opened (it would block)
    ("<include file='a.xml'><body/></include>", "cannot have children"),
])
def test_includes_stay_in_the_model_folder_and_come_once(include: str, match: str,
                                                        tmp_path: Path) -> None:
    folder = tmp_path / "model"
    folder.mkdir()
    (tmp_path / "outside.xml").write_text("<mujoco/>")
    (folder / "a.xml").write_text("<mujoco/>")
    os.mkfifo(folder / "pipe")
    path = folder / "m.xml"
    path.write_text(f"<mujoco>\n{include}<worldbody><body><freejoint/><geom size='1'/></body>"
                    "</worldbody></mujoco>")
    with pytest.raises(mk.FormatError, match=match) as caught:
        mk.read(path, format="mjcf")
    assert caught.value.line == 2


def test_a_nested_include_is_also_looked_up_beside_its_includer(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.xml").write_text("<mujoco><include file='b.xml'/></mujoco>")
    (tmp_path / "sub" / "b.xml").write_text(  # any root element, as MuJoCo takes it
        "<stuff><worldbody><body name='x'><freejoint/><geom size='1'/></body></worldbody>"
        "</stuff>")
    path = tmp_path / "m.xml"
    path.write_text("<mujoco><include file='sub/a.xml'/></mujoco>")
    mujoco.MjModel.from_xml_path(str(path))  # MuJoCo loads it
    assert [body.name for body in _skeletons(mk.read(path, format="mjcf"))[0].bodies] == ["x"]


def test_repeated_body_names_keep_their_own_masses(tmp_path: Path) -> None:
    path = tmp_path / "m.xml"
    path.write_text("<mujoco><worldbody><body name='a'><freejoint/><geom size='.1'/>"
                    "<body name='b'><geom size='.3'/></body><body name='b'><geom size='.5'/>"
                    "</body></body></worldbody></mujoco>")
    skeleton = mk.read(path, format="parc-character")
    assert isinstance(skeleton, Skeleton)
    masses = [body.inertia.mass for body in skeleton.bodies]
    np.testing.assert_allclose(masses, [1000 * 4 / 3 * np.pi * r**3 for r in (.1, .3, .5)])


@pytest.mark.parametrize(("inner", "match"), [
    ("<inertial pos='0 0 0' mass='1' diaginertia='-1 1 1'/>", "moments of inertia"),
    ("<inertial pos='0 0 0' mass='1' diaginertia='1 1 1'/>"
     "<inertial pos='0 0 0' mass='2' diaginertia='1 1 1'/>", "one <inertial>"),
    ("<geom size='0.1' mass='-3'/>", "must be ≥ 0"),
    ("<geom size='0.1' density='-3'/>", "must be ≥ 0"),
    ("<geom type='box' size='1 -1 1'/>", "sizes must be ≥ 0"),
    ("<geom type='plane' size='1 1 1'/>", "does not move"),
    ("<body><joint type='ball'/><joint type='hinge'/><geom size='.1'/></body>",
     "ball joint is followed by a rotation"),
])
def test_what_mujoco_refuses_is_refused(inner: str, match: str, tmp_path: Path) -> None:
    path = tmp_path / "m.xml"
    path.write_text(f"<mujoco><worldbody><body><freejoint/>\n{inner}</body></worldbody></mujoco>")
    with pytest.raises(ValueError):
        mujoco.MjModel.from_xml_path(str(path))
    with pytest.raises(mk.FormatError, match=match) as caught:
        mk.read(path, format="mjcf")
    assert caught.value.line == 2


def test_geoms_of_the_world_body_are_said_to_be_left_out(tmp_path: Path) -> None:
    path = tmp_path / "m.xml"
    path.write_text("<mujoco><worldbody><geom name='floor' type='plane' size='5 5 .1'/>"
                    "<body><freejoint/><geom size='.1'/></body></worldbody></mujoco>")
    with pytest.warns(mk.MotionkitWarning, match=r"geoms of <worldbody> itself \('floor'\)"):
        mk.read(path)

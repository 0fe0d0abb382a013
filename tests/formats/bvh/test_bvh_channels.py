"""Blender's channel rule on what the BVH writer writes (issue 25): every joint has 0 or 3
rotation channels, one about each axis (Blender's importer looks the axis sequence up
among the six orders and stops on any other), and the offsets are short text.

The rule runs everywhere; ``test_bvh_blender.py`` has Blender itself read the files."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import motionkit as mk
from conftest import corpus_file
from motionkit.model import Body, Joint, Skeleton

pytestmark = pytest.mark.filterwarnings("ignore:Importing PyGLM:PendingDeprecationWarning")

_JOINT = re.compile(r"^\s*(?:ROOT|JOINT)\s+(\S+)\s*$")
_CHANNELS = re.compile(r"^\s*CHANNELS\s+(\d+)((?:\s+\S+)*)\s*$")


def rotation_channels(text: str) -> dict[str, str]:
    """Each joint's rotation channel axes in file order (``"zxy"``), from a BVH text."""
    out: dict[str, str] = {}
    name = ""
    for line in text.split("MOTION")[0].splitlines():
        if match := _JOINT.match(line):
            name = match.group(1)
        elif match := _CHANNELS.match(line):
            names = match.group(2).split()
            assert int(match.group(1)) == len(names), line
            out[name] = "".join(c[0].lower() for c in names if c.lower().endswith("rotation"))
    return out


def assert_blender_rule(text: str) -> None:
    """Every joint: no rotation channel, or one about each of x, y and z."""
    channels = rotation_channels(text)
    assert channels
    bad = {name: axes for name, axes in channels.items() if sorted(axes) not in ([], list("xyz"))}
    assert not bad, f"joints Blender refuses: {bad}"


def test_the_rule_sees_a_one_channel_hinge() -> None:
    text = ("HIERARCHY\nROOT a\n{\n OFFSET 0 0 0\n CHANNELS 6 Xposition Yposition Zposition "
            "Zrotation Xrotation Yrotation\n JOINT b\n {\n  OFFSET 0 1 0\n  CHANNELS 1 Zrotation\n"
            "  End Site\n  {\n   OFFSET 0 1 0\n  }\n }\n}\nMOTION\n")
    assert rotation_channels(text) == {"a": "zxy", "b": "z"}
    with pytest.raises(AssertionError, match="joints Blender refuses"):
        assert_blender_rule(text)


@pytest.mark.corpus
def test_a_robot_and_a_character_follow_the_rule(tmp_path: Path) -> None:
    mk.convert(corpus_file("choreonoid", "SR1WalkPattern1.seq"), tmp_path / "sr1.bvh",
               model=corpus_file("choreonoid", "SR1.body"))
    assert_blender_rule((tmp_path / "sr1.bvh").read_text())
    mk.convert(corpus_file("parc", "ms", "sfu.pkl"), tmp_path / "parc.bvh",
               character=corpus_file("parc", "character", "humanoid.xml"), lossy=True)
    assert_blender_rule((tmp_path / "parc.bvh").read_text())
    # one channel per hinge only when asked
    mk.convert(corpus_file("choreonoid", "SR1WalkPattern1.seq"), tmp_path / "one.bvh",
               model=corpus_file("choreonoid", "SR1.body"), hinge_channels=1)
    assert "z" in rotation_channels((tmp_path / "one.bvh").read_text()).values()
    with pytest.raises(mk.ConversionError, match="hinge_channels must be 3"):
        mk.convert(corpus_file("choreonoid", "SR1WalkPattern1.seq"), tmp_path / "two.bvh",
                   model=corpus_file("choreonoid", "SR1.body"), hinge_channels=2)
    assert not (tmp_path / "two.bvh").exists()


_AXES = [np.array(v, dtype=float) for v in
         ([1, 0, 0], [0, 1, 0], [0, 0, 1], [-1, 0, 0], [0, -1, 0], [0, 0, -1])]


@st.composite
def _robots(draw: st.DrawFn) -> tuple[Skeleton, np.ndarray]:
    """A random tree of hinges, universal joints (perhaps both about one axis, which the
    writer must send to forward kinematics) and welds on principal axes, with offsets in
    metres of which some have no short text in centimetres, and random joint values."""
    count = draw(st.integers(1, 6))
    bodies = [Body("base", Joint("base", "free"))]
    for k in range(1, count + 1):
        kind = draw(st.sampled_from(["revolute", "revolute", "universal", "weld"]))
        axes = [_AXES[draw(st.integers(0, 5))] for _ in range({"revolute": 1, "universal": 2,
                                                                "weld": 0}[kind])]
        place = np.eye(4)
        place[:3, 3] = [draw(st.sampled_from([0.0, -0.0, 0.176, 0.1 + 0.2, -0.35, 1e-5]))
                        for _ in range(3)]
        bodies.append(Body(f"b{k}", Joint(f"j{k}", kind, place, axes=np.array(axes).reshape(-1, 3)),
                           parent=draw(st.integers(0, k - 1))))
    skeleton = Skeleton("robot", bodies)
    frames = draw(st.integers(1, 3))
    q = np.array(draw(st.lists(st.floats(-3.0, 3.0), min_size=frames * skeleton.dof_count,
                               max_size=frames * skeleton.dof_count))).reshape(frames, -1)
    return skeleton, q


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(_robots(), st.sampled_from(["cm", "m"]), st.sampled_from(["y", "z"]),
       st.sampled_from(["zxy", "xyz", "yzx"]))
def test_padded_hinges_read_back_with_the_same_kinematics(
        tmp_path: Path, drawn: tuple[Skeleton, np.ndarray], unit: str, up: str, order: str) -> None:
    """The default writer follows Blender's rule, and our reader gives back the same world
    poses (to float64 precision) from the padded channels."""
    skeleton, q = drawn
    timeline = mk.Timeline.uniform(30.0, len(q))
    q[:, 3:6] = 0.0  # the free root's rotation part: the root track carries it
    root = mk.kinematics.forward(skeleton, q)[:, 0]
    motion = mk.Motion(skeleton=skeleton)
    motion.add(mk.Track("joints", "value", q, timeline, skeleton.dof_names))
    motion.add(mk.Track("root", "pose", root, timeline))
    mk.write(tmp_path / "r.bvh", motion, unit=unit, up=up, order=order)
    text = (tmp_path / "r.bvh").read_text()
    assert_blender_rule(text)
    assert "-0.0 " not in text.split("MOTION")[0]
    back = mk.api.read_motion(tmp_path / "r.bvh", unit=unit, up=up)
    assert back.skeleton is not None
    ours = mk.kinematics.link_motion(skeleton, motion).tracks["links"].data
    again = mk.kinematics.link_motion(back.skeleton, back).tracks["links"].data
    index = {b.name: k for k, b in enumerate(back.skeleton.bodies)}
    for k, body in enumerate(skeleton.bodies):
        got = again[:, index[body.name]]
        np.testing.assert_allclose(got[:, :3], ours[:, k, :3], rtol=0, atol=1e-12)
        dots = np.abs(np.einsum("ij,ij->i", got[:, 3:], ours[:, k, 3:]))
        np.testing.assert_allclose(dots, 1.0, atol=1e-12)


def test_offsets_are_the_shortest_exact_text_and_never_negative_zero(tmp_path: Path) -> None:
    # 0.3 m is 30 cm back exactly (30 * 0.01 == 0.3); 0.176 m is not 17.6 cm (17.6 * 0.01
    # is 0.17600000000000002), so it takes 17 digits to read back bit for bit
    place = np.eye(4)
    place[:3, 3] = [-0.0, 0.176, 0.3]
    skeleton = Skeleton("s", [Body("base", Joint("base", "free")),
                              Body("arm", Joint("arm", "weld", place), parent=0)])
    timeline = mk.Timeline.uniform(10.0, 1)
    root = np.array([[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0]])
    mk.write(tmp_path / "s.bvh", mk.Motion({"root": mk.Track("root", "pose", root, timeline)},
                                           skeleton), up="z")
    text = (tmp_path / "s.bvh").read_text()
    assert "\tOFFSET 0 17.599999999999998 30.0\n" in text
    back = mk.api.read_motion(tmp_path / "s.bvh", up="z")
    assert back.skeleton is not None
    assert np.array_equal(back.skeleton.joint("arm").parent_to_joint[:3, 3], place[:3, 3])

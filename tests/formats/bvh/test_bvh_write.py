"""Writing BVH: exact round trips, robots and characters through their models checked
against bvhio, refusals by name, and random skeletons."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_bvh_read import REAL, Y_TO_Z, joint_positions, oracle_positions

import motionkit as mk
from conftest import corpus_file
from motionkit.model import Body, Joint, Skeleton

pytestmark = pytest.mark.filterwarnings("ignore:Importing PyGLM:PendingDeprecationWarning")


def _same(a: mk.Motion, b: mk.Motion) -> None:
    assert list(a.tracks) == list(b.tracks)
    for name in a.tracks:
        assert a.tracks[name].labels == b.tracks[name].labels, name
        assert a.tracks[name].data.tobytes() == b.tracks[name].data.tobytes(), name
        assert a.tracks[name].timeline.rate == b.tracks[name].timeline.rate
    assert a.skeleton is not None and b.skeleton is not None
    for x, y in zip(a.skeleton.bodies, b.skeleton.bodies, strict=True):
        assert (x.name, x.parent, x.joint.type, x.joint.axis_order) == \
            (y.name, y.parent, y.joint.type, y.joint.axis_order)
        # equal to the last bit, but an offset of -0 is written 0 (issue 25): not by bytes
        assert np.array_equal(x.joint.parent_to_joint, y.joint.parent_to_joint)
        assert np.array_equal(x.joint.axes, y.joint.axes)
        assert x.attrs == y.attrs


@pytest.mark.corpus
@pytest.mark.parametrize("name", REAL)
def test_real_files_round_trip_exactly(tmp_path: Path, name: str) -> None:
    source = corpus_file("bvh", name)
    first = mk.read(source)
    assert isinstance(first, mk.Motion)
    mk.write(tmp_path / "out.bvh", first)
    again = mk.read(tmp_path / "out.bvh")
    assert isinstance(again, mk.Motion)
    _same(first, again)
    assert again.meta["bvh"]["frame_time"] == first.meta["bvh"]["frame_time"]
    # the numbers come back as written in the source: no 1-ulp tails like 40.300000000000004
    text = (tmp_path / "out.bvh").read_text()
    assert "00000000" not in text and "99999999" not in text


def _oracle_vs_fk(path: Path, skeleton: Skeleton, motion: mk.Motion) -> None:
    """bvhio's world positions of the written file equal motionkit's FK (float32 text
    reading in bvhio: 1e-6 relative), joint by joint, by name."""
    import bvhio

    links = mk.kinematics.link_motion(skeleton, motion).tracks["links"].data
    head, rows = path.read_text().split("Frame Time:")
    rows = "\n".join(rows.split("\n")[:201])  # bvhio needs ~9 s for 6,701 frames: 200 do
    count = min(len(links), 200)
    path = path.with_name("first200.bvh")
    path.write_text(head.replace(f"Frames: {len(links)}", f"Frames: {count}") + "Frame Time:" + rows)
    names = [joint.Name for joint, _, _ in bvhio.readAsHierarchy(str(path)).layout()]
    keep = [k for k, name in enumerate(names) if not name.endswith("__joint")]
    index = {re.sub(r"[\s{}]", "_", body.name): k for k, body in enumerate(skeleton.bodies)}
    bodies = [index[names[k]] for k in keep]  # names are one token in BVH
    frames = sorted({0, count // 2, count - 1})
    expected = links[frames][:, bodies, :3]
    got = (oracle_positions(path, frames) * 0.01 @ Y_TO_Z.T)[:, keep]
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-6 * max(np.abs(expected).max(), 1))


@pytest.mark.corpus
def test_a_choreonoid_walk_through_its_body_model(tmp_path: Path) -> None:
    model = corpus_file("choreonoid", "SR1.body")
    walk = corpus_file("choreonoid", "SR1WalkPattern1.seq")
    skeleton = mk.read(model)
    assert isinstance(skeleton, mk.Skeleton)
    original = mk.kinematics.motion.coordinates(skeleton, mk.api.read_motion(walk))[0]
    elbow = skeleton.joint("LARM_ELBOW").dof_offset
    # by default a hinge has three channels (Blender reads no other count but 0): its
    # angle about its axis, then zeros
    mk.convert(walk, tmp_path / "walk.bvh", model=model)
    _oracle_vs_fk(tmp_path / "walk.bvh", skeleton, mk.api.read_motion(walk))
    text = (tmp_path / "walk.bvh").read_text()
    assert "JOINT LARM_ELBOW\n" in text and "CHANNELS 1 " not in text
    back = mk.api.read_motion(tmp_path / "walk.bvh")
    assert back.skeleton is not None and back.skeleton.joint("LARM_ELBOW").dof_count == 3
    labels = back.tracks["joints"].labels
    assert labels is not None
    first = labels.index(back.skeleton.joint("LARM_ELBOW").dofs[0].name)
    three = back.tracks["joints"].data[:, first:first + 3]
    assert np.array_equal(np.abs(three[:, 0]), np.abs(original[:, elbow]))
    assert not np.any(three[:, 1:])
    # hinge_channels=1: one channel per hinge, and the angles come back to the last bit
    # (degrees written with every digit)
    mk.convert(walk, tmp_path / "one.bvh", model=model, hinge_channels=1)
    assert "CHANNELS 1 Zrotation" in (tmp_path / "one.bvh").read_text()
    back = mk.api.read_motion(tmp_path / "one.bvh")
    assert back.skeleton is not None and back.skeleton.joint("LARM_ELBOW").type == "revolute"
    column = back.tracks["joints"].labels.index("LARM_ELBOW")  # type: ignore[union-attr]
    # the same rotation about the same axis, perhaps written about its negative
    before = skeleton.joint("LARM_ELBOW").axes[0] * original[:, elbow, None]
    after = back.skeleton.joint("LARM_ELBOW").axes[0] * back.tracks["joints"].data[:, column, None]
    assert np.array_equal(before, after)


@pytest.mark.corpus
def test_a_parc_character_motion(tmp_path: Path) -> None:
    character = corpus_file("parc", "character", "humanoid.xml")
    source = corpus_file("parc", "ms", "sfu.pkl")
    with pytest.raises(mk.ConversionError, match=r"track 'contacts'.*the terrain"):
        mk.convert(source, tmp_path / "sfu.bvh", character=character)
    with pytest.warns(mk.MotionkitWarning, match="dropped track 'contacts'"):
        mk.convert(source, tmp_path / "sfu.bvh", character=character, lossy=True)
    motion = mk.api.read_motion(source, character=character)
    assert motion.skeleton is not None
    _oracle_vs_fk(tmp_path / "sfu.bvh", motion.skeleton, motion)


@pytest.mark.corpus
@pytest.mark.parametrize("name", ["serial_chain_revolute_joint.skel", "freeChain.skel",
                                  "simple_tree_structure_ball_joint.skel"])
def test_dart_skeletons_with_a_joints_track(tmp_path: Path, name: str) -> None:
    """Child frames with offsets become an extra ``__joint`` joint; ball joints three
    Euler channels; the root's free joint the six root channels."""
    parts = ("dart", "skel", name) if name == "freeChain.skel" else ("dart", "skel", "test", name)
    world = mk.read(corpus_file(*parts))
    skeleton = mk.kinematics.motion.model_skeleton(world, name)
    rng = np.random.default_rng(7)
    q = rng.uniform(-1.5, 1.5, (6, skeleton.dof_count))
    timeline = mk.Timeline.uniform(50.0, 6)
    motion = mk.Motion(skeleton=skeleton)
    motion.add(mk.Track("joints", "value", q, timeline, skeleton.dof_names))
    root = mk.kinematics.forward(skeleton, q)[:, 0]
    motion.add(mk.Track("root", "pose", root, timeline))
    mk.write(tmp_path / "dart.bvh", motion)
    _oracle_vs_fk(tmp_path / "dart.bvh", skeleton, motion)
    # our own reader agrees with FK to float64 precision
    back = mk.api.read_motion(tmp_path / "dart.bvh")
    links = mk.kinematics.link_motion(skeleton, motion).tracks["links"].data
    ours = joint_positions(back)
    names = [b.name for b in back.skeleton.bodies if not b.name.endswith("__translation")]  # type: ignore[union-attr]
    pick = [k for k, n in enumerate(names) if not n.endswith("__joint")]
    index = {re.sub(r"[\s{}]", "_", body.name): k for k, body in enumerate(skeleton.bodies)}
    np.testing.assert_allclose(ours[:, pick], links[:, [index[names[k]] for k in pick], :3],
                               rtol=0, atol=1e-12)


def test_joints_bvh_cannot_hold_are_refused_by_name(tmp_path: Path) -> None:
    skeleton = Skeleton("s", [
        Body("base", Joint("base", "free")),
        Body("slider", Joint("slide", "prismatic", axes=[[1.0, 0.0, 0.0]]), parent=0),
        Body("arm", Joint("arm", "revolute", axes=[[0.0, 0.0, 1.0]]), parent=1),
    ])
    timeline = mk.Timeline.uniform(10.0, 3)
    motion = mk.Motion(skeleton=skeleton)
    q = np.zeros((3, 8))
    q[:, 6] = [0.0, 0.5, 1.0]
    q[:, 7] = [0.0, 0.1, 0.2]
    motion.add(mk.Track("joints", "value", q, timeline, skeleton.dof_names))
    root = np.zeros((3, 7))
    root[:, 6] = 1.0
    motion.add(mk.Track("root", "pose", root, timeline))
    with pytest.raises(mk.ConversionError, match=r"translation of joint\(s\) 'slide' \(prismatic\)"):
        mk.write(tmp_path / "x.bvh", motion)
    assert not (tmp_path / "x.bvh").exists()
    with pytest.warns(mk.MotionkitWarning, match="'slide'"):
        mk.write(tmp_path / "x.bvh", motion, lossy=True)
    back = mk.api.read_motion(tmp_path / "x.bvh")
    assert back.skeleton is not None
    arm = back.tracks["joints"].labels.index(back.skeleton.joint("arm").dofs[0].name)  # type: ignore[union-attr]
    np.testing.assert_allclose(back.tracks["joints"].data[:, arm], [0.0, 0.1, 0.2], atol=1e-15)
    no_joints = mk.Motion({"root": motion.tracks["root"]}, skeleton)
    with pytest.raises(mk.ConversionError, match="skeleton 's' \\(no joint values"):
        mk.write(tmp_path / "y.bvh", no_joints)
    rigid = Skeleton("rigid", [Body("base", Joint("base", "free")),
                               Body("tip", Joint("tip", "weld", np.eye(4) * 1.0), parent=0)])
    rigid.bodies[1].joint.parent_to_joint[:3, 3] = [0.0, 0.0, 0.5]
    mk.write(tmp_path / "rigid.bvh", mk.Motion({"root": motion.tracks["root"]}, rigid))
    assert "JOINT tip" in (tmp_path / "rigid.bvh").read_text()  # no coordinates: no joints needed


def test_root_only_motions_and_writer_options(tmp_path: Path) -> None:
    timeline = mk.Timeline.uniform(24.0, 4)
    root = np.zeros((4, 7))
    root[:, 2] = np.linspace(0, 1, 4)
    root[:, 3:] = [0.0, 0.0, np.sin(0.3), np.cos(0.3)]
    motion = mk.Motion({"root": mk.Track("root", "pose", root, timeline)}, meta={"name": "box"})
    mk.write(tmp_path / "r.bvh", motion, unit="m", up="z", order="xyz", precision=6)
    text = (tmp_path / "r.bvh").read_text()
    assert "ROOT box" in text and "Xrotation Yrotation Zrotation" in text
    assert "Frame Time: 0.041666666666666664" in text and "\n0.000000 0.000000 0.333333 " in text
    back = mk.api.read_motion(tmp_path / "r.bvh", unit="m", up="z")
    np.testing.assert_allclose(back.tracks["root"].data, root, atol=1e-6)
    with pytest.raises(mk.MotionkitError, match="unknown unit 'parsec'"):
        mk.write(tmp_path / "r.bvh", motion, unit="parsec")


_ORDERS = ["xyz", "xzy", "yxz", "yzx", "zxy", "zyx"]


@st.composite
def _skeletons(draw: st.DrawFn) -> tuple[str, int]:
    """A random BVH file: a tree of joints with random channel lists, and its frame count."""
    count = draw(st.integers(1, 6))
    frames = draw(st.integers(1, 4))
    lines = ["HIERARCHY"]
    widths = 0
    parents = [-1]
    for k in range(1, count):
        parents.append(draw(st.integers(0, k - 1)))
    kids: dict[int, list[int]] = {}
    for k, p in enumerate(parents):
        kids.setdefault(p, []).append(k)
    numbers = st.tuples(st.floats(-500, 500), st.integers(0, 6)).map(lambda t: round(t[0], t[1]))
    stack: list[tuple[int, int]] = [(0, 0)]
    opened: list[int] = []
    while stack:
        k, depth = stack.pop()
        while len(opened) > depth:
            opened.pop()
            lines.append("}")
        rotations = draw(st.sampled_from(_ORDERS))[:draw(st.integers(0, 3))]
        positions = "xyz" if k == 0 else draw(st.sampled_from(["", "", "xyz", "y", "zx"]))
        channels = [f"{c.upper()}position" for c in positions] + [f"{c.upper()}rotation" for c in rotations]
        widths += len(channels)
        offset = " ".join(str(draw(numbers)) for _ in range(3))
        lines += [("ROOT" if k == 0 else "JOINT") + f" j{k}", "{", f"OFFSET {offset}",
                  f"CHANNELS {len(channels)} {' '.join(channels)}"]
        if k not in kids:
            lines += ["End Site", "{", f"OFFSET {offset}", "}"]
        opened.append(k)
        stack.extend((child, depth + 1) for child in reversed(kids.get(k, [])))
    lines += ["}"] * len(opened)
    rows = [" ".join(str(draw(numbers)) for _ in range(widths)) for _ in range(frames)]
    lines += ["MOTION", f"Frames: {frames}", "Frame Time: 0.0333333", *rows]
    return "\n".join(lines) + "\n", frames


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(_skeletons(), st.sampled_from(["cm", "m", "in", "cmu"]), st.sampled_from(["y", "z"]))
def test_random_files_round_trip_exactly(tmp_path: Path, drawn: tuple[str, int], unit: str,
                                         up: str) -> None:
    text, frames = drawn
    source = tmp_path / "random.bvh"
    source.write_text(text)
    first = mk.api.read_motion(source, unit=unit, up=up)
    assert first.frames == frames
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mk.write(tmp_path / "again.bvh", first, unit=unit, up=up, hinge_channels=1)
    again = mk.api.read_motion(tmp_path / "again.bvh", unit=unit, up=up)
    _same(first, again)


@pytest.mark.corpus
def test_an_edited_root_wins_over_stale_root_angles(tmp_path: Path) -> None:
    """The root's Euler coordinates are written as they are only while they give the root
    track's orientation; a turned root track is decomposed instead."""
    motion = mk.api.read_motion(corpus_file("bvh", "example.bvh"))
    root = motion.tracks["root"]
    turn = np.array([0.0, 0.0, np.sin(0.4), np.cos(0.4)])  # 0.8 rad about z
    turned = root.data.copy()
    turned[:, 3:] = mk.spatial.quaternion.multiply(turn, root.data[:, 3:])
    motion.add(root.with_data(turned))
    mk.write(tmp_path / "turned.bvh", motion)
    back = mk.api.read_motion(tmp_path / "turned.bvh")
    got = back.tracks["root"].data
    np.testing.assert_allclose(got[:, :3], turned[:, :3], atol=1e-15)
    dots = np.abs(np.einsum("ij,ij->i", got[:, 3:], turned[:, 3:]))
    np.testing.assert_allclose(dots, 1.0, atol=1e-14)


def test_gimbal_lock_is_written_silently_and_exactly(tmp_path: Path) -> None:
    """A middle angle of 90° has many Euler triples; any of them is the same rotation."""
    from scipy.spatial.transform import Rotation

    timeline = mk.Timeline.uniform(10.0, 2)
    root = np.zeros((2, 7))
    root[:, 3:] = Rotation.from_euler("ZXY", [[30, 90, 20], [0, -90, 45]], degrees=True).as_quat()
    motion = mk.Motion({"root": mk.Track("root", "pose", root, timeline)})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mk.write(tmp_path / "lock.bvh", motion, up="z", order="zxy")
    back = mk.api.read_motion(tmp_path / "lock.bvh", up="z")
    dots = np.abs(np.einsum("ij,ij->i", back.tracks["root"].data[:, 3:], root[:, 3:]))
    np.testing.assert_allclose(dots, 1.0, atol=1e-14)


_FLOATS = st.floats(allow_nan=False, allow_infinity=False, allow_subnormal=False,
                    min_value=-1e300, max_value=1e300)


def _digits(text: str) -> int:
    """Significant digits of a number's text."""
    return len(text.lstrip("-").split("e")[0].replace(".", "").strip("0")) or 1


@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(_FLOATS, min_size=6, max_size=6), st.sampled_from(["cm", "m", "in", "cmu"]))
def test_any_offset_round_trips_bit_for_bit(tmp_path: Path, numbers: list[float],
                                            unit: str) -> None:
    # offsets as Python writes them (repr: up to 17 digits), through the unit's scaling
    root, site = (" ".join(repr(n) for n in numbers[k:k + 3]) for k in (0, 3))
    text = (f"HIERARCHY\nROOT a\n{{\nOFFSET {root}\nCHANNELS 6 Xposition Yposition "
            f"Zposition Xrotation Yrotation Zrotation\nEnd Site\n{{\nOFFSET {site}\n}}\n}}\n"
            "MOTION\nFrames: 1\nFrame Time: 0.1\n0 0 0 0 0 0\n")
    (tmp_path / "a.bvh").write_text(text)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # an implausible size for the unit
        first = mk.api.read_motion(tmp_path / "a.bvh", unit=unit)
        mk.write(tmp_path / "b.bvh", first, unit=unit)
        again = mk.api.read_motion(tmp_path / "b.bvh", unit=unit)
    _same(first, again)  # the End Site's offset too (in attrs)
    written = re.findall(r"OFFSET (\S+) (\S+) (\S+)", (tmp_path / "b.bvh").read_text())
    words = [word for line in written for word in line]
    assert [_digits(w) <= _digits(repr(n)) for w, n in zip(words, numbers, strict=True)] == \
        [True] * 6  # never longer than the text it was read from

"""Rules of Choreonoid's .body loader that the oracle files do not cover, on fixtures of
our own (tests/data/body) and on the real models of the corpus; hostile input.

Expected values are computed here from the files' numbers with plain NumPy (or read
with PyYAML), never with motionkit's own readers or kinematics.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

import motionkit as mk
from conftest import corpus_file, cpu_bound, require_peer
from motionkit.formats.choreonoid import body, body_yaml
from motionkit.kinematics import forward

DATA = Path(__file__).resolve().parents[2] / "data" / "body"


def _ry(degrees: float) -> np.ndarray:
    c, s = np.cos(np.radians(degrees)), np.sin(np.radians(degrees))
    return np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])


def _rz(degrees: float) -> np.ndarray:
    c, s = np.cos(np.radians(degrees)), np.sin(np.radians(degrees))
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])


def _quiet(path: Path) -> mk.Skeleton:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mk.MotionkitWarning)
        return body.read(path)


# -- fixtures of our own ------------------------------------------------------------------

def test_continuous_track_expands_into_a_closed_chain_of_shoes() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", mk.MotionkitWarning)  # shared ids are not duplicates
        skeleton = body.read(DATA / "track_vehicle.body")
    names = [b.name for b in skeleton.bodies]
    assert names == ["CHASSIS", "SHOE0", "SHOE1", "SHOE2", "SHOE3", "SHOE4", "SHOE5",
                     "SENSOR_MOUNT"]
    parents = [skeleton.bodies[b.parent].name if b.parent >= 0 else None
               for b in skeleton.bodies]
    assert parents == [None, "CHASSIS", "SHOE0", "SHOE1", "SHOE2", "SHOE3", "SHOE4",
                       "SHOE0"]  # the bare name SHOE means shoe 0
    kinds = [b.attrs["choreonoid"]["joint_type"] for b in skeleton.bodies[1:7]]
    assert kinds == ["free"] + ["revolute"] * 5
    assert skeleton.joints[1].type == "weld"  # a non-root free joint does not move in FK
    assert all(j.axes.tolist() == [[0, 1, 0]] for j in skeleton.joints[2:7])
    assert [b.attrs["choreonoid"]["joint_id"] for b in skeleton.bodies[1:7]] == [3] * 6
    assert [j.attrs.get("joint_id") for j in skeleton.joints[1:7]] == [3] + [None] * 5
    assert all(len(b.shapes) == 2 for b in skeleton.bodies[1:7])  # visual + collision
    q = skeleton.initial_positions
    assert np.degrees(q[[j.dof_offset for j in skeleton.joints[2:7]]]).tolist() == \
        pytest.approx([60] * 5)
    poses = forward(skeleton, q)
    position, rotation = np.array([-0.3, 0.25, 0.2]), np.eye(3)
    expected = []
    for index in range(6):
        if index:
            position = position + rotation @ [0.2, 0, 0]
            rotation = rotation @ _ry(60)
        expected.append(position)
    np.testing.assert_allclose(poses[1:7, :3], expected, atol=1e-12)
    closing = expected[-1] + rotation @ [0.2, 0, 0]
    np.testing.assert_allclose(closing, expected[0], atol=1e-12)  # the track is a loop


def test_a_link_named_like_a_track_is_a_duplicate(tmp_path: Path) -> None:
    text = (DATA / "track_vehicle.body").read_text().replace("name: SENSOR_MOUNT", "name: SHOE")
    path = tmp_path / "dup.body"
    path.write_text(text)
    with pytest.raises(mk.FormatError, match='duplicated link name "SHOE"') as info:
        body.read(path)
    assert info.value.line == 24


def test_skip_drops_the_node_its_elements_and_skipped_children() -> None:
    skeleton = body.read(DATA / "skip_children.body")
    assert [b.name for b in skeleton.bodies] == ["BASE", "LEG"]
    assert skeleton.devices == [] and skeleton.bodies[0].shapes == []
    assert skeleton.joints[1].upper[0] == pytest.approx(np.radians(45))
    with pytest.raises(mk.FormatError, match='parent link "ARM" of "HAND" is not defined'):
        body.read(DATA / "skip_orphan.body")


def test_format_2_without_angle_unit_is_in_degrees() -> None:
    skeleton = body.read(DATA / "v20_degrees.body")
    elbow = skeleton.joints[1]
    assert (elbow.lower[0], elbow.upper[0]) == pytest.approx((np.radians(-120), np.radians(30)))
    assert elbow.dofs[0].velocity_upper == pytest.approx(np.pi)
    assert elbow.dofs[0].position == pytest.approx(np.pi / 4)
    np.testing.assert_allclose(elbow.parent_to_joint[:3, :3], _rz(90), atol=1e-15)
    assert skeleton.attrs["choreonoid"]["angle_unit"] == "degree"


def test_sub_body_chain_with_a_missing_file() -> None:
    with pytest.warns(mk.MotionkitWarning, match="not_there.body") as record:
        skeleton = body.read(DATA / "subbody_chain.body")
    assert len(record) == 1 and "cannot be loaded" in str(record[0].message)
    names = [b.name for b in skeleton.bodies]
    assert names == ["BASE", "L_SHOULDER", "L_ELBOW", "L_H_WRIST", "HEAD"]
    ids = {b.name: b.joint.attrs.get("joint_id") for b in skeleton.bodies}
    assert ids == {"BASE": None, "L_SHOULDER": 10, "L_ELBOW": 11, "L_H_WRIST": 12,
                   "HEAD": None}
    # the SubBody node resets the sub root's range; each file keeps its own unit
    assert skeleton.joint("L_SHOULDER").upper[0] == np.inf
    assert skeleton.joint("L_ELBOW").upper[0] == 2.0  # arm.body is in radians
    assert skeleton.joint("L_H_WRIST").upper[0] == np.inf  # reset by arm.body's node
    rest = skeleton.rest_poses()
    np.testing.assert_allclose(rest[3][:3, 3], [0, 0.2, -0.55])
    np.testing.assert_allclose(rest[4][:3, 3], [0, 0, 0.3])


def test_recursive_sub_body_include_is_one_clear_error() -> None:
    with pytest.raises(mk.FormatError) as info:
        body.read(DATA / "recursive_a.body")
    message = str(info.value)
    assert "\n" not in message
    assert "recursive sub-body include: recursive_a.body → recursive_b.body → " \
        "recursive_a.body" in message
    assert info.value.path is not None and info.value.path.endswith("recursive_b.body")
    assert info.value.line == 6


def test_duplicate_keys_warn_with_the_line_and_the_later_wins(tmp_path: Path) -> None:
    path = tmp_path / "dup.body"
    path.write_text("format: ChoreonoidBody\nformatVersion: 1.0\nlinks:\n"
                    "  - name: R\n    jointType: free\n"
                    "  - name: A\n    parent: R\n    jointType: revolute\n"
                    "    jointRange: [ -10, 10 ]\n    jointRange: [ -20, 20 ]\n")
    with pytest.warns(mk.MotionkitWarning, match=r'dup.body:10: duplicate key "jointRange" '
                      r"\(first at line 9\)"):
        skeleton = body.read(path)
    assert skeleton.joints[1].upper[0] == pytest.approx(np.radians(20))


# -- hostile input --------------------------------------------------------------------------

def _head() -> str:
    return "format: ChoreonoidBody\nformatVersion: 1.0\n"


def test_translation_alias_bomb_fails_fast_on_the_budget(tmp_path: Path) -> None:
    lines = [_head(), "t0: &t0 [[0,0,1],[0,0,1],[0,0,1],[0,0,1]]\n"]
    for level in range(1, 9):
        lines.append(f"t{level}: &t{level} [" + ",".join([f"*t{level - 1}"] * 9) + "]\n")
    lines.append("links:\n  - { name: R, translation: *t8 }\n")
    path = tmp_path / "bomb.body"
    path.write_text("".join(lines))
    assert path.stat().st_size < 600
    with cpu_bound(10), pytest.raises(mk.FormatError, match="work budget"):
        body.read(path)


def test_doubling_rotation_alias_bomb_fails_fast(tmp_path: Path) -> None:
    lines = [_head(), "r0: &r0 [0,0,1,1]\n"]
    lines += [f"r{k}: &r{k} [*r{k - 1},*r{k - 1}]\n" for k in range(1, 21)]
    lines.append("links:\n  - { name: R, rotation: *r20 }\n")
    path = tmp_path / "bomb.body"
    path.write_text("".join(lines))
    assert path.stat().st_size < 600
    with cpu_bound(10), pytest.raises(mk.FormatError, match="4 x 1 vector"):  # rotations nest one level
        body.read(path)


def test_rotation_elements_alias_bomb_fails_fast(tmp_path: Path) -> None:
    lines = [_head(), "e0: &e0 [{type: Transform, rotation: [0,0,1,1]}]\n"]
    for level in range(1, 9):
        group = f"{{type: Transform, rotation: [0,0,1,1], elements: *e{level - 1}}}"
        lines.append(f"e{level}: &e{level} [" + ",".join([group] * 8) + "]\n")
    lines.append("links:\n  - { name: R, elements: *e8 }\n")
    path = tmp_path / "bomb.body"
    path.write_text("".join(lines))
    with cpu_bound(10), pytest.raises(mk.FormatError, match="work budget"):
        body.read(path)


def test_deep_nesting_is_refused_before_it_can_crash(tmp_path: Path) -> None:
    # Whoever refuses first (PyYAML >= 6.0.4 itself stops at 1,000 levels, older ones
    # do not), the contract is ours: one FormatError naming the file and the line.
    path = tmp_path / "deep.body"
    path.write_text(_head() + "links: " + "[" * 30000 + "]" * 30000 + "\n")
    with pytest.raises(mk.FormatError) as info:
        body.read(path)
    assert info.value.path == str(path) and info.value.line == 3


def test_nesting_beyond_our_limit_is_refused_by_our_rule(tmp_path: Path) -> None:
    # 500 levels: every PyYAML composes it, so the refusal here is motionkit's own limit.
    path = tmp_path / "deep.body"
    path.write_text(_head() + "links: " + "[" * 500 + "]" * 500 + "\n")
    with pytest.raises(mk.FormatError, match=f"nesting deeper than {body_yaml.MAX_DEPTH}") as info:
        body.read(path)
    assert info.value.line == 3


@pytest.mark.parametrize("links, message", [
    ("  - &L { name: R, rotation: [ 0, 0, 1, *L ] }\n", "recursive alias"),
    ("  - { name: R, rotation: [ [ [ 0, 0, 1, 90 ] ] ] }\n", "4 x 1 vector"),
    ("  - { name: R, translation: *nowhere }\n", "names no anchor"),
])
def test_self_reference_and_deep_rotations_are_format_errors(tmp_path: Path, links: str,
                                                             message: str) -> None:
    path = tmp_path / "bad.body"
    path.write_text(_head() + "links:\n" + links)
    with pytest.raises(mk.FormatError, match=message):
        body.read(path)


def test_a_sub_body_of_a_long_chain_reads(tmp_path: Path) -> None:
    lines = [_head(), "links:\n  - { name: L0, jointType: free }\n"]
    lines += [f"  - {{ name: L{i}, parent: L{i - 1}, jointType: revolute }}\n"
              for i in range(1, 3000)]
    (tmp_path / "chain.body").write_text("".join(lines))
    (tmp_path / "main.body").write_text(_head() + "links:\n  - { name: B, jointType: free }\n"
                                        "  - { type: SubBody, uri: chain.body, parent: B, "
                                        "prefix: X }\n")
    skeleton = body.read(tmp_path / "main.body")
    assert len(skeleton.bodies) == 3001 and skeleton.bodies[-1].name == "XL2999"


# -- the real models of the corpus -----------------------------------------------------------

def _yaml(path: Path) -> dict:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return yaml.safe_load(path.read_text())


def test_corpus_scalar_and_unlimited_ranges() -> None:
    quad = _quiet(corpus_file("choreonoid", "body", "quadcopter.body"))
    props = [j for j in quad.joints if j.name.startswith("PROP")]
    assert props and all(j.lower[0] == -np.inf and j.upper[0] == np.inf for j in props)
    cabinet = _quiet(corpus_file("choreonoid", "body", "FireCabinet.body"))
    valve = cabinet.joint("VALVE")
    assert (valve.lower[0], valve.upper[0]) == (-np.inf, np.inf)
    knob = cabinet.joint("KNOB")  # a link given by an alias (- *DOOR_KNOB)
    assert (knob.lower[0], knob.upper[0]) == pytest.approx((0.0, np.pi / 2))  # [0, 90]
    assert knob.attrs["joint_id"] == 3


def test_corpus_six_number_inertia_is_the_upper_triangle() -> None:
    path = corpus_file("choreonoid", "body", "HoseConnector.body")
    xx, xy, xz, yy, yz, zz = _yaml(path)["links"][0]["inertia"]
    skeleton = body.read(path)
    np.testing.assert_array_equal(skeleton.bodies[0].inertia.moment,
                                  [[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
    cylinder = skeleton.bodies[0].shapes[0]
    assert cylinder.kind == "cylinder" and cylinder.params["radius"] == 0.0165
    # Choreonoid's cylinder runs along Y; under rotation z 90° it runs along -x
    np.testing.assert_allclose(cylinder.transform[:3, 2], [-1, 0, 0], atol=1e-15)


def test_corpus_pseudo_continuous_tracks_and_sub_body() -> None:
    crawler = body.read(corpus_file("choreonoid", "body", "crawler.body"))
    tracks = [b for b in crawler.bodies
              if b.attrs["choreonoid"]["joint_type"] == "pseudo_continuous_track"]
    assert len(tracks) == 2 and all(b.joint.type == "weld" for b in tracks)
    arm = _quiet(corpus_file("choreonoid", "body", "DoubleArmV7S.body"))
    upper = _quiet(corpus_file("choreonoid", "body", "DoubleArmV7-Upper.body"))
    assert [b.name for b in arm.bodies][:len(upper.bodies)] == [b.name for b in upper.bodies]
    assert {b.name for b in arm.bodies} - {b.name for b in upper.bodies} == {"TRACK_L",
                                                                               "TRACK_R"}
    assert arm.bodies[0].name == "TFRAME"
    assert len(arm.devices) == len(upper.devices)


def test_corpus_merge_keys_links_mapping_and_no_id() -> None:
    path = corpus_file("choreonoid", "body", "agxMaterialSample.body")
    merged = body.read(path)
    base = _yaml(path)["BOX"]  # PyYAML applies << too: an independent reading
    boxes = [b for b in merged.bodies if b.name.startswith("box")]
    assert boxes and all(b.attrs["choreonoid"]["joint_type"] == base["jointType"]
                         for b in boxes)
    assert all(b.parent == merged.body_index(base["parent"]) for b in boxes)
    assert all(len(b.shapes) == 2 and b.shapes[0].params["size"].tolist() == [0.5] * 3
               for b in boxes)
    fire = _quiet(corpus_file("choreonoid", "body", "fire1.body"))
    assert len(fire.bodies) == 1 and [d.kind for d in fire.devices] == ["FireDevice"]
    with warnings.catch_warnings():
        warnings.simplefilter("error", mk.MotionkitWarning)
        vehicle = body.read(corpus_file("choreonoid", "body", "4wheelsVehicle.body"))
    ids = {b.name: b.joint.attrs.get("joint_id") for b in vehicle.bodies}
    assert ids["STEERING_RIGHT"] == 0 and ids["REAR_WHEEL"] == 1
    assert ids["STEERING"] is None and ids["FRONTLEFT_WHEEL"] is None  # jointId: -1


def test_corpus_nested_translations_are_summed() -> None:
    path = corpus_file("choreonoid", "body", "CarT3.body")
    raw = _yaml(path)
    skeleton = _quiet(path)
    for link in raw["links"]:
        items = link.get("translation")
        if isinstance(items, list) and items and isinstance(items[0], list):
            expected = np.sum(np.array(items, dtype=float), axis=0)
            got = skeleton.bodies[skeleton.body_index(link["name"])].joint.parent_to_joint
            np.testing.assert_allclose(got[:3, 3], expected)
            return
    pytest.fail("CarT3.body has no nested translation")


def test_corpus_sr1_of_2016_keeps_the_model_with_a_warning() -> None:
    with pytest.warns(mk.MotionkitWarning, match="centerOfMass is not a listing"):
        old = body.read(corpus_file("choreonoid", "body", "SR1_2016.body"))
    current = body.read(corpus_file("choreonoid", "SR1.body"))
    assert [b.name for b in old.bodies] == [b.name for b in current.bodies]
    np.testing.assert_allclose(old.rest_poses(), current.rest_poses(), atol=1e-12)


def test_corpus_hrp4c_format_2_snake_case() -> None:
    path = corpus_file("choreonoid", "body", "HRP4C.body")
    raw = _yaml(path)
    skeleton = body.read(path)
    link = next(link for link in raw["links"] if "joint_range" in link
                and link.get("joint_type") == "revolute")
    joint = skeleton.bodies[skeleton.body_index(link["name"])].joint
    lo, hi = (float(v) for v in link["joint_range"])
    assert (joint.lower[0], joint.upper[0]) == pytest.approx((np.radians(lo), np.radians(hi)))


def test_a_sub_body_name_clash_points_at_the_sub_body_node(tmp_path: Path) -> None:
    (tmp_path / "part.body").write_text(_head() + "links:\n  - { name: BASE }\n")
    (tmp_path / "main.body").write_text(_head() + "links:\n  - { name: BASE, jointType: free }\n"
                                        "  - { type: SubBody, uri: part.body, parent: BASE }\n")
    with pytest.raises(mk.FormatError, match='duplicated link name "BASE"') as info:
        body.read(tmp_path / "main.body")
    assert info.value.path == str(tmp_path / "main.body") and info.value.line == 5


def test_a_chain_of_yaml_resources_cannot_nest_without_bound(tmp_path: Path) -> None:
    for k in range(12):  # each file nests 30 Transforms, then includes the next file
        inner = f"{{type: Resource, uri: r{k + 1}.yaml}}" if k < 11 else "{type: Group}"
        for _ in range(30):
            inner = f"{{type: Transform, elements: [{inner}]}}"
        (tmp_path / f"r{k}.yaml").write_text(f"[{inner}]\n")
    (tmp_path / "main.body").write_text(_head() + "links:\n  - { name: R, elements: "
                                        "[ { type: Resource, uri: r0.yaml } ] }\n")
    with pytest.raises(mk.FormatError, match="elements nest deeper than 200"):
        body.read(tmp_path / "main.body")


@pytest.mark.parametrize("value, message", [
    ("1" * 5000, "out of range"), ("0x1p99999", None), ("-" + "9" * 20, "out of range")])
def test_huge_numbers_stay_in_the_error_family(tmp_path: Path, value: str,
                                               message: str | None) -> None:
    path = tmp_path / "n.body"
    path.write_text(_head() + f"links:\n  - {{ name: R, jointId: {value}, mass: {value} }}\n")
    if message is None:  # a huge hex float is +inf, as strtod gives it; the id is 0
        skeleton = body.read(path)
        assert skeleton.bodies[0].inertia.mass == np.inf
        return
    with pytest.raises(mk.FormatError, match=message):
        body.read(path)


# -- anchors shared with YAML resources, zero-size geometry ----------------------------------

_FLAG = """FLAG: &FLAG
  - type: Shape
    translation: [ 0, *FLAG_Y, 1.75 ]
    geometry: { type: Box, size: [ 0.1, 0.5, 0.5 ] }
    appearance: { material: { diffuseColor: *POLE_COLOR } }
  - { type: Resource, uri: inner.yaml }
"""


def _flag_model(tmp_path: Path, inner: str = "- { type: Shape, translation: [ *FLAG_Y, 0, 0 ],"
                " geometry: { type: Sphere, radius: 0.1 } }\n") -> Path:
    """A main file whose anchors a YAML resource (and the resource it includes) alias,
    as in WRS2018 Flag1L.body with resource/FlagCommon.yaml."""
    (tmp_path / "resource").mkdir()
    (tmp_path / "resource" / "FlagCommon.yaml").write_text(_FLAG)
    (tmp_path / "resource" / "inner.yaml").write_text(inner)
    path = tmp_path / "Flag1L.body"
    path.write_text(_head() + "POLE_COLOR: &POLE_COLOR [ 0, 0, 1 ]\nFLAG_Y: &FLAG_Y 0.35\n"
                    "links:\n  - name: BASE\n    jointType: fixed\n    elements:\n"
                    "      Resource: { uri: resource/FlagCommon.yaml, node: FLAG }\n")
    return path


def test_a_yaml_resource_sees_the_anchors_of_the_main_file(tmp_path: Path) -> None:
    shapes = body.read(_flag_model(tmp_path)).bodies[0].shapes
    box = [s for s in shapes if s.kind == "box"]
    sphere = [s for s in shapes if s.kind == "sphere"]
    assert box and sphere  # the included resource's resource sees them too
    assert np.allclose(box[0].transform[:3, 3], [0, 0.35, 1.75])
    assert np.allclose(sphere[0].transform[:3, 3], [0.35, 0, 0])


def test_a_resource_anchor_of_the_same_name_comes_first(tmp_path: Path) -> None:
    inner = ("SIDE: &FLAG_Y 0.5\nSHAPES: &SHAPES\n  - { type: Shape, translation: [ *FLAG_Y, 0, 0 ],"
             " geometry: { type: Sphere, radius: 0.1 } }\n")
    path = _flag_model(tmp_path)
    (tmp_path / "resource" / "inner.yaml").write_text(
        "- { type: Resource, uri: own.yaml, node: SHAPES }\n")
    (tmp_path / "resource" / "own.yaml").write_text(inner)
    shapes = body.read(path).bodies[0].shapes
    sphere = [s for s in shapes if s.kind == "sphere"]
    assert np.allclose(sphere[0].transform[:3, 3], [0.5, 0, 0])


def test_a_resource_node_may_name_an_anchor_of_the_main_file(tmp_path: Path) -> None:
    path = _flag_model(tmp_path)
    (tmp_path / "resource" / "inner.yaml").write_text("{}\n")
    text = path.read_text().replace("node: FLAG", "node: MINE").replace(
        "links:", "MINE: &MINE [ { type: Shape, geometry: { type: Sphere, radius: 0.2 } } ]\n"
        "links:")
    path.write_text(text)
    shapes = body.read(path).bodies[0].shapes
    assert [s.kind for s in shapes] == ["sphere", "sphere"]  # visual + collision
    assert shapes[0].params["radius"] == 0.2


def test_an_alias_no_file_defines_is_still_an_error(tmp_path: Path) -> None:
    path = _flag_model(tmp_path, inner="- { type: Shape, translation: *NOWHERE }\n")
    with pytest.raises(mk.FormatError, match="names no anchor") as info:
        body.read(path)
    assert info.value.path == str(tmp_path / "resource" / "inner.yaml")


def test_a_main_file_alias_bomb_aliased_from_a_resource_fails_fast(tmp_path: Path) -> None:
    lines = [_head(), "t0: &t0 [[0,0,1],[0,0,1],[0,0,1],[0,0,1]]\n"]
    for level in range(1, 9):
        lines.append(f"t{level}: &t{level} [" + ",".join([f"*t{level - 1}"] * 9) + "]\n")
    lines.append("links:\n  - { name: R, elements: [ { type: Resource, uri: r.yaml } ] }\n")
    (tmp_path / "r.yaml").write_text("- { type: Transform, translation: *t8 }\n")
    (tmp_path / "bomb.body").write_text("".join(lines))
    with cpu_bound(10), pytest.raises(mk.FormatError, match="work budget"):
        body.read(tmp_path / "bomb.body")


def _geometry(tmp_path: Path, geometry: str) -> mk.Skeleton:
    path = tmp_path / "g.body"
    path.write_text(_head() + "links:\n  - { name: R, elements: [ { type: Shape, geometry: "
                    f"{geometry} }} ] }}\n")
    return body.read(path)


@pytest.mark.parametrize("geometry, kind", [
    ("{ type: Capsule, radius: 0.1, height: 0 }", "sphere"),
    ("{ type: Capsule, radius: 0.1, height: -0.0 }", "sphere"),
    ("{ type: Box, size: [ 0, 1, 1 ] }", "box")])
def test_zero_sizes_choreonoid_generates_are_read(tmp_path: Path, geometry: str,
                                                  kind: str) -> None:
    # MeshGenerator: a box needs sizes >= 0, a capsule height >= 0 (then it is a sphere)
    # and radius > 0
    shape = _geometry(tmp_path, geometry).bodies[0].shapes[0]
    assert shape.kind == kind
    if kind == "sphere":
        assert shape.params["radius"] == 0.1
        assert shape.attrs["choreonoid_geometry"] == "capsule"


def test_a_capsule_of_height_0_converts_to_an_mjcf_mujoco_loads(tmp_path: Path) -> None:
    mujoco: Any = require_peer("mujoco")
    skeleton = _geometry(tmp_path, "{ type: Capsule, radius: 0.1, height: 0 }")
    mk.write(tmp_path / "g.xml", skeleton)
    model = mujoco.MjModel.from_xml_path(str(tmp_path / "g.xml"))
    assert model.ngeom >= 1 and np.isclose(model.geom_size[0][0], 0.1)


@pytest.mark.parametrize("geometry", [
    "{ type: Capsule, radius: 0, height: 1 }", "{ type: Capsule, radius: 1, height: -1 }",
    "{ type: Cylinder, radius: 1, height: 0 }", "{ type: Cone, radius: 1, height: 0 }",
    "{ type: Sphere, radius: 0 }", "{ type: Box, size: [ -1, 1, 1 ] }"])
def test_sizes_choreonoid_cannot_generate_are_refused(tmp_path: Path, geometry: str) -> None:
    with pytest.raises(mk.FormatError, match="size"):
        _geometry(tmp_path, geometry)

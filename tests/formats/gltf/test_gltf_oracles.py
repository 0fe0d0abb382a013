"""The glTF files we write, checked by the tools users open them with: the Khronos validator
(0 errors, 0 warnings on every file), three.js's GLTFLoader (node world positions at key
times and between keys equal our FK within 1e-5 m) and Blender's importer (world matrices
at key times equal our FK, Z up, within 1e-5 m). See ``gltf_oracles`` for how each runs and
skips."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest
from gltf_oracles import blender_poses, three_poses, validate, y_up

import motionkit as mk
from conftest import corpus_file
from motionkit.formats.gltf import write_scene
from motionkit.formats.gltf._container import unpack
from motionkit.spatial import quaternion

pytestmark = [pytest.mark.corpus,
              pytest.mark.filterwarnings("ignore::motionkit.MotionkitWarning")]

BVHS = ("example.bvh", "sinusoidal.bvh", "test_freebvh.bvh", "test_mocapbank.bvh")


def _motion(name: str) -> tuple[mk.Motion, mk.Skeleton]:
    """A corpus motion and the skeleton that moves it."""
    if name == "walk":
        skeleton = mk.read(corpus_file("choreonoid", "SR1.body"))
        assert isinstance(skeleton, mk.Skeleton)
        return mk.api.read_motion(corpus_file("choreonoid", "SR1WalkPattern1.seq")), skeleton
    human = corpus_file("parc", "character", "humanoid.xml")
    source = {"parc": corpus_file("parc", "ms", "sfu.pkl"),
              "mimickit": corpus_file("mimickit", "humanoid_platform05.pkl")}.get(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        motion = (mk.api.read_motion(source, character=human) if source is not None
                  else mk.api.read_motion(corpus_file("bvh", name)))
    assert motion.skeleton is not None
    return motion, motion.skeleton


def _write(name: str, target: Path, **options: object) -> None:
    if name == "walk":
        mk.convert(corpus_file("choreonoid", "SR1WalkPattern1.seq"), target,
                   model=corpus_file("choreonoid", "SR1.body"), **options)
    elif name == "parc":  # its contacts have no place in glTF: named, then dropped
        mk.convert(corpus_file("parc", "ms", "sfu.pkl"), target, lossy=True,
                   character=corpus_file("parc", "character", "humanoid.xml"), **options)
    elif name == "terrain":  # a PARC motion over its terrain (a mesh, and its heights kept)
        mk.convert(corpus_file("parc", "ms", "TEASER_TERRAIN.pkl"), target, lossy=True,
                   character=corpus_file("parc", "character", "humanoid.xml"), **options)
    elif name == "mimickit":
        mk.convert(corpus_file("mimickit", "humanoid_platform05.pkl"), target,
                   character=corpus_file("parc", "character", "humanoid.xml"), **options)
    else:
        mk.convert(corpus_file("bvh", name), target, **options)


def _raw_views(path: Path) -> set[str]:
    """The buffer views motionkit's extras name (the tracks and terrain kept exactly)."""
    gltf, _ = unpack(path)
    found = set()
    for entry in gltf["asset"]["extras"]["motionkit"]["motions"]:  # type: ignore[index]
        terrain = entry.get("terrain") or {}
        specs = [*entry["tracks"], entry.get("times") or {},
                 *(terrain.get(key) or {} for key in ("heights", "origin", "bounds"))]
        found |= {f"/bufferViews/{spec['bufferView']}" for spec in specs if "bufferView" in spec}
    return found


#: The rotation Blender's importer leaves on every object built from a glTF node (Z up).
_NODE_AXES = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, -1.0, 0.0]])

INPUTS = ["walk", "parc", "terrain", "mimickit", *BVHS]


def test_the_validator_finds_no_error_or_warning_in_any_file_we_write(tmp_path: Path) -> None:
    written = []
    for name in INPUTS:
        written.append(tmp_path / f"{name}.glb")
        _write(name, written[-1])
    written.append(tmp_path / "example.gltf")
    _write("example.bvh", written[-1])
    written.append(tmp_path / "example_skin.glb")
    _write("example.bvh", written[-1], skin=True)
    written.append(tmp_path / "walk_skin.glb")
    _write("walk", written[-1], skin=True)
    both = tmp_path / "both.glb"
    write_scene(both, {"walk": mk.kinematics.link_motion(*_motion("walk")[::-1]),
                       "example": _motion("example.bvh")[0]})
    written.append(both)
    reports = validate(*written)
    assert len(reports) == len(written)
    for path, report in zip(written, reports, strict=True):
        assert (report["errors"], report["warnings"], report["hints"]) == (0, 0, 0), report
        # infos only for what is ours: the exact tracks' views (and a skin without a mesh)
        allowed = _raw_views(path) | ({"/skins/0"} if "skin" in path.name else set())
        infos = {(m["code"], m["pointer"]) for m in report["messages"]}  # type: ignore[union-attr]
        assert infos <= {("UNUSED_OBJECT", pointer) for pointer in allowed}, infos


def test_the_validator_sees_our_checks_fail_on_a_broken_file(tmp_path: Path) -> None:
    """The harness can fail: a key time pushed back in a written file is an error."""
    target = tmp_path / "example.glb"
    _write("example.bvh", target)
    gltf, blob = unpack(target)
    accessor = gltf["accessors"][gltf["animations"][0]["samplers"][0]["input"]]  # type: ignore[index]
    view = gltf["bufferViews"][accessor["bufferView"]]  # type: ignore[index]
    data = bytearray(target.read_bytes())
    start = data.index(blob) + view["byteOffset"]
    data[start + 4:start + 8] = np.float32(-1).tobytes()  # the second time before the first
    target.write_bytes(bytes(data))
    (report,) = validate(target)
    assert report["errors"] > 0


def _compare_three(path: Path, motion: mk.Motion, skeleton: mk.Skeleton, offset: float = 0.0,
                   entry: int = 0) -> float:
    links = mk.kinematics.link_motion(skeleton, motion).tracks["links"]
    times = links.times - links.times[0]
    keys = np.unique(np.linspace(0, links.frames - 1, 9).round().astype(int))
    between = keys[:-1][np.diff(keys) > 0]
    samples = [float(np.float32(times[k])) for k in keys]
    samples += [float((np.float32(times[k]) + np.float32(times[k + 1])) / 2) for k in between]
    got = three_poses(path, samples)
    gltf, _ = unpack(path)
    nodes = gltf["asset"]["extras"]["motionkit"]["motions"][entry]["bodies"]  # type: ignore[index]
    expected = links.data[keys, :, :3].copy()
    # between keys glTF's rule (slerp of local rotations) is not FK at mid joint values:
    # compare with that rule applied to the file's own keys
    mid = _midpoints(path, entry, between)
    expected[..., 1] += offset
    worst = 0.0
    for b, node in enumerate(nodes):
        position = got[node][0]
        np.testing.assert_allclose(position[:len(keys)], y_up(expected[:, b]), rtol=0, atol=1e-5)
        np.testing.assert_allclose(position[len(keys):], y_up(mid[:, b] + [0, offset, 0]), rtol=0,
                                   atol=1e-5)
        worst = max(worst, float(np.abs(position[:len(keys)] - y_up(expected[:, b])).max()))
    assert np.ptp(expected, axis=0).max() > 0.01  # the motion moves: a frozen clip fails
    return worst


def _midpoints(path: Path, entry: int, frames: np.ndarray) -> np.ndarray:
    """World positions halfway in time between frames k and k+1 by the glTF rule (slerp of
    each node's local rotation, lerp of its translation), from our own reader's local poses."""
    motion = mk.read(path, motion=entry)
    links = motion.tracks["links"].data
    gltf, _ = unpack(path)
    parents = gltf["asset"]["extras"]["motionkit"]["motions"][entry]["parents"]  # type: ignore[index]
    out = np.empty((len(frames), links.shape[1], 7))
    for b, parent in enumerate(parents):
        a, c = links[frames, b], links[frames + 1, b]
        if parent >= 0:
            pa, pc = links[frames, parent], links[frames + 1, parent]
            inv_a, inv_c = quaternion.conjugate(pa[:, 3:]), quaternion.conjugate(pc[:, 3:])
            ta = quaternion.rotate(inv_a, a[:, :3] - pa[:, :3])
            tc = quaternion.rotate(inv_c, c[:, :3] - pc[:, :3])
            qa, qc = quaternion.multiply(inv_a, a[:, 3:]), quaternion.multiply(inv_c, c[:, 3:])
        else:
            ta, tc, qa, qc = a[:, :3], c[:, :3], a[:, 3:], c[:, 3:]
        t, q = (ta + tc) / 2, quaternion.slerp(qa, qc, 0.5)
        if parent >= 0:
            out[:, b, :3] = out[:, parent, :3] + quaternion.rotate(out[:, parent, 3:], t)
            out[:, b, 3:] = quaternion.multiply(out[:, parent, 3:], q)
        else:
            out[:, b, :3], out[:, b, 3:] = t, q
    return out[..., :3]


@pytest.mark.parametrize("name", ["walk", "mimickit", "example.bvh", "test_freebvh.bvh"])
def test_three_js_places_every_body_where_our_fk_does(tmp_path: Path, name: str) -> None:
    target = tmp_path / f"{name}.glb"
    _write(name, target)
    _compare_three(target, *_motion(name))


def test_three_js_reads_the_gltf_text_and_a_scene_of_two(tmp_path: Path) -> None:
    text = tmp_path / "example.gltf"
    _write("example.bvh", text)
    _compare_three(text, *_motion("example.bvh"))
    both = tmp_path / "both.glb"
    walk, example = _motion("walk"), _motion("example.bvh")
    write_scene(both, {"walk": mk.kinematics.link_motion(walk[1], walk[0]), "example": example[0]},
                spacing=3.0)
    _compare_three(both, *walk, offset=0.0, entry=0)
    _compare_three(both, *example, offset=3.0, entry=1)


def test_our_fk_matches_three_js_on_blenders_own_export_of_the_bvh() -> None:
    """Blender wrote ``blender_bvh_example.glb`` from example.bvh (keys at 1/30 and 2/30 s,
    three.js read in the corpus oracle): our export's content, read by our reader, puts
    every joint at the same place as Blender's file (compared parsed, not as bytes)."""
    import json

    oracle = json.loads(corpus_file("gltf", "blender_bvh_example.glb.oracle.json").read_text())
    motion, skeleton = _motion("example.bvh")
    links = mk.kinematics.link_motion(skeleton, motion).tracks["links"]
    names = [b.name for b in skeleton.bodies]
    times = oracle["times_s"]
    compared = 0
    for node in oracle["nodes"]:
        if node["name"] in names:
            b = names.index(node["name"])
            for column, t in enumerate(times):
                frame = round(t * 30) - 1  # Blender starts at frame 1 (t = 1/30 s)
                if abs(t * 30 - round(t * 30)) < 1e-6 and 0 <= frame < links.frames:
                    np.testing.assert_allclose(node["three_pos"][column], y_up(links.data[frame, b, :3]),
                                               rtol=0, atol=1e-5)
                    compared += 1
    assert compared >= 2 * len(names)


@pytest.mark.parametrize("name", ["walk", "example.bvh", "mimickit"])
def test_blender_imports_every_body_where_our_fk_puts_it(tmp_path: Path, name: str) -> None:
    motion, skeleton = _motion(name)
    links = mk.kinematics.link_motion(skeleton, motion).tracks["links"]
    cut = min(links.frames, 240)  # Blender keys every channel of every frame: keep it short
    clip = mk.Motion({"links": mk.Track("links", "pose", links.data[:cut],
                                        mk.Timeline.uniform(links.timeline.rate, cut),
                                        labels=links.labels)}, skeleton, meta={"name": name})
    target = tmp_path / f"{name}.glb"
    mk.write(target, clip)
    keys = np.unique(np.linspace(0, cut - 1, 8).round().astype(int))
    times = [float(np.float32(k / links.timeline.rate)) for k in keys]
    got = blender_poses(target, 30, times, tmp_path)
    gltf, _ = unpack(target)
    entry = gltf["asset"]["extras"]["motionkit"]["motions"][0]  # type: ignore[index]
    for b, node in enumerate(entry["bodies"]):
        matrices = got[gltf["nodes"][node]["name"]]  # type: ignore[index]
        np.testing.assert_allclose(matrices[:, :3, 3], links.data[keys, b, :3], rtol=0, atol=1e-5)
        # Blender keeps each glTF node's own (Y-up) axes on its object: our body frame
        # turned by the axis root's -90° about x, a constant, which the test states
        np.testing.assert_allclose(matrices[:, :3, :3],
                                   quaternion.to_matrix(links.data[keys, b, 3:]) @ _NODE_AXES,
                                   rtol=0, atol=1e-5)
    assert np.ptp(links.data[keys, :, :3], axis=0).max() > 0.01


def test_missing_node_skips_or_fails_when_required(monkeypatch: pytest.MonkeyPatch) -> None:
    from gltf_oracles import missing

    monkeypatch.delenv("MOTIONKIT_REQUIRE_NODE", raising=False)
    with pytest.raises(pytest.skip.Exception):
        missing("no node", "MOTIONKIT_REQUIRE_NODE")
    monkeypatch.setenv("MOTIONKIT_REQUIRE_NODE", "1")
    with pytest.raises(pytest.fail.Exception, match="MOTIONKIT_REQUIRE_NODE=1"):
        missing("no node", "MOTIONKIT_REQUIRE_NODE")


def test_a_retargeted_robot_beside_its_source_in_one_scene(tmp_path: Path) -> None:
    """``convert ref.bvh robot.pkl both.glb --model g1.xml``: the BVH moves its own skeleton,
    the model moves the robot; valid, and three.js places both where our FK does."""
    from motionkit.cli import main

    folder = corpus_file("retarget", "bvh_to_g1.json").parent
    bvh, robot = corpus_file("bvh", "test_freebvh.bvh"), folder / "g1_mocap_29dof_nomesh.xml"
    out, both = tmp_path / "robot.pkl", tmp_path / "both.glb"
    for args in (["retarget", str(bvh), "--robot", str(robot), "--map", str(folder / "bvh_to_g1.json"),
                  "--rename", str(folder / "freebvh_lafan1_names.json"), "-o", str(out), "--to", "gmr"],
                 ["convert", str(bvh), str(out), str(both), "--model", str(robot), "-O", "spacing=2"]):
        try:
            main(args)
        except SystemExit as exc:
            assert not exc.code, args
    (report,) = validate(both)
    assert (report["errors"], report["warnings"], report["hints"]) == (0, 0, 0), report
    g1 = mk.read(robot)
    assert isinstance(g1, mk.Skeleton)
    _compare_three(both, *_motion("test_freebvh.bvh"), offset=0.0, entry=0)
    _compare_three(both, mk.api.read_motion(out), g1, offset=2.0, entry=1)


def test_blender_builds_an_armature_from_the_skin_variant(tmp_path: Path) -> None:
    """``skin=True``: Blender turns the body nodes into the bones of one armature, each
    bone's head where our FK puts the body (at key times)."""
    motion, skeleton = _motion("example.bvh")
    links = mk.kinematics.link_motion(skeleton, motion).tracks["links"]
    target = tmp_path / "skin.glb"
    mk.write(target, motion, skin=True)
    times = [float(np.float32(k / links.timeline.rate)) for k in range(links.frames)]
    got = blender_poses(target, 30, times, tmp_path)
    bones = {name.split(":", 1)[1]: matrices for name, matrices in got.items()
             if name.count(":") == 1 and name.split(":", 1)[1] in links.labels}
    assert set(bones) == set(links.labels)  # every body a bone
    for b, name in enumerate(links.labels):
        np.testing.assert_allclose(bones[name][:, :3, 3], links.data[:, b, :3], rtol=0, atol=1e-5)

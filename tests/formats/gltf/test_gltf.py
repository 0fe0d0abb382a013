"""The glTF writer and its reader, without outside tools: round trips (the tracks exact, the
link poses to float32), the file's layout rules (``specs/gltf-export.md`` §2-5), the loss
rule and the refusals."""

from __future__ import annotations

import json
import struct
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import motionkit as mk
from conftest import corpus_file
from motionkit.cli import main
from motionkit.formats.gltf import write_scene
from motionkit.formats.gltf._container import pack_gltf, unpack
from motionkit.spatial import quaternion


def _walk() -> tuple[mk.Motion, mk.Skeleton]:
    skeleton = mk.read(corpus_file("choreonoid", "SR1.body"))
    assert isinstance(skeleton, mk.Skeleton)
    return mk.api.read_motion(corpus_file("choreonoid", "SR1WalkPattern1.seq")), skeleton


def _floats(gltf: dict, blob: bytes, index: int) -> np.ndarray:
    accessor = gltf["accessors"][index]
    view = gltf["bufferViews"][accessor["bufferView"]]
    width = {"SCALAR": 1, "VEC3": 3, "VEC4": 4, "MAT4": 16}[accessor["type"]]
    return np.frombuffer(blob, "<f4", accessor["count"] * width,
                         view["byteOffset"] + accessor.get("byteOffset", 0)).reshape(-1, width)


@pytest.mark.corpus
def test_a_walk_round_trips_poses_to_float32_and_joints_exactly(tmp_path: Path) -> None:
    walk, skeleton = _walk()
    target = tmp_path / "walk.glb"
    mk.convert(corpus_file("choreonoid", "SR1WalkPattern1.seq"), target,
               model=corpus_file("choreonoid", "SR1.body"))
    back = mk.read(target)
    assert isinstance(back, mk.Motion) and back.meta["source_format"] == "glb"
    expected = mk.kinematics.link_motion(skeleton, walk).tracks["links"]
    links = back.tracks["links"]
    assert links.labels == expected.labels and links.timeline.same_as(expected.timeline)
    assert links.timeline.rate == 500  # the fps is kept
    np.testing.assert_allclose(links.data[..., :3], expected.data[..., :3], rtol=0, atol=1e-6)
    turned = quaternion.multiply(quaternion.conjugate(links.data[..., 3:]), expected.data[..., 3:])
    assert np.abs(turned[..., :3]).max() < 1e-6  # rotations equal (whatever the sign)
    np.testing.assert_array_equal(back.tracks["joints"].data, walk.tracks["joints"].data)
    # the joints come back whole: FK of them gives the same poses again, to the bit
    joints = mk.Motion({"joints": back.tracks["joints"]})
    again = mk.kinematics.link_motion(skeleton, joints).tracks["links"].data
    np.testing.assert_array_equal(again, expected.data)


@pytest.mark.corpus
def test_a_bvh_round_trips_its_tracks_and_rate(tmp_path: Path) -> None:
    source = mk.api.read_motion(corpus_file("bvh", "test_freebvh.bvh"))
    mk.write(tmp_path / "m.gltf", source)
    back = mk.api.read_motion(tmp_path / "m.gltf")
    for name in ("root", "joints", "joint_rotations"):
        np.testing.assert_array_equal(back.tracks[name].data, source.tracks[name].data)
        assert back.tracks[name].labels == source.tracks[name].labels
    assert back.tracks["root"].timeline.same_as(source.tracks["root"].timeline)


@pytest.mark.corpus
def test_the_layout_follows_the_spec(tmp_path: Path) -> None:
    target = tmp_path / "walk.glb"
    mk.convert(corpus_file("choreonoid", "SR1WalkPattern1.seq"), target,
               model=corpus_file("choreonoid", "SR1.body"))
    data = target.read_bytes()
    magic, version, length = struct.unpack_from("<4sII", data)
    assert (magic, version, length) == (b"glTF", 2, len(data))
    size, kind = struct.unpack_from("<II", data, 12)
    assert kind == 0x4E4F534A and size % 4 == 0 and data[20 + size - 1:20 + size] in (b" ", b"}")
    gltf, blob = unpack(target)
    assert len(blob) % 4 == 0 or gltf["buffers"][0]["byteLength"] <= len(blob)
    root = gltf["nodes"][gltf["scenes"][0]["nodes"][0]]
    np.testing.assert_allclose(root["rotation"], [-np.sqrt(0.5), 0, 0, np.sqrt(0.5)])
    ours = gltf["asset"]["extras"]["motionkit"]
    assert ours["quaternion_order"].startswith("xyzw") and "metres" in ours["units"]
    assert ours["motions"][0]["fps"] == 500
    (animation,) = gltf["animations"]
    inputs = {s["input"] for s in animation["samplers"]}
    assert len(inputs) == 1  # one shared time accessor
    assert {s["interpolation"] for s in animation["samplers"]} == {"LINEAR"}
    targets = [(c["target"]["node"], c["target"]["path"]) for c in animation["channels"]]
    assert len(targets) == len(set(targets))
    times = _floats(gltf, blob, inputs.pop())[:, 0]
    assert times[0] == 0 and np.all(np.diff(times) > 0)
    for view in gltf["bufferViews"]:
        assert view["byteOffset"] % 4 == 0 and "byteStride" not in view
    for index, accessor in enumerate(gltf["accessors"]):
        if "min" in accessor:
            values = _floats(gltf, blob, index)
            assert accessor["min"] == values.min(axis=0).tolist()
            assert accessor["max"] == values.max(axis=0).tolist()
    for channel in animation["channels"]:
        if channel["target"]["path"] == "rotation":
            q = _floats(gltf, blob, animation["samplers"][channel["sampler"]]["output"]).astype(float)
            assert np.abs(np.linalg.norm(q, axis=1) - 1).max() < 1e-6
            assert np.all(np.einsum("ij,ij->i", q[1:], q[:-1]) >= 0)  # sign-continuous
    for mesh in gltf["meshes"]:
        (primitive,) = mesh["primitives"]
        position = gltf["accessors"][primitive["attributes"]["POSITION"]]
        assert "min" in position and gltf["bufferViews"][position["bufferView"]]["target"] == 34962
    assert len(target.read_bytes()) <= 6_000_000


@settings(max_examples=25, deadline=None)
@given(frames=st.integers(1, 30), bodies=st.integers(1, 4), rate=st.floats(1.0, 1000.0),
       start=st.floats(-100.0, 100.0), flips=st.lists(st.booleans(), min_size=30, max_size=30),
       seed=st.integers(0, 2**31))
def test_any_link_motion_reads_back(tmp_path_factory: pytest.TempPathFactory, frames: int,
                                    bodies: int, rate: float, start: float, flips: list[bool],
                                    seed: int) -> None:
    rng = np.random.default_rng(seed)
    poses = np.concatenate([rng.uniform(-5, 5, (frames, bodies, 3)),
                            quaternion.normalize(rng.normal(size=(frames, bodies, 4)))], axis=-1)
    poses[np.asarray(flips[:frames]), :, 3:] *= -1  # antipodal keys: the same rotations
    motion = mk.Motion({"links": mk.Track("links", "pose", poses,
                                          mk.Timeline.uniform(rate, frames, start),
                                          labels=[f"b{i}" for i in range(bodies)])},
                       meta={"name": "random", "note": [1, "two"]})
    target = tmp_path_factory.mktemp("prop") / "random.glb"
    mk.write(target, motion)
    back = mk.api.read_motion(target)
    links = back.tracks["links"]
    assert links.timeline.same_as(motion.tracks["links"].timeline)
    assert back.meta["note"] == [1, "two"] and links.labels == motion.tracks["links"].labels
    np.testing.assert_allclose(links.data[..., :3], poses[..., :3], rtol=0, atol=1e-5)
    dots = np.abs(np.einsum("...i,...i->...", links.data[..., 3:], poses[..., 3:]))
    assert dots.min() > 1 - 1e-6


def test_stamped_times_are_kept_exactly_and_float32_collisions_refused(tmp_path: Path) -> None:
    stamps = np.array([10.0, 10.1, 10.25, 11.0])
    pose = np.tile([0, 0, 0, 0, 0, 0, 1.0], (4, 1))
    motion = mk.Motion({"root": mk.Track("root", "pose", pose, mk.Timeline.stamped(stamps))})
    mk.write(tmp_path / "s.glb", motion)
    back = mk.api.read_motion(tmp_path / "s.glb")
    np.testing.assert_array_equal(back.tracks["root"].timeline.times, stamps)
    close = np.array([0.0, 5000.0, 5000.0001])  # 0.1 ms apart at 5000 s: one float32
    dense = mk.Motion({"root": mk.Track("root", "pose", pose[:3], mk.Timeline.stamped(close))})
    with pytest.raises(mk.ConversionError, match="float32"):
        mk.write(tmp_path / "d.glb", dense)
    assert not (tmp_path / "d.glb").exists()


def test_what_gltf_cannot_hold_is_named(tmp_path: Path) -> None:
    pose = np.tile([0, 0, 0, 0, 0, 0, 1.0], (3, 1))
    motion = mk.Motion({"root": mk.Track("root", "pose", pose, mk.Timeline.uniform(10, 3)),
                        "speed": mk.Track("speed", "value", np.zeros((3, 1)), mk.Timeline.uniform(10, 3))})
    with pytest.raises(mk.ConversionError, match="'speed'"):
        mk.write(tmp_path / "x.glb", motion)
    with pytest.warns(mk.MotionkitWarning, match="'speed'"):
        mk.write(tmp_path / "x.glb", motion, lossy=True)
    assert "speed" not in mk.api.read_motion(tmp_path / "x.glb").tracks


@pytest.mark.corpus
@pytest.mark.parametrize("name", ["BoxAnimated.glb", "blender_rigid_chain.glb", "RiggedSimple.glb"])
def test_other_gltf_scenes_are_refused_clearly(name: str) -> None:
    with pytest.raises(mk.FormatError, match="only motionkit's own glTF"):
        mk.read(corpus_file("gltf", name))


def test_broken_files_are_format_errors(tmp_path: Path) -> None:
    motion = mk.Motion({"root": mk.Track("root", "pose", np.tile([0, 0, 0, 0, 0, 0, 1.0], (3, 1)),
                                         mk.Timeline.uniform(10, 3))})
    good = tmp_path / "good.glb"
    mk.write(good, motion)
    data = good.read_bytes()
    cases = {"cut.glb": data[:-8], "short.glb": data[:10],
             "version.glb": data[:4] + struct.pack("<I", 1) + data[8:],
             "json.gltf": b"{not json", "deep.gltf": b"[" * 10_000}
    gltf, blob = unpack(good)
    gltf["asset"]["extras"]["motionkit"]["motions"][0]["bodies"] = [999]  # type: ignore[index]
    cases["index.gltf"] = json.dumps({**gltf, "buffers": [{"byteLength": 0}]}).encode()
    gltf["asset"]["extras"]["motionkit"]["motions"][0]["bodies"] = [1] * 100_000  # type: ignore[index]
    gltf["asset"]["extras"]["motionkit"]["motions"][0]["parents"] = [-1] * 100_000  # type: ignore[index]
    gltf["asset"]["extras"]["motionkit"]["motions"][0]["labels"] = ["x"] * 100_000  # type: ignore[index]
    gltf["asset"]["extras"]["motionkit"]["motions"][0]["frames"] = 10**9  # type: ignore[index]
    cases["huge.gltf"] = pack_gltf(gltf, blob)  # 10⁹ frames × 10⁵ bodies asked of a small file
    for name, content in cases.items():
        (tmp_path / name).write_bytes(content)
        with pytest.raises(mk.FormatError, match="budget" if name == "huge.gltf" else None):
            mk.read(tmp_path / name)


def test_accessors_and_nodes_that_do_not_fit_the_motion_are_refused(tmp_path: Path) -> None:
    """A translation output that is not VEC3, a negative count, keys that are not numbers,
    a channel on a node that is no body, a body listed twice and a parent below -1: each one
    FormatError (each was read as some other motion before)."""
    poses = np.zeros((5, 7))
    poses[:, 6], poses[:, 0] = 1, np.arange(5)
    motion = mk.Motion({"root": mk.Track("root", "pose", poses, mk.Timeline.uniform(30, 5))})
    good = tmp_path / "good.glb"
    mk.write(good, motion)
    gltf, blob = unpack(good)
    animation = gltf["animations"][0]
    moved = next(c for c in animation["channels"] if c["target"]["path"] == "translation")
    sampler = animation["samplers"][moved["sampler"]]
    entry = gltf["asset"]["extras"]["motionkit"]["motions"][0]

    def edited(change: object) -> dict:
        copy = json.loads(json.dumps(gltf))
        change(copy)  # type: ignore[operator]
        return copy

    keys = bytearray(blob)
    view = gltf["bufferViews"][gltf["accessors"][sampler["input"]]["bufferView"]]
    keys[view["byteOffset"]:view["byteOffset"] + 20] = np.full(5, np.nan, "<f4").tobytes()
    cases = {
        "scalar": (edited(lambda g: g["accessors"][sampler["output"]].update(type="SCALAR")), blob),
        "count": (edited(lambda g: g["accessors"][sampler["input"]].update(count=-1)), blob),
        "nan": (gltf, bytes(keys)),
        "stray": (edited(lambda g: g["animations"][0]["channels"][0]["target"].update(node=0)),
                  blob),
        "twice": (edited(lambda g: g["asset"]["extras"]["motionkit"]["motions"][0].update(
            bodies=entry["bodies"] * 2, labels=entry["labels"] * 2,
            parents=[-1] * (2 * len(entry["bodies"])))), blob),
        "parent": (edited(lambda g: g["asset"]["extras"]["motionkit"]["motions"][0].update(
            parents=[-5] * len(entry["bodies"]))), blob),
    }
    for name, (document, data) in cases.items():
        target = tmp_path / f"{name}.gltf"
        target.write_bytes(pack_gltf(document, data))
        with pytest.raises(mk.FormatError):
            mk.read(target)
    assert mk.read(good).tracks["links"].data[:, 0, 0].tolist() == [0, 1, 2, 3, 4]


def test_a_json_of_bare_numbers_is_refused_before_it_is_parsed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Numbers cost ~10 times their text once parsed: their count is bounded first."""
    from motionkit.formats.gltf import _container

    monkeypatch.setattr(_container, "MAX_JSON_VALUES", 1000)
    text = json.dumps({"asset": {"version": "2.0", "extras": {"junk": [0.5] * 2000}}})
    (tmp_path / "bomb.gltf").write_text(text)
    parsed = []
    monkeypatch.setattr(_container.json, "loads", lambda *a, **k: parsed.append(1))
    with pytest.raises(mk.FormatError, match="values"):
        mk.read(tmp_path / "bomb.gltf")
    assert not parsed


def test_link_attributes_come_back_and_far_poses_are_a_named_loss(tmp_path: Path) -> None:
    """The links track's attributes are read back; positions 4,000 km out (UTM), which
    float32 nodes round to 0.25 m, are refused unless lossy."""
    links = np.zeros((4, 2, 7))
    links[..., 6] = 1
    links[:, 1, 0] = 1 + np.arange(4) * 0.01
    motion = mk.Motion({"links": mk.Track("links", "pose", links, mk.Timeline.uniform(30, 4),
                                          ["a", "b"], {"frame": "world", "note": "kept"})})
    mk.write(tmp_path / "near.glb", motion)
    back = mk.read(tmp_path / "near.glb")
    assert back.tracks["links"].attrs == {"frame": "world", "note": "kept"}
    links[:, 0, :3] = [512345.678, 4000000.3, 10.1]
    far = mk.Motion({"links": mk.Track("links", "pose", links, mk.Timeline.uniform(30, 4),
                                       ["a", "b"])})
    with pytest.raises(mk.ConversionError, match="float32"):
        mk.write(tmp_path / "far.glb", far)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mk.write(tmp_path / "far.glb", far, lossy=True)


@pytest.mark.corpus
def test_each_motion_of_a_scene_keeps_its_own_colour(tmp_path: Path) -> None:
    """The same BVH twice: its sticks and end markers in two colours, one per motion (the
    mesh cache was keyed by geometry alone, so the second motion wore the first's)."""
    bvh = mk.read(corpus_file("bvh", "example.bvh"))
    assert isinstance(bvh, mk.Motion)
    target = tmp_path / "both.glb"
    write_scene(target, {"one": bvh, "two": bvh})
    gltf, _ = unpack(target)
    used = {mesh["primitives"][0]["material"] for mesh in gltf["meshes"]
            if mesh["name"] in ("stick", "marker")}
    assert len(used) == 2 == len(gltf["materials"])


@pytest.mark.corpus
def _cli(*args: str) -> int:
    try:
        main(list(args))
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0


def test_several_motions_in_one_scene_from_the_cli_and_the_api(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    walk, skeleton = _walk()
    bvh = corpus_file("bvh", "example.bvh")
    target = tmp_path / "both.glb"
    written = write_scene(target, {"walk": mk.kinematics.link_motion(skeleton, walk),
                                   "example": mk.api.read_motion(bvh)}, spacing=2.0)
    assert len(written) == 2
    with pytest.raises(mk.FormatError, match="holds 2 motions"):
        mk.read(target)
    assert _cli("info", str(target)) == 0  # info lists them instead
    assert "1: 'example': 2 frames" in capsys.readouterr().out
    example = mk.api.read_motion(target, motion="example")
    assert example.tracks["links"].frames == mk.api.read_motion(bvh).tracks["root"].frames
    gltf, _ = unpack(target)
    holder = gltf["asset"]["extras"]["motionkit"]["motions"][1]["node"]  # type: ignore[index]
    assert gltf["nodes"][holder]["translation"] == [0.0, 2.0, 0.0]  # type: ignore[index]
    cli = tmp_path / "cli.glb"
    code = _cli("convert", str(corpus_file("choreonoid", "SR1WalkPattern1.seq")), str(bvh), str(cli),
                "--model", str(corpus_file("choreonoid", "SR1.body")))
    assert code == 0 and "2 motions" in capsys.readouterr().out
    names = [m["name"] for m in unpack(cli)[0]["asset"]["extras"]["motionkit"]["motions"]]  # type: ignore[index]
    assert names == ["SR1WalkPattern1.seq", "example.bvh"]
    first = mk.api.read_motion(cli, motion=0)
    np.testing.assert_allclose(first.tracks["links"].data[..., :3],
                               mk.kinematics.link_motion(skeleton, walk).tracks["links"].data[..., :3],
                               rtol=0, atol=1e-6)
    assert _cli("convert", str(bvh), str(bvh), str(tmp_path / "x.bvh")) == 2
    err = capsys.readouterr().err
    assert "glTF" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_each_source_of_a_scene_gets_the_reader_options_its_reader_takes(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    seq, bvh = corpus_file("choreonoid", "SR1WalkPattern1.seq"), corpus_file("bvh", "example.bvh")
    body = corpus_file("choreonoid", "SR1.body")
    target = tmp_path / "metres.glb"
    # unit is the BVH reader's option: the .seq reader takes none and must not be given it
    assert _cli("convert", str(seq), str(bvh), str(target), "--model", str(body),
                "-R", "unit=m") == 0
    capsys.readouterr()
    in_metres = mk.api.read_motion(target, motion=1).tracks["links"].data[0, 0, :3]
    in_cm = mk.api.read_motion(bvh).tracks["root"].data[0, :3]
    np.testing.assert_allclose(in_metres, in_cm * 100, rtol=1e-6)
    assert _cli("convert", str(seq), str(bvh), str(tmp_path / "x.glb"), "--model", str(body),
                "-R", "nosuch=1") == 2
    err = capsys.readouterr().err
    assert "-R nosuch" in err and len(err.strip().splitlines()) == 1
    parc = corpus_file("parc", "ms", "dec2024_teaser_717_1_modified_opt.pkl")
    humanoid = str(corpus_file("parc", "character", "humanoid.xml"))
    assert _cli("convert", str(parc), str(bvh), str(tmp_path / "y.glb"), "--character", humanoid,
                "-R", f"character={humanoid}", "--lossy") == 0  # the same twice is the one
    capsys.readouterr()
    assert _cli("convert", str(parc), str(bvh), str(tmp_path / "z.glb"), "--character", humanoid,
                "-R", f"character={bvh}", "--lossy") == 2
    err = capsys.readouterr().err
    assert "given twice" in err and len(err.strip().splitlines()) == 1

@pytest.mark.corpus
def test_a_model_without_poses_is_refused_and_shapes_become_meshes(tmp_path: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        motion = mk.api.read_motion(corpus_file("mimickit", "humanoid_platform05.pkl"),
                                    character=corpus_file("parc", "character", "humanoid.xml"))
    assert motion.skeleton is not None
    mk.write(tmp_path / "p.glb", motion)
    gltf, _ = unpack(tmp_path / "p.glb")
    shapes = sum(len(b.shapes) for b in motion.skeleton.bodies)
    meshed = [n for n in gltf["nodes"] if "mesh" in n and ":" in n["name"]  # type: ignore[union-attr]
              and not n["name"].endswith((":stick", ":marker"))]  # type: ignore[index]
    assert len(meshed) == shapes > 0
    bare = mk.Motion({"root": motion.tracks["root"]}, motion.skeleton)
    with pytest.raises(mk.ConversionError, match="no joint values"):
        mk.write(tmp_path / "bare.glb", bare)


@pytest.mark.corpus
def test_a_terrain_is_drawn_and_kept(tmp_path: Path) -> None:
    human = corpus_file("parc", "character", "humanoid.xml")
    source = corpus_file("parc", "ms", "TEASER_TERRAIN.pkl")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        motion = mk.api.read_motion(source, character=human)
        mk.convert(source, tmp_path / "t.glb", character=human, lossy=True)  # its contacts: lost
    terrain = motion.terrain
    assert terrain is not None
    back = mk.api.read_motion(tmp_path / "t.glb").terrain
    assert back is not None
    np.testing.assert_array_equal(back.heights, terrain.heights)
    np.testing.assert_array_equal(back.origin, terrain.origin)
    assert (back.dx, back.dy) == (terrain.dx, terrain.dy)
    assert (back.bounds is None) == (terrain.bounds is None)
    gltf, _ = unpack(tmp_path / "t.glb")
    assert any(n["name"].endswith(":terrain") and "mesh" in n for n in gltf["nodes"])  # type: ignore[union-attr,index]

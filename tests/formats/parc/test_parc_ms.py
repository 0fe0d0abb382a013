"""PARC MS / legacy pickles: corpus files, byte-exact rewrite, legacy -> MS, variants, errors."""

from __future__ import annotations

import io
import pickle
import pickletools
import sys
import types
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import motionkit as mk
from conftest import corpus_file
from motionkit.errors import ConversionError, FormatError, MotionkitWarning
from motionkit.formats.parc import ms
from motionkit.formats.shared.pickles import safepickle, writepickle
from motionkit.model import Motion, Timeline, Track
from motionkit.model.terrain import Terrain

MS_FILES = ["sfu.pkl", "TEASER_TERRAIN.pkl", "dec2024_teaser_717_1_modified_opt.pkl"]
NUMPY_ONLY = ["sfu.pkl", "TEASER_TERRAIN.pkl"]
FRAMES = {"sfu.pkl": 15, "TEASER_TERRAIN.pkl": 58, "dec2024_teaser_717_1_modified_opt.pkl": 142}


def _humanoid() -> Path:
    return corpus_file("parc", "character", "humanoid.xml")


def _blobs(data: bytes) -> dict[str, bytes | None]:
    """The three inner blobs of an MS container (outer has no globals)."""
    outer = safepickle.loads(data, "x", "outer", allowed={})
    assert isinstance(outer, dict)
    return outer


def _globals(blob: bytes) -> set[str]:
    """Global names referenced by a pickle, found without executing it."""
    recent: list[object] = []
    memo: list[object] = []
    names = set()
    for op, arg, _ in pickletools.genops(blob):
        if op.name in ("SHORT_BINUNICODE", "BINUNICODE"):
            recent.append(arg)
        elif op.name in ("BINGET", "LONG_BINGET"):
            recent.append(memo[arg])
        elif op.name == "MEMOIZE":
            memo.append(recent[-1] if recent else None)
        elif op.name == "STACK_GLOBAL":
            names.add(f"{recent[-2]}.{recent[-1]}")
            recent.append(None)
        elif op.name == "GLOBAL":
            names.add(arg.replace(" ", "."))
            recent.append(None)
        else:
            recent.append(None)
    return names


@pytest.mark.parametrize("name", MS_FILES)
def test_corpus_ms_files_read(name: str) -> None:
    motion = mk.read(corpus_file("parc", "ms", name))
    frames = FRAMES[name]
    assert motion.tracks["root"].data.shape == (frames, 7)
    assert motion.tracks["joint_rotations"].data.shape == (frames, 14, 4)
    assert motion.tracks["contacts"].data.shape == (frames, 15)
    assert motion.tracks["root"].timeline.rate == 30
    assert motion.meta["loop_mode"] == "CLAMP"
    assert motion.meta["parc"]["fps"] == 30 and type(motion.meta["parc"]["fps"]) is int
    quats = motion.tracks["joint_rotations"].data
    assert np.allclose(np.linalg.norm(quats, axis=-1), 1, atol=1e-6)
    assert np.all(quats[..., 3] >= 0)  # x, y, z, w with w >= 0, as PARC writes
    hands = quats[:, [4, 7]]  # right_hand, left_hand are fixed bodies: identity
    assert np.array_equal(hands, np.broadcast_to([0, 0, 0, 1], hands.shape))
    assert isinstance(motion.terrain, Terrain)
    assert motion.terrain.bounds is not None
    assert motion.terrain.bounds.shape == (*motion.terrain.shape, 2)
    assert motion.terrain.dx == pytest.approx(0.4)


def test_torch_tensors_in_misc_read_without_torch() -> None:
    motion = mk.read(corpus_file("parc", "ms", "dec2024_teaser_717_1_modified_opt.pkl"))
    inds = motion.meta["parc"]["misc"]["hf_mask_inds"]
    assert len(inds) == 142
    assert all(isinstance(a, np.ndarray) and a.dtype == np.int64 and a.shape[1:] == (2,)
               for a in inds)
    assert inds[0].tolist() == [[13, 2], [13, 3], [14, 2], [14, 3]]
    rows, cols = motion.terrain.shape
    stacked = np.concatenate(inds)
    assert stacked[:, 0].max() < rows and stacked[:, 1].max() < cols


def test_misc_of_teaser_terrain() -> None:
    misc = mk.read(corpus_file("parc", "ms", "TEASER_TERRAIN.pkl")).meta["parc"]["misc"]
    assert list(misc) == ["path_nodes", "opt:body_constraints"]
    assert misc["path_nodes"].shape == (10, 3) and misc["path_nodes"].dtype == np.float32
    assert misc["opt:body_constraints"] == [[] for _ in range(15)]


@pytest.mark.parametrize("name", NUMPY_ONLY)
def test_numpy_only_files_rewrite_byte_for_byte(name: str, tmp_path: Path) -> None:
    source = corpus_file("parc", "ms", name)
    out = tmp_path / name
    mk.write(out, mk.read(source))
    assert out.read_bytes() == source.read_bytes()


def test_torch_file_motion_and_terrain_blobs_rewrite_exactly(tmp_path: Path) -> None:
    source = corpus_file("parc", "ms", "dec2024_teaser_717_1_modified_opt.pkl")
    out = tmp_path / "out.pkl"
    motion = mk.read(source)
    mk.write(out, motion)
    old, new = _blobs(source.read_bytes()), _blobs(out.read_bytes())
    assert new["motion_data"] == old["motion_data"]
    assert new["terrain_data"] == old["terrain_data"]
    # misc is re-written as numpy (PARC's helper save path), not as torch tensors
    assert _globals(new["misc_data"] or b"") <= {"numpy.core.multiarray._reconstruct",
                                                 "numpy.ndarray", "numpy.dtype"}
    again = mk.read(out).meta["parc"]["misc"]["hf_mask_inds"]
    for a, b in zip(again, motion.meta["parc"]["misc"]["hf_mask_inds"], strict=True):
        assert np.array_equal(a, b)


def test_written_file_has_the_layout_parc_loads(tmp_path: Path) -> None:
    """PARC's loader: MSMotionData(**d) needs exactly these keys; numpy-1 global names."""
    motion = _motion(frames=5, joints=3, bodies=4, rate=60.0)
    motion.terrain = Terrain(np.zeros((3, 4)), np.array([1.0, 2.0]), 0.5)
    out = tmp_path / "m.pkl"
    mk.write(out, motion)
    data = out.read_bytes()
    assert data[:2] == b"\x80\x04"
    blobs = _blobs(data)
    assert list(blobs) == ["motion_data", "terrain_data", "misc_data"]
    assert _globals(data) == set()
    for key in ("motion_data", "terrain_data"):
        blob = blobs[key]
        assert blob is not None and blob[:2] == b"\x80\x04"
        assert _globals(blob) == {"numpy.core.multiarray._reconstruct", "numpy.ndarray",
                                  "numpy.dtype"}
    values = safepickle.loads(blobs["motion_data"] or b"", out, "m")
    assert list(values) == list(ms.MOTION_KEYS)
    assert all(values[k].dtype == np.float32 and values[k].flags.c_contiguous
               for k in ("root_pos", "root_rot", "joint_rot", "body_contacts"))
    assert type(values["fps"]) is int and values["fps"] == 60
    assert values["loop_mode"] == "WRAP"
    terrain = safepickle.loads(blobs["terrain_data"] or b"", out, "t")
    assert list(terrain) == list(ms.TERRAIN_KEYS)
    assert type(terrain["dx"]) is float
    assert terrain["hf_maxmin"].shape == (3, 4, 2)
    assert np.all(terrain["hf_maxmin"][..., 0] == 1) and np.all(terrain["hf_maxmin"][..., 1] == -1)
    assert safepickle.loads(blobs["misc_data"] or b"", out, "misc") == {}


def test_legacy_file_reads_without_character() -> None:
    motion = mk.read(corpus_file("parc", "legacy_v0.1", "TEASER_TERRAIN.pkl"))
    assert motion.meta["parc"]["container"] == "legacy"
    assert motion.tracks["joints"].data.shape == (58, 28)
    assert motion.tracks["root"].data.shape == (58, 7)
    assert "joint_rotations" not in motion.tracks
    assert motion.meta["parc"]["fps"] == 30
    assert motion.terrain.shape == (102, 102)
    assert motion.terrain.attrs["name"] == "terrain"
    assert motion.meta["parc"]["misc"]["path_nodes"].dtype == np.float32  # torch tensor


def test_legacy_to_ms_reproduces_the_corpus_pair(tmp_path: Path) -> None:
    legacy = corpus_file("parc", "legacy_v0.1", "TEASER_TERRAIN.pkl")
    target = corpus_file("parc", "ms", "TEASER_TERRAIN.pkl")
    out = tmp_path / "converted.pkl"
    mk.convert(legacy, out, character=_humanoid())
    got, want = mk.read(out), mk.read(target)
    for name in ("root", "joint_rotations", "contacts"):
        assert np.abs(got.tracks[name].data - want.tracks[name].data).max() < 1e-6, name
    assert np.array_equal(got.terrain.heights, want.terrain.heights)
    assert np.array_equal(got.terrain.bounds, want.terrain.bounds)
    assert np.array_equal(got.terrain.origin, want.terrain.origin)
    assert got.terrain.dx == want.terrain.dx
    assert np.array_equal(got.meta["parc"]["misc"]["path_nodes"],
                          want.meta["parc"]["misc"]["path_nodes"])
    assert _blobs(out.read_bytes())["terrain_data"] == _blobs(target.read_bytes())["terrain_data"]


def test_legacy_without_character_cannot_become_ms(tmp_path: Path) -> None:
    legacy = corpus_file("parc", "legacy_v0.1", "TEASER_TERRAIN.pkl")
    with pytest.raises(ConversionError, match="character"):
        mk.convert(legacy, tmp_path / "x.pkl")
    assert not (tmp_path / "x.pkl").exists()


def test_character_labels_and_dof_track() -> None:
    motion = mk.read(corpus_file("parc", "ms", "sfu.pkl"), character=_humanoid())
    assert motion.tracks["joint_rotations"].labels[0] == "torso"
    assert motion.tracks["contacts"].labels[-1] == "left_foot"
    assert motion.tracks["joints"].data.shape == (15, 28)
    assert motion.skeleton is not None and len(motion.skeleton.bodies) == 15


# ----------------------------------------------------------------- synthetic files


def _motion(frames: int = 4, joints: int = 2, bodies: int = 3, rate: float = 30.0,
            seed: int = 0) -> Motion:
    rng = np.random.default_rng(seed)
    timeline = Timeline.uniform(rate, frames)
    q = rng.normal(size=(frames, 1 + joints, 4))
    q /= np.linalg.norm(q, axis=-1, keepdims=True)
    root = np.concatenate([rng.normal(size=(frames, 3)), q[:, 0]], axis=1).astype(np.float32)
    motion = Motion(meta={"loop_mode": "WRAP"})
    motion.add(Track("root", "pose", root, timeline))
    motion.add(Track("joint_rotations", "quaternion", q[:, 1:].astype(np.float32), timeline))
    motion.add(Track("contacts", "value", rng.random((frames, bodies)).astype(np.float32),
                     timeline))
    return motion


def _container(motion: dict | None = None, terrain: dict | None = None,
               misc: object = None, protocol: int = 4) -> bytes:
    """An MS container built with the standard pickler (trusted test data)."""
    def blob(value: object) -> bytes | None:
        return None if value is None else pickle.dumps(value, protocol=protocol)
    return pickle.dumps({"motion_data": blob(motion), "terrain_data": blob(terrain),
                         "misc_data": blob(misc)}, protocol=protocol)


def _motion_dict(frames: int = 3, joints: int = 2) -> dict:
    rot = np.zeros((frames, 4), np.float32)
    rot[:, 3] = 1
    jrot = np.zeros((frames, joints, 4), np.float32)
    jrot[..., 3] = 1
    return {"root_pos": np.zeros((frames, 3), np.float32), "root_rot": rot, "joint_rot": jrot,
            "body_contacts": np.zeros((frames, joints + 1), np.float32), "fps": 30,
            "loop_mode": "CLAMP"}


@pytest.mark.parametrize("protocol", [2, 3, 4, 5])
def test_protocols_2_to_5_read(protocol: int, tmp_path: Path) -> None:
    path = tmp_path / "p.pkl"
    terrain = {"hf": np.arange(6, dtype=np.float32).reshape(2, 3),
               "hf_maxmin": np.zeros((2, 3, 2), np.float32),
               "min_point": np.array([1, 2], np.float32), "dx": 0.25}
    path.write_bytes(_container(_motion_dict(), terrain, {"k": [1, (2, 3)]}, protocol))
    motion = mk.read(path)
    assert motion.tracks["root"].frames == 3
    assert np.array_equal(motion.terrain.heights, terrain["hf"])
    assert motion.meta["parc"]["misc"] == {"k": [1, (2, 3)]}


@pytest.mark.parametrize("protocol", [2, 4])
def test_paths_and_sets_in_misc_become_plain_data(protocol: int, tmp_path: Path) -> None:
    """PARC's legacy converter turns Path -> str and sets -> sorted lists; so do we."""
    import pathlib

    misc = {"source": pathlib.PurePosixPath("/data/a.pkl"), "win": pathlib.PureWindowsPath("C:/d"),
            "tags": {"b", "a"}, "frozen": frozenset({2, 1})}
    path = tmp_path / "m.pkl"
    path.write_bytes(_container(_motion_dict(), None, misc, protocol))
    assert mk.read(path).meta["parc"]["misc"] == {"source": "/data/a.pkl", "win": "C:\\d",
                                                  "tags": ["a", "b"], "frozen": [1, 2]}


def test_numpy2_global_names_read(tmp_path: Path) -> None:
    path = tmp_path / "n2.pkl"
    data = _container(_motion_dict(), misc={"x": np.float32(2.5)})
    assert b"numpy._core" in _blobs(data)["motion_data"]  # written by numpy 2 here
    path.write_bytes(data)
    assert mk.read(path).meta["parc"]["misc"]["x"] == np.float32(2.5)
    ours = tmp_path / "ours.pkl"
    mk.write(ours, mk.read(path))
    assert b"numpy._core" not in _blobs(ours.read_bytes())["motion_data"]


def test_float32_dx_kept_on_rewrite(tmp_path: Path) -> None:
    terrain = {"hf": np.zeros((2, 2), np.float32), "hf_maxmin": np.zeros((2, 2, 2), np.float32),
               "min_point": np.zeros(2, np.float32), "dx": np.float32(0.4)}
    source = tmp_path / "a.pkl"
    source.write_bytes(writepickle.dumps({
        "motion_data": writepickle.dumps(_motion_dict()),
        "terrain_data": writepickle.dumps(terrain), "misc_data": writepickle.dumps({})}))
    out = tmp_path / "b.pkl"
    mk.write(out, mk.read(source))
    assert out.read_bytes() == source.read_bytes()


def test_third_party_variants_warn(tmp_path: Path) -> None:
    motion = _motion_dict(frames=4)
    motion["loop_mode"] = "wrap"
    motion["body_contacts"] = np.zeros((4, 2), np.float32)
    terrain = {"hf": np.zeros((3, 3), np.float32), "hf_maxmin": np.array([1, -1], np.float32),
               "min_point": np.zeros(3, np.float32), "dx": 0.5}
    path = tmp_path / "v.pkl"
    path.write_bytes(_container(motion, terrain, {}))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = mk.read(path)
    text = " ".join(str(w.message) for w in caught if w.category is MotionkitWarning)
    assert "loop_mode" in text and "hf_maxmin" in text and "min_point" in text
    assert result.meta["loop_mode"] == "WRAP"
    assert result.terrain.bounds.shape == (3, 3, 2)
    assert result.tracks["contacts"].data.shape == (4, 2)


@pytest.mark.parametrize(("change", "field"), [
    ({"root_rot": np.zeros((4, 4), np.float32)}, "root_rot"),
    ({"joint_rot": np.zeros((3, 2, 3), np.float32)}, "joint_rot"),
    ({"body_contacts": np.zeros((5, 3), np.float32)}, "body_contacts"),
    ({"root_pos": np.zeros((3, 2), np.float32)}, "root_pos"),
    ({"loop_mode": "BOUNCE"}, "loop_mode"),
    ({"fps": -3}, "fps"),
    ({"fps": "30"}, "fps"),
    ({"joint_rot": [1, 2]}, "joint_rot"),
])
def test_inconsistent_shapes_name_the_field(change: dict, field: str, tmp_path: Path) -> None:
    motion = _motion_dict()
    motion.update(change)
    path = tmp_path / "bad.pkl"
    path.write_bytes(_container(motion, None, {}))
    with pytest.raises(FormatError, match=field) as info:
        mk.read(path)
    assert info.value.path == str(path)


def test_missing_key_and_wrong_character(tmp_path: Path) -> None:
    motion = _motion_dict()
    del motion["joint_rot"]
    path = tmp_path / "m.pkl"
    path.write_bytes(_container(motion, None, {}))
    with pytest.raises(FormatError, match="joint_rot"):
        mk.read(path)
    good = tmp_path / "g.pkl"
    good.write_bytes(_container(_motion_dict(joints=5), None, {}))
    with pytest.raises(FormatError, match="character"):
        mk.read(good, character=_humanoid())


def test_not_a_parc_file(tmp_path: Path) -> None:
    path = tmp_path / "other.pkl"
    path.write_bytes(pickle.dumps({"frames_x": 1}, protocol=4))
    with pytest.raises(FormatError, match="not a PARC motion file"):
        mk.read(path, format="parc")
    truncated = tmp_path / "t.pkl"
    truncated.write_bytes(_container(_motion_dict())[:-10])
    with pytest.raises(FormatError):
        mk.read(truncated, format="parc")


@pytest.fixture
def stub_module():
    """Register a throw-away module so the standard pickler can name a class in it."""
    created: list[str] = []

    def make(name: str, cls_name: str) -> type:
        parts = name.split(".")
        for end in range(1, len(parts) + 1):
            prefix = ".".join(parts[:end])
            if prefix not in sys.modules:
                sys.modules[prefix] = types.ModuleType(prefix)
                created.append(prefix)
        cls = type(cls_name, (), {"__module__": name})
        setattr(sys.modules[name], cls_name, cls)
        return cls

    yield make
    for name in created:
        sys.modules.pop(name, None)


def _with_misc(misc_blob: bytes) -> bytes:
    return pickle.dumps({"motion_data": pickle.dumps(_motion_dict(), protocol=4),
                         "terrain_data": None, "misc_data": misc_blob}, protocol=4)


def test_unknown_class_in_misc_is_a_warning(tmp_path: Path, stub_module) -> None:
    """An unknown (non-dangerous) class drops that misc key only; the file still loads."""
    thing = stub_module("thirdparty.x", "Thing")
    obj = thing()
    obj.a = 1
    path = tmp_path / "u.pkl"
    path.write_bytes(_with_misc(pickle.dumps({"good": "ok", "bad": [obj]}, protocol=4)))
    with pytest.warns(MotionkitWarning, match="thirdparty.x.Thing"):
        motion = mk.read(path)
    assert motion.meta["parc"]["misc"] == {"good": "ok"}
    assert motion.tracks["root"].frames == 3


def test_broken_misc_blob_is_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "b.pkl"
    blob = pickle.dumps({"a": np.zeros(4, np.float32)}, protocol=4)
    broken = blob.replace(b"K\x04\x85", b"K\x05\x85")  # shape no longer fits the data
    assert broken != blob
    path.write_bytes(_with_misc(broken))
    with pytest.warns(MotionkitWarning, match="misc data left out"):
        motion = mk.read(path)
    assert "misc" not in motion.meta["parc"] and motion.tracks["root"].frames == 3
    with pytest.raises(ConversionError, match="misc data"):
        mk.write(tmp_path / "c.pkl", motion)


@pytest.mark.parametrize("module", ["parc.motion_synthesis.motion_opt.motion_optimization",
                                    "tools.motion_opt.motion_optimization"])
def test_body_constraint_objects_become_dicts(tmp_path: Path, stub_module, module: str) -> None:
    constraint_cls = stub_module(module, "BodyConstraint")
    constraint = constraint_cls()
    constraint.start_frame_idx, constraint.end_frame_idx = 2, 5
    constraint.constraint_point = np.array([1.0, 2.0, 3.0], np.float32)
    misc = {"opt:body_constraints": [[constraint], [], [{}]]}
    path = tmp_path / "c.pkl"
    path.write_bytes(_with_misc(pickle.dumps(misc, protocol=4)))
    constraints = mk.read(path).meta["parc"]["misc"]["opt:body_constraints"]
    entry = constraints[0][0]
    assert entry["start_frame_idx"] == 2 and entry["end_frame_idx"] == 5
    assert np.array_equal(entry["constraint_point"], [1, 2, 3])
    assert constraints[1:] == [[], [{}]]


def test_legacy_subterrain_under_head_module_path(tmp_path: Path, stub_module) -> None:
    sub_cls = stub_module("parc.util.terrain_util", "SubTerrain")
    sub = sub_cls()
    sub.__dict__.update({"terrain_name": "t", "hf": np.ones((2, 3), np.float32),
                         "dims": np.array([2, 3]), "min_point": np.array([1, 2], np.float32),
                         "dxdy": np.array([0.5, 0.5], np.float32),
                         "hf_mask": np.zeros((2, 3), bool)})
    frames = np.zeros((4, 6 + 2), np.float32)
    frames[:, 6:] = [0.1, -0.2]
    path = tmp_path / "legacy.pkl"
    path.write_bytes(pickle.dumps({"frames": frames, "contacts": np.zeros((4, 2), np.float32),
                                   "terrain": sub, "fps": 29.97, "loop_mode": "WRAP",
                                   "loss": 0.5, "tags": {"b", "a"}}, protocol=4))
    motion = mk.read(path)
    assert motion.terrain.shape == (2, 3) and motion.terrain.bounds is None
    assert motion.tracks["root"].timeline.rate == 30  # PARC snaps 29 < fps < 31 to 30
    assert motion.meta["loop_mode"] == "WRAP"
    assert motion.meta["parc"]["misc"] == {"loss": 0.5, "tags": ["a", "b"]}
    assert np.allclose(motion.tracks["joints"].data, [[0.1, -0.2]] * 4)


# ----------------------------------------------------------------- writer rules


def test_writer_refuses_non_integral_rate_unless_lossy(tmp_path: Path) -> None:
    motion = _motion(rate=29.97)
    with pytest.raises(ConversionError, match="frame rate"):
        mk.write(tmp_path / "a.pkl", motion)
    assert not (tmp_path / "a.pkl").exists()
    with pytest.warns(MotionkitWarning, match="frame rate"):
        mk.write(tmp_path / "a.pkl", motion, lossy=True)
    assert mk.read(tmp_path / "a.pkl").meta["parc"]["fps"] == 30


def test_writer_refuses_other_tracks_and_non_plain_misc(tmp_path: Path) -> None:
    motion = _motion()
    motion.add(Track("zmp", "vector3", np.zeros((4, 3)), motion.tracks["root"].timeline))
    with pytest.raises(ConversionError, match="zmp"):
        mk.write(tmp_path / "a.pkl", motion)
    del motion.tracks["zmp"]
    motion.meta["parc"] = {"misc": {"obj": Path("x")}}
    with pytest.raises(ConversionError, match="obj"):
        mk.write(tmp_path / "a.pkl", motion)
    motion.meta["parc"] = {"misc": {"arr": np.array(["a"], dtype=object)}}
    with pytest.raises(ConversionError, match="arr"):
        mk.write(tmp_path / "a.pkl", motion)
    motion.meta["loop_mode"] = "clamp"
    motion.meta["parc"] = {"misc": {"ok": {"a": [np.zeros(2), "s", 1, 2.5, True, None]}}}
    mk.write(tmp_path / "a.pkl", motion)
    again = mk.read(tmp_path / "a.pkl")
    assert again.meta["loop_mode"] == "CLAMP"
    assert again.meta["parc"]["misc"]["ok"]["a"][1:] == ["s", 1, 2.5, True, None]


def test_writer_needs_rotations_or_character(tmp_path: Path) -> None:
    motion = _motion()
    del motion.tracks["joint_rotations"]
    with pytest.raises(ConversionError, match="joint rotations"):
        mk.write(tmp_path / "a.pkl", motion)


def test_terrain_only_container(tmp_path: Path) -> None:
    terrain = Terrain(np.ones((2, 3), np.float32), np.array([0.0, 0.0]), 0.5)
    mk.write(tmp_path / "t.pkl", Motion(terrain=terrain))
    back = mk.read(tmp_path / "t.pkl")
    assert not back.tracks and np.array_equal(back.terrain.heights, terrain.heights)
    assert _blobs((tmp_path / "t.pkl").read_bytes())["motion_data"] is None
    with pytest.raises(ConversionError, match="dy"):
        mk.write(tmp_path / "u.pkl", Motion(terrain=Terrain(terrain.heights, terrain.origin,
                                                            0.5, 0.25)))


def test_sniff() -> None:
    assert ms.sniff(_container(_motion_dict()))
    assert ms.sniff(pickle.dumps({"frames": 1}, protocol=4))
    assert not ms.sniff(b"motions:\n  - file: a.pkl\n")
    assert not ms.sniff(pickle.dumps([1, 2], protocol=4))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(frames=st.integers(1, 12), joints=st.integers(1, 5), bodies=st.integers(1, 6),
       rate=st.integers(1, 240), seed=st.integers(0, 2**31), wrap=st.booleans(),
       contacts=st.booleans())
def test_round_trip_random_motions(tmp_path: Path, frames: int, joints: int, bodies: int,
                                   rate: int, seed: int, wrap: bool, contacts: bool) -> None:
    motion = _motion(frames, joints, bodies, float(rate), seed)
    motion.meta["loop_mode"] = "WRAP" if wrap else "CLAMP"
    if not contacts:
        del motion.tracks["contacts"]
    rng = np.random.default_rng(seed)
    motion.terrain = Terrain(rng.normal(size=(3, 2)).astype(np.float32),
                             rng.normal(size=2).astype(np.float32), 0.1 + rng.random(),
                             bounds=rng.normal(size=(3, 2, 2)).astype(np.float32))
    path = tmp_path / "r.pkl"
    mk.write(path, motion)
    back = mk.read(path)
    for name, track in motion.tracks.items():
        assert np.array_equal(back.tracks[name].data, track.data), name
    assert ("contacts" in back.tracks) == contacts
    assert back.tracks["root"].timeline.rate == rate
    assert back.meta["loop_mode"] == motion.meta["loop_mode"]
    assert np.array_equal(back.terrain.heights, motion.terrain.heights)
    assert np.array_equal(back.terrain.bounds, motion.terrain.bounds)
    assert back.terrain.dx == pytest.approx(motion.terrain.dx)
    data = path.read_bytes()
    mk.write(path, back)
    assert path.read_bytes() == data


@pytest.mark.parametrize("protocol", [2, 3, 4, 5])
def test_container_split_in_place_matches_the_general_decode(protocol: int) -> None:
    blob = b"x" * 300
    layouts = [{"motion_data": blob}, {"motion_data": b"", "terrain_data": None,
                                       "misc_data": blob * 1000},
               {}, {"motion_data": blob, "other": blob}, {"motion_data": "text"}]
    splits = 0
    for layout in layouts:
        data = pickle.dumps(layout, protocol=protocol)
        outer = safepickle.loads(data, "x", "file", allowed=safepickle.CONTAINER_GLOBALS)
        split = safepickle.split_container(data, "x", ms.MS_KEYS)
        if split is not None:  # else the caller decodes it in full
            splits += 1
            assert split.keys() == outer.keys()
            assert all(outer[k] == (None if v is None else data[v.start:v.stop])
                       for k, v in split.items())
    assert splits == (0 if protocol == 2 else 2)  # protocol 2 spells bytes with globals
    with pytest.raises(safepickle.UnsafePickleError, match="declares"):
        safepickle.split_container(b"\x80\x04\x8e" + (1 << 50).to_bytes(8, "little") + b"x.",
                                   "x", ms.MS_KEYS)


# ------------------------------------------------- writer: no silent loss (bug hunt)


def _plain_pickle_loads(blob: bytes) -> object:
    """Load one of our own blobs as PARC would, allowing only NumPy's and builtins' globals."""
    class Restricted(pickle.Unpickler):
        def find_class(self, module: str, name: str) -> object:
            if module.split(".")[0] not in ("numpy", "collections", "builtins"):
                raise pickle.UnpicklingError(f"global {module}.{name}")
            return super().find_class(module, name)
    return Restricted(io.BytesIO(blob)).load()


@pytest.mark.parametrize("lossy", [False, True])
def test_values_beyond_float32_are_refused_not_made_infinite(lossy: bool, tmp_path: Path) -> None:
    """r05: finite values that float32 cannot hold would become inf; no lossy escape."""
    out = tmp_path / "a.pkl"
    for field in ("root", "joint_rotations", "contacts"):
        motion = _motion()
        track = motion.tracks[field]
        data = np.array(track.data, dtype=np.float64)
        data[1].flat[0] = -1e39
        motion.add(track.with_data(data))
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no NumPy overflow warning either
            with pytest.raises(ConversionError, match="float32"):
                mk.write(out, motion, lossy=lossy)
        assert not out.exists()
    motion = _motion()
    motion.terrain = Terrain(np.array([[0.0, 5e38]]), np.array([0.0, 0.0]), 0.5)
    with pytest.raises(ConversionError, match="float32"):
        mk.write(out, motion, lossy=lossy)
    # non-finite values are kept as they are, and ordinary rounding is the format's nature
    motion = _motion()
    root = np.array(motion.tracks["root"].data, dtype=np.float64)
    root[0, 0], root[1, 0], root[2, 0] = np.inf, np.nan, 123456789.123
    motion.add(motion.tracks["root"].with_data(root))
    mk.write(out, motion, lossy=lossy)
    back = mk.read(out).tracks["root"].data[:3, 0]
    assert back[0] == np.inf and np.isnan(back[1]) and back[2] == np.float32(123456789.123)


def _labelled_motion() -> Motion:
    motion = _motion(joints=2, bodies=3)
    motion.meta.update({"subject": "S07", "epsg": 32633, "notes": {"take": 3, "ok": [True, None]},
                        "offset": np.arange(3.0)})
    motion.tracks["joint_rotations"].labels = ["hip", "knee"]
    motion.tracks["contacts"].labels = ["a", "b", "c"]
    motion.tracks["contacts"].attrs["threshold"] = 0.5
    motion.tracks["root"].attrs["orientation"] = False
    motion.terrain = Terrain(np.zeros((2, 2)), np.array([0.0, 0.0]), 0.5, attrs={"name": "hill"})
    return motion


def test_plain_metadata_labels_and_attrs_round_trip(tmp_path: Path) -> None:
    """r06: kept in misc_data['motionkit'] (PARC ignores unknown misc keys), restored on read."""
    motion = _labelled_motion()
    motion.meta["parc"] = {"misc": {"loss": 0.25}}
    out = tmp_path / "m.pkl"
    with warnings.catch_warnings():
        warnings.simplefilter("error", MotionkitWarning)
        mk.write(out, motion)
        back = mk.read(out)
    for key in ("subject", "epsg", "notes"):
        assert back.meta[key] == motion.meta[key]
    assert np.array_equal(back.meta["offset"], motion.meta["offset"])
    assert back.meta["name"] == "m" and back.meta["parc"]["misc"] == {"loss": 0.25}
    for name, track in motion.tracks.items():
        assert back.tracks[name].labels == track.labels, name
        assert back.tracks[name].attrs == track.attrs, name
    assert back.terrain.attrs == {"name": "hill"}
    # PARC's loader: motion keys unchanged, misc a dict of text keys, only NumPy/builtins inside
    blobs = _blobs(out.read_bytes())
    assert list(safepickle.loads(blobs["motion_data"] or b"", out, "m")) == list(ms.MOTION_KEYS)
    misc = _plain_pickle_loads(blobs["misc_data"] or b"")
    assert isinstance(misc, dict) and list(misc) == ["loss", "motionkit"]
    assert _globals(blobs["misc_data"] or b"") <= {"numpy.core.multiarray._reconstruct",
                                                   "numpy.ndarray", "numpy.dtype"}
    # our own file re-written is the same file
    mk.write(tmp_path / "again.pkl", back)
    assert (tmp_path / "again.pkl").read_bytes() == out.read_bytes()


def test_labels_a_character_explains_are_not_stored(tmp_path: Path) -> None:
    source = corpus_file("parc", "ms", "sfu.pkl")
    out = tmp_path / "sfu.pkl"
    motion = mk.read(source, character=_humanoid())
    mk.write(out, motion, character=_humanoid())
    assert out.read_bytes() == source.read_bytes()
    renamed = [f"c{i}" for i in range(15)]  # labels of its own win over the character's
    motion.tracks["contacts"].labels = renamed
    mk.write(out, motion, character=_humanoid())
    assert mk.read(out, character=_humanoid()).tracks["contacts"].labels == renamed


def test_non_plain_metadata_and_attrs_refused_unless_lossy(tmp_path: Path) -> None:
    motion = _labelled_motion()
    motion.meta["path"] = Path("x")
    motion.tracks["root"].attrs["obj"] = object()
    out = tmp_path / "m.pkl"
    with pytest.raises(ConversionError, match=r"'path'.*lossy") as caught:
        mk.write(out, motion)
    assert "'obj'" in str(caught.value) and not out.exists()
    with pytest.warns(MotionkitWarning, match="'path'"):
        mk.write(out, motion, lossy=True)
    back = mk.read(out)
    assert "path" not in back.meta and back.meta["subject"] == "S07"
    assert back.tracks["root"].attrs == {"orientation": False}


def test_str_subclasses_are_not_plain(tmp_path: Path) -> None:
    """A str subclass would be pickled under its own class name, which PARC cannot import."""
    class Tagged(str):
        pass
    motion = _motion()
    motion.meta["tag"] = [Tagged("on")]
    with pytest.raises(ConversionError, match="'tag'"):
        mk.write(tmp_path / "m.pkl", motion)


@pytest.mark.parametrize("lossy", [False, True])
@pytest.mark.parametrize("name, timeline", [
    ("joint_rotations", Timeline.uniform(60.0, 4)),
    ("joint_rotations", Timeline.uniform(30.0, 4, start=5.0)),
    ("contacts", Timeline.stamped([0, 1, 2, 3.5])),
])
def test_tracks_on_another_timeline_are_refused(name: str, timeline: Timeline, lossy: bool,
                                                tmp_path: Path) -> None:
    """r07: PARC has one frame rate; re-timing a track silently is refused even with lossy."""
    motion = _motion()
    track = motion.tracks[name]
    motion.add(Track(name, track.kind, track.data, timeline))
    with pytest.raises(ConversionError, match=rf"{name}.*resample"):
        mk.write(tmp_path / "m.pkl", motion, lossy=lossy)
    assert not (tmp_path / "m.pkl").exists()


def test_lossy_drops_non_plain_misc_and_non_text_keys(tmp_path: Path) -> None:
    """r13: lossy drops (with a warning) what the default refuses."""
    motion = _motion()
    out = tmp_path / "m.pkl"
    motion.meta["parc"] = {"misc": {"ok": 1, "obj": {1, 2}}}
    with pytest.raises(ConversionError, match=r"'obj'.*lossy"):
        mk.write(out, motion)
    with pytest.warns(MotionkitWarning, match="'obj'"):
        mk.write(out, motion, lossy=True)
    assert mk.read(out).meta["parc"]["misc"] == {"ok": 1}
    motion.meta["parc"] = {"misc": {7: "seven", "k": 1}}
    with pytest.raises(ConversionError, match="int"):
        mk.write(out, motion)
    with pytest.warns(MotionkitWarning, match="int"):
        mk.write(out, motion, lossy=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", MotionkitWarning)
        assert mk.read(out).meta["parc"]["misc"] == {"k": 1}


def test_foreign_motionkit_misc_key_is_kept_as_misc(tmp_path: Path) -> None:
    """A 'motionkit' misc entry that is not ours stays misc data (with a warning)."""
    path = tmp_path / "f.pkl"
    path.write_bytes(_container(_motion_dict(), misc={"motionkit": {"version": "1.0"}}))
    with pytest.warns(MotionkitWarning, match="motionkit"):
        motion = mk.read(path)
    assert motion.meta["parc"]["misc"] == {"motionkit": {"version": "1.0"}}
    mk.write(tmp_path / "g.pkl", motion)  # nothing of ours to add: written back as it was
    motion.meta["subject"] = "S07"
    with pytest.raises(ConversionError, match="motionkit"):
        mk.write(tmp_path / "h.pkl", motion)


def test_joint_values_the_character_lacks_are_reported(tmp_path: Path) -> None:
    motion = mk.read(corpus_file("parc", "ms", "sfu.pkl"), character=_humanoid())
    del motion.tracks["joint_rotations"]
    joints = motion.tracks["joints"]
    motion.add(Track("joints", "value", np.concatenate([joints.data, joints.data[:, :1]], axis=1),
                     joints.timeline, [*joints.labels, "tail"]))
    with pytest.raises(ConversionError, match="tail"):
        mk.write(tmp_path / "j.pkl", motion, character=_humanoid())
    with pytest.warns(MotionkitWarning, match="tail"):
        mk.write(tmp_path / "j.pkl", motion, character=_humanoid(), lossy=True)


def test_contacts_of_another_layout_are_reported(tmp_path: Path) -> None:
    motion = _motion(bodies=3)
    contacts = motion.tracks["contacts"]
    motion.add(Track("contacts", "value", contacts.data[:, :, None], contacts.timeline,
                     ["a", "b", "c"]))
    with pytest.raises(ConversionError, match="contacts"):
        mk.write(tmp_path / "c.pkl", motion)
    with pytest.warns(MotionkitWarning, match="contacts"):
        mk.write(tmp_path / "c.pkl", motion, lossy=True)
    assert mk.read(tmp_path / "c.pkl").tracks["contacts"].data.shape == (4, 3)


def test_misc_added_to_a_file_without_misc_is_written(tmp_path: Path) -> None:
    path = tmp_path / "n.pkl"
    path.write_bytes(_container(_motion_dict()))
    motion = mk.read(path)
    mk.write(tmp_path / "same.pkl", motion)
    assert _blobs((tmp_path / "same.pkl").read_bytes())["misc_data"] is None
    motion.meta["parc"]["misc"] = {"loss": 0.5}
    motion.meta["subject"] = "S07"
    mk.write(path, motion)
    back = mk.read(path)
    assert back.meta["parc"]["misc"] == {"loss": 0.5} and back.meta["subject"] == "S07"


def _cuda_tensor(stub_module, values: np.ndarray) -> object:
    """An object that pickles as torch does a float32 CUDA tensor (legacy torch.save bytes
    inside ``torch.storage._load_from_bytes``), built without torch."""
    storage_cls = stub_module("torch", "FloatStorage")
    load = stub_module("torch.storage", "_load_from_bytes")
    rebuild = stub_module("torch._utils", "_rebuild_tensor_v2")
    marker = object()

    class Storage(pickle.Pickler):
        def persistent_id(self, obj: object) -> object:
            return ("storage", storage_cls, "0", "cuda:0", values.size, None) if obj is marker else None

    head = io.BytesIO()
    for part in (0x1950A86A20F9469CFC6C, 1001, {"protocol_version": 1001, "little_endian": True,
                                                "type_sizes": {"short": 2, "int": 4, "long": 4}}):
        pickle.dump(part, head, protocol=2)
    Storage(head, protocol=2).dump(marker)
    pickle.dump(["0"], head, protocol=2)
    stream = head.getvalue() + np.int64(values.size).tobytes() + values.astype("<f4").tobytes()

    class Loaded:  # pickles as torch.storage._load_from_bytes(stream)
        def __reduce__(self) -> tuple[object, ...]:
            return (load, (stream,))

    class Tensor:  # pickles as torch._utils._rebuild_tensor_v2(storage, 0, size, stride, …)
        def __reduce__(self) -> tuple[object, ...]:
            return (rebuild, (Loaded(), 0, values.shape, (values.shape[1], 1), False, {}))

    return Tensor()


def test_terrain_only_export_with_cuda_tensors_reads_without_torch(tmp_path: Path,
                                                                   stub_module) -> None:
    heights = np.arange(6, dtype=np.float32).reshape(2, 3)
    sub_cls = stub_module("util.terrain_util", "SubTerrain")
    sub = sub_cls()
    sub.__dict__.update({"hf": _cuda_tensor(stub_module, heights),
                         "min_point": np.array([1, 2], np.float32),
                         "dxdy": np.array([0.5, 0.5], np.float32)})
    path = tmp_path / "terrain.pkl"
    path.write_bytes(pickle.dumps({"terrain": sub, "seed": 7}, protocol=4))
    motion = mk.read(path)
    assert isinstance(motion, Motion) and not motion.tracks
    np.testing.assert_array_equal(motion.terrain.heights, heights)
    assert motion.meta["parc"]["misc"] == {"seed": 7}
    mk.write(tmp_path / "again.pkl", motion)  # a terrain-only MS file
    np.testing.assert_array_equal(mk.read(tmp_path / "again.pkl").terrain.heights, heights)


@pytest.mark.parametrize("shared", [False, True])
def test_numpy_only_files_rewrite_byte_for_byte_however_dtypes_were_pickled(
        tmp_path: Path, shared: bool) -> None:
    """A writer that handed each array a dtype object of its own (arrays that were once
    unpickled, say) pickles every dtype anew; one sharing them pickles memo references.
    Both rewrite to the same bytes: the reader keeps which arrays shared a dtype object."""
    import copy

    rng = np.random.default_rng(3)
    rotations = rng.normal(size=(4, 3, 4))
    rotations /= np.linalg.norm(rotations, axis=-1, keepdims=True)
    arrays = {"root_pos": rng.random((4, 3)), "root_rot": rotations[:, 0],
              "joint_rot": rotations[:, 1:], "body_contacts": rng.random((4, 3))}
    one = np.dtype(np.float32)
    motion = {key: value.astype(np.float32).view(one if shared else copy.deepcopy(one))
              for key, value in arrays.items()}
    motion.update(fps=30, loop_mode="WRAP")
    terrain = {"hf": rng.random((3, 2)).astype(np.float32),
               "hf_maxmin": rng.random((3, 2, 2)).astype(np.float32),
               "min_point": np.zeros(2, np.float32), "dx": 0.5}
    if not shared:
        terrain = {key: value.view(copy.deepcopy(value.dtype)) if isinstance(value, np.ndarray)
                   else value for key, value in terrain.items()}
    original = writepickle.dumps({"motion_data": writepickle.dumps(motion),
                                  "terrain_data": writepickle.dumps(terrain),
                                  "misc_data": writepickle.dumps({})})
    emitted = original.count(b"\x8c\x02f4")  # one per dtype pickled anew
    assert emitted == (2 if shared else 7)  # once per blob, or once per array
    path = tmp_path / "m.pkl"
    path.write_bytes(original)
    mk.write(tmp_path / "again.pkl", mk.read(path))
    assert (tmp_path / "again.pkl").read_bytes() == original

"""MotionLib: interpolation, loop modes, velocities, sampling, sources (file, folder, YAML)."""

from __future__ import annotations

import importlib.util
import re
import shutil
import sys
import types
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

import motionkit as mk
from conftest import corpus_file
from motionkit.errors import FormatError, MotionkitError
from motionkit.formats.parc import motionlist
from motionkit.model import Motion, Timeline, Track
from motionkit.motionlib import MotionLib, library
from motionkit.spatial import quaternion as quat


def _humanoid() -> Path:
    return corpus_file("parc", "character", "humanoid.xml")


def _line(frames: int = 5, rate: float = 10.0, loop: str = "CLAMP", step=(1.0, 0.0, 0.5),
          joints: int = 2) -> Motion:
    """Root moving in a straight line, turning about z; joints turning about x."""
    timeline = Timeline.uniform(rate, frames)
    k = np.arange(frames)[:, None]
    pos = k * np.asarray(step)
    yaw = 0.1 * k[:, 0]
    rot = np.stack([np.zeros(frames), np.zeros(frames), np.sin(yaw / 2), np.cos(yaw / 2)], 1)
    angle = 0.2 * k[:, 0]
    jrot = np.zeros((frames, joints, 4))
    jrot[..., 0] = np.sin(angle / 2)[:, None]
    jrot[..., 3] = np.cos(angle / 2)[:, None]
    motion = Motion(meta={"loop_mode": loop, "name": "line"})
    motion.add(Track("root", "pose", np.concatenate([pos, rot], 1), timeline))
    motion.add(Track("joint_rotations", "quaternion", jrot, timeline))
    motion.add(Track("contacts", "value", (k % 2).astype(float).repeat(joints + 1, 1), timeline))
    return motion


def test_frames_at_frame_times_equal_the_frames() -> None:
    paths = [corpus_file("parc", "ms", n) for n in ("sfu.pkl", "TEASER_TERRAIN.pkl")]
    motions = [mk.read(p) for p in paths]
    lib = MotionLib(motions)
    for index, motion in enumerate(motions):
        n = motion.frames
        frames = lib.frames_at(np.full(n, index), np.arange(n) / 30.0)
        root = motion.tracks["root"].data
        assert np.abs(frames.root_pos - root[:, :3]).max() < 1e-6
        assert np.abs(frames.root_rot - root[:, 3:]).max() < 1e-6
        assert np.abs(frames.joint_rot - motion.tracks["joint_rotations"].data).max() < 1e-6
        assert np.abs(frames.contacts - motion.tracks["contacts"].data).max() < 1e-7


def test_interpolation_between_frames() -> None:
    lib = MotionLib([_line()])
    frames = lib.frames_at([0, 0], [0.25, 0.05])
    assert np.allclose(frames.root_pos, [[2.5, 0, 1.25], [0.5, 0, 0.25]])
    yaw = 2 * np.arctan2(frames.root_rot[:, 2], frames.root_rot[:, 3])
    assert np.allclose(yaw, [0.25, 0.05], atol=1e-6)  # slerp = constant angular rate
    angle = 2 * np.arctan2(frames.joint_rot[:, 0, 0], frames.joint_rot[:, 0, 3])
    assert np.allclose(angle, [0.5, 0.1], atol=1e-6)
    assert np.allclose(frames.contacts[:, 0], [0.5, 0.5])
    reference = quat.slerp(lib._joint_rot[2], lib._joint_rot[3], 0.5)
    assert np.allclose(frames.joint_rot[0], reference, atol=1e-6)


def test_velocities() -> None:
    lib = MotionLib([_line()])
    frames = lib.frames_at([0, 0, 0], [0.0, 0.17, 0.4])  # last frame repeats the previous
    assert np.allclose(frames.root_vel, [[10, 0, 5]] * 3)
    assert np.allclose(frames.root_ang_vel, [[0, 0, 1.0]] * 3, atol=1e-5)
    assert np.allclose(frames.dof_vel.reshape(3, 2, 3), [[[2.0, 0, 0]] * 2] * 3, atol=1e-5)


def test_clamp_and_wrap() -> None:
    clamp = MotionLib([_line()])
    assert clamp.lengths[0] == pytest.approx(0.4)
    frames = clamp.frames_at([0, 0], [-1.0, 9.0])
    assert np.allclose(frames.root_pos, [[0, 0, 0], [4, 0, 2]])
    wrap = MotionLib([_line(loop="WRAP")])
    frames = wrap.frames_at([0, 0, 0], [0.5, 0.9, -0.1])
    # one loop shifts the root by (4, 0, 2) with z zeroed -> (4, 0, 0)
    assert np.allclose(frames.root_pos, [[4 + 1, 0, 0.5], [8 + 1, 0, 0.5], [-4 + 3, 0, 1.5]])
    assert np.allclose(frames.joint_rot, wrap.frames_at([0] * 3, [0.1, 0.1, 0.3]).joint_rot,
                       atol=1e-6)


def test_wrap_on_a_corpus_clip() -> None:
    motion = mk.read(corpus_file("parc", "ms", "sfu.pkl"))
    motion.meta["loop_mode"] = "WRAP"
    lib = MotionLib([motion])
    root = motion.tracks["root"].data[:, :3].astype(np.float64)
    shift = root[-1] - root[0]
    shift[2] = 0
    length = lib.lengths[0]
    frames = lib.frames_at([0, 0], [2 * length + 3 / 30, 3 / 30])
    assert np.allclose(frames.root_pos[0], frames.root_pos[1] + 2 * shift, atol=1e-5)


def test_sampling_follows_the_weights() -> None:
    lib = MotionLib([_line(), _line(7), _line(3)], weights=[1, 3, 6])
    assert np.allclose(lib.weights, [0.1, 0.3, 0.6])
    counts = np.bincount(lib.sample_motions(20000, np.random.default_rng(7)), minlength=3)
    result = stats.chisquare(counts, 20000 * lib.weights)
    assert result.pvalue > 1e-3
    skewed = stats.chisquare(counts, 20000 * np.array([1 / 3] * 3))
    assert skewed.pvalue < 1e-6  # the test can tell weights apart


def test_sample_time_respects_truncation() -> None:
    lib = MotionLib([_line(11), _line(3)])
    ids = np.array([0] * 500 + [1] * 500)
    times = lib.sample_time(ids, truncate_time=0.5, rng=3)
    assert times[:500].max() <= 0.5 and times[:500].min() >= 0 and times[:500].max() > 0.4
    assert np.all(times[500:] == 0)  # 0.2 s clip, truncated by more than its length
    with pytest.raises(MotionkitError):
        lib.sample_time(ids, truncate_time=-1)


def test_frames_for_with_forward_kinematics() -> None:
    lib = MotionLib.load(corpus_file("parc", "ms", "sfu.pkl"), character=_humanoid())
    frames = lib.frames_for(0)
    assert frames.body_pos.shape == (15, 15, 3) and frames.body_rot.shape == (15, 15, 4)
    assert np.allclose(frames.body_pos[:, 0], frames.root_pos)
    assert frames.dof_vel.shape == (15, 28)
    with pytest.raises(MotionkitError, match="character"):
        MotionLib([_line()]).frames_for(0)


def test_sources_folder_and_motion_list(tmp_path: Path, monkeypatch) -> None:
    folder = corpus_file("parc", "ms", "sfu.pkl").parent
    lib = MotionLib.load(folder)
    assert lib.num_motions == 3 and lib.names[0] == "TEASER_TERRAIN"
    assert lib.terrains[0].shape == (102, 102)
    listing = tmp_path / "motions.yaml"
    listing.write_text("motions:\n  - file: $DATA_DIR/sfu.pkl\n    weight: 1\n"
                       "  - file: ${DATA_DIR}/TEASER_TERRAIN.pkl\n    weight: 3\n"
                       "terrain: old/location.pkl\n")
    monkeypatch.setenv("DATA_DIR", str(folder))
    lib = MotionLib.load(listing)
    assert lib.names == ["sfu", "TEASER_TERRAIN"] and np.allclose(lib.weights, [0.25, 0.75])
    assert motionlist.read(listing).extras == {"terrain": "old/location.pkl"}
    monkeypatch.delenv("DATA_DIR")
    with pytest.raises(FormatError, match="DATA_DIR") as info:
        MotionLib.load(listing)
    assert info.value.line == 2


def test_motion_list_format(tmp_path: Path) -> None:
    path = tmp_path / "list.yaml"
    path.write_text("motions:\n  - {file: a.pkl, weight: 2, name: first}\n  - {file: /x/b.pkl}\n")
    listing = mk.read(path)
    assert listing.paths == [tmp_path / "a.pkl", Path("/x/b.pkl")]
    assert np.allclose(listing.weights, [2 / 3, 1 / 3])
    assert listing.entries[0].extras == {"name": "first"}
    out = tmp_path / "out.yaml"
    mk.write(out, listing, format="motionlist")
    again = mk.read(out)
    assert again.paths == listing.paths and np.allclose(again.weights, listing.weights)
    for text, match in [("motions: 3\n", "motions"), ("motions:\n  - {weight: 1}\n", "file"),
                        ("motions:\n  - {file: a, weight: -1}\n", "weight"),
                        ("motions:\n  - {file: a, weight: 0}\n", "weight > 0"),
                        ("motions: [\n", "YAML")]:
        path.write_text(text)
        with pytest.raises(FormatError, match=match):
            motionlist.read(path)


def test_motion_list_alias_bomb_is_refused(tmp_path: Path) -> None:
    lines = ["a0: &a0 [x, x]"] + [f"a{i}: &a{i} [*a{i - 1}, *a{i - 1}]" for i in range(1, 60)]
    path = tmp_path / "bomb.yaml"
    path.write_text("\n".join(lines) + "\nmotions:\n  - {file: a.pkl}\n")
    with pytest.raises(FormatError, match="aliases"):
        motionlist.read(path)


def test_device_needs_torch() -> None:
    lib = MotionLib([_line()])
    if importlib.util.find_spec("torch") is None:
        with pytest.raises(MotionkitError, match="torch"):
            lib.frames_at([0], [0.1], device="cpu")
    else:  # pragma: no cover - torch is not installed in CI
        frames = lib.frames_at([0], [0.1], device="cpu")
        assert frames.root_pos.device.type == "cpu"


def test_device_hands_arrays_to_torch(monkeypatch) -> None:
    """The device path, checked with a stand-in torch module (torch is not installed)."""
    calls: list[tuple] = []

    def as_tensor(value, dtype=None, device=None):  # type: ignore[no-untyped-def]
        calls.append((value.shape, dtype, device))
        return ("tensor", value, device)

    stub = types.SimpleNamespace(as_tensor=as_tensor, float32="float32")
    monkeypatch.setitem(sys.modules, "torch", stub)
    frames = MotionLib([_line()]).frames_at([0, 0], [0.1, 0.2], device="cuda:0")
    assert frames.root_pos[0] == "tensor" and frames.root_pos[2] == "cuda:0"
    assert len(calls) == 7 and all(c[1:] == ("float32", "cuda:0") for c in calls)
    assert frames.body_pos is None


def test_bad_inputs() -> None:
    with pytest.raises(MotionkitError):
        MotionLib([])
    with pytest.raises(MotionkitError, match="weights"):
        MotionLib([_line()], weights=[0])
    with pytest.raises(MotionkitError, match="ids"):
        MotionLib([_line()]).frames_at([1], [0.0])
    with pytest.raises(MotionkitError, match="finite"):
        MotionLib([_line()]).frames_at([0], [np.nan])
    no_rot = _line()
    del no_rot.tracks["joint_rotations"]
    with pytest.raises(MotionkitError, match="joint rotations"):
        MotionLib([no_rot])


def test_bad_rotations_and_frame_counts_name_the_motion() -> None:
    zero_root = _line()
    zero_root.tracks["root"].data[2, 3:] = 0.0
    with pytest.raises(MotionkitError, match=r"motion 0 \('line'\): root orientation at frame 2"):
        MotionLib([zero_root])
    nan_joint = _line()
    nan_joint.tracks["joint_rotations"].data[3, 1, 0] = np.nan
    with pytest.raises(MotionkitError, match="joint rotation at frame 3 is zero or not finite"):
        MotionLib([_line(), nan_joint])
    longer = _line()
    longer.tracks["joint_rotations"] = _line(frames=7).tracks["joint_rotations"]
    with pytest.raises(MotionkitError,
                       match=r"motion 1 .*'joint_rotations' has 7 frames, the root 5"):
        MotionLib([_line(), longer])


@pytest.mark.parametrize("ids", [[5], [-1], [0, 1]])
def test_sample_time_checks_the_ids(ids: list[int]) -> None:
    lib = MotionLib([_line()])
    with pytest.raises(MotionkitError, match=r"motion ids must be in \[0, 1\)"):
        lib.sample_time(ids)
    with pytest.raises(MotionkitError, match=r"motion ids must be in \[0, 1\)"):
        lib.frames_at(ids, 0.0)


# ------------------------------------------------- security review (findings 11, 14, 15)


@pytest.mark.parametrize(("text", "match"), [
    ("motions:\n  - file: a.pkl\nextra: " + "[" * 3000 + "]" * 3000 + "\n", "nested too deeply"),
    ("motions:\n  - file: a.pkl\n    weight: 2001-13-45\n", "weight must be a number"),
    ("motions:\n  - file: a.pkl\n    weight: " + "9" * 5000 + "\n", "bad value"),
    ("motions:\n  - {file: a.pkl, weight: 1.0e+308}\n  - {file: b.pkl, weight: 1.0e+308}\n",
     "finite sum"),
    ('motions:\n  - file: "a\\0b.pkl"\n', "NUL"),
    ("motions:\n  - file: a.pkl\nextra: &a [*a]\n", "recursive"),
])
def test_hostile_motion_lists_are_format_errors(text: str, match: str, tmp_path: Path) -> None:
    path = tmp_path / "list.yaml"
    path.write_text(text)
    with pytest.raises(FormatError, match=match):
        motionlist.read(path)


def test_only_tilde_slash_means_home(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    path = tmp_path / "list.yaml"
    path.write_text("motions:\n  - file: ~nosuchuser_zz/a.pkl\n  - file: ~/b.pkl\n"
                    "    when: 2024-01-02\n")
    listing = motionlist.read(path)
    assert listing.paths == [tmp_path / "~nosuchuser_zz" / "a.pkl", tmp_path / "home" / "b.pkl"]
    assert listing.entries[1].extras == {"when": "2024-01-02"}  # dates stay text


def test_a_file_listed_many_times_is_read_and_dispatched_once(tmp_path: Path, monkeypatch) -> None:
    from motionkit.formats import registry

    source = corpus_file("parc", "ms", "sfu.pkl")
    listing = tmp_path / "list.yaml"
    listing.write_text("motions:\n" + f"  - file: {source}\n" * 40)
    reads, dispatches = [], []
    real_read, real_dispatch = registry.Format.read, registry.for_reading

    def reading(self, path, **options):
        reads.append(Path(path))
        return real_read(self, path, **options)

    def dispatching(path, format=None):
        dispatches.append(Path(path))
        return real_dispatch(path, format)

    monkeypatch.setattr(registry.Format, "read", reading)
    monkeypatch.setattr(registry, "for_reading", dispatching)
    lib = MotionLib.load(listing)
    assert reads == dispatches == [listing, source] and lib.num_motions == 40
    assert all(terrain is lib.terrains[0] for terrain in lib.terrains)


def test_list_paths_resolve_as_parc_and_mimickit_open_them(tmp_path: Path, monkeypatch) -> None:
    """From the working directory (their repository root), then the list's folder and the
    folders above it; missing or ambiguous files name every place looked in."""
    repo = tmp_path / "repo"
    (repo / "data" / "lists").mkdir(parents=True)
    (repo / "data" / "motions").mkdir(parents=True)
    shutil.copy(corpus_file("parc", "ms", "sfu.pkl"), repo / "data" / "motions" / "a.pkl")
    listing = repo / "data" / "lists" / "l.yaml"
    listing.write_text("motions:\n  - {file: data/motions/a.pkl, weight: 1}\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    entry = motionlist.read(listing).entries[0]
    assert entry.path == repo / "data" / "motions" / "a.pkl"
    assert entry.found_in == "2 folder(s) above the list"
    monkeypatch.chdir(repo)
    assert motionlist.read(listing).entries[0].found_in == "the working directory"
    assert MotionLib.load(listing).num_motions == 1
    (repo / "data" / "lists" / "data" / "motions").mkdir(parents=True)
    shutil.copy(corpus_file("parc", "ms", "TEASER_TERRAIN.pkl"),
                repo / "data" / "lists" / "data" / "motions" / "a.pkl")
    with pytest.raises(FormatError, match="is ambiguous: found in the working directory"):
        motionlist.read(listing)
    listing.write_text("motions:\n  - {file: data/motions/none.pkl, weight: 1}\n")
    with pytest.raises(FormatError, match=r"'data/motions/none.pkl' is in none of: "
                       + re.escape(f"{repo}, {repo / 'data' / 'lists'}, {repo / 'data'}, {tmp_path}")):
        MotionLib.load(listing)


def test_a_list_repeating_one_file_cannot_blow_up_memory(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(library, "REPEAT_SLACK", 100)
    shutil.copy(corpus_file("parc", "ms", "sfu.pkl"), tmp_path / "a.pkl")  # 15 frames
    listing = tmp_path / "many.yaml"
    listing.write_text("motions:\n" + "  - {file: a.pkl, weight: 1}\n" * 200)
    with pytest.raises(FormatError, match="repeats its files: 3000 frames to pack from 15"):
        MotionLib.load(listing)
    listing.write_text("motions:\n  - {file: " + "a" * 300 + ".pkl, weight: 1}\n")
    with pytest.raises(FormatError, match="is in none of"):  # a name too long: not there
        MotionLib.load(listing)

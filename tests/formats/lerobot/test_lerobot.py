"""LeRobot v3.0 datasets: the corpus datasets (written by lerobot 0.6.1) read as lerobot's
own ``LeRobotDataset[i]`` returns them (the stored ``getitem.json`` oracles: lerobot needs
Python 3.12 and torch, so it is not installed here), written back file for file with its
statistics, round trips, the loss rule and broken datasets."""

from __future__ import annotations

import importlib
import json
import os
import shutil
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import motionkit as mk
from conftest import _require, corpus_file
from motionkit.errors import ConversionError, FormatError, MotionkitWarning
from motionkit.formats.lerobot import dataset as lerobot
from motionkit.formats.lerobot.stats import episode_stats
from motionkit.model import Motion, Timeline, Track

# in the test extra: missing, it is a broken install, which CI (MOTIONKIT_REQUIRE_CORPUS) fails
pa = importlib.import_module("pyarrow") if _require() else pytest.importorskip("pyarrow")
pq = importlib.import_module("pyarrow.parquet")

DATASETS = ["arm7_tiny", "humanoid29_tiny"]
DATA = "data/chunk-000/file-000.parquet"
EPISODES = "meta/episodes/chunk-000/file-000.parquet"


def _corpus(name: str) -> Path:
    return corpus_file("episodes", "lerobot", name)


def _oracle(name: str) -> dict[str, object]:
    return json.loads(corpus_file("episodes", "lerobot", f"{name}.getitem.json").read_text())


def _episodes(name: str) -> list[Motion]:
    return lerobot.read_episodes(_corpus(name))


# ------------------------------------------------------------------ reading the corpus
@pytest.mark.parametrize("name", DATASETS)
def test_corpus_frames_equal_lerobots_getitem(name: str) -> None:
    oracle = _oracle(name)
    motions = _episodes(name)
    assert len(motions) == oracle["num_episodes"]
    assert sum(m.frames for m in motions) == oracle["len"]
    starts = np.cumsum([0] + [m.frames for m in motions])
    features = oracle["features"]
    for index, item in oracle["items"].items():  # type: ignore[attr-defined]
        i = int(index)
        number = int(np.searchsorted(starts, i, side="right")) - 1
        motion, frame = motions[number], i - starts[number]
        assert motion.tracks["joints"].timeline.rate == oracle["fps"]
        assert item["episode_index"]["value"] == number
        assert item["frame_index"]["value"] == frame
        assert item["index"]["value"] == i
        assert item["task"]["value"] == motion.meta["task"]
        assert np.float32(item["timestamp"]["value"]) == np.float32(frame / oracle["fps"])
        for feature, value in item.items():
            if feature in ("task", "timestamp", "frame_index", "episode_index", "index",
                           "task_index"):
                continue
            track = motion.tracks["joints" if feature == "observation.state" else feature]
            expected = np.asarray(value["value"], dtype=track.data.dtype).reshape(-1)
            assert np.array_equal(track.data[frame], expected), (feature, i)  # float32 exact
            names = features[feature]["names"]
            assert track.labels == names


def test_a_dataset_folder_reads_through_the_registry() -> None:
    path = _corpus("arm7_tiny")
    with pytest.warns(MotionkitWarning, match="2 episodes; read episode 0"):
        first = mk.read(path)
    assert isinstance(first, Motion)
    assert first.meta["source_format"] == "lerobot"
    assert first.meta["task"] == "pick the red cube"
    assert first.meta["robot_type"] == "arm7_gripper"
    second = mk.read(path, episode=1)
    assert isinstance(second, Motion) and second.frames == 47
    assert second.meta["task"] == "place the cube in the bin"
    with pytest.raises(FormatError, match="no episode 2"):
        mk.read(path, episode=2)
    lines = mk.formats.registry.by_name("lerobot").describe(second)
    assert lines[0].startswith("episode 1 of 2 read")
    assert lines[2] == "  episode 1: 47 frames, 1.53333 s, task 'place the cube in the bin'"
    assert lines[3].startswith("feature observation.state: float32 [7]: joint1")


def test_strip_pos_drops_motor_suffixes(tmp_path: Path) -> None:
    motion = _motion(["a.pos", "b.pos"], frames=3)
    lerobot.write(tmp_path / "ds", motion, task="t")
    assert lerobot.read(tmp_path / "ds").tracks["joints"].labels == ["a.pos", "b.pos"]
    assert lerobot.read(tmp_path / "ds", strip_pos=True).tracks["joints"].labels == ["a", "b"]


# ------------------------------------------------------------------ writing it back
@pytest.mark.parametrize("name", DATASETS)
def test_written_back_the_corpus_has_the_same_files(name: str, tmp_path: Path) -> None:
    source = _corpus(name)
    out = tmp_path / "out"
    lerobot.write_episodes(out, _episodes(name))
    assert json.loads((out / "meta/info.json").read_text()) == \
        json.loads((source / "meta/info.json").read_text())
    ours, theirs = pq.read_table(out / DATA), pq.read_table(source / DATA)
    assert ours.schema.remove_metadata() == theirs.schema.remove_metadata()
    assert ours.equals(theirs)  # every value, bit for bit
    assert pq.ParquetFile(out / DATA).metadata.num_row_groups == len(_episodes(name))
    hf = json.loads(ours.schema.metadata[b"huggingface"])
    assert hf["info"]["features"] == json.loads(theirs.schema.metadata[b"huggingface"])["info"]["features"]
    assert pq.read_table(out / "meta/tasks.parquet").to_pylist() == \
        pq.read_table(source / "meta/tasks.parquet").to_pylist()
    ours_ep, theirs_ep = pq.read_table(out / EPISODES), pq.read_table(source / EPISODES)
    assert ours_ep.schema.remove_metadata() == theirs_ep.schema.remove_metadata()
    for mine, real in zip(ours_ep.to_pylist(), theirs_ep.to_pylist(), strict=True):
        assert mine.keys() == real.keys()
        for key, value in real.items():
            if key.startswith("stats/"):
                assert np.allclose(mine[key], value, rtol=0, atol=1e-6), key
            else:
                assert mine[key] == value, key


@pytest.mark.parametrize("name", DATASETS)
def test_stats_json_equals_lerobots(name: str, tmp_path: Path) -> None:
    source = _corpus(name)
    lerobot.write_episodes(tmp_path / "out", _episodes(name))
    ours = json.loads((tmp_path / "out/meta/stats.json").read_text())
    theirs = json.loads((source / "meta/stats.json").read_text())
    assert ours.keys() == theirs.keys()
    for feature, stats in theirs.items():
        assert ours[feature].keys() == stats.keys()
        assert ours[feature]["count"] == stats["count"]
        for key, value in stats.items():
            assert np.max(np.abs(np.subtract(ours[feature][key], value))) <= 1e-6, (feature, key)


def test_quantiles_are_lerobots_histogram_estimates_not_numpys() -> None:
    done = np.array([0.0] * 49 + [1.0], dtype=np.float32)
    stats = episode_stats(done)
    assert stats["q01"][0] == np.float32(-1e-10)  # the padded lower edge, as lerobot gives
    ramp = np.arange(50, dtype=np.float64)
    q50 = episode_stats(ramp)["q50"][0]
    # the upper edge of the bin holding 24 (bins 49/5000 wide), where numpy says 24.5
    assert abs(q50 - (2449 * (49 + 2e-10) / 5000 - 1e-10)) < 1e-9
    assert np.quantile(ramp, 0.5) == 24.5
    single = episode_stats(np.array([[3.0, 4.0]], dtype=np.float32))
    assert np.array_equal(single["q99"], single["mean"])  # one frame: quantiles are the mean


def test_tasks_parquet_has_the_task_as_its_pandas_index(tmp_path: Path) -> None:
    pandas = pytest.importorskip("pandas")
    lerobot.write_episodes(tmp_path / "out", _episodes("arm7_tiny"))
    frame = pandas.read_parquet(tmp_path / "out/meta/tasks.parquet")
    assert list(frame.index) == ["pick the red cube", "place the cube in the bin"]
    assert list(frame["task_index"]) == [0, 1]


# ------------------------------------------------------------------ round trips
def _motion(labels: list[str] | None, frames: int = 5, rate: float = 30.0,
            task: str | None = None) -> Motion:
    timeline = Timeline.uniform(rate, frames)
    width = len(labels) if labels else 2
    data = np.arange(frames * width, dtype=np.float32).reshape(frames, width) / 7
    meta: dict[str, object] = {"task": task} if task else {}
    return Motion({"joints": Track("joints", "value", data, timeline, labels)}, meta=meta)


@st.composite
def _datasets(draw: st.DrawFn) -> tuple[int, list[Motion]]:
    fps = draw(st.integers(1, 240))
    width = draw(st.integers(1, 6))
    labels = [f"j{i}" for i in range(width)]
    floats = st.floats(-1e6, 1e6, width=32, allow_nan=False)
    motions = []
    for number in range(draw(st.integers(1, 4))):
        frames = draw(st.integers(1, 12))
        start = draw(st.one_of(st.just(0.0), st.floats(-1e10, 1e10, allow_nan=False)))
        timeline = Timeline.uniform(fps, frames, start)
        state = np.array(draw(st.lists(floats, min_size=frames * width, max_size=frames * width)),
                         dtype=np.float32).reshape(frames, width)
        root = np.zeros((frames, 7))
        root[:, 0] = np.arange(frames)
        root[:, 6] = 1.0
        done = np.zeros(frames, dtype=bool)
        done[-1] = True
        tracks = {"joints": Track("joints", "value", state, timeline, labels),
                  "base": Track("base", "pose", root, timeline),
                  "next.done": Track("next.done", "value", done, timeline)}
        task = draw(st.sampled_from(["walk", "pick", "placé ✓"]))
        motions.append(Motion(tracks, meta={"task": task, "robot_type": "bot", "n": number}))
    return fps, motions


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(_datasets())
def test_write_read_round_trip(tmp_path: Path, drawn: tuple[int, list[Motion]]) -> None:
    fps, motions = drawn
    out = tmp_path / "ds"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MotionkitWarning)  # metadata 'n' is dropped
        lerobot.write_episodes(out, motions, lossy=True)
    back = lerobot.read_episodes(out)
    assert len(back) == len(motions)
    for source, motion in zip(motions, back, strict=True):
        assert motion.meta["task"] == source.meta["task"]
        assert motion.meta["robot_type"] == "bot"
        assert list(motion.tracks) == list(source.tracks)
        for name, track in source.tracks.items():
            got = motion.tracks[name]
            assert got.kind == track.kind and got.labels == track.labels
            assert got.timeline.rate == fps and got.frames == track.frames
            assert got.timeline.start == track.timeline.start  # motionkit/start_time
            assert np.array_equal(got.data, track.data.astype(got.data.dtype))
    info = json.loads((out / "meta/info.json").read_text())
    assert info["features"]["base"]["names"] == ["x", "y", "z", "qx", "qy", "qz", "qw"]
    assert info["total_frames"] == sum(m.frames for m in motions)


def test_start_times_are_kept_beside_lerobots_timestamps(tmp_path: Path) -> None:
    """lerobot's ``timestamp`` restarts at 0 in every episode; an episode's start on its
    source's clock goes to ``meta/episodes`` (only where some episode does not start at 0,
    so a lerobot-made dataset written back has lerobot's columns alone)."""
    first, second = _motion(["a", "b"], task="t"), _motion(["a", "b"], frames=3, task="t")
    second.tracks["joints"] = second.tracks["joints"].with_data(
        second.tracks["joints"].data, Timeline.uniform(30.0, 3, 1_700_000_000.005))
    lerobot.write_episodes(tmp_path / "ds", [first, second])
    episodes = pq.read_table(tmp_path / "ds" / EPISODES)
    assert episodes.column("motionkit/start_time").to_pylist() == [0.0, 1_700_000_000.005]
    np.testing.assert_array_equal(pq.read_table(tmp_path / "ds" / DATA).column("timestamp")
                                  .to_numpy(), np.float32([0, 1, 2, 3, 4, 0, 1, 2]) / 30)
    back = lerobot.read_episodes(tmp_path / "ds")
    assert [m.tracks["joints"].timeline.start for m in back] == [0.0, 1_700_000_000.005]
    lerobot.write_episodes(tmp_path / "zero", [first])
    assert "motionkit/start_time" not in pq.read_schema(tmp_path / "zero" / EPISODES).names


@pytest.mark.parametrize("value", [float("nan"), float("inf")])
def test_a_start_time_that_is_not_a_finite_number_is_one_error(tmp_path: Path,
                                                               value: float) -> None:
    moved = _motion(["a"], task="t")
    moved.tracks["joints"] = moved.tracks["joints"].with_data(
        moved.tracks["joints"].data, Timeline.uniform(30.0, 5, 2.5))
    lerobot.write_episodes(tmp_path / "ds", [moved])
    path = tmp_path / "ds" / EPISODES
    table = pq.read_table(path)
    table = table.set_column(table.schema.get_field_index("motionkit/start_time"),
                             "motionkit/start_time", pa.array([value]))
    pq.write_table(table, path)
    with pytest.raises(FormatError, match="start_time must be a finite number"):
        lerobot.read(tmp_path / "ds")


def test_float64_precision_is_kept_when_asked(tmp_path: Path) -> None:
    motion = _motion(["a", "b"], task="t")
    motion.tracks["joints"] = motion.tracks["joints"].with_data(
        motion.tracks["joints"].data.astype(np.float64) + 1e-12)
    mk.write(tmp_path / "ds", motion, format="lerobot", precision="float64")
    back = lerobot.read(tmp_path / "ds")
    assert back.tracks["joints"].data.dtype == np.float64
    assert np.array_equal(back.tracks["joints"].data, motion.tracks["joints"].data)


# ------------------------------------------------------------------ the loss rule
def test_what_an_episode_cannot_hold_is_named(tmp_path: Path) -> None:
    motion = _motion(["a", "b"], task="t")
    timeline = motion.tracks["joints"].timeline
    motion.add(Track("links", "pose", np.tile([0, 0, 0, 0, 0, 0, 1.0], (5, 3, 1)), timeline))
    motion.add(Track("index", "value", np.zeros(5), timeline))
    with pytest.raises(ConversionError, match=r"'links' \(one row per part.*'index' \(the name"):
        mk.write(tmp_path / "ds", motion, format="lerobot")
    assert not (tmp_path / "ds").exists()
    with pytest.warns(MotionkitWarning, match="dropped"):
        mk.write(tmp_path / "ds", motion, format="lerobot", lossy=True)
    assert list(lerobot.read(tmp_path / "ds").tracks) == ["joints"]


def test_stamped_and_fractional_rates_are_refused(tmp_path: Path) -> None:
    stamped = Motion({"joints": Track("joints", "value", np.zeros((3, 2)),
                                      Timeline.stamped([0.0, 0.1, 0.25]))}, meta={"task": "t"})
    with pytest.raises(ConversionError, match="time stamps"):
        mk.write(tmp_path / "a", stamped, format="lerobot")
    with pytest.raises(ConversionError, match=r"fps is an integer.*29\.97"):
        mk.write(tmp_path / "b", _motion(None, rate=29.97, task="t"), format="lerobot")
    with pytest.raises(ConversionError, match="30, 50 Hz"):
        lerobot.write_episodes(tmp_path / "c", [_motion(None, task="t"),
                                                _motion(None, rate=50, task="t")])


def test_a_task_is_required_and_an_option_gives_it(tmp_path: Path) -> None:
    with pytest.raises(ConversionError, match="has no task"):
        mk.write(tmp_path / "ds", _motion(None), format="lerobot")
    mk.write(tmp_path / "ds", _motion(None), format="lerobot", task="wave")
    assert lerobot.read(tmp_path / "ds").meta["task"] == "wave"


# ------------------------------------------------------------------ the folder
def test_a_failed_write_leaves_nothing_half_written(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "ds"
    lerobot.write(out, _motion(["a", "b"], task="old"))
    before = sorted(p.relative_to(out) for p in out.rglob("*"))

    def broken(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    from motionkit.formats.lerobot import write as module
    monkeypatch.setattr(module, "_write_tasks", broken)
    with pytest.raises(mk.MotionkitError, match="No space left"):
        lerobot.write(out, _motion(["a", "b"], task="new"))
    assert sorted(p.relative_to(out) for p in out.rglob("*")) == before
    assert lerobot.read(out).meta["task"] == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["ds"]  # no temporary left


def test_a_symlink_is_replaced_never_written_through(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "ds").symlink_to(elsewhere)
    lerobot.write(tmp_path / "ds", _motion(None, task="t"))
    assert not (tmp_path / "ds").is_symlink() and list(elsewhere.iterdir()) == []


def test_the_source_and_foreign_folders_are_refused(tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(_corpus("arm7_tiny"), copy)
    with pytest.raises(ConversionError, match="read from"):
        lerobot.write_episodes(copy, lerobot.read_episodes(copy))
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    with pytest.raises(ConversionError, match="something other than a LeRobot dataset"):
        lerobot.write(other, _motion(None, task="t"))
    (tmp_path / "file").write_text("x")
    with pytest.raises(ConversionError, match="is a file"):
        lerobot.write(tmp_path / "file", _motion(None, task="t"))


# ------------------------------------------------------------------ broken datasets
def _copy(tmp_path: Path) -> Path:
    copy = tmp_path / "ds"
    shutil.copytree(_corpus("arm7_tiny"), copy)
    return copy


def _edit_info(root: Path, **changes: object) -> None:
    info = json.loads((root / "meta/info.json").read_text())
    info.update(changes)
    (root / "meta/info.json").write_text(json.dumps(info))


@pytest.mark.parametrize(("key", "value", "message"), [
    ("total_frames", 96, "total_frames is 96 but there are 97"),
    ("total_episodes", 3, "total_episodes is 3 but there are 2"),
    ("total_tasks", 1, "total_tasks is 1 but there are 2"),
])
def test_totals_that_disagree_with_the_files_are_one_error(tmp_path: Path, key: str, value: int,
                                                           message: str) -> None:
    root = _copy(tmp_path)
    _edit_info(root, **{key: value})
    with pytest.raises(FormatError, match=message):
        mk.read(root, episode=0)


def test_a_data_file_with_fewer_rows_than_the_totals_is_refused(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    table = pq.read_table(root / DATA)
    pq.write_table(table.slice(0, 96), root / DATA)
    with pytest.raises(FormatError, match="total_frames is 97 but the data files hold 96 rows"):
        lerobot.read_episodes(root)


def test_an_undeclared_column_is_one_error(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    table = pq.read_table(root / DATA)
    table = table.append_column("observation.secret", pa.array(np.zeros(table.num_rows)))
    pq.write_table(table, root / DATA)
    with pytest.raises(FormatError, match=r"'observation\.secret' that info\.json's features "
                                          r"do not declare") as caught:
        lerobot.read_episodes(root)
    assert caught.value.path == os.fspath(root / DATA)


def test_v2_datasets_are_refused_naming_the_version_and_the_converter(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    _edit_info(root, codebase_version="v2.1")
    with pytest.raises(FormatError, match=r"v2\.1 dataset.*convert_dataset_v21_to_v30"):
        mk.read(root)


def _with_state_names(root: Path, names: object) -> Path:
    """A two-joint dataset whose info.json gives the state's names as ``names``."""
    lerobot.write(root, _motion(["x", "y"], task="t"))
    info = json.loads((root / "meta/info.json").read_text())
    info["features"]["observation.state"]["names"] = names
    (root / "meta/info.json").write_text(json.dumps(info))
    return root


@pytest.mark.parametrize("names", [{"motors": ["a", "b"]}, {"b": 1, "a": 0}])
def test_names_in_lerobots_other_shapes(tmp_path: Path, names: object) -> None:
    root = _with_state_names(tmp_path / "ds", names)
    assert lerobot.read(root).tracks["joints"].labels == ["a", "b"]


@pytest.mark.parametrize("names", [{"a": 0, "b": 0}, {"a": 0, "b": 2}])
def test_a_names_map_must_number_the_elements_once_each(tmp_path: Path, names: object) -> None:
    root = _with_state_names(tmp_path / "ds", names)
    with pytest.raises(FormatError, match="indices other than 0 … 1, each once"):
        lerobot.read(root)


def test_null_or_repeated_indices_are_one_error(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    episodes_table = pq.read_table(root / EPISODES)
    count = episodes_table.num_rows
    at = episodes_table.schema.get_field_index("episode_index")
    pq.write_table(episodes_table.set_column(at, "episode_index", pa.array(
        [None, *range(1, count)], pa.int64())), root / EPISODES)
    with pytest.raises(FormatError, match="episode_index must be an integer"):
        lerobot.read(root)
    pq.write_table(episodes_table, root / EPISODES)
    tasks = pq.read_table(root / "meta/tasks.parquet")
    doubled = pa.concat_tables([tasks, tasks])
    pq.write_table(doubled, root / "meta/tasks.parquet")
    with pytest.raises(FormatError, match="task_index repeats"):
        lerobot.read(root)
    at = tasks.schema.get_field_index("task_index")
    pq.write_table(tasks.set_column(at, "task_index", pa.array([None] * tasks.num_rows,
                                                               pa.int64())),
                   root / "meta/tasks.parquet")
    with pytest.raises(FormatError, match="task_index must be an integer"):
        lerobot.read(root)


def test_unsigned_integers_beyond_int64_are_refused_not_wrapped(tmp_path: Path) -> None:
    timeline = Timeline.uniform(10.0, 2)
    big = np.array([[1], [2**63]], dtype=np.uint64)
    motion = Motion({"joints": Track("joints", "value", np.zeros((2, 2)), timeline, ["a", "b"]),
                     "counter": Track("counter", "value", big, timeline)}, meta={"task": "t"})
    with pytest.raises(ConversionError, match="'counter' holds integers beyond int64"):
        lerobot.write(tmp_path / "ds", motion)
    assert not (tmp_path / "ds").exists()
    motion.tracks["counter"].data[1, 0] = 2**63 - 1
    lerobot.write(tmp_path / "ds", motion)
    assert lerobot.read(tmp_path / "ds").tracks["counter"].data[1, 0] == 2**63 - 1


def test_names_of_the_wrong_length_fall_back_with_a_warning(tmp_path: Path) -> None:
    root = tmp_path / "ds"
    lerobot.write(root, _motion(["x", "y"], task="t"))
    info = json.loads((root / "meta/info.json").read_text())
    info["features"]["observation.state"]["names"] = ["only"]
    (root / "meta/info.json").write_text(json.dumps(info))
    with pytest.warns(MotionkitWarning, match="1 names for 2 elements"):
        assert lerobot.read(root).tracks["joints"].labels == ["joint_0", "joint_1"]


def test_frames_out_of_order_are_refused(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    table = pq.read_table(root / DATA)
    order = np.r_[1, 0, np.arange(2, table.num_rows)]
    pq.write_table(table.take(pa.array(order)), root / DATA)
    with pytest.raises(FormatError, match="frame_index is not 0"):
        lerobot.read_episodes(root)


def test_episodes_in_any_row_order_read_the_same(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    table = pq.read_table(root / DATA)
    order = np.r_[np.arange(50, table.num_rows), np.arange(50)]  # episode 1 first
    pq.write_table(table.take(pa.array(order)), root / DATA)
    for moved, kept in zip(lerobot.read_episodes(root), _episodes("arm7_tiny"), strict=True):
        for name, track in kept.tracks.items():
            assert np.array_equal(moved.tracks[name].data, track.data)


def test_topic_named_tracks_become_lerobot_features(tmp_path: Path) -> None:
    """A synchronised bag's tracks are named by topic: ``state``/``action`` say which are
    lerobot's, the others lose their slashes (lerobot splits stats keys at slashes)."""
    timeline = Timeline.uniform(30.0, 4)
    names = [f"panda_joint{i}" for i in range(1, 8)]
    pose = np.tile([0.1, 0, 0.5, 0, 0, 0, 1.0], (4, 1))
    motion = Motion({
        "/joint_states": Track("/joint_states", "value", np.ones((4, 7)), timeline, names),
        "/joint_states.velocity": Track("/joint_states.velocity", "value", np.zeros((4, 7)),
                                        timeline, names),
        "/cmd": Track("/cmd", "value", np.full((4, 7), 2.0), timeline),
        "world->base_link": Track("world->base_link", "pose", pose, timeline),
    }, meta={"task": "reach"})
    mk.write(tmp_path / "ds", motion, format="lerobot", state="/joint_states", action="/cmd")
    info = json.loads((tmp_path / "ds/meta/info.json").read_text())
    assert list(info["features"])[:4] == ["observation.state", "joint_states.velocity", "action",
                                          "world->base_link"]
    assert info["features"]["observation.state"]["names"] == names
    back = lerobot.read(tmp_path / "ds")
    assert list(back.tracks) == ["joints", "joint_states.velocity", "action", "world->base_link"]
    assert back.tracks["world->base_link"].kind == "pose"
    with pytest.raises(ConversionError, match="state='/js' names no track"):
        mk.write(tmp_path / "other", motion, format="lerobot", state="/js")
    clash = Motion({"a/b": motion.tracks["/cmd"], "a.b": motion.tracks["/cmd"]}, meta={"task": "t"})
    with pytest.raises(ConversionError, match=r"feature name 'a\.b' is 'a/b''s"):
        mk.write(tmp_path / "clash", clash, format="lerobot")


def test_data_files_roll_over_by_size_and_chunks_by_count(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from motionkit.formats.lerobot import layout

    monkeypatch.setattr(layout, "DATA_FILES_MB", 1e-4)  # every episode opens a new file
    monkeypatch.setattr(layout, "CHUNKS_SIZE", 2)
    motions = [_motion(["a", "b"], frames=3 + i, task=f"t{i % 2}") for i in range(5)]
    lerobot.write_episodes(tmp_path / "ds", motions)
    files = sorted(p.relative_to(tmp_path / "ds").as_posix()
                   for p in (tmp_path / "ds/data").rglob("*.parquet"))
    assert files == ["data/chunk-000/file-000.parquet", "data/chunk-000/file-001.parquet",
                     "data/chunk-001/file-000.parquet", "data/chunk-001/file-001.parquet",
                     "data/chunk-002/file-000.parquet"]
    back = lerobot.read_episodes(tmp_path / "ds")
    assert [m.frames for m in back] == [3, 4, 5, 6, 7]
    assert [m.meta["task"] for m in back] == ["t0", "t1", "t0", "t1", "t0"]


def test_the_frame_budget_is_summed_over_the_data_files_of_a_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from motionkit import _limits
    from motionkit.formats.lerobot import layout

    monkeypatch.setattr(layout, "DATA_FILES_MB", 1e-4)  # every episode opens a new file
    root = tmp_path / "ds"
    timeline = Timeline.uniform(30.0, 8000)
    zeros = [Motion({"joints": Track("joints", "value", np.zeros((8000, 29), np.float32),
                                     timeline)}, meta={"task": "rest"}) for _ in range(3)]
    lerobot.write_episodes(root, zeros)
    assert len(list((root / "data").rglob("*.parquet"))) == 3
    monkeypatch.setattr(_limits, "ARRAY_BYTES_PER_BYTE", 0)  # the floor alone: 8 MiB,
    monkeypatch.setattr(_limits, "WORK_FLOOR", 1 << 20)      # each file 3.4 MB, all 10 MB
    assert lerobot.read(root, episode=2).frames == 8000
    with pytest.raises(FormatError, match="array byte budget"):
        lerobot.read_episodes(root)


@pytest.mark.parametrize("template", [
    "data/chunk-{chunk_index[0]}/file-{file_index:03d}.parquet",
    "data/chunk-{chunk_index.real}/file-{file_index:03d}.parquet",
    "data/chunk-{chunk_index:>4000}/file-{file_index:03d}.parquet",
    "data/chunk-{chunk_index:010d}/file-{file_index:03d}.parquet",
    "data/chunk-{episode_index}/file-{file_index:03d}.parquet",
    "data/chunk-{}/file-{file_index:03d}.parquet",
    "data/chunk-{{chunk_index}}/file.parquet",
])
def test_a_path_template_other_than_lerobots_fields_is_refused(tmp_path: Path,
                                                               template: str) -> None:
    root = _copy(tmp_path)
    info = json.loads((root / "meta/info.json").read_text())
    info["data_path"] = template
    (root / "meta/info.json").write_text(json.dumps(info))
    with pytest.raises(FormatError, match="data_path") as caught:
        lerobot.read(root)
    assert caught.value.path is not None and str(caught.value.path).endswith("info.json")
    info["data_path"] = "data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet"
    info["video_path"] = "videos/{video_key}/chunk-{chunk_index:>99999999}/f.mp4"
    (root / "meta/info.json").write_text(json.dumps(info))
    with pytest.raises(FormatError, match="video_path"):
        lerobot.read(root)


def test_plain_template_fields_are_filled_as_lerobot_fills_them(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    info = json.loads((root / "meta/info.json").read_text())
    info["data_path"] = "data/chunk-{chunk_index:03d}/file-{file_index}.parquet"
    (root / "data/chunk-000/file-000.parquet").rename(root / "data/chunk-000/file-0.parquet")
    (root / "meta/info.json").write_text(json.dumps(info))
    assert lerobot.read(root, episode=0).frames > 0


def test_episode_ranges_must_follow_on(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    table = pq.read_table(root / EPISODES)
    starts = table.column("dataset_from_index").to_pylist()
    stops = table.column("dataset_to_index").to_pylist()
    table = table.set_column(table.schema.get_field_index("dataset_from_index"),
                             "dataset_from_index", pa.array([starts[0], starts[1] + 1]))
    table = table.set_column(table.schema.get_field_index("dataset_to_index"),
                             "dataset_to_index", pa.array([stops[0], stops[1] + 1]))
    pq.write_table(table, root / EPISODES)
    with pytest.raises(FormatError, match="dataset_from_index 51 does not follow on"):
        mk.read(root, episode=0)


def test_video_features_are_listed_not_read(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    info = json.loads((root / "meta/info.json").read_text())
    info["features"]["observation.images.wrist"] = {
        "dtype": "video", "shape": [480, 640, 3], "names": ["height", "width", "channels"]}
    info["video_path"] = "videos/{video_key}/chunk-{chunk_index:03d}/file-{file_index:03d}.mp4"
    (root / "meta/info.json").write_text(json.dumps(info))
    motion = lerobot.read(root, episode=1)
    assert "observation.images.wrist" not in motion.tracks
    assert motion.meta["lerobot"]["not_read"] == {"observation.images.wrist": "video"}
    lines = mk.formats.registry.by_name("lerobot").describe(motion)
    assert "not read (listed only): observation.images.wrist (video)" in lines


def test_timestamps_off_the_fps_grid_warn(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    table = pq.read_table(root / DATA)
    stamps = table.column("timestamp").to_numpy() * np.float32(1.01)
    table = table.set_column(table.schema.get_field_index("timestamp"),
                             pa.field("timestamp", pa.float32()), pa.array(stamps))
    pq.write_table(table, root / DATA)
    with pytest.warns(MotionkitWarning, match="timestamp is not frame_index/fps"):
        lerobot.read(root, episode=0)


def test_nan_and_float32_overflow_are_refused(tmp_path: Path) -> None:
    motion = _motion(["a", "b"], task="t")
    data = motion.tracks["joints"].data.astype(np.float64)
    data[3, 1] = np.nan
    motion.tracks["joints"] = motion.tracks["joints"].with_data(data)
    with pytest.raises(ConversionError, match=r"'joints' has 1 frame.*the first is frame 3"):
        mk.write(tmp_path / "ds", motion, format="lerobot")
    data[3, 1] = 1e300  # finite in float64, infinite as float32
    with pytest.raises(ConversionError, match="NaN or infinite values"):
        mk.write(tmp_path / "ds", motion, format="lerobot")
    assert not (tmp_path / "ds").exists()


# ------------------------------------------------------------------ lerobot itself, where it is
LEROBOT_CHILD = r"""
import json, os, sys
os.environ["HF_HUB_OFFLINE"] = "1"
from lerobot.datasets.lerobot_dataset import LeRobotDataset

root, fps = sys.argv[1], int(sys.argv[2])
plain = lambda value: value.tolist() if hasattr(value, "tolist") else value
ds = LeRobotDataset("motionkit/check", root=root)
padded = LeRobotDataset("motionkit/check", root=root,
                        delta_timestamps={"action": [0.0, 1 / fps, 2 / fps]})
print(json.dumps({
    "len": len(ds), "num_episodes": ds.num_episodes,
    "items": [{key: plain(value) for key, value in ds[i].items()} for i in range(len(ds))],
    "pads": [plain(padded[i]["action_is_pad"]) for i in range(len(ds))],
    "stats": {key: {name: plain(value) for name, value in stats.items()}
              for key, stats in ds.meta.stats.items()},
}))
"""


def test_lerobot_itself_loads_what_we_write(tmp_path: Path) -> None:
    """Run where a Python with lerobot 0.6.1 is named by MOTIONKIT_LEROBOT_PYTHON (it needs
    Python 3.12 and torch, so not in motionkit's venv); MOTIONKIT_REQUIRE_LEROBOT=1 fails
    instead of skipping. Elsewhere the stored getitem.json oracles stand in (above)."""
    python = os.environ.get("MOTIONKIT_LEROBOT_PYTHON")
    if not python:
        if os.environ.get("MOTIONKIT_REQUIRE_LEROBOT", "") not in ("", "0"):
            pytest.fail("MOTIONKIT_REQUIRE_LEROBOT is set but MOTIONKIT_LEROBOT_PYTHON is not")
        pytest.skip("no Python with lerobot (set MOTIONKIT_LEROBOT_PYTHON)")
    import subprocess

    motions = _episodes("arm7_tiny")
    moved = Timeline.uniform(30.0, motions[1].frames, 1_700_000_000.005)
    for name, track in motions[1].tracks.items():  # a start of its own: motionkit/start_time
        motions[1].tracks[name] = track.with_data(track.data, moved)
    lerobot.write_episodes(tmp_path / "ds", motions)
    done = subprocess.run([python, "-c", LEROBOT_CHILD, str(tmp_path / "ds"), "30"],
                          capture_output=True, text=True, timeout=600, check=True)
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["len"] == sum(m.frames for m in motions) and found["num_episodes"] == 2
    steps = [(number, frame) for number, m in enumerate(motions) for frame in range(m.frames)]
    for i, ((number, frame), item) in enumerate(zip(steps, found["items"], strict=True)):
        motion = motions[number]
        assert (item["index"], item["episode_index"], item["frame_index"]) == (i, number, frame)
        assert np.float32(item["timestamp"]) == np.float32(frame / 30)
        assert item["task"] == motion.meta["task"]
        assert np.array_equal(np.float32(item["observation.state"]), motion.tracks["joints"].data[frame])
        assert np.array_equal(np.float32(item["action"]), motion.tracks["action"].data[frame])
        last = motion.frames - 1
        assert found["pads"][i] == [False, frame + 1 > last, frame + 2 > last]
    ours = json.loads((tmp_path / "ds/meta/stats.json").read_text())
    for feature, stats in found["stats"].items():
        for key, value in stats.items():
            assert np.max(np.abs(np.subtract(ours[feature][key], value))) <= 1e-6, (feature, key)


def test_a_track_of_other_length_is_a_loss_and_dropped_when_lossy(tmp_path: Path) -> None:
    motion = _motion(["a", "b"], task="t")
    motion.add(Track("short", "value", np.zeros((3, 1)), Timeline.uniform(30.0, 3)))
    with pytest.raises(ConversionError, match="'short' \\(3 frames, not 5"):
        mk.write(tmp_path / "ds", motion, format="lerobot")
    with pytest.warns(MotionkitWarning, match="'short'"):
        mk.write(tmp_path / "ds", motion, format="lerobot", lossy=True)
    assert list(lerobot.read(tmp_path / "ds").tracks) == ["joints"]


def test_folders_a_killed_writer_left_are_removed(tmp_path: Path) -> None:
    stale = tmp_path / ".ds.999999999.0badf00d.motionkit-tmp"
    (stale / "meta").mkdir(parents=True)
    os.utime(stale, (0, 0))  # older than this process, and pid 999999999 is not running
    live = tmp_path / f".ds.{os.getpid()}.feedbeef.motionkit-tmp"
    live.mkdir()
    lerobot.write(tmp_path / "ds", _motion(None, task="t"))
    assert not stale.exists() and live.exists()  # a live writer's folder is never touched


def test_episodes_with_several_tasks_round_trip(tmp_path: Path) -> None:
    first = _motion(["a", "b"], frames=5)
    first.meta["tasks"] = ["wave", "bow", "unused"]
    timeline = first.tracks["joints"].timeline
    first.add(Track("task", "value", np.array([1, 1, 0, 0, 1]), timeline))
    second = _motion(["a", "b"], frames=5, task="wave")
    lerobot.write_episodes(tmp_path / "ds", [first, second])
    assert pq.read_table(tmp_path / "ds/meta/tasks.parquet").to_pylist() == [
        {"task_index": 0, "task": "bow"}, {"task_index": 1, "task": "wave"}]
    episodes = pq.read_table(tmp_path / "ds" / EPISODES).column("tasks").to_pylist()
    assert episodes == [["bow", "wave"], ["wave"]]  # first-seen order, never a set's
    data = pq.read_table(tmp_path / "ds" / DATA).column("task_index").to_pylist()
    assert data == [0, 0, 1, 1, 0] + [1] * 5
    back = lerobot.read_episodes(tmp_path / "ds")
    assert back[0].meta["tasks"] == ["bow", "wave"]
    assert back[0].tracks["task"].data[:, 0].tolist() == [0, 0, 1, 1, 0]
    assert "task" not in back[1].tracks and back[1].meta["task"] == "wave"
    with pytest.raises(ConversionError, match="'task' \\(per-frame tasks, replaced by the task"):
        mk.write(tmp_path / "one", first, format="lerobot", task="one")
    del first.meta["tasks"]
    with pytest.raises(ConversionError, match="'task' \\(lerobot's name for the task text"):
        mk.write(tmp_path / "two", first, format="lerobot")


def test_tasks_that_meta_episodes_gives_otherwise_are_named_on_reading(tmp_path: Path) -> None:
    """info and catalog show meta/episodes' tasks (without reading the data); a read takes
    each frame's task from task_index as LeRobot does, and names a disagreement."""
    root = _copy(tmp_path)
    table = pq.read_table(root / EPISODES)
    column = table.schema.get_field_index("tasks")
    edited = pa.array([["not what the frames say"]] * table.num_rows, type=table.schema.field(column).type)
    pq.write_table(table.set_column(column, table.schema.field(column), edited), root / EPISODES)
    with pytest.warns(MotionkitWarning, match="not what the frames say") as caught:
        moved = lerobot.read_episodes(root)
    assert len(caught) == len(moved) == 2
    for motion, kept in zip(moved, _episodes("arm7_tiny"), strict=True):
        assert motion.meta["task"] == kept.meta["task"]

"""Reading a LeRobot v3.0 dataset folder: one Motion per episode.

``info.json`` gives the fps, the features and the totals; ``meta/episodes`` says which
data file holds each episode (and, where motionkit wrote it, its start time on the
source's clock: ``layout.START_COLUMN``; else episodes start at 0); the data files hold
the frames. Every part is checked against the others (totals, columns, frame indices), and
a disagreement is one FormatError naming the file. ``observation.state`` becomes the
``joints`` track; every other numeric feature a track of its own name. Video, image and
text features are listed, never decoded. The frames one read decodes, summed over its data
files, are charged to one byte budget tied to those files' size
(:func:`motionkit._limits.array_budget`); the path templates of ``info.json`` are filled
by hand, never by ``str.format``.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from numpy.typing import NDArray

from ..._limits import DATASET_BYTES_CAP, array_budget
from ...errors import FormatError, warn
from ...model import Motion, Timeline, Track
from . import layout

PathLike = str | os.PathLike[str]


#: ``DATASET:episode=N``: one episode of a dataset, as an address any command takes.
_ADDRESS = re.compile(r"(?P<folder>.+):episode=(?P<number>[0-9]{1,9})")


def split_address(path: PathLike) -> tuple[Path, int | None]:
    """The dataset folder and the episode an address ``DATASET:episode=N`` names (None for
    a plain folder)."""
    text = os.fspath(path)
    match = _ADDRESS.fullmatch(text)
    if match is not None and (Path(match["folder"]) / layout.INFO).is_file():
        return Path(match["folder"]), int(match["number"])
    return Path(text), None


def claims(path: str) -> bool:
    """True for a folder with ``meta/info.json`` (a LeRobot dataset of any version), or an
    address ``DATASET:episode=N`` of one."""
    return (split_address(path)[0] / layout.INFO).is_file()


@dataclass
class Feature:
    """One feature of ``info.json``: its dtype, width and element names."""

    name: str
    dtype: str
    width: int
    names: list[str] | None


@dataclass
class Episode:
    """One row of ``meta/episodes``."""

    index: int
    length: int
    tasks: list[str]
    data_file: Path
    start: int  # dataset_from_index
    start_time: float = 0.0  # layout.START_COLUMN, where motionkit wrote it


@dataclass
class Dataset:
    """What a dataset folder says about itself, checked, before any frame is read."""

    root: Path
    fps: int
    features: list[Feature]
    skipped: dict[str, str]  # feature → dtype (video, image, string, or not 1-D)
    episodes: list[Episode]
    tasks: dict[int, str]
    robot_type: str | None
    info: dict[str, object] = field(repr=False, default_factory=dict)

    @cached_property
    def resolved(self) -> str:
        """The folder's absolute path (the writer refuses to write over it)."""
        return os.fspath(self.root.resolve())


def read(path: PathLike, *, episode: int | None = None, strip_pos: bool = False,
         root: str | None = None) -> Motion:
    """One episode of a LeRobot v3.0 dataset: ``episode`` N, else the first (with a
    warning naming how many there are; :func:`read_episodes` gives them all).
    ``strip_pos`` drops a ``.pos`` suffix from element names (lerobot's motor names).
    ``path`` may be an address ``DATASET:episode=N``, which names the episode. ``root``
    names a pose feature read as the ``root`` track (what ``eval``, ``view`` and the
    trajectory writers take: ``-E root=world->base_link``)."""
    path, addressed = split_address(path)
    if addressed is not None and episode is not None and episode != addressed:
        raise FormatError(f"names episode {addressed} but episode={episode} was asked", path)
    episode = addressed if addressed is not None else episode
    dataset = open_dataset(path)
    count = len(dataset.episodes)
    if episode is None:
        if count > 1:
            warn(f"{os.fspath(path)}: the dataset has {count} episodes; read episode 0 "
                 "(episode=N reads another, motionkit.formats.lerobot.dataset.read_episodes all)")
        episode = 0
    if not 0 <= episode < count:
        raise FormatError(f"no episode {episode}: the dataset has {count} (0 … {count - 1})",
                          path)
    return _with_root(episode_motions(dataset, [episode], strip_pos)[0], root, path)


def read_episodes(path: PathLike, *, strip_pos: bool = False,
                  root: str | None = None) -> list[Motion]:
    """Every episode of a LeRobot v3.0 dataset, in episode order, one Motion each."""
    dataset = open_dataset(path)
    return [_with_root(motion, root, path)
            for motion in episode_motions(dataset, range(len(dataset.episodes)), strip_pos)]


def _with_root(motion: Motion, root: str | None, path: PathLike) -> Motion:
    """``motion`` with its pose track ``root`` renamed ``root`` (first)."""
    if root is None:
        return motion
    track = motion.tracks.get(root)
    poses = [name for name, t in motion.tracks.items() if t.kind == "pose"]
    if track is None or track.kind != "pose":
        raise FormatError(f"root={root!r} names no pose feature (pose features: "
                          f"{', '.join(poses) or 'none'})", path)
    if root != "root" and "root" in motion.tracks:
        raise FormatError(f"root={root!r}: the dataset has a feature 'root' already", path)
    tracks = {"root": Track("root", "pose", track.data, track.timeline, None, track.attrs)}
    tracks.update((name, t) for name, t in motion.tracks.items() if name != root)
    return Motion(tracks, motion.skeleton, motion.terrain, motion.meta)


def contents(path: PathLike) -> dict[str, object]:
    """What a dataset holds, from its metadata alone (no frame is read): fps, the episodes
    (index, length, duration in s as ``(length − 1)/fps``, tasks, start time) and the
    features (name, dtype, shape, names; the listed-only ones with their dtype)."""
    dataset = open_dataset(path)
    episodes = [{"index": e.index, "length": e.length, "duration": (e.length - 1) / dataset.fps,
                 "tasks": list(e.tasks), "start_time": e.start_time} for e in dataset.episodes]
    features: list[dict[str, object]] = [
        {"name": f.name, "dtype": f.dtype, "shape": [f.width], "names": f.names}
        for f in dataset.features]
    features += [{"name": name, "dtype": dtype, "shape": None, "names": None, "read": False}
                 for name, dtype in dataset.skipped.items()]
    return {"fps": dataset.fps, "robot_type": dataset.robot_type, "episodes": episodes,
            "features": features}


# -- the metadata ----------------------------------------------------------------------
def open_dataset(path: PathLike) -> Dataset:
    """Read and check a dataset's metadata (``info.json``, episodes, tasks)."""
    root = Path(path)
    info_path = root / layout.INFO
    if not root.is_dir():
        raise FormatError("is not a folder (a LeRobot dataset is a folder with meta/info.json)",
                          root)
    if not info_path.is_file():
        raise FormatError("has no meta/info.json: not a LeRobot dataset", root)
    info = _json(info_path)
    version = info.get("codebase_version")
    if version != layout.VERSION:
        _refuse_version(version, root)
    fps = info.get("fps")
    if not isinstance(fps, int) or isinstance(fps, bool) or fps <= 0:
        raise FormatError(f"fps must be a positive integer, not {fps!r}", info_path)
    features, skipped = _features(info.get("features"), info_path)
    episodes = _episodes(root, info)
    tasks = _tasks(root)
    robot_type = info.get("robot_type")
    _check_totals(info, info_path, episodes, tasks)
    dataset = Dataset(root, fps, features, skipped, episodes, tasks,
                      robot_type if isinstance(robot_type, str) else None, info)
    _check_data_files(dataset)
    return dataset


def _json(path: Path) -> dict[str, object]:
    if path.stat().st_size > layout.MAX_INFO_BYTES:
        raise FormatError(f"is larger than {layout.MAX_INFO_BYTES >> 20} MiB", path)
    try:
        value = json.loads(path.read_bytes())
    except (ValueError, RecursionError) as exc:
        raise FormatError(f"is not JSON ({exc})", path) from None
    if not isinstance(value, dict):
        raise FormatError("must hold a JSON object", path)
    return value


def _refuse_version(version: object, root: Path) -> None:
    if isinstance(version, str) and version.startswith("v2"):
        raise FormatError(
            f"is a LeRobot {version} dataset; motionkit reads v3.0 only: convert it with "
            "lerobot's converter convert_dataset_v21_to_v30 (lerobot >= 0.4) first", root)
    if isinstance(version, str) and version.startswith("v1"):
        raise FormatError(f"is a LeRobot {version} dataset; motionkit reads v3.0 only: convert "
                          "it to v2.1 and then with lerobot's convert_dataset_v21_to_v30", root)
    raise FormatError(f"codebase_version is {version!r}; motionkit reads LeRobot v3.0", root)


def _features(value: object, path: Path) -> tuple[list[Feature], dict[str, str]]:
    if not isinstance(value, dict) or not value:
        raise FormatError("features must be an object naming each feature", path)
    features, skipped = [], {}
    for name, spec in value.items():
        if not isinstance(spec, dict) or not isinstance(spec.get("dtype"), str):
            raise FormatError(f"features.{name} must be an object with a dtype", path)
        dtype, shape = spec["dtype"], spec.get("shape")
        if not (isinstance(shape, list) and shape and all(isinstance(n, int) and n > 0
                                                            for n in shape)):
            raise FormatError(f"features.{name}.shape must be a list of positive integers", path)
        if dtype in layout.NOT_NUMERIC or len(shape) != 1 or dtype not in layout.DTYPES:
            skipped[name] = dtype if dtype in layout.NOT_NUMERIC or dtype not in layout.DTYPES \
                else f"{dtype}{shape}"
            continue
        names = layout.element_names(spec.get("names"), shape[0], name, path)
        features.append(Feature(name, dtype, shape[0], names))
    missing = [name for name in layout.DEFAULTS if name not in {f.name for f in features}]
    if missing:
        raise FormatError(f"features lack the default column(s) {', '.join(missing)}", path)
    return features, skipped


_EPISODE_COLUMNS = ("episode_index", "length", "tasks", "data/chunk_index", "data/file_index",
                    "dataset_from_index", "dataset_to_index")


def _episodes(root: Path, info: Mapping[str, object]) -> list[Episode]:
    files = sorted((root / "meta" / "episodes").glob("chunk-*/file-*.parquet"))
    if not files:
        raise FormatError("has no meta/episodes/chunk-*/file-*.parquet", root)
    template = info.get("data_path")
    if not isinstance(template, str):
        raise FormatError("data_path must be a path template", root / layout.INFO)
    video = info.get("video_path")  # not read here, but checked as data_path is
    if isinstance(video, str):
        layout.fill_template(video, {"video_key": "", "chunk_index": 0, "file_index": 0},
                             "video_path", root / layout.INFO)
    rows: list[dict[str, object]] = []
    for file in files:
        names = pq.read_schema(file).names
        missing = [name for name in _EPISODE_COLUMNS if name not in names]
        if missing:
            raise FormatError(f"lacks the column(s) {', '.join(missing)}", file)
        wanted = list(_EPISODE_COLUMNS) + [layout.START_COLUMN] * (layout.START_COLUMN in names)
        rows.extend(pq.read_table(file, columns=wanted).to_pylist())
    if not all(isinstance(row["episode_index"], int) for row in rows):
        raise FormatError("episode_index must be an integer in every row", files[0])
    rows.sort(key=lambda row: int(row["episode_index"]))  # type: ignore[call-overload]
    episodes: list[Episode] = []
    for number, row in enumerate(rows):
        index, length, start, stop = (row["episode_index"], row["length"],
                                      row["dataset_from_index"], row["dataset_to_index"])
        if index != number:
            raise FormatError(f"episode indices are not 0 … N-1 (episode {index} where "
                              f"{number} was due)", files[0])
        if not (isinstance(length, int) and isinstance(start, int) and isinstance(stop, int)
                and length > 0 and stop - start == length):
            raise FormatError(f"episode {index}: length {length} disagrees with "
                              f"dataset_from_index {start} … dataset_to_index {stop}", files[0])
        if start != (episodes[-1].start + episodes[-1].length if episodes else 0):
            raise FormatError(f"episode {index}: dataset_from_index {start} does not follow on "
                              "from the episode before (the global index runs on across "
                              "episodes)", files[0])
        chunk, file_number = row["data/chunk_index"], row["data/file_index"]
        if not (isinstance(chunk, int) and isinstance(file_number, int)
                and not isinstance(chunk, bool) and not isinstance(file_number, bool)):
            raise FormatError(f"episode {index}: data/chunk_index and data/file_index must be "
                              f"integers, not {chunk!r} and {file_number!r}", files[0])
        relative = layout.fill_template(template, {"chunk_index": chunk,
                                                   "file_index": file_number},
                                        "data_path", root / layout.INFO)
        tasks = row["tasks"]
        episodes.append(Episode(number, length, [str(t) for t in tasks or []],  # type: ignore[attr-defined]
                                _inside(root, relative), start,
                                _start_time(row.get(layout.START_COLUMN), index, files[0])))
    return episodes


def _start_time(value: object, index: object, path: Path) -> float:
    """An episode's ``motionkit/start_time``: a finite number of seconds (0 where absent)."""
    if value is None:
        return 0.0
    if not isinstance(value, float | int) or isinstance(value, bool) or not np.isfinite(value):
        raise FormatError(f"episode {index}: {layout.START_COLUMN} must be a finite number of "
                          f"seconds, not {value!r}", path)
    return float(value)


def _inside(root: Path, relative: str) -> Path:
    """A path of the dataset that stays inside its folder (no ``..``, no absolute path)."""
    target = root / relative
    if Path(relative).is_absolute() or ".." in Path(relative).parts:
        raise FormatError(f"data path {relative!r} leaves the dataset folder", root / layout.INFO)
    return target


def _tasks(root: Path) -> dict[int, str]:
    path = root / layout.TASKS
    if not path.is_file():
        raise FormatError("has no meta/tasks.parquet", root)
    table = pq.read_table(path)
    if not {"task_index", "task"} <= set(table.column_names):
        raise FormatError("needs the columns task_index and task", path)
    indices = table.column("task_index").to_pylist()
    texts = table.column("task").to_pylist()
    if not all(isinstance(i, int) and not isinstance(i, bool) for i in indices):
        raise FormatError("task_index must be an integer in every row", path)
    if len(set(indices)) != len(indices):
        raise FormatError("task_index repeats a number (each task has its own)", path)
    return {int(i): str(t) for i, t in zip(indices, texts, strict=True)}


def _check_totals(info: Mapping[str, object], path: Path, episodes: list[Episode],
                  tasks: Mapping[int, str]) -> None:
    found = {"total_episodes": len(episodes), "total_tasks": len(tasks),
             "total_frames": sum(episode.length for episode in episodes)}
    for key, count in found.items():
        said = info.get(key)
        if said != count:
            what = {"total_episodes": "episodes in meta/episodes",
                    "total_tasks": "tasks in meta/tasks.parquet",
                    "total_frames": "frames in meta/episodes (their lengths)"}[key]
            raise FormatError(f"{key} is {said!r} but there are {count} {what}", path)


# -- the frames ------------------------------------------------------------------------
def episode_motions(dataset: Dataset, numbers: range | list[int], strip_pos: bool) -> list[Motion]:
    """The Motions of episodes ``numbers``, reading each data file once. An episode inside
    one row group (as lerobot writes them) is a view of the file's arrays, not a copy."""
    by_file: dict[Path, list[int]] = {}
    for number in numbers:
        by_file.setdefault(dataset.episodes[number].data_file, []).append(number)
    motions: dict[int, Motion] = {}
    budget = array_budget(dataset.root, sum(file.stat().st_size for file in by_file),
                          cap=DATASET_BYTES_CAP)
    # each element is held twice at most: in Arrow's table and as a NumPy array (float64)
    row_bytes = sum(f.width * (layout.numpy_dtype(f.dtype).itemsize + 8)
                    for f in dataset.features)
    for file, wanted in by_file.items():
        budget.charge(pq.read_metadata(file).num_rows * row_bytes)
        table = pq.read_table(file, columns=[feature.name for feature in dataset.features])
        columns = {feature.name: Column(table.column(feature.name), feature, file)
                   for feature in dataset.features}
        episode_of = columns["episode_index"].whole()
        ordered = bool(np.all(np.diff(episode_of.astype(np.int64)) >= 0))
        for number in wanted:
            if ordered:  # each episode's rows together
                low, high = np.searchsorted(episode_of, [number, number + 1])
                rows: NDArray[np.intp] | slice = slice(int(low), int(high))
            else:
                rows = np.flatnonzero(episode_of == number)
            episode = {name: column.rows(rows) for name, column in columns.items()}
            motions[number] = _motion(dataset, dataset.episodes[number], episode, file,
                                      strip_pos)
    return [motions[number] for number in numbers]


def _check_data_files(dataset: Dataset) -> None:
    """Every data file exists, has exactly the declared columns, and together they hold
    ``total_frames`` rows (from the Parquet footers: no frame is read)."""
    declared = {feature.name for feature in dataset.features} | set(dataset.skipped)
    rows = 0
    for file in dict.fromkeys(episode.data_file for episode in dataset.episodes):
        if not file.is_file():
            raise FormatError("is named by meta/episodes but does not exist", file)
        metadata = pq.read_metadata(file)
        names = metadata.schema.to_arrow_schema().names
        extra = [name for name in names if name not in declared]
        if extra:
            raise FormatError(f"has column(s) {', '.join(map(repr, extra))} that info.json's "
                              "features do not declare", file)
        missing = [f.name for f in dataset.features if f.name not in names]
        if missing:
            raise FormatError(f"lacks the column(s) {', '.join(map(repr, missing))} that "
                              "info.json declares", file)
        rows += metadata.num_rows
    if rows != dataset.info.get("total_frames"):
        raise FormatError(f"total_frames is {dataset.info.get('total_frames')!r} but the data "
                          f"files hold {rows} rows", dataset.root / layout.INFO)


class Column:
    """One numeric column of a data file as NumPy arrays, one per Parquet chunk (row
    group): a scalar feature as (rows,), a list feature as (rows, width)."""

    def __init__(self, column: pa.ChunkedArray, feature: Feature, path: Path) -> None:
        self.parts = [_chunk_array(chunk, feature, path) for chunk in column.chunks]
        self.starts = np.cumsum([0] + [len(part) for part in self.parts])
        self.shape = (feature.width,) if feature.width > 1 else ()
        self.dtype = layout.numpy_dtype(feature.dtype)
        self._whole: NDArray[np.generic] | None = None

    def whole(self) -> NDArray[np.generic]:
        """Every row (the chunks joined once)."""
        if self._whole is None:
            self._whole = (self.parts[0] if len(self.parts) == 1 else
                           np.concatenate(self.parts) if self.parts else
                           np.empty((0, *self.shape), dtype=self.dtype))
        return self._whole

    def rows(self, rows: NDArray[np.intp] | slice) -> NDArray[np.generic]:
        """The rows asked for: a view where they lie in one chunk."""
        if isinstance(rows, slice) and len(self.parts) > 1:
            part = int(np.searchsorted(self.starts, rows.start, side="right")) - 1
            if part < len(self.parts) and rows.stop <= self.starts[part + 1]:
                base = int(self.starts[part])
                return self.parts[part][rows.start - base:rows.stop - base]
        return self.whole()[rows]


def _chunk_array(array: pa.Array, feature: Feature, path: Path) -> NDArray[np.generic]:
    """One chunk of a Parquet column as NumPy (zero-copy for numbers without gaps)."""
    dtype = layout.numpy_dtype(feature.dtype)
    rows = len(array)
    if array.null_count:
        raise FormatError(f"column {feature.name!r} has missing rows", path)
    if pa.types.is_list(array.type) or pa.types.is_fixed_size_list(array.type) \
            or pa.types.is_large_list(array.type):
        if not pa.types.is_fixed_size_list(array.type):
            lengths = array.value_lengths().to_numpy(zero_copy_only=False)
            if lengths.size and not np.all(lengths == feature.width):
                raise FormatError(f"column {feature.name!r} has rows of another length than "
                                  f"its shape [{feature.width}]", path)
        flat = np.asarray(array.flatten().to_numpy(zero_copy_only=False), dtype=dtype)
        if flat.size != rows * feature.width:
            raise FormatError(f"column {feature.name!r} holds {flat.size} numbers for {rows} "
                              f"rows of {feature.width}", path)
        return flat.reshape(rows, feature.width)
    if feature.width != 1:
        raise FormatError(f"column {feature.name!r} holds one number per row, but its shape is "
                          f"[{feature.width}]", path)
    return np.asarray(array.to_numpy(zero_copy_only=False), dtype=dtype)


def _motion(dataset: Dataset, episode: Episode, columns: Mapping[str, NDArray[np.generic]],
            file: Path, strip_pos: bool) -> Motion:
    """One episode's Motion from its rows of every column."""
    count = len(columns["frame_index"])
    if count != episode.length:
        raise FormatError(f"holds {count} rows of episode {episode.index}, but "
                          f"meta/episodes says its length is {episode.length}", file)
    frames = columns["frame_index"]
    if not np.array_equal(frames, np.arange(episode.length)):
        raise FormatError(f"episode {episode.index}: frame_index is not 0 … {episode.length - 1} "
                          "in row order", file)
    index = columns["index"]
    if not np.array_equal(index, episode.start + np.arange(episode.length)):
        raise FormatError(f"episode {episode.index}: index is not dataset_from_index "
                          f"{episode.start} onwards in row order", file)
    timeline = Timeline.uniform(float(dataset.fps), episode.length, episode.start_time)
    stamps = columns["timestamp"].astype(np.float64)
    expected = (np.arange(episode.length) / dataset.fps).astype(np.float32)
    if np.max(np.abs(stamps - expected)) > 1e-4:  # lerobot's own tolerance_s
        warn(f"{os.fspath(file)}: episode {episode.index}: timestamp is not frame_index/fps; "
             f"motionkit uses {dataset.fps} fps from info.json")
    tracks: dict[str, Track] = {}
    for feature in dataset.features:
        if feature.name in layout.DEFAULTS:
            continue
        data = columns[feature.name]
        names = feature.names
        kind = layout.kind_of(names)
        labels = None if kind != "value" else names
        if labels is not None and strip_pos:
            labels = [label.removesuffix(".pos") for label in labels]
        name = layout.STATE_TRACK if feature.name == layout.STATE else feature.name
        tracks[name] = Track(name, kind, data.reshape(episode.length, feature.width), timeline,
                             labels)
    meta = _meta(dataset, episode, columns["task_index"])
    tasks = meta.get("tasks")
    if isinstance(tasks, list):  # several: each frame's position among them
        task_of = {text: number for number, text in enumerate(tasks)}
        found, inverse = np.unique(columns["task_index"], return_inverse=True)
        positions = np.array([task_of[dataset.tasks[int(i)]] for i in found], dtype=np.int64)
        tracks[layout.TASK_TRACK] = Track(layout.TASK_TRACK, "value",
                                          positions[inverse.reshape(-1)], timeline)
    return Motion(tracks, meta=meta)


def _meta(dataset: Dataset, episode: Episode,
          task_index: NDArray[np.generic]) -> dict[str, object]:
    found, first = np.unique(task_index, return_index=True)
    task_indices = [int(i) for i in found[np.argsort(first)]]  # in first-seen order
    unknown = [i for i in task_indices if i not in dataset.tasks]
    if unknown:
        raise FormatError(f"episode {episode.index} has task_index {unknown[0]}, which "
                          "meta/tasks.parquet does not list", episode.data_file)
    tasks = [dataset.tasks[i] for i in task_indices]
    if episode.tasks and set(episode.tasks) != set(tasks):
        # LeRobot takes each frame's task from task_index; meta/episodes (what info and
        # catalog show without reading the data) then says otherwise: name both
        warn(f"{os.fspath(episode.data_file)}: episode {episode.index}: meta/episodes lists "
             f"the tasks {episode.tasks!r}, its frames' task_index gives {tasks!r} "
             "(meta/tasks.parquet); motionkit uses the frames', as LeRobot does")
    meta: dict[str, object] = {"name": f"episode_{episode.index:06d}"}
    if len(tasks) == 1:
        meta["task"] = tasks[0]
    else:
        meta["tasks"] = tasks  # the track 'task' says which frame has which
    if dataset.robot_type is not None:
        meta["robot_type"] = dataset.robot_type
    meta["lerobot"] = {
        "dataset": dataset.resolved,
        "episode_index": episode.index,
        "total_episodes": len(dataset.episodes),
        "fps": dataset.fps,
        "features": {f.name: [f.dtype, f.width] for f in dataset.features},
        "not_read": dict(dataset.skipped),
    }
    return meta

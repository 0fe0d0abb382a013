"""Writing LeRobot v3.0 datasets that lerobot 0.6.1's ``LeRobotDataset`` loads frame for
frame: one episode per motion, one Parquet row group per episode, lerobot's metadata files
and its statistics (``stats.py``).

Each track of a motion becomes a feature: ``joints`` (or ``state=TRACK``) is
``observation.state``, ``action`` (or ``action=TRACK``) is ``action``, any other track keeps
its name (see :class:`Naming`); element names come from the track's labels (pose, vector and
quaternion tracks are named ``x y z qx qy qz qw``, quaternions x-y-z-w). Floats are written
as float32 (lerobot's convention; ``precision="float64"`` keeps them), integers as int64.
The fps is the motions' common rate, which must be an integer; the task of an episode is
``task=...`` or the motion's ``meta["task"]``. ``timestamp`` is ``frame_index / fps`` as
lerobot writes it; an episode's start time (a bag's Unix time after ``sync``) is kept in
``meta/episodes`` as ``motionkit/start_time`` (``layout.START_COLUMN``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from numpy.typing import NDArray

from ...errors import ConversionError
from ...model import Motion, Track
from ..loss import Holds
from . import layout
from .folder import building
from .stats import STAT_NAMES, Stats, aggregate, as_json, episode_stats

#: What an episode holds: uniform tracks on one timeline (its start in ``meta/episodes``),
#: their labels, a task and the robot type; no skeleton, terrain, attributes or time stamps.
HOLDS = Holds(skeleton=False, terrain=False, stamps=False, one_timeline=True,
              empty_tracks=False, attrs=False, position_only=False,
              meta=frozenset({"task", "tasks", "robot_type"}), namespace="lerobot")
PRECISIONS = ("float32", "float64")


@dataclass(frozen=True)
class Column:
    """One feature as written: its name, dtype, width and element names."""

    name: str
    dtype: str
    width: int
    names: list[str] | None

    def spec(self) -> dict[str, object]:
        return {"dtype": self.dtype, "shape": [self.width], "names": self.names}


@dataclass(frozen=True)
class Naming:
    """Which tracks are lerobot's ``observation.state`` and ``action``; every other track
    keeps its name, with a leading ``/`` dropped and inner ones made ``.`` (lerobot splits
    ``stats/<feature>/<stat>`` at slashes, so a feature name never holds one)."""

    state: str | None = None
    action: str | None = None

    def feature(self, track: str) -> str:
        if track == (self.state or layout.STATE_TRACK):
            return layout.STATE
        if track == (self.action or "action"):
            return "action"
        return track.lstrip("/").replace("/", ".")

    def plan(self, motion: Motion, task: str | None = None) -> tuple[dict[str, str], dict[str, str]]:
        """The features the tracks become, and why the others cannot be written (the
        ``task`` track that assigns frames to ``meta["tasks"]`` is neither)."""
        for role, wanted in (("state", self.state), ("action", self.action)):
            if wanted is not None and wanted not in motion.tracks:
                raise ConversionError(f"{role}={wanted!r} names no track (tracks: "
                                      f"{', '.join(motion.tracks) or 'none'})")
        written: dict[str, str] = {}
        refused: dict[str, str] = {}
        taken: dict[str, str] = {}
        first = motion.main_track
        assigns = frame_tasks(motion) is not None
        for name, track in motion.tracks.items():
            if name == layout.TASK_TRACK and assigns and task is None:
                continue  # becomes task_index
            feature = self.feature(name)
            why = _unwritable(track)
            if why is None and name == layout.TASK_TRACK:
                why = ("per-frame tasks, replaced by the task option" if assigns else
                       "lerobot's name for the task text; a per-frame task track needs "
                       "meta['tasks'] to index")
            if why is None and first is not None and track.frames != first.frames:
                why = (f"{track.frames} frames, not {first.frames} as {first.name!r}: an "
                       "episode is one timeline")
            if why is None and feature in layout.DEFAULTS:
                why = "the name of a column lerobot writes itself"
            elif why is None and feature in taken:
                why = f"its feature name {feature!r} is {taken[feature]!r}'s"
            elif why is None and not feature:
                why = "no feature name is left of it"
            if why is None:
                written[name] = feature
                taken[feature] = name
            else:
                refused[name] = why
        return written, refused


def losses(obj: Motion, task: str | None = None, robot_type: str | None = None,
           precision: str = "float32", state: str | None = None,
           action: str | None = None) -> list[str]:
    """What an episode cannot hold beyond ``HOLDS``: per-part tracks, tracks that are not
    numbers, names taken by lerobot's own columns or by another track, labels of
    fixed-width kinds, frames of one episode's several tasks."""
    lost = []
    _, refused = Naming(state, action).plan(obj, task)
    for name, track in obj.tracks.items():
        if name in refused:
            lost.append(f"track {name!r} ({refused[name]})")
        elif track.labels and track.kind != "value":
            lost.append(f"the labels of track {name!r} (a {track.kind} feature's names are "
                        f"{' '.join(layout.KIND_NAMES[track.kind])})")
    tasks = obj.meta.get("tasks")
    if task is None and "task" not in obj.meta and isinstance(tasks, list) and len(tasks) > 1 \
            and frame_tasks(obj) is None:
        lost.append(f"which frames belong to which of the episode's {len(tasks)} tasks (all "
                    f"frames get the first, {tasks[0]!r})")
    return lost


def _unwritable(track: Track) -> str | None:
    if track.data.ndim == 3:
        return "one row per part: a LeRobot feature here is one vector per frame"
    if track.data.dtype.kind not in "fiub":
        return f"{track.data.dtype} values, not numbers"
    return None


def write(path: str | os.PathLike[str], obj: Motion, *, task: str | None = None,
          robot_type: str | None = None, precision: str = "float32", state: str | None = None,
          action: str | None = None) -> None:
    """Write one motion as a one-episode dataset folder; ``state`` and ``action`` name the
    tracks written as ``observation.state`` (default ``joints``) and ``action``."""
    write_dataset(path, [obj], task=task, robot_type=robot_type, precision=precision,
                  naming=Naming(state, action))


def write_episodes(path: str | os.PathLike[str], motions: Sequence[Motion], *,
                   lossy: bool = False, task: str | None = None, robot_type: str | None = None,
                   precision: str = "float32", state: str | None = None,
                   action: str | None = None) -> list[Motion]:
    """Write several motions as the episodes of one dataset, each through the loss rule
    (refused, or with ``lossy`` dropped with a warning); returns what was written."""
    from ..registry import by_name  # the contract, applied per episode

    fmt = by_name("lerobot")
    options: dict[str, object] = {"task": task, "robot_type": robot_type, "precision": precision,
                                  "state": state, "action": action}
    settled = [fmt.settle(motion, lossy, options=dict(options)) for motion in motions]
    write_dataset(path, settled, task=task, robot_type=robot_type, precision=precision,
                  naming=Naming(state, action))
    return settled


def write_dataset(path: str | os.PathLike[str], motions: Sequence[Motion], *,
                  task: str | None = None, robot_type: str | None = None,
                  precision: str = "float32", naming: Naming = Naming()) -> None:
    """Write motions that the loss rule has settled as the episodes of one dataset."""
    if precision not in PRECISIONS:
        raise ConversionError(f"precision must be one of {', '.join(PRECISIONS)}, not {precision!r}")
    if not motions:
        raise ConversionError("a LeRobot dataset needs at least one episode")
    target = Path(path)
    _refuse_source(target, motions)
    fps = _fps(motions)
    columns = _columns(motions[0], precision, naming, task)
    for number, motion in enumerate(motions[1:], start=1):
        if _columns(motion, precision, naming, task) != columns:
            raise ConversionError(f"episode {number} has other features than episode 0 "
                                  "(every episode of a dataset has the same features, names "
                                  "and widths)")
    tasks = [_tasks(motion, task, number) for number, motion in enumerate(motions)]
    robot = _robot_type(motions, robot_type)
    with building(target) as folder:
        _Writer(folder, fps, columns, robot, naming, task).write(motions, tasks)


def _refuse_source(target: Path, motions: Sequence[Motion]) -> None:
    for motion in motions:
        own = motion.meta.get("lerobot")
        source = own.get("dataset") if isinstance(own, dict) else None
        if isinstance(source, str) and target.exists() and Path(source).exists() \
                and os.path.samefile(source, target):
            raise ConversionError(f"{target}: is the dataset these episodes were read from; "
                                  "refused (write to another folder)")


def _fps(motions: Sequence[Motion]) -> int:
    rates = set()
    for number, motion in enumerate(motions):
        main = motion.main_track
        if main is None or not main.frames:
            raise ConversionError(f"episode {number} has no frames")
        rate = main.timeline.rate
        if rate is None:
            raise ConversionError(f"episode {number} has time stamps but no frame rate; "
                                  "resample it (rate=... / --rate) first")
        if rate != round(rate):
            raise ConversionError(f"LeRobot's fps is an integer; episode {number} runs at "
                                  f"{rate:g} Hz (resample it: rate=... / --rate)")
        rates.add(round(rate))
    if len(rates) > 1:
        raise ConversionError(f"the episodes run at {', '.join(map(str, sorted(rates)))} Hz; a "
                              "dataset has one fps (resample them: rate=... / --rate)")
    return rates.pop()


def _columns(motion: Motion, precision: str, naming: Naming, task: str | None) -> list[Column]:
    columns = []
    written, _ = naming.plan(motion, task)  # the others were dropped by the loss rule (lossy)
    for name, feature in written.items():
        track = motion.tracks[name]
        kind = track.data.dtype.kind
        dtype = precision if kind == "f" else "bool" if kind == "b" else "int64"
        names = layout.KIND_NAMES.get(track.kind) or track.labels
        columns.append(Column(feature, dtype, int(track.data.shape[1]),
                              list(names) if names else None))
    if not columns:
        raise ConversionError("an episode needs at least one track of numbers")
    return columns


def frame_tasks(motion: Motion) -> NDArray[np.int64] | None:
    """Each frame's position in ``meta["tasks"]`` from the motion's ``task`` track (what
    reading a multi-task episode gives), or None where the motion has no such assignment."""
    tasks, track = motion.meta.get("tasks"), motion.tracks.get(layout.TASK_TRACK)
    if not (isinstance(tasks, list) and tasks and all(isinstance(t, str) for t in tasks)
            and track is not None and track.data.dtype.kind in "iu"
            and track.data.ndim == 2 and track.data.shape[1] == 1):
        return None
    values = track.data[:, 0].astype(np.int64)
    return values if values.size and values.min() >= 0 and values.max() < len(tasks) else None


@dataclass(frozen=True)
class EpisodeTasks:
    """An episode's tasks in first-seen order, and each frame's position among them."""

    texts: list[str]
    per_frame: NDArray[np.int64] | None = None  # None: every frame has texts[0]


def _tasks(motion: Motion, task: str | None, number: int) -> EpisodeTasks:
    if task is not None:
        return EpisodeTasks([task])
    tasks, assigned = motion.meta.get("tasks"), frame_tasks(motion)
    if assigned is not None and isinstance(tasks, list):
        used, first = np.unique(assigned, return_index=True)
        order = used[np.argsort(first)]  # first-seen order
        position = np.empty(len(tasks), dtype=np.int64)
        position[order] = np.arange(len(order))
        return EpisodeTasks([tasks[i] for i in order], position[assigned])
    text = motion.meta.get("task")
    if text is None and isinstance(tasks, list) and tasks:
        text = tasks[0]
    if not isinstance(text, str):
        raise ConversionError(f"episode {number} has no task: LeRobot needs one per episode "
                              "(meta['task'] or task=... / -O task=...)")
    return EpisodeTasks([text])


def _robot_type(motions: Sequence[Motion], robot_type: str | None) -> str | None:
    if robot_type is not None:
        return robot_type
    found = {motion.meta.get("robot_type") for motion in motions} - {None}
    if len(found) > 1:
        raise ConversionError(f"the episodes name several robot types ({', '.join(map(str, found))}); "
                              "a dataset has one (robot_type=...)")
    value = found.pop() if found else None
    return value if isinstance(value, str) else None


class _Writer:
    """The files of one dataset, episode by episode."""

    def __init__(self, folder: Path, fps: int, columns: list[Column], robot_type: str | None,
                 naming: Naming, task: str | None):
        self.folder, self.fps, self.columns, self.robot_type = folder, fps, columns, robot_type
        self.naming, self.task = naming, task
        defaults = [Column(name, dtype, 1, None) for name, dtype in layout.DEFAULTS.items()]
        self.all_columns = columns + defaults
        self.schema = pa.schema(
            [pa.field(c.name, layout.arrow_type(c.dtype, c.width)) for c in self.all_columns],
            metadata=layout.hf_metadata({c.name: (c.dtype, c.width) for c in self.all_columns}))

    def write(self, motions: Sequence[Motion], tasks: list[EpisodeTasks]) -> None:
        every = dict.fromkeys(text for episode in tasks for text in episode.texts)
        task_index = {text: number for number, text in enumerate(every)}  # first seen
        rows: list[dict[str, object]] = []
        per_episode: list[dict[str, Stats]] = []
        chunk = file = 0
        size = 0.0
        writer: pq.ParquetWriter | None = None
        start = 0
        starts = [_start_time(motion) for motion in motions]
        self.starts = starts if any(starts) else None
        try:
            for number, (motion, own) in enumerate(zip(motions, tasks, strict=True)):
                indices = np.array([task_index[text] for text in own.texts], dtype=np.int64)
                frames = (np.full(motion.frames, indices[0]) if own.per_frame is None
                          else indices[own.per_frame])
                arrays = self._arrays(motion, number, start, frames)
                table = self._table(arrays)
                megabytes = table.nbytes / 1e6
                if writer is not None and size + megabytes >= layout.DATA_FILES_MB:
                    writer.close()
                    writer, size = None, 0.0
                    chunk, file = (chunk + 1, 0) if file + 1 >= layout.CHUNKS_SIZE else (chunk, file + 1)
                if writer is None:
                    target = self.folder / layout.DATA_PATH.format(chunk_index=chunk, file_index=file)
                    target.parent.mkdir(parents=True, exist_ok=True)
                    writer = pq.ParquetWriter(target, self.schema, compression="snappy",
                                              use_dictionary=True)
                writer.write_table(table, row_group_size=max(table.num_rows, 1))
                size += megabytes
                stats = {name: episode_stats(values) for name, values in arrays.items()}
                # lerobot takes the timestamp's statistics before its float32 cast
                stats["timestamp"] = episode_stats(np.arange(table.num_rows) / self.fps)
                per_episode.append(stats)
                length = table.num_rows
                rows.append(self._episode_row(number, own.texts, length, chunk, file, start,
                                              stats))
                start += length
        finally:
            if writer is not None:
                writer.close()
        self._metadata(rows, per_episode, task_index, start)

    def _arrays(self, motion: Motion, number: int, start: int,
                task_index: NDArray[np.int64]) -> dict[str, NDArray[np.generic]]:
        frames = motion.frames
        arrays: dict[str, NDArray[np.generic]] = {}
        written, _ = self.naming.plan(motion, self.task)
        tracks = {feature: motion.tracks[name] for name, feature in written.items()}
        for column in self.columns:
            track = tracks[column.name]
            if track.data.dtype.kind == "u" and track.data.size \
                    and int(track.data.max()) > np.iinfo(np.int64).max:
                raise ConversionError(f"episode {number}: track {track.name!r} holds integers "
                                      "beyond int64, which lerobot stores integers as")
            with np.errstate(over="ignore"):  # an overflow to inf is refused just below
                values = track.data.astype(layout.numpy_dtype(column.dtype), copy=False)
            _check_finite(values, track.name, number)
            arrays[column.name] = values[:, 0] if column.width == 1 else values
        indices = np.arange(frames, dtype=np.int64)
        arrays["timestamp"] = (indices / self.fps).astype(np.float32)
        arrays["frame_index"] = indices
        arrays["episode_index"] = np.full(frames, number, dtype=np.int64)
        arrays["index"] = indices + start
        arrays["task_index"] = task_index
        return arrays

    def _table(self, arrays: dict[str, NDArray[np.generic]]) -> pa.Table:
        columns = []
        for column in self.all_columns:
            values = np.ascontiguousarray(arrays[column.name])
            if column.width == 1:
                columns.append(pa.array(values))
            else:
                flat = pa.array(values.reshape(-1))
                columns.append(pa.FixedSizeListArray.from_arrays(flat, column.width))
        return pa.Table.from_arrays(columns, schema=self.schema)

    def _episode_row(self, number: int, tasks: list[str], length: int, chunk: int, file: int,
                     start: int, stats: dict[str, Stats]) -> dict[str, object]:
        row: dict[str, object] = {
            "episode_index": number, "tasks": tasks, "length": length,
            "data/chunk_index": chunk, "data/file_index": file,
            "dataset_from_index": start, "dataset_to_index": start + length,
        }
        for column in self.all_columns:
            for key in STAT_NAMES:
                value = stats[column.name][key]
                row[f"stats/{column.name}/{key}"] = np.asarray(value).tolist()
        row["meta/episodes/chunk_index"] = 0
        row["meta/episodes/file_index"] = 0
        if self.starts is not None:
            row[layout.START_COLUMN] = self.starts[number]
        return row

    def _metadata(self, rows: list[dict[str, object]], per_episode: list[dict[str, Stats]],
                  task_index: dict[str, int], frames: int) -> None:
        meta = self.folder / "meta"
        episodes = self.folder / layout.EPISODES_PATH.format(chunk_index=0, file_index=0)
        episodes.parent.mkdir(parents=True, exist_ok=True)
        fields = [pa.field("episode_index", pa.int64()), pa.field("tasks", pa.list_(pa.string())),
                  pa.field("length", pa.int64()), pa.field("data/chunk_index", pa.int64()),
                  pa.field("data/file_index", pa.int64()),
                  pa.field("dataset_from_index", pa.int64()),
                  pa.field("dataset_to_index", pa.int64())]
        for column in self.all_columns:
            for key in STAT_NAMES:
                element = pa.int64() if key == "count" else pa.float64()
                fields.append(pa.field(f"stats/{column.name}/{key}", pa.list_(element)))
        fields += [pa.field("meta/episodes/chunk_index", pa.int64()),
                   pa.field("meta/episodes/file_index", pa.int64())]
        if self.starts is not None:
            fields.append(pa.field(layout.START_COLUMN, pa.float64()))
        pq.write_table(pa.Table.from_pylist(rows, schema=pa.schema(fields)), episodes,
                       compression="snappy")
        _write_tasks(meta / "tasks.parquet", task_index)
        stats = {column.name: aggregate([episode[column.name] for episode in per_episode])
                 for column in self.all_columns}
        (meta / "stats.json").write_text(json.dumps(as_json(stats), indent=4))
        info = {
            "codebase_version": layout.VERSION,
            "fps": self.fps,
            "features": {column.name: column.spec() for column in self.all_columns},
            "total_episodes": len(rows),
            "total_frames": frames,
            "total_tasks": len(task_index),
            "chunks_size": layout.CHUNKS_SIZE,
            "data_files_size_in_mb": layout.DATA_FILES_MB,
            "video_files_size_in_mb": layout.VIDEO_FILES_MB,
            "data_path": layout.DATA_PATH,
            "video_path": None,
            "robot_type": self.robot_type,
            "splits": {"train": f"0:{len(rows)}"},
        }
        (meta / "info.json").write_text(json.dumps(info, indent=4, ensure_ascii=False))


def _start_time(motion: Motion) -> float:
    """The episode's first frame time (its tracks share one timeline)."""
    main = motion.main_track
    return float(main.timeline.start) if main is not None else 0.0


def _check_finite(values: NDArray[np.generic], track: str, number: int) -> None:
    """ConversionError for NaN or infinite values (also where float32 overflows): lerobot's
    statistics, and its training, cannot take them."""
    if values.dtype.kind != "f":
        return
    bad = ~np.isfinite(values.reshape(len(values), -1)).all(axis=1)
    if bad.any():
        raise ConversionError(
            f"episode {number}: track {track!r} has {int(bad.sum())} frame(s) with NaN or "
            f"infinite values (as written), the first is frame {int(np.argmax(bad))}: lerobot's "
            "statistics cannot take them (fill or cut the gaps first)")


def _write_tasks(path: Path, task_index: dict[str, int]) -> None:
    """``meta/tasks.parquet``: task_index and task, with the pandas metadata that makes
    ``task`` the frame's index when lerobot reads it with pandas."""
    pandas = {
        "index_columns": ["task"],
        "column_indexes": [{"name": None, "field_name": None, "pandas_type": "unicode",
                            "numpy_type": "object", "metadata": {"encoding": "UTF-8"}}],
        "columns": [
            {"name": "task_index", "field_name": "task_index", "pandas_type": "int64",
             "numpy_type": "int64", "metadata": None},
            {"name": "task", "field_name": "task", "pandas_type": "unicode",
             "numpy_type": "object", "metadata": None},
        ],
        "attributes": {},
        "creator": {"library": "pyarrow", "version": pa.__version__},
    }
    schema = pa.schema([pa.field("task_index", pa.int64()), pa.field("task", pa.string())],
                       metadata={b"pandas": json.dumps(pandas).encode()})
    table = pa.Table.from_pydict({"task_index": list(task_index.values()),
                                  "task": list(task_index)}, schema=schema)
    pq.write_table(table, path, compression="snappy")

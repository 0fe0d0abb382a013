"""A dataset's frames as lerobot 0.6.1's ``LeRobotDataset(root=..., delta_timestamps=...)[i]``
gives them, without torch: NumPy arrays (a shape-[1] feature and the five default columns
as 0-d arrays, as lerobot's 0-d tensors), the task as text.

``delta_timestamps`` (spec §1.4): each offset ``dt`` of a feature is ``round(dt·fps)``
frames and must lie within ``tolerance_s`` of a whole frame
(``|dt·fps − round(dt·fps)| / fps ≤ tolerance_s``); frames before an episode's first or
after its last are clamped to it, and ``<feature>_is_pad`` says which were.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

import numpy as np
import pyarrow.parquet as pq
from numpy.typing import NDArray

from ..._limits import DATASET_BYTES_CAP, array_budget
from ...errors import ConversionError, FormatError
from . import layout
from .read import Column, open_dataset

#: lerobot's default ``tolerance_s``.
TOLERANCE_S = 1e-4
Item = dict[str, NDArray[np.generic] | str]


def delta_indices(delta_timestamps: Mapping[str, Sequence[float]], fps: int,
                  tolerance_s: float = TOLERANCE_S) -> dict[str, NDArray[np.int64]]:
    """Each feature's offsets in frames; an offset off the frame grid by more than
    ``tolerance_s`` is a ConversionError naming the feature and the offset."""
    out = {}
    for key, deltas in delta_timestamps.items():
        steps = np.asarray(deltas, dtype=np.float64) * fps
        frames = np.round(steps)
        off = np.abs(steps - frames) / fps > tolerance_s
        if not np.isfinite(steps).all() or off.any():
            bad = float(np.asarray(deltas, dtype=np.float64)[~np.isfinite(steps) | off][0])
            raise ConversionError(f"delta_timestamps[{key!r}]: {bad!r} s is not a multiple of "
                                  f"1/{fps} s to within tolerance_s {tolerance_s:g} s")
        out[key] = frames.astype(np.int64)
    return out


class Frames:
    """Every frame of a dataset, indexed as lerobot's dataset is (``frames[i]``)."""

    def __init__(self, path: str | os.PathLike[str], *,
                 delta_timestamps: Mapping[str, Sequence[float]] | None = None,
                 tolerance_s: float = TOLERANCE_S) -> None:
        self.dataset = dataset = open_dataset(path)
        names = [feature.name for feature in dataset.features]
        unknown = sorted(set(delta_timestamps or {}) - set(names))
        if unknown:
            raise ConversionError(f"delta_timestamps name no feature: {', '.join(unknown)} "
                                  f"(features: {', '.join(names)})")
        self.deltas = delta_indices(delta_timestamps or {}, dataset.fps, tolerance_s)
        self.columns = self._columns()
        self.first = np.repeat([e.start for e in dataset.episodes],
                               [e.length for e in dataset.episodes])
        self.last = self.first + np.repeat([e.length - 1 for e in dataset.episodes],
                                           [e.length for e in dataset.episodes])

    def _columns(self) -> dict[str, NDArray[np.generic]]:
        """Every numeric feature's rows over all data files, in global index order."""
        dataset = self.dataset
        files = list(dict.fromkeys(episode.data_file for episode in dataset.episodes))
        budget = array_budget(dataset.root, sum(f.stat().st_size for f in files),
                              cap=DATASET_BYTES_CAP)
        parts: dict[str, list[NDArray[np.generic]]] = {f.name: [] for f in dataset.features}
        for file in files:
            budget.charge(pq.read_metadata(file).num_rows * sum(
                f.width * (layout.numpy_dtype(f.dtype).itemsize + 8) for f in dataset.features))
            table = pq.read_table(file, columns=list(parts))
            for feature in dataset.features:
                parts[feature.name].append(Column(table.column(feature.name), feature,
                                                  file).whole())
        columns = {name: np.concatenate(arrays) for name, arrays in parts.items()}
        order = np.argsort(columns["index"], kind="stable")
        if not np.array_equal(columns["index"][order], np.arange(order.size)):
            raise FormatError("the data files' index column is not 0 … total_frames − 1, "
                              "each once", dataset.root)
        return {name: values[order] for name, values in columns.items()}

    def __len__(self) -> int:
        return int(self.first.size)

    def __getitem__(self, index: int) -> Item:
        """Frame ``index``: each feature's value (with ``delta_timestamps``, its frames at
        the offsets and ``<feature>_is_pad``) and the task text."""
        if not -len(self) <= index < len(self):
            raise IndexError(f"frame {index} of a dataset of {len(self)}")
        index %= len(self)
        item: Item = {}
        for name, values in self.columns.items():
            offsets = self.deltas.get(name)
            if offsets is None:
                item[name] = np.asarray(values[index])
                continue
            wanted = index + offsets
            item[name] = values[np.clip(wanted, self.first[index], self.last[index])]
            item[f"{name}_is_pad"] = (wanted < self.first[index]) | (wanted > self.last[index])
        item["task"] = self.dataset.tasks[int(self.columns["task_index"][index])]
        return item

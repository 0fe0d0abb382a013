"""``meta/stats.json`` as lerobot 0.6.1 computes it, so that ours equals theirs to 1e-6.

Per episode and per feature, every dimension gets min, max, mean, the population std (from
the mean of squares, in the data's own precision: float32 data stays float32, as in
lerobot), the frame count, and five quantiles read off a 5000-bin histogram spanning
[min − 1e-10, max + 1e-10]. Across episodes, min and max are element-wise, mean and std are
the exact pooled values, and each quantile is the count-weighted mean of the episodes'
quantiles: not the dataset's true quantile (it differs from ``numpy.quantile`` by up to
0.19 on the corpus), but what every lerobot user compares against.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from numpy.typing import NDArray

#: Quantile levels and their keys, as lerobot names them.
QUANTILES = {"q01": 0.01, "q10": 0.10, "q50": 0.50, "q90": 0.90, "q99": 0.99}
#: Histogram bins per dimension, and the padding of its range.
BINS = 5000
PAD = 1e-10
#: The statistics of one feature, each a 1-D array (``count`` has one element).
Stats = dict[str, NDArray[np.float32 | np.float64 | np.int64]]
STAT_NAMES = ("min", "max", "mean", "std", "count", *QUANTILES)


def episode_stats(values: NDArray[np.generic]) -> Stats:
    """Statistics of one feature over one episode: ``values`` is (frames,) or (frames, n)."""
    frames = int(values.shape[0])
    array = values.reshape(frames, -1)
    array = array.astype(np.promote_types(array.dtype, np.float32), copy=False)
    lowest, highest = array.min(axis=0), array.max(axis=0)
    mean = array.mean(axis=0)
    stats: Stats = {"min": lowest, "max": highest, "mean": mean}
    if frames < 2:  # lerobot: no histogram for one frame; every quantile is the mean
        stats["std"] = array.std(axis=0)
        stats["count"] = np.array([frames], dtype=np.int64)
        stats.update({key: mean.copy() for key in QUANTILES})
        return stats
    variance = (array ** 2).mean(axis=0) - mean ** 2
    stats["std"] = np.sqrt(np.maximum(0, variance))
    stats["count"] = np.array([frames], dtype=np.int64)
    columns = [_histogram_quantiles(array[:, i], lowest[i], highest[i], frames)
               for i in range(array.shape[1])]
    for number, key in enumerate(QUANTILES):
        stats[key] = np.array([column[number] for column in columns])
    return stats


def _histogram_quantiles(column: NDArray[np.generic], lowest: np.generic, highest: np.generic,
                         frames: int) -> list[np.generic]:
    """The quantiles of one dimension from its histogram: the first bin whose cumulative
    count reaches q·frames, interpolated linearly inside it (the range ends where the
    search falls outside, the bin's lower edge where it is empty)."""
    # the edges keep the data's precision, as lerobot's do (float32 min − 1e-10 is float32)
    edges = np.linspace(lowest - PAD, highest + PAD, BINS + 1)  # type: ignore[operator]
    counts, _ = np.histogram(column, bins=edges)
    cumulative = np.cumsum(counts.astype(np.float64))
    found: list[np.generic] = []
    for level in QUANTILES.values():
        target = level * frames
        index = int(np.searchsorted(cumulative, target))
        if index == 0:
            found.append(edges[0])
        elif index >= len(cumulative):
            found.append(edges[-1])
        else:
            before = cumulative[index - 1]
            inside = cumulative[index] - before
            if inside == 0:
                found.append(edges[index])
            else:
                fraction = (target - before) / inside
                found.append(edges[index] + fraction * (edges[index + 1] - edges[index]))
    return found


def aggregate(episodes: Sequence[Stats]) -> Stats:
    """One feature's statistics over several episodes (lerobot's aggregation)."""
    means = np.stack([stats["mean"] for stats in episodes])
    variances = np.stack([stats["std"] ** 2 for stats in episodes])
    counts = np.stack([stats["count"] for stats in episodes])  # (episodes, 1)
    total = counts.sum(axis=0)
    mean = (means * counts).sum(axis=0) / total
    variance = ((variances + (means - mean) ** 2) * counts).sum(axis=0) / total
    result: Stats = {
        "min": np.min(np.stack([stats["min"] for stats in episodes]), axis=0),
        "max": np.max(np.stack([stats["max"] for stats in episodes]), axis=0),
        "mean": mean,
        "std": np.sqrt(variance),
        "count": total,
    }
    for key in QUANTILES:
        result[key] = (np.stack([stats[key] for stats in episodes]) * counts).sum(axis=0) / total
    return result


def as_json(stats: Mapping[str, Stats]) -> dict[str, dict[str, list[float] | list[int]]]:
    """Statistics as ``stats.json`` holds them: lists of numbers per feature and statistic."""
    return {feature: {key: np.asarray(value).tolist() for key, value in values.items()}
            for feature, values in stats.items()}

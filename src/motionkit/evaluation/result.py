"""Evaluation results: per-pair errors, evo's seven statistics, the alignment and every setting.

Saved as one JSON file; the per-pair table sits inside it for small results and beside it as
``<name>.errors.parquet`` (written by polars) for big ones."""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from .._io import atomic_write
from .._version import __version__
from ..errors import ConversionError, FormatError
from ._poses import Array
from .align import Alignment

#: Results with more pairs than this keep their per-pair table in a parquet file.
INLINE_PAIRS = 10_000
STAT_KEYS = ("rmse", "mean", "median", "std", "min", "max", "sse")
Setting = str | float | int | bool | None
#: Per-pair table columns and the Result attribute each comes from.
COLUMNS = {"ref_index": "ref_index", "est_index": "est_index", "t_ref": "t_ref", "t_est": "t_est",
           "error": "errors"}


def statistics(errors: Array) -> dict[str, float]:
    """rmse, mean, median, std (population), min, max, sse — evo's definitions and order."""
    if errors.size == 0:
        raise ConversionError("no errors to summarise (0 pairs)")
    squared = errors * errors
    return {"rmse": math.sqrt(float(np.mean(squared))), "mean": float(np.mean(errors)),
            "median": float(np.median(errors)), "std": float(np.std(errors)),
            "min": float(np.min(errors)), "max": float(np.max(errors)), "sse": float(np.sum(squared))}


@dataclass
class Result:
    """One evaluation: ``errors[k]`` compares reference pose ``ref_index[k]`` (at ``t_ref[k]``)
    with estimate pose ``est_index[k]`` (at ``t_est[k]``); for RPE these are the pair ends and
    ``ref_start``/``est_start`` the pair starts."""

    metric: str
    relation: str
    unit: str
    errors: Array
    ref_index: NDArray[np.intp]
    est_index: NDArray[np.intp]
    t_ref: Array
    t_est: Array
    alignment: Alignment
    settings: dict[str, Setting]
    ref_name: str = "reference"
    est_name: str = "estimate"
    stats: dict[str, float] = field(default_factory=dict)
    extra: dict[str, object] = field(default_factory=dict)
    ref_start: NDArray[np.intp] | None = None
    est_start: NDArray[np.intp] | None = None

    def __post_init__(self) -> None:
        if not self.stats:
            self.stats = statistics(self.errors)

    def summary_row(self, name: str) -> dict[str, object]:
        """One row of a results table (``motionkit eval table``, ``batch eval``): the
        result's ``name``, its settings and statistics."""
        return {"result": name, "metric": self.metric, "relation": self.relation,
                "unit": self.unit, "ref": self.ref_name, "est": self.est_name,
                "match": str(self.settings.get("match")), "align": self.alignment.kind,
                "scale": self.alignment.scale, "pairs": self.pairs,
                **{key: self.stats[key] for key in STAT_KEYS}}

    def table(self) -> dict[str, NDArray[np.generic]]:
        """The per-pair columns (``ref_index_start``/``est_index_start`` only for RPE)."""
        columns: dict[str, NDArray[np.generic]] = {name: getattr(self, attr)
                                                   for name, attr in COLUMNS.items()}
        if self.ref_start is not None and self.est_start is not None:
            columns["ref_index_start"], columns["est_index_start"] = self.ref_start, self.est_start
        return columns

    @property
    def pairs(self) -> int:
        """Number of compared pairs."""
        return int(self.errors.size)

    def to_dict(self, inline: bool = True) -> dict[str, object]:
        """The JSON document (``inline=False`` leaves the per-pair table out)."""
        doc: dict[str, object] = {
            "motionkit": __version__, "metric": self.metric, "relation": self.relation,
            "unit": self.unit, "ref": self.ref_name, "est": self.est_name, "pairs": self.pairs,
            "stats": self.stats, "alignment": self.alignment.to_dict(), "settings": self.settings,
        }
        if self.extra:
            doc["extra"] = self.extra
        if inline:
            doc["errors"] = {name: column.tolist() for name, column in self.table().items()}
        return doc

    def summary(self) -> str:
        """A few lines for people: what was compared, how, and the statistics."""
        a = self.alignment
        lines = [f"{self.metric.upper()} {self.relation} ({self.unit or 'unit-less'}): "
                 f"{self.est_name} vs {self.ref_name}",
                 f"  pairs: {self.pairs} (reference {self.settings.get('n_ref')}, estimate "
                 f"{self.settings.get('n_est')}, {self.settings.get('match')} matching)"]
        if a.kind != "none" or a.origin:
            angle = math.degrees(math.acos(max(-1.0, min(1.0, (np.trace(a.rotation) - 1) / 2))))
            lines.append(f"  alignment: {a.kind}{' + origin' if a.origin else ''} on {a.poses_used} "
                         f"poses, rotation {angle:.6g} deg, translation "
                         f"[{', '.join(f'{v:.6g}' for v in a.translation)}], scale {a.scale:.9g}")
        else:
            lines.append("  alignment: none")
        lines += [f"  {key:<7}{self.stats[key]:.6f}" for key in STAT_KEYS]
        return "\n".join(lines)

    def save(self, path: str | os.PathLike[str]) -> list[Path]:
        """Write ``path`` (JSON) and, above INLINE_PAIRS pairs, ``<stem>.errors.parquet`` beside it;
        returns the files written."""
        target = Path(path)
        inline = self.pairs <= INLINE_PAIRS
        doc = self.to_dict(inline=inline)
        written = [target]
        if not inline:
            import polars as pl

            table = target.with_name(target.stem + ".errors.parquet")
            doc["errors_file"] = table.name
            frame = pl.DataFrame(self.table())
            with atomic_write(table, "wb") as handle:
                frame.write_parquet(handle)
            written.append(table)
        with atomic_write(target, "w") as handle:
            json.dump(doc, handle, indent=1, allow_nan=True)
            handle.write("\n")
        return written


def load(path: str | os.PathLike[str]) -> Result:
    """Read a result written by ``Result.save`` (with its parquet table if it has one)."""
    source = Path(path)
    try:
        doc = json.loads(source.read_text())
        if "errors_file" in doc:
            import polars as pl

            frame = pl.read_parquet(source.with_name(doc["errors_file"]))
            columns = {name: frame[name].to_numpy() for name in frame.columns}
        else:
            columns = {name: np.asarray(values) for name, values in doc["errors"].items()}
        a = doc["alignment"]
        alignment = Alignment(a["kind"], np.asarray(a["rotation"], float),
                              np.asarray(a["translation"], float), float(a["scale"]),
                              int(a["poses_used"]), bool(a["origin"]))
        return Result(doc["metric"], doc["relation"], doc["unit"],
                      np.asarray(columns["error"], np.float64),
                      np.asarray(columns["ref_index"], np.intp), np.asarray(columns["est_index"], np.intp),
                      np.asarray(columns["t_ref"], np.float64), np.asarray(columns["t_est"], np.float64),
                      alignment, dict(doc["settings"]), doc["ref"], doc["est"], dict(doc["stats"]),
                      dict(doc.get("extra", {})),
                      *(np.asarray(columns[k], np.intp) if k in columns else None
                        for k in ("ref_index_start", "est_index_start")))
    except (KeyError, TypeError, ValueError) as exc:
        raise FormatError(f"not a motionkit evaluation result ({type(exc).__name__}: {exc})",
                          source) from None

"""The catalog: one row per file (identity, format, timing, tracks, status), as Parquet.

Rows are built from the same document as ``motionkit info --json``, so the two never
disagree; the table is written with polars and reads in polars, pandas or DuckDB.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._io import atomic_write, sha256
from ..errors import MotionkitError

if TYPE_CHECKING:
    from ..formats.registry import Loaded

#: Column names, in order, and their polars type names.
COLUMNS = {
    "path": "str", "size": "int", "mtime_ns": "int", "sha256": "str", "format": "str", "frames": "int",
    "duration": "float", "rate": "float", "stamped": "bool", "tracks": "list[str]",
    "shapes": "list[list[int]]", "skeleton": "str", "terrain": "bool", "status": "str",
    "error": "str",
}
Row = dict[str, object]


def one_line(exc: BaseException) -> str:
    """An exception as one line: motionkit's own message, else ``Type: message``."""
    text = str(exc) if isinstance(exc, MotionkitError) else f"{type(exc).__name__}: {exc}"
    return " ".join(text.split()) or type(exc).__name__


def read_file(path: Path, from_format: str | None = None,
              options: dict[str, object] | None = None) -> tuple[Row, Loaded | None]:
    """Hash and read one file (with reader ``options``): its catalog row and what it
    holds (None when it failed).

    Never raises for a bad file: the row says ``failed`` with the one-line error (a
    MemoryError goes up: a batch's sandbox says which limit the file went over)."""
    from ..formats import registry

    row: Row = dict.fromkeys(COLUMNS)
    row.update(path=str(path), tracks=[], shapes=[], terrain=False, status="failed")
    try:
        row["mtime_ns"] = path.stat().st_mtime_ns
        row["size"], row["sha256"] = sha256(path)
        fmt = registry.for_reading(path, from_format)
        row["format"] = fmt.name
        obj = fmt.read(path, **(options or {}))
    except MemoryError:
        raise  # a batch's sandbox reports its limit (dataset/sandbox.py)
    except Exception as exc:  # any failure belongs to this file's row, never to the batch
        row["error"] = one_line(exc)
        return row, None
    row.update(_summary(info_document(fmt.name, obj)), status="ok")
    if row["skeleton"] is None:
        row["skeleton"] = skeleton_name(obj)
    return row, obj


def info_document(fmt: str, obj: Loaded) -> dict[str, object]:
    """``motionkit info --json``'s document for ``obj``."""
    from ..summary import describe

    return describe(fmt, obj)


def _summary(doc: dict[str, Any]) -> Row:
    tracks: dict[str, dict[str, Any]] = doc.get("tracks", {})
    rates = {float(t["rate"]) for t in tracks.values() if t.get("rate") is not None}
    stamped = any(t.get("stamped") for t in tracks.values())
    skeletons = doc.get("skeletons") or []
    return {
        "frames": doc.get("frames"), "duration": doc.get("duration"),
        "rate": rates.pop() if len(rates) == 1 and not stamped else None,
        "stamped": stamped if tracks else None,
        "tracks": list(tracks), "shapes": [list(t["shape"]) for t in tracks.values()],
        "skeleton": skeletons[0].get("name") if skeletons else None,
        "terrain": "terrain" in doc,
    }


def skeleton_name(obj: Loaded) -> str | None:
    """The name of a motion's skeleton, when it carries one."""
    skeleton = getattr(obj, "skeleton", None)
    name = getattr(skeleton, "name", None)
    return name if isinstance(name, str) else None


def write_catalog(rows: list[Row], path: str | os.PathLike[str]) -> Path:
    """Write ``rows`` as Parquet at ``path`` (atomically), sorted by path."""
    import polars as pl

    types: dict[str, pl.DataType | type[pl.DataType]] = {
        "str": pl.Utf8, "int": pl.Int64, "float": pl.Float64, "bool": pl.Boolean,
        "list[str]": pl.List(pl.Utf8), "list[list[int]]": pl.List(pl.List(pl.Int64))}
    schema = {name: types[kind] for name, kind in COLUMNS.items()}
    frame = pl.DataFrame(sorted(rows, key=lambda r: str(r["path"])), schema=schema)
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    with atomic_write(target) as handle:
        frame.write_parquet(handle)
    return target


def read_catalog(path: str | os.PathLike[str]) -> dict[str, Row]:
    """The rows of a catalog written by :func:`write_catalog`, by path; empty when there is
    none or it cannot be read (it is only a cache then)."""
    import polars as pl

    try:
        frame = pl.read_parquet(Path(path))
    except (OSError, pl.exceptions.PolarsError):
        return {}
    if frame.columns != list(COLUMNS):
        return {}
    return {str(row["path"]): row for row in frame.iter_rows(named=True)}

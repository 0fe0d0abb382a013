"""The catalog: one row per file (identity, format, timing, tracks, status), as Parquet;
a dataset folder (LeRobot) gives one row per episode (``episode``, ``task``), under the
folder's path, size and hash.

Rows are built from the same document as ``motionkit info --json``, so the two never
disagree; the table is written with polars and reads in polars, pandas or DuckDB.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._io import atomic_write, sha256
from ..errors import MotionkitError
from .files import stamp

if TYPE_CHECKING:
    import polars as pl

    from ..formats.registry import Loaded

#: Column names, in order, and their polars type names.
COLUMNS = {
    "path": "str", "size": "int", "mtime_ns": "int", "sha256": "str", "format": "str", "frames": "int",
    "duration": "float", "rate": "float", "stamped": "bool", "tracks": "list[str]",
    "shapes": "list[list[int]]", "skeleton": "str", "terrain": "bool", "status": "str",
    "error": "str", "episode": "int", "task": "str",
}
Row = dict[str, object]
#: The key of a dataset folder's row that holds its per-episode rows until written.
EPISODE_ROWS = "episode_rows"


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
        changed = stamp(path)  # a folder's: its newest file's time (the resume check's)
        row["mtime_ns"] = None if changed is None else changed[1]
        row["size"], row["sha256"] = _folder_digest(path) if path.is_dir() else sha256(path)
        fmt = registry.for_reading(path, from_format)
        row["format"] = fmt.name
        episodic = path.is_dir() and registry.episode_folder(path)
        reading = {"episode": 0, **(options or {})} if episodic else dict(options or {})
        obj = fmt.read(path, **reading)
    except MemoryError:
        raise  # a batch's sandbox reports its limit (dataset/sandbox.py)
    except Exception as exc:  # any failure belongs to this file's row, never to the batch
        row["error"] = one_line(exc)
        return row, None
    row.update(_summary(info_document(fmt.name, obj)), status="ok")
    if row["skeleton"] is None:
        row["skeleton"] = skeleton_name(obj)
    found = fmt.dataset_contents(obj)
    if found is not None:
        row[EPISODE_ROWS] = _episode_rows(row, found)
    return row, obj


def _folder_digest(folder: Path) -> tuple[int, str]:
    """Size and SHA-256 of a folder: of its files' relative paths and hashes, sorted."""
    import hashlib

    digest, size = hashlib.sha256(), 0
    for file in sorted(p for p in folder.rglob("*") if p.is_file()):
        length, own = sha256(file)
        size += length
        digest.update(f"{file.relative_to(folder).as_posix()}\0{own}\n".encode())
    return size, digest.hexdigest()


def _episode_rows(row: Row, found: dict[str, Any]) -> list[Row]:
    """One row per episode of a dataset, from episode 0's row (every episode has the same
    features) and the dataset's metadata (lengths, durations, tasks)."""
    rows = []
    for episode in found["episodes"]:
        shapes = [[episode["length"], *shape[1:]] for shape in row["shapes"]]  # type: ignore[attr-defined]
        rows.append({**row, "frames": episode["length"], "duration": episode["duration"],
                     "shapes": shapes, "episode": episode["index"],
                     "task": " | ".join(episode["tasks"])})
    return rows


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


#: The prefixes of the columns a verb adds to a row: batch check's verdict and values
#: (``CheckReport.catalog_row``), batch fix's fixes.
ADDED = ("check.", "fix.")


def _check_columns(rows: list[Row]) -> dict[str, pl.DataType | type[pl.DataType]]:
    """The columns batch check and fix add (:data:`ADDED`), typed by their values: flags
    boolean, the verdict and preset text, counts integer, lists of text, measured values
    float."""
    import polars as pl

    found: dict[str, pl.DataType | type[pl.DataType]] = {}
    for row in rows:
        for key, value in row.items():
            if key.startswith(ADDED) and key not in found and value is not None:
                found[key] = (pl.Boolean if isinstance(value, bool) else
                              pl.Utf8 if isinstance(value, str) else
                              pl.Int64 if isinstance(value, int) else
                              pl.List(pl.Utf8) if isinstance(value, list) else pl.Float64)
    for row in rows:
        for key in [key for key in row if key.startswith(ADDED) and key not in found]:
            found[key] = pl.Float64  # a value no row measured (None everywhere)
    return dict(sorted(found.items()))


def write_catalog(rows: list[Row], path: str | os.PathLike[str]) -> Path:
    """Write ``rows`` as Parquet at ``path`` (atomically), sorted by path."""
    import polars as pl

    types: dict[str, pl.DataType | type[pl.DataType]] = {
        "str": pl.Utf8, "int": pl.Int64, "float": pl.Float64, "bool": pl.Boolean,
        "list[str]": pl.List(pl.Utf8), "list[list[int]]": pl.List(pl.List(pl.Int64))}
    schema = {name: types[kind] for name, kind in COLUMNS.items()}
    flat = [{key: value for key, value in each.items() if key in COLUMNS or key.startswith(ADDED)}
            for row in rows for each in (row.get(EPISODE_ROWS) or [row])]  # type: ignore[attr-defined]
    schema.update(_check_columns(flat))
    frame = pl.DataFrame(sorted(flat, key=lambda r: (str(r["path"]), r["episode"] or 0)),
                         schema=schema)
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

"""``motionkit info``: what a file holds."""

from __future__ import annotations

from typing import Any

import click
import numpy as np

from ..formats import registry
from ..model import Motion, Track
from ._common import busy, echo_json


@click.command(epilog="""\b
Examples:
  motionkit info walk.seq
  motionkit info --json walk.seq
  motionkit info robot.skel""")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=True))
@click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON.")
@click.option("--from", "from_format", metavar="FORMAT", help="Read as this format.")
def command(files: tuple[str, ...], as_json: bool, from_format: str | None) -> None:
    """Show format, timing and tracks of motion files, or the structure of models."""
    results = []
    for path in files:
        fmt = registry.for_reading(path, from_format)
        with busy(f"reading {path}"):
            obj = fmt.read(path)
        results.append((path, fmt, obj))
    if as_json:
        docs = [describe(fmt.name, obj) for _, fmt, obj in results]
        echo_json(docs[0] if len(docs) == 1 else docs)
        return
    for index, (path, fmt, obj) in enumerate(results):
        if index:
            click.echo()
        click.echo(render(path, fmt.name, obj))


def describe(fmt: str, obj: Any) -> dict[str, Any]:
    """The ``info --json`` document (layout fixed by DESIGN.md's public API contract)."""
    if isinstance(obj, Motion):
        doc: dict[str, Any] = {"format": fmt, "frames": obj.frames, "duration": obj.duration,
                               "tracks": {n: t.describe() for n, t in _all_tracks(obj).items()}}
        meta = {k: v for k, v in obj.meta.items() if k != "source_format"}
        if meta:
            doc["meta"] = summarise(meta)
        if obj.terrain is not None and hasattr(obj.terrain, "describe"):
            doc["terrain"] = obj.terrain.describe()
        return doc
    if hasattr(obj, "skeletons"):
        return {"format": fmt, **obj.describe()}
    if hasattr(obj, "describe"):
        described = obj.describe()
        if hasattr(obj, "bodies"):  # a single skeleton
            return {"format": fmt, "skeletons": [described]}
        return {"format": fmt, **described}
    return {"format": fmt, "type": type(obj).__name__}


def _all_tracks(motion: Motion) -> dict[str, Track]:
    """Stored tracks, then the views derived from them (``root`` of ``links``)."""
    return {**motion.tracks, **motion.tracks.views()}


def render(path: str, fmt: str, obj: Any) -> str:
    """A readable summary for people. A format's own lines (its ``describe`` hook) stand
    for its metadata namespace, which is then not listed key by key."""
    entry = registry.by_name(fmt)
    notes = entry.describe(obj)
    described = entry.namespace if notes else None
    if not isinstance(obj, Motion):
        body = obj.summary_text() if hasattr(obj, "summary_text") else repr(obj)
        return f"{path}  ({fmt})\n{body}"
    lines = [f"{path}  ({fmt})"]
    lines.extend(f"  {note}" for note in notes)
    lines.append(f"  frames: {obj.frames}   duration: {obj.duration:.6g} s")
    for name, track in _all_tracks(obj).items():
        timing = (f"{track.timeline.rate:g} Hz" if track.timeline.is_uniform
                  else f"stamped ({track.frames} stamps)")
        shape = "x".join(str(n) for n in track.data.shape)
        summary = track.describe()
        span = (f"  range [{summary['min']:.6g}, {summary['max']:.6g}]"
                if "min" in summary else "")
        lines.append(f"  track {name}: {track.kind} {shape}, {timing}{span}")
        if track.labels:
            shown = ", ".join(track.labels[:8]) + (" …" if len(track.labels) > 8 else "")
            lines.append(f"    labels: {shown}")
        for key, value in track.attrs.items():
            lines.append(f"    {key}: {value}")
    for key, value in obj.meta.items():
        if key in ("source_format", described):
            continue
        lines.extend(_meta_lines(key, summarise(value), "  "))
    if obj.terrain is not None:
        terrain = obj.terrain
        lines.append(f"  terrain: {terrain.describe() if hasattr(terrain, 'describe') else terrain}")
    if obj.skeleton is not None:
        lines.append(f"  skeleton: {getattr(obj.skeleton, 'name', type(obj.skeleton).__name__)}")
    return "\n".join(lines)


def summarise(value: Any, depth: int = 0) -> Any:
    """Metadata made JSON-friendly and short: arrays and bytes become one-line summaries."""
    if isinstance(value, np.ndarray):
        if value.size <= 8 and value.dtype.kind in "biuf":
            return value.tolist()
        return f"array {value.dtype} {list(value.shape)}"
    if isinstance(value, (bytes, bytearray)):
        return f"<{len(value)} bytes>"
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, dict):
        if depth >= 3:
            return f"dict of {len(value)} keys"
        return {str(k): summarise(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        if len(value) > 16 or depth >= 3:
            return f"{type(value).__name__} of {len(value)}"
        return [summarise(v, depth + 1) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return type(value).__name__


def _meta_lines(key: str, value: Any, indent: str) -> list[str]:
    if isinstance(value, dict) and value:
        lines = [f"{indent}{key}:"]
        for inner_key, inner in value.items():
            lines.extend(_meta_lines(inner_key, inner, indent + "  "))
        return lines
    text = repr(value)
    return [f"{indent}{key}: {text if len(text) <= 100 else text[:97] + '...'}"]

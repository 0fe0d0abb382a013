"""``motionkit formats``: every format, its extensions, its -R and -O keys, what it holds."""

from __future__ import annotations

import click

from ..errors import MotionkitError
from ..formats import registry
from ..formats.loss import Holds
from ._common import echo_json


@click.command(epilog="""\b
Examples:
  motionkit formats
  motionkit formats tum bvh
  motionkit formats --json""")
@click.argument("names", nargs=-1, metavar="[FORMAT]...",
                shell_complete=lambda ctx, param, incomplete: [
                    info.name for info in registry.formats() if info.name.startswith(incomplete)])
@click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON.")
def command(names: tuple[str, ...], as_json: bool) -> None:
    """List the formats: extensions, reader options (-R KEY=VALUE), writer options
    (-O KEY=VALUE), and what a written file holds. convert picks a format by extension
    (then by content); --from and --to name one."""
    chosen = [registry.by_name(name) for name in names] or list(registry.formats())
    docs = [describe(info) for info in chosen]
    if as_json:
        echo_json(docs[0] if len(names) == 1 else docs)
        return
    for index, doc in enumerate(docs):
        if index:
            click.echo()
        click.echo("\n".join(_lines(doc)))


def describe(info: registry.Format) -> dict[str, object]:
    """One format as plain data: what ``motionkit formats`` shows."""
    doc: dict[str, object] = {"name": info.name, "description": info.description,
                              "extensions": list(info.extensions),
                              "chosen_by_extension": info.writes_by_extension}
    try:
        doc["read_options"] = sorted(info.read_options()) if info.can_read() else None
        if info.can_write():
            doc["write_options"] = sorted(info.write_options())
            doc["writes"] = [kind.__name__ for kind in info.writes()]
            holds = _holds(info)
            doc["holds"] = _held(holds) if holds is not None else None
        else:
            doc["write_options"] = None
    except MotionkitError as exc:  # a format whose optional package is missing
        doc["unavailable"] = str(exc)
    return doc


def _holds(info: registry.Format) -> Holds | None:
    try:
        return info.holds()
    except MotionkitError:
        return None


def _held(holds: Holds) -> dict[str, object]:
    tracks = (None if holds.tracks is None else
              {name: sorted(kinds) for name, kinds in holds.tracks.items()})
    return {"tracks": tracks, "skeleton": holds.skeleton, "terrain": holds.terrain,
            "stamps": holds.stamps, "labels": holds.labels, "attrs": holds.attrs,
            "meta": None if holds.meta is None else sorted(holds.meta)}


def _lines(doc: dict[str, object]) -> list[str]:
    extensions = ", ".join(str(e) for e in doc["extensions"])  # type: ignore[attr-defined]
    lines = [f"{doc['name']}: {doc['description']}", f"  extensions: {extensions}"
             + ("" if doc["chosen_by_extension"] else f" (written only with --to {doc['name']})")]
    if "unavailable" in doc:
        return [*lines, f"  {doc['unavailable']}"]
    for key, flag, verb in (("read_options", "-R", "read"), ("write_options", "-O", "write")):
        value = doc.get(key)
        if value is None:
            lines.append(f"  {verb}: no")
        else:
            keys = ", ".join(str(k) for k in value) or "none"  # type: ignore[attr-defined]
            lines.append(f"  {verb} options ({flag} KEY=VALUE): {keys}")
    if "writes" in doc:
        lines.append(f"  writes: {' or '.join(doc['writes'])}")  # type: ignore[arg-type]
    held = doc.get("holds")
    if isinstance(held, dict):
        tracks = held["tracks"]
        what = ("any track" if tracks is None else
                ", ".join(f"{name} ({'|'.join(kinds)})" for name, kinds in tracks.items())
                or "no tracks")
        extras = [name for name in ("skeleton", "terrain", "labels") if held[name]]
        meta = held["meta"]
        lines.append(f"  holds: {what}" + (f"; {', '.join(extras)}" if extras else "")
                     + ("; any plain metadata" if meta is None else
                        f"; metadata {', '.join(meta)}" if meta else "; no metadata"))
    return lines

"""``motionkit info``: what a file holds."""

from __future__ import annotations

import itertools
from typing import Any

import click

from ..errors import ConversionError, FormatError
from ..formats import registry
from ..formats.loss import RESTATED_ATTRS
from ..model import Motion, Skeleton, World
from ..summary import all_tracks, describe, summarise
from ._common import busy, clean, echo_json, parse_options, read_option

#: Lines of one file's summary shown before "… N more lines".
MAX_LINES = 2000
#: Tree levels drawn with branch lines; deeper bodies show their depth as a number, so a
#: line never grows with the depth and the tree costs time linear in its bodies.
MAX_DRAWN_DEPTH = 16


@click.command(epilog="""\b
Examples:
  motionkit info walk.seq
  motionkit info --json walk.seq
  motionkit info robot.skel
  motionkit info dataset/                       (a LeRobot dataset: episodes and features)
  motionkit info dataset/ -R episode=1 --model robot.urdf     (episode 1's link poses too)
  motionkit info f.npz --character g1.xml -O order=mujoco   (an unnamed BeyondMimic file)""")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=True))
@click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON.")
@click.option("--from", "from_format", metavar="FORMAT", help="Read as this format.")
@click.option("--character", type=click.Path(exists=True, dir_okay=False),
              help="Character/model file that gives joints their meaning (for the reader).")
@click.option("--model", type=click.Path(exists=True, dir_okay=False),
              help="Body model (URDF, MJCF, .body, .skel): add every link's pose (FK).")
@click.option("-O", "--option", "options", multiple=True, metavar="KEY=VALUE",
              help="A reader option (as -R), e.g. -O order=mujoco.")
@read_option
def command(files: tuple[str, ...], as_json: bool, from_format: str | None,
            character: str | None, model: str | None, options: tuple[str, ...],
            read_options: tuple[str, ...]) -> None:
    """Show format, timing and tracks of motion files, or the structure of models; the
    episodes and features of a dataset."""
    results: list[tuple[str, str, object]] = []
    reading = {**parse_options(read_options), **parse_options(options)}
    if character:
        reading["character"] = character
    for path in files:
        entry = registry.for_reading(path, from_format)
        own = {"episode": 0, **reading} if registry.episode_folder(path) else reading
        with busy(f"reading {path}"):  # a dataset: its first episode (info lists them all)
            obj = _read_or_survey(entry, path, own)
            results.append((path, entry.name, _with_links(obj, model) if model else obj))
    if as_json:
        docs = [{"format": name, "survey": obj} if isinstance(obj, list) else _document(name, obj)
                for _, name, obj in results]
        echo_json(docs[0] if len(docs) == 1 else docs)
        return
    for index, (path, name, obj) in enumerate(results):
        if index:
            click.echo()
        click.echo(render(path, name, obj))


def _read_or_survey(entry: registry.Format, path: str, options: dict[str, object]) -> object:
    """What ``path`` holds, or the format's survey lines when it holds nothing ``read``
    returns (a bag of TF only: its edges are information, not an error)."""
    try:
        return entry.read(path, **options)
    except FormatError:
        lines = entry.survey(path)
        if not lines:
            raise
        return lines


def _document(fmt: str, obj: object) -> dict[str, object]:
    """``info --json``'s document, with a dataset's fps, episodes and features."""
    doc = describe(fmt, obj)
    found = registry.by_name(fmt).dataset_contents(obj) if isinstance(obj, Motion) else None
    if found is not None:
        doc["dataset"] = found
    return doc


def _with_links(obj: object, model: str) -> Motion:
    """The motion with every link's pose through ``model`` (its ``links`` track)."""
    from .. import api
    from ..kinematics.motion import link_motion

    if not isinstance(obj, Motion):
        raise ConversionError("--model derives link poses of motions only")
    derived = link_motion(api.read_skeleton(model), obj)
    return Motion({**obj.tracks, **derived.tracks}, derived.skeleton or obj.skeleton,
                  obj.terrain, dict(obj.meta))


def render(path: str, fmt: str, obj: object) -> str:
    """A readable summary for people: at most MAX_LINES lines, each with every control
    character a file could hold escaped."""
    lines = [f"{path}  ({fmt})"]
    if isinstance(obj, list):  # a survey
        lines.extend(f"  {line}" for line in obj)
    elif isinstance(obj, Motion):
        lines.extend(_motion_lines(obj, registry.by_name(fmt)))
    elif isinstance(obj, World):
        lines.append(_world_head(obj))
        for skeleton in obj.skeletons:
            lines.extend(_skeleton_lines(skeleton))
        lines.extend(_model_notes(fmt, obj))
    elif isinstance(obj, Skeleton):
        lines.extend(_skeleton_lines(obj))
        lines.extend(_model_notes(fmt, obj))
    elif hasattr(obj, "entries"):  # a motion list: sources as written, never $VAR values
        lines.extend(_list_lines(obj))
    else:
        lines.append(f"  {type(obj).__name__}")
    shown = [clean(line) for line in itertools.islice(lines, MAX_LINES)]
    if len(lines) > MAX_LINES:
        shown.append(f"  … {len(lines) - MAX_LINES} more lines")
    return "\n".join(shown)


def _model_notes(fmt: str, obj: Any) -> list[str]:
    """The reading format's own lines about a model (its ``describe`` hook), if any."""
    known = {f.name for f in registry.formats()}
    return [f"  {note}" for note in registry.by_name(fmt).describe(obj)] if fmt in known else []


def _world_head(world: World) -> str:
    gravity = " ".join(f"{v:g}" for v in world.gravity)
    head = (f"world: {len(world.skeletons)} skeleton(s), time step {world.time_step:g} s, "
            f"gravity [{gravity}] m/s²")
    if world.collision_detector:
        head += f", collision detector {world.collision_detector}"
    return head


def _skeleton_lines(skeleton: Skeleton) -> list[str]:
    """Counts, then the body tree depth first (an explicit stack: any depth, linear)."""
    bodies = skeleton.bodies
    lines = [f"skeleton {skeleton.name!r}: {len(bodies)} bodies, {len(bodies)} joints, "
             f"{skeleton.dof_count} dofs" + ("" if skeleton.mobile else " (immobile)"), "  world"]
    kids: dict[int, list[int]] = {}
    for index, body in enumerate(bodies):
        kids.setdefault(body.parent, []).append(index)
    roots = kids.get(-1, [])
    stack = [(root, 0, "  ", k == len(roots) - 1) for k, root in reversed(list(enumerate(roots)))]
    while stack and len(lines) < MAX_LINES - 2:  # room for the path and "… more"
        index, depth, prefix, last = stack.pop()
        body = bodies[index]
        joint = body.joint
        dofs = f"{joint.dof_count} dof" + ("" if joint.dof_count == 1 else "s")
        if joint.dof_count:
            dofs += f" [{joint.dof_offset}:{joint.dof_offset + joint.dof_count}]"
        branch = "└─ " if last else "├─ "
        if depth >= MAX_DRAWN_DEPTH:
            branch = f"└[{depth + 1}] " if last else f"├[{depth + 1}] "
        lines.append(f"{prefix}{branch}{body.name}  ({joint.type} joint {joint.name!r}, {dofs})")
        children = kids.get(index, [])
        inner = prefix if depth >= MAX_DRAWN_DEPTH else prefix + ("   " if last else "│  ")
        stack.extend((child, depth + 1, inner, k == len(children) - 1)
                     for k, child in reversed(list(enumerate(children))))
    if stack:
        lines.append(f"  … {len(bodies) - (len(lines) - 2)} more bodies")
    return lines


def _list_lines(obj: Any) -> list[str]:
    """A motion list's entries as written in the file (``$VAR`` unexpanded) and weights."""
    lines = [f"  {len(obj.entries)} motion(s)"]
    for entry in itertools.islice(obj.entries, MAX_LINES):
        found = f"  (from {entry.found_in})" if entry.found_in else ""
        lines.append(f"    {entry.weight:.6g}  {entry.source}{found}")
    for key, value in getattr(obj, "extras", {}).items():
        lines.extend(_meta_lines(str(key), summarise(value), "  "))
    return lines


def _motion_lines(obj: Motion, fmt: registry.Format) -> list[str]:
    """The format's own lines (its ``describe`` hook, which stands for its metadata
    namespace), timing, one line per track (labels, attrs), metadata, extras."""
    notes = fmt.describe(obj)
    described = fmt.namespace if notes else None
    lines = [f"  {note}" for note in notes]
    counts = sorted({track.frames for track in obj.tracks.values()})
    frames = str(obj.frames) if len(counts) <= 1 else f"{counts[0]} to {counts[-1]} (per track below)"
    lines.append(f"  frames: {frames}   duration: {obj.duration:.6g} s")
    for name, track in all_tracks(obj).items():
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
            if key not in RESTATED_ATTRS:  # the data itself, as the file wrote it
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
    return lines


def _meta_lines(key: str, value: Any, indent: str) -> list[str]:
    if isinstance(value, dict) and value:
        lines = [f"{indent}{key}:"]
        for inner_key, inner in value.items():
            lines.extend(_meta_lines(inner_key, inner, indent + "  "))
        return lines
    text = repr(value)
    return [f"{indent}{key}: {text if len(text) <= 100 else text[:97] + '...'}"]

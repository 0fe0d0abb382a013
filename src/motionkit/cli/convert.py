"""``motionkit convert``: one format to another (and ``resample``, which shares it)."""

from __future__ import annotations

import click

from .. import api
from ..errors import ConversionError
from ..formats import registry
from ..ops import METHODS
from . import _sync
from ._common import (
    busy,
    clean,
    parse_options,
    read_option,
    refuse_source_as_output,
    written_line,
)


@click.command(epilog="""\b
Examples:
  motionkit convert SR1WalkPattern.yaml walk_v4.seq -O version=4
  motionkit convert walk.seq walk.seq --in-place -O precision=9      (Choreonoid's own digits)
  motionkit convert stamped.seq uniform.seq --rate 100
  motionkit convert run.pkl run.seq --character humanoid.xml
  motionkit convert SR1WalkPattern1.seq links.seq --model SR1.body      (every link's pose)
  motionkit convert SR1WalkPattern1.seq waist.traj --model SR1.body --lossy
  motionkit convert walk.seq foot.tum --model SR1.body -O link=RLEG_ANKLE_R --lossy
  motionkit convert walk.seq walk.glb --model SR1.body      (animated glTF for Blender, three.js)
  motionkit convert ref.bvh robot.pkl both.glb --model g1.xml      (several side by side)
Several topics on one clock (--fps; motionkit.ops.sync):
""" + _sync.EXAMPLES)
@click.argument("sources", nargs=-1, required=True, type=click.Path(dir_okay=True))
@click.argument("target", type=click.Path())
@click.option("--from", "from_format", metavar="FORMAT", help="Read SOURCE as this format.")
@click.option("--to", "to_format", metavar="FORMAT", help="Write TARGET as this format.")
@click.option("--rate", type=float, help="Resample every track to this rate (Hz).")
@click.option("--method", type=click.Choice(("auto", *METHODS)), default="auto", show_default=True,
              help="Interpolation when resampling.")
@click.option("--fps", type=float,
              help="Put all tracks (several bag topics: run.mcap:/joint_states,/cmd) on one "
                   "clock at this rate over their common span (hold for commands, else "
                   "linear/slerp); a topic's gap is refused naming it (motionkit.ops.sync).")
@_sync.options
@click.option("--character", type=click.Path(exists=True, dir_okay=False),
              help="Character/model file that gives joints their meaning.")
@click.option("--model", type=click.Path(exists=True, dir_okay=False),
              help="Body model (.body, .skel, MJCF): derive link poses the target needs.")
@click.option("--lossy", is_flag=True, help="Drop what the target cannot hold (with a warning).")
@click.option("-O", "--option", "options", multiple=True, metavar="KEY=VALUE",
              help="A writer option (or a reader's, where only it takes the key), e.g. "
                   "-O version=4 -O precision=9.")
@read_option
@click.option("--in-place", is_flag=True,
              help="Allow TARGET to be SOURCE itself (it is replaced, atomically).")
def command(sources: tuple[str, ...], target: str, from_format: str | None, to_format: str | None,
            rate: float | None, method: str, character: str | None, model: str | None,
            lossy: bool, options: tuple[str, ...], read_options: tuple[str, ...],
            in_place: bool, fps: float | None, start: str | None, end: str | None,
            sync_methods: tuple[str, ...], tolerances: tuple[str, ...], on_gap: str,
            action: str | None) -> None:
    """Convert SOURCE to TARGET (formats from the extensions unless named); several SOURCEs go
    side by side into one glTF scene (.glb, .gltf), --model moving those without a skeleton.

    What TARGET cannot hold is refused with one line naming it, unless --lossy. TARGET
    is never SOURCE (by any path or link) unless --in-place. See `motionkit formats`
    for each format's extensions and -R/-O options.
    """
    if len(sources) > 1:
        if in_place or fps is not None or from_format:
            raise ConversionError("several SOURCEs take neither --in-place, --fps nor --from")
        _scene(sources, target, to_format, rate, method, character, model, lossy, options,
               read_options)
        return
    run(sources[0], target, from_format, to_format, rate, method, character, lossy, options, model,
        in_place, read_options, fps,
        _sync.SyncOptions(start, end, sync_methods, tolerances, on_gap, action))


def run(source: str, target: str, from_format: str | None, to_format: str | None,
        rate: float | None, method: str, character: str | None, lossy: bool,
        options: tuple[str, ...], model: str | None = None, in_place: bool = False,
        read_options: tuple[str, ...] = (), fps: float | None = None,
        synced_as: _sync.SyncOptions = _sync.NONE) -> None:
    """Do one conversion and report it in one line ("replaced" when TARGET existed)."""
    refuse_source_as_output(target, source, character, model,
                            replaceable=source, in_place=in_place)
    said = written_line(target)  # a link is replaced by the file, never written through
    extra = parse_options(options)
    if character:
        extra["character"] = character
    with busy(f"converting {source}"):
        reader = registry.for_reading(source, from_format)
        if fps is not None:
            motion, writer = _synced(reader, source, target, to_format, rate, model, lossy,
                                     parse_options(read_options), extra, fps=fps,
                                     synced_as=synced_as)
        elif synced_as.given:
            raise ConversionError("--start, --end, --sync-method, --tolerance, --on-gap and "
                                  "--action belong to --fps")
        else:
            obj, writer, writing = api.read_for_writing(reader, source, target, to_format, extra,
                                                        parse_options(read_options))
            motion = api.finish_conversion(obj, target, writer, rate=rate, method=method,
                                           model=model, lossy=lossy, write_options=writing)
    frames = getattr(motion, "frames", None)
    detail = f" ({frames} frames)" if frames is not None else ""
    chosen = "" if to_format else _chosen_writer(target, writer, reader)
    click.echo(f"{said()}{chosen}{detail}")


def _scene(sources: tuple[str, ...], target: str, to_format: str | None, rate: float | None,
           method: str, character: str | None, model: str | None, lossy: bool,
           options: tuple[str, ...], read_options: tuple[str, ...]) -> None:
    """Several files into one glTF scene, side by side (``formats.gltf.write_scene``)."""
    from pathlib import Path

    from ..formats.gltf import write_scene
    from ..kinematics.motion import link_motion
    from ..model import Motion
    from ..ops import resample

    refuse_source_as_output(target, *sources, character, model)
    writer = registry.for_writing(target, to_format)
    if not writer.module.startswith("gltf."):
        raise ConversionError(f"several SOURCEs go into one glTF scene (.glb, .gltf), not {writer.name}")
    extra, reading = parse_options(options), parse_options(read_options)
    writing = {key: extra.pop(key) for key in ("skin", "spacing") if key in extra}
    skeleton = api.read_skeleton(model) if model else None
    motions: dict[str, Motion] = {}
    taken: set[str] = set()
    with busy(f"converting {len(sources)} files"):
        for source in sources:
            reader = registry.for_reading(source)
            takes = reader.read_options()
            mine = {k: v for k, v in extra.items() if k in takes}
            read_mine = {k: v for k, v in reading.items() if k in takes}
            taken |= set(mine) | {f"-R {k}" for k in read_mine}
            given = reader.reader_options(character=character)
            for key, value in {**mine, **read_mine}.items():
                if key in given and given[key] != value:
                    raise ConversionError(f"{key} is given twice ({clean(str(given[key]))} and "
                                          f"{clean(str(value))}): give it once")
                given[key] = value
            motion = reader.read(source, **given)
            if not isinstance(motion, Motion):
                raise ConversionError(f"{clean(source)}: holds a {type(motion).__name__}, not a motion")
            if rate is not None:
                motion = resample(motion, rate, method=method)
            if motion.skeleton is None and skeleton is not None:
                motion = link_motion(skeleton, motion)
            name = Path(source).name
            motions[name if name not in motions else f"{name} ({len(motions) + 1})"] = motion
        unused = sorted(set(extra) - taken) + sorted(f"-R {k}" for k in reading
                                                     if f"-R {k}" not in taken)
        if unused:
            raise ConversionError(f"option(s) {', '.join(unused)} are taken by no reader here "
                                  "(each reader takes its own options; the glTF writer takes "
                                  "skin, spacing)")
        write_scene(target, motions, lossy=lossy, format=writer.name, **writing)
    click.echo(f"wrote {clean(target)} ({len(motions)} motions side by side)")


def _synced(reader: registry.Format, source: str, target: str, to_format: str | None,
            rate: float | None, model: str | None, lossy: bool,
            read_options: dict[str, object], extra: dict[str, object], *, fps: float,
            synced_as: _sync.SyncOptions) -> tuple[object, registry.Format]:
    """``convert`` with the tracks read put on one clock (``ops.sync``) before writing;
    what was written, and the writer."""
    from ..model import Motion

    if rate is not None:
        raise ConversionError("--fps and --rate both set a rate: give one")
    obj, writer, writing = api.read_for_writing(reader, source, target, to_format, extra,
                                                read_options)
    if not isinstance(obj, Motion):
        raise ConversionError("--fps applies to motions only")
    zero = not writer.holds(**writing).start  # frames from 0 where the target has no start
    state = writing.get("state")
    if synced_as.action is not None and writing.get("action") is not None:
        raise ConversionError("--action and -O action= both name the action: give one")
    episodes = getattr(writer.load(), "write_episodes", None)
    if synced_as.on_gap == "split" and (episodes is None or model is not None):
        raise ConversionError(f"--on-gap split writes an episode per stretch between the gaps "
                              f"into one dataset (--to lerobot, without --model), not "
                              f"{writer.name}")
    synced = synced_as.apply(obj, fps, zero, state if isinstance(state, str) else None)
    if episodes is None or synced_as.on_gap != "split":
        return api.finish_conversion(synced[0], target, writer, model=model, lossy=lossy,
                                     write_options=writing), writer
    written = episodes(target, synced, lossy=lossy, **writing)
    starts = [float(m.meta["sync"]["start"]) for m in synced]  # type: ignore[index]
    shown = [f"{m.main_track.frames if m.main_track else 0} frame(s) at +{at - starts[0]:.4g} s"
             for m, at in zip(synced[:5], starts, strict=False)]
    more = f", … ({len(synced) - 5} more)" if len(synced) > 5 else ""
    click.echo(f"split at {len(synced) - 1} gap(s) into {len(synced)} episodes: "
               f"{', '.join(shown)}{more}" if len(synced) > 1 else
               f"no gap to split at: one episode ({shown[0].split(' at ')[0]})")
    return written, writer


def _chosen_writer(target: str, writer: registry.Format, reader: registry.Format) -> str:
    """`` as traj (…; --to euroc for …)`` when TARGET's extension has several writers and
    none was named: the user learns which one was chosen, why it is not the source's
    format when that writes the extension too, and how to name another."""
    others = registry.sharing(target, writer)
    if not others:
        return ""
    why = f"; not {reader.name}, which cannot write it whole with these options" \
        if reader in others else ""
    rest = "; ".join(f"--to {other.name} for {other.description}" for other in others)
    return f" as {writer.name} ({writer.description}{why}; {rest})"

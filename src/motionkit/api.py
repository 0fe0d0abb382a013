"""The front door: read, write and convert any registered format.

Each goes through the format's ``Format`` object (``formats.registry``), so option checks,
the loss rule and the error family are the same whichever door is used; ``convert`` is a
read, an optional resample or derivation through a body model, and a write.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, cast

from .errors import (
    ConversionError,
    FormatError,
    MotionkitError,
    choices,
    did_you_mean,
    option_hint,
)
from .formats import registry
from .formats.registry import Loaded
from .model import Motion, Skeleton

if TYPE_CHECKING:
    from .model.character import Character
    from .quality import CheckReport
    from .quality.check import GroundSpec
    from .quality.fix import Fixed
    from .quality.presets import Preset

PathLike = str | os.PathLike[str]
#: Options that mean the same to a reader and a writer that both take them (a character
#: model; dropping repeated stamps), so convert hands them to both.
SAME_ON_BOTH_SIDES = frozenset({"character", "dedupe"})


def read(path: PathLike, format: str | None = None, **options: object) -> Loaded:
    """Read a motion, trajectory, skeleton, world or motion list from ``path``.

    The format comes from ``format``, else the extension, else the content. Options are
    the reader's keyword parameters (``mk.formats.registry.by_name(f).read_options()``).
    """
    return registry.for_reading(path, format).read(path, **options)


def read_motion(path: PathLike, format: str | None = None, **options: object) -> Motion:
    """:func:`read` for callers that need a Motion: a model or a list is a FormatError."""
    obj = read(path, format=format, **options)
    if not isinstance(obj, Motion):
        raise FormatError(f"holds a {type(obj).__name__}, not a motion", path)
    return obj


def write(path: PathLike, obj: Loaded, format: str | None = None, **options: object) -> None:
    """Write ``obj`` to ``path`` atomically; refuses (ConversionError) what would be lost
    unless ``lossy=True``, which drops it with one warning."""
    lossy = bool(options.pop("lossy", False))
    like = obj.meta.get("source_format") if isinstance(obj, Motion) \
        and isinstance(obj.meta, dict) else None
    registry.for_writing(path, format, like=like if isinstance(like, str) else None, obj=obj,
                         options=options).write(path, obj, lossy=lossy, **options)


def convert(
    src: PathLike,
    dst: PathLike,
    *,
    from_format: str | None = None,
    to_format: str | None = None,
    rate: float | None = None,
    method: str = "auto",
    model: PathLike | Skeleton | None = None,
    lossy: bool = False,
    read_options: dict[str, object] | None = None,
    **options: object,
) -> Loaded:
    """Read ``src``, optionally resample to ``rate`` Hz and derive link poses through a
    body ``model``, write ``dst``; return what was written.

    With ``model`` the target gets what it needs from forward kinematics: every link's
    pose (``links``) where it holds them, else the pose of one link as the root (the
    ``link`` option names it; the model's first body by default). Each extra option goes
    to the reader, the writer, or both, whichever takes it; ``read_options`` go to the
    reader alone (the command line's ``-R``).
    """
    reader = registry.for_reading(src, from_format)
    obj, writer, writing = read_for_writing(reader, src, dst, to_format, options, read_options)
    return finish_conversion(obj, dst, writer, rate=rate, method=method, model=model,
                             lossy=lossy, write_options=writing)


def read_skeleton(path: PathLike, name: str | None = None) -> Skeleton:
    """The skeleton of a model file (any format the registry reads; of a World, the one
    called ``name``, else the one with bodies: ``kinematics.motion.model_skeleton``)."""
    from .kinematics.motion import model_skeleton

    return model_skeleton(read(path), path, name)


def write_fixed(path: PathLike, motion: Motion, skeleton: Skeleton | Character | None = None,
                *, model: PathLike | None = None, fixes: tuple[str, ...] | None = None,
                max_spike: float | None = None, format: str | None = None, lossy: bool = False,
                write_options: dict[str, object] | None = None, ground: GroundSpec = None,
                preset: str | Preset = "default", feet_names: tuple[str, ...] | None = None,
                **thresholds: float | int | None) -> tuple[Fixed, CheckReport]:
    """``motion`` fixed (``quality.fix.apply_fixes``: ``fixes``, ``max_spike``, the check's
    ``ground``, ``preset`` and ``thresholds``), written to ``path`` atomically under the
    loss rule (the ``model`` file goes to a writer that takes a character; every key of
    ``write_options`` must be the writer's), and the check of what the file holds (with
    ``feet_names``; a terrain dropped with ``lossy`` is not stood on): the one way
    ``motionkit fix``, ``check --fix`` and ``batch fix`` write a fixed copy."""
    from .quality import check
    from .quality.check import model_of
    from .quality.fix import FIXES, SPIKE_TIME, apply_fixes
    from .quality.shapes import feet

    if feet_names:  # the copy's check needs them: refused before writing
        feet(model_of(motion, skeleton), tuple(feet_names))
    like = motion.meta.get("source_format")
    reader = registry.by_name(like) if isinstance(like, str) and like in {
        info.name for info in registry.formats()} else None
    own = dict(write_options or {})
    _writers_take(own, registry.writers_for(path, format, like=reader.name if reader else None))
    fixed = apply_fixes(motion, skeleton, fixes=FIXES if fixes is None else fixes,
                        max_spike=SPIKE_TIME if max_spike is None else max_spike,
                        ground=ground, preset=preset, **thresholds)
    # the writer a convert of the unfixed motion would take (its own format where that
    # holds it whole, the model going to both sides as --character does): the fixes'
    # metadata then goes under that writer's loss rule, never to another format
    options = dict(own)
    if reader is not None:
        if model is not None and "character" in reader.read_options():
            options.setdefault("character", os.fspath(model))
        writer, writing = choose_writer(writer_plans(reader, path, format, options), motion)
    else:
        writer, writing = registry.for_writing(path, format, obj=motion, options=options), options
    _writers_take(own, [writer])
    kept = writer.write(path, fixed.motion, lossy=lossy, **writing)
    return fixed, check(kept if isinstance(kept, Motion) else fixed.motion, skeleton,
                        name=os.fspath(path), ground=ground, preset=preset,
                        feet_names=feet_names, **thresholds)


def _writers_take(options: dict[str, object], writers: list[registry.Format]) -> None:
    """A ConversionError naming the keys of a fixed copy's writer ``options`` (``fix -O``)
    that none of ``writers`` takes: a fix reads nothing, so a reader's key would be lost."""
    if "lossy" in options:
        raise ConversionError("lossy is not a -O option: pass --lossy (lossy=True in Python)")
    takes = set().union(*(writer.write_options() for writer in writers))
    wrong = sorted(set(options) - takes)
    if wrong:
        names = " or ".join(writer.name for writer in writers)
        raise ConversionError(
            f"fix -O takes the writer's options (writing {names}: {', '.join(sorted(takes))}), "
            f"not {', '.join(wrong)} ({did_you_mean(wrong[0], sorted(takes))}-R is for the "
            "reader)")


def read_for_writing(reader: registry.Format, src: PathLike, dst: PathLike,
                     to_format: str | None, options: dict[str, object],
                     read_options: dict[str, object] | None = None,
                     ) -> tuple[Loaded, registry.Format, dict[str, object]]:
    """The first half of ``convert``: read ``src`` and choose the writer for ``dst`` (the
    one ``convert`` uses and reports); returns (what was read, the writer, its options).
    The source's own format writes ``dst`` where it holds what was read whole and takes
    the options; else the extension's first writer does."""
    writers = writer_plans(reader, dst, to_format, options, read_options)
    obj = reader.read(src, **writers[0][1])
    writer, writing = choose_writer(writers, obj)
    return obj, writer, writing


#: One writer ``convert`` may use, with the options split for it (reader's, writer's).
WriterPlan = tuple[registry.Format, dict[str, object], dict[str, object]]


def writer_plans(reader: registry.Format, dst: PathLike, to_format: str | None,
                 options: dict[str, object], read_options: dict[str, object] | None = None,
                 ) -> list[WriterPlan]:
    """The writers that may write ``dst`` (``registry.writers_for``, the source's format
    first), each with the options split for it; a writer the options do not fit is left
    out (an option that means something else to it); none fits: the fallback's error."""
    plans: list[WriterPlan] = []
    candidates = registry.writers_for(dst, to_format, like=reader.name)
    for writer in candidates:
        try:
            plans.append((writer, *split_options(reader, writer, options, read_options)))
        except MotionkitError:
            if writer is candidates[-1] and not plans:
                raise
    return plans


def choose_writer(plans: list[WriterPlan], obj: Loaded) -> tuple[registry.Format, dict[str, object]]:
    """The first of ``plans`` whose writer holds ``obj`` whole, else the last (the
    extension's own writer, which then applies the loss rule): (writer, its options)."""
    for writer, _, writing in plans[:-1]:
        if writer.holds_whole(obj, **writing):
            return writer, writing
    return plans[-1][0], plans[-1][2]


def split_options(reader: registry.Format, writer: registry.Format,
                  options: dict[str, object], read_options: dict[str, object] | None = None,
                  ) -> tuple[dict[str, object], dict[str, object]]:
    """``convert``'s options as (the reader's, the writer's): each goes to whichever side
    takes it (both for SAME_ON_BOTH_SIDES), ``read_options`` to the reader alone; unknown
    or ambiguous keys are a MotionkitError naming the choices."""
    if "lossy" in options:  # the writers take it, but as convert's own flag
        raise MotionkitError("lossy is not a -O option: pass --lossy (lossy=True in Python)")
    read_allowed, write_allowed = reader.read_options(), writer.write_options()
    unknown = sorted(set(options) - read_allowed - write_allowed)
    ambiguous = sorted((set(options) & read_allowed & write_allowed) - SAME_ON_BOTH_SIDES)
    if ambiguous:
        raise MotionkitError(
            f"option(s) {', '.join(ambiguous)} mean one thing reading {reader.name} and another "
            f"writing {writer.name}; give the reader's to the reader alone: "
            f"{option_hint(ambiguous[0], 'VALUE', 'reader-only')}")
    if unknown:
        guess = did_you_mean(unknown[0], sorted(read_allowed | write_allowed))
        raise MotionkitError(
            f"convert does not take option(s) {', '.join(unknown)} ({guess}reading "
            f"{reader.name}: {', '.join(sorted(read_allowed)) or 'none'}; writing "
            f"{writer.name}: {', '.join(sorted(write_allowed))})")
    own = dict(read_options or {})
    if set(own) - read_allowed:
        wrong = sorted(set(own) - read_allowed)
        raise MotionkitError(f"reading {reader.name} does not take option(s) {', '.join(wrong)} "
                             f"({choices(wrong[0], sorted(read_allowed), 'known', 40)})")
    reading = {**{k: v for k, v in options.items() if k in read_allowed}, **own}
    return reading, {k: v for k, v in options.items() if k in write_allowed}


def finish_conversion(obj: Loaded, dst: PathLike, writer: registry.Format, *,
                      rate: float | None = None, method: str = "auto",
                      model: PathLike | Skeleton | None = None, lossy: bool = False,
                      write_options: dict[str, object] | None = None) -> Loaded:
    """The second half of ``convert`` for what was read: resample to ``rate``, derive link
    poses through ``model``, write ``dst`` with ``writer`` (a batch reads each file once,
    for its catalog row, and finishes here)."""
    writing = dict(write_options or {})
    if rate is not None:
        from .ops import resample

        if not isinstance(obj, Motion):
            raise ConversionError("--rate applies to motions only")
        obj = resample(obj, rate, method=method)
    if model is not None:
        obj = _derive(obj, model, writer, writing)
    return writer.write(dst, obj, lossy=lossy, **writing)


def _derive(obj: Loaded, model: PathLike | Skeleton, writer: registry.Format,
            write_options: dict[str, object]) -> Motion:
    """The motion with the link poses ``writer`` needs, from FK through ``model``."""
    from .kinematics.motion import link_motion

    if not isinstance(obj, Motion):
        raise ConversionError("a body model derives link poses of motions only")
    skeleton = model if isinstance(model, Skeleton) else read_skeleton(model)
    holds = writer.holds(**write_options)  # holds() takes only the options it knows
    if holds.takes("links"):
        derived = link_motion(skeleton, obj)
        tracks = {**obj.tracks, **derived.tracks}
    else:
        body = cast("str | None", write_options.pop("link", None)) or skeleton.bodies[0].name
        derived = link_motion(skeleton, obj, body=body)
        tracks = {name: t for name, t in obj.tracks.items() if name not in ("root", "links")}
        tracks.update(derived.tracks)
    # the model goes along where the target keeps a skeleton (BVH, .seq); else it was a tool
    return Motion(tracks, skeleton if holds.skeleton else obj.skeleton, obj.terrain,
                  dict(obj.meta))


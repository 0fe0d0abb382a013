"""The loss rule, in one place: a writer declares what it can hold (``Holds``); whatever
else an object carries is refused with one ``ConversionError`` that names all of it, or,
with ``lossy=True``, dropped with one warning that names the same items.

``lost_items`` compares a Motion with a declaration, ``settle`` applies the rule and
``keep_held`` gives the writer only what it holds. The registry runs them for every
writer (``Format.write``); a writer adds the losses only it can see (a PARC frame rate that
is not an integer, say) through its ``losses`` hook, so they join the same one message.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import ConversionError, option_hint, warn
from ..model import Motion, Timeline, Track
from ..model.timeline import seconds_to_ns

#: Metadata every reader sets to describe its source (and ``sync``: how ``ops.sync`` made
#: the frames); no writer is asked to keep it.
DESCRIPTIVE_META = frozenset({"name", "source_format", "nframe", "body_frame", "sync"})
#: Metadata a reader sets to list what the source held and it did not read (a whole bag's
#: camera and other unsupported topics, as text): every writer names each item lost, since
#: no motion read from that source has it; it is never written on.
NOT_READ_META = "not_read"
#: Track attributes that are model facts, not data: ``orientation`` (position_only covers
#: it), ``derived_from`` and ``action`` (a track computed from another one, and how: an
#: action as the next state or the step to it) and ``layout`` (how columns are laid out,
#: which the track's own format restates).
MODEL_ATTRS = frozenset({"orientation", "derived_from", "action", "layout"})
#: Track attributes that restate the data as the source file held it (``matrices``: KITTI's
#: rotation matrices, digit for digit): never written, and not a loss, since the data says
#: the same to rounding.
RESTATED_ATTRS = frozenset({"matrices"})
#: A quaternion further than this from unit length is "bad", as are zero and non-finite ones.
ROTATION_TOLERANCE = 1e-4


def is_plain(key: object, value: object) -> bool:
    """True for a text key and a value that JSON gives back unchanged."""
    try:
        return isinstance(key, str) and json.loads(json.dumps(value, allow_nan=False)) == value
    except (TypeError, ValueError, RecursionError):
        return False


@dataclass(frozen=True)
class Holds:
    """What a writer can hold. Defaults describe a writer that holds everything.

    ``tracks`` maps the track names it writes to the kinds it takes (None: any track);
    ``meta`` names the metadata keys it keeps (None: any plain data, JSON-like);
    ``namespace`` is its own ``meta`` key for round-trip extras (``"choreonoid"``), kept
    whatever it holds; ``plain(key, value)`` says which metadata and attribute values it
    can store (JSON-like data by default). ``raw_rotations``: zero, non-finite and non-unit
    quaternions are written as they are and read back so (else they are refused, lossy or
    not, since the file would not read back). ``repeated_stamps=False``: stamps that repeat
    or go back are refused (the registry offers ``dedupe=True`` to drop repeats).
    ``start=False``: the file's motions start at time 0 (another start is lost).
    ``frame_numbers``: a timeline of frame numbers only (no times) is written as such;
    where False (most formats) it would become invented seconds and counts as lost.
    ``position_only=False``: a root without orientation would
    get invented identity quaternions. ``root_required=False``: a ``root`` the tracks name
    is kept where there is one, not needed (a bag's JointState writes the root on /tf).
    """

    tracks: Mapping[str, frozenset[str]] | None = None
    skeleton: bool = True
    terrain: bool = True
    times: bool = True
    stamps: bool = True
    start: bool = True
    ns_stamps: bool = True
    one_timeline: bool = False
    empty_tracks: bool = True
    labels: bool = True
    attrs: bool = True
    meta: frozenset[str] | None = None
    frame_numbers: bool = False
    position_only: bool = True
    raw_rotations: bool = False
    repeated_stamps: bool = True
    root_required: bool = True
    namespace: str | None = None
    plain: Callable[[str, object], bool] = is_plain

    def takes(self, name: str) -> bool:
        """True when a track called ``name`` can be written."""
        return self.tracks is None or name in self.tracks


def tracks(**kinds: str) -> dict[str, frozenset[str]]:
    """``tracks(root="pose", velocity="vector3")``: a Holds.tracks mapping ('|' for several)."""
    return {name: frozenset(kind.split("|")) for name, kind in kinds.items()}


def lost_items(motion: Motion, holds: Holds, namespaces: frozenset[str] = frozenset()) -> list[str]:
    """Everything in ``motion`` that a writer declaring ``holds`` would drop or invent.

    ``namespaces`` are the formats' own ``meta`` keys: where they hold plain data it only
    describes how a source file was laid out, so a writer that cannot keep it drops it
    without counting it lost; non-plain data there (PARC's misc arrays) is data and counts.
    """
    lost: list[str] = []
    root = motion.tracks.get("root")
    reference = root.timeline if root is not None else None
    timing: list[str] = []
    for name, track in motion.tracks.items():
        if not holds.takes(name):
            if name == "links" and track.part_count == 1 and motion.tracks.is_view("root") \
                    and holds.takes("root"):  # its data is the root the writer takes
                lost.extend(_track_losses(track, holds, reference))
            else:
                lost.append(_untaken(motion, name, track))
            continue
        if holds.tracks is not None and track.kind not in holds.tracks[name]:
            lost.append(f"track {name!r} (a {track.kind} track)")
            continue
        lost.extend(_track_losses(track, holds, reference))
        timing.extend(_timeline_losses(track, holds))
    if root is not None and motion.tracks.is_view("root") and holds.takes("root") \
            and not holds.takes("links"):  # the view's timeline is its links'
        timing.extend(_timeline_losses(root, holds))
    lost.extend(dict.fromkeys(timing))  # one line per kind of timing loss
    lost.extend(_rotation_losses(motion, holds))
    if motion.skeleton is not None and not holds.skeleton:
        lost.append("the skeleton")
    if motion.terrain is not None and not holds.terrain:
        lost.append("the terrain")
    lost.extend(_meta_losses(motion.meta, holds, namespaces))
    unread = motion.meta.get(NOT_READ_META)
    if isinstance(unread, list | tuple):
        lost.extend(f"{item} (not read from the source)" for item in unread)
    return lost


def bad_rotations(track: Track) -> tuple[int, int] | None:
    """(count, first frame) of the frames of a pose or quaternion track with a zero,
    non-finite or far from unit quaternion; None when all are good or it has none."""
    if track.kind not in ("pose", "quaternion") or not track.data.size:
        return None
    quats = np.asarray(track.data[..., 3:] if track.kind == "pose" else track.data, dtype=float)
    with np.errstate(invalid="ignore", over="ignore"):
        norms = np.sqrt(np.einsum("...i,...i->...", quats, quats))
        bad = ~(np.abs(norms - 1.0) <= ROTATION_TOLERANCE)
    frames = bad.reshape(track.frames, -1).any(axis=1)
    count = int(np.count_nonzero(frames))
    return (count, int(np.argmax(frames))) if count else None


def refuse_bad_rotations(motion: Motion, holds: Holds, target: str) -> None:
    """ConversionError for bad quaternions a writer cannot hold (lossy or not: what it
    wrote would not read back)."""
    if holds.raw_rotations:
        return
    for name, track in {**motion.tracks, **motion.tracks.views()}.items():
        found = bad_rotations(track) if holds.takes(name) else None
        if found is not None:
            raise ConversionError(
                f"{target} cannot hold zero, non-finite or non-unit quaternions: track {name!r} "
                f"has {found[0]} frame(s) of them, the first is frame {found[1]}")


def dedupe_stamps(motion: Motion, holds: Holds, target: str, dedupe: bool) -> Motion:
    """The motion with stamps that only increase, for a writer that holds no others:
    repeated stamps are dropped (the later frame, with a warning) when ``dedupe``; any
    other stamps that do not increase are a ConversionError naming track and frame."""
    if holds.repeated_stamps:
        return motion
    tracks = dict(motion.tracks)
    for name, track in motion.tracks.items():
        timeline = track.timeline
        if timeline.is_uniform or timeline.count < 2:
            continue
        stamps = timeline.stamps_ns if timeline.stamps_ns is not None else timeline.times
        steps = np.diff(stamps)
        if np.all(steps > 0):
            continue
        back = np.flatnonzero(steps < 0)
        repeats = np.flatnonzero(steps == 0)
        if back.size or not dedupe:
            first = int(min(back[0] if back.size else len(steps), repeats[0] if repeats.size
                            else len(steps))) + 1
            raise ConversionError(
                f"{target} needs increasing time stamps: track {name!r} has {repeats.size} "
                f"repeated and {back.size} backward step(s), the first at frame {first} "
                f"({option_hint('dedupe', True, 'write')} drops repeats; resample or sort the rest)")
        keep = np.concatenate([[True], steps != 0])
        warn(f"{target}: dropped {repeats.size} frame(s) of track {name!r} whose time stamp "
             "repeats the one before")
        kept = (Timeline.from_nanoseconds(stamps[keep]) if timeline.stamps_ns is not None
                else Timeline.stamped(stamps[keep], timeline.rate))
        tracks[name] = Track(name, track.kind, track.data[keep], kept, track.labels, track.attrs)
    return Motion(tracks, motion.skeleton, motion.terrain, motion.meta)


def _rotation_losses(motion: Motion, holds: Holds) -> list[str]:
    if not holds.raw_rotations:
        return []
    lost = []
    for name, track in motion.tracks.items():
        found = bad_rotations(track) if holds.takes(name) else None
        if found is not None:
            lost.append(f"the bad quaternions of track {name!r} ({found[0]} frame(s) zero, "
                        f"non-finite or non-unit, the first is frame {found[1]}; written as they are)")
    return lost


def settle(lost: list[str], target: str, lossy: bool) -> None:
    """The rule: ConversionError naming ``lost``, or one warning naming it when ``lossy``."""
    if not lost:
        return
    what = "; ".join(lost)
    if not lossy:
        only = (" — that is all: every track and frame is written"
                if all(item.startswith("metadata ") for item in lost) else "")
        raise ConversionError(f"{target} cannot hold: {what}{only} (pass "
                              f"{option_hint('lossy', True, 'write')} to drop it)")
    warn(f"{target}: dropped {what}")


def keep_held(motion: Motion, holds: Holds, namespaces: frozenset[str] = frozenset()) -> Motion:
    """A motion with only what ``holds`` takes: held tracks (views the writer needs become
    stored tracks), plain attributes and metadata, skeleton and terrain where held."""
    kept: dict[str, Track] = {}
    names = list(motion.tracks)
    names += [name for name in motion.tracks.views() if holds.takes(name) and not holds.takes("links")]
    root = motion.tracks.get("root")
    for name in names:
        track = motion.tracks[name]
        if not holds.takes(name) or (holds.tracks is not None and track.kind not in holds.tracks[name]):
            continue
        if (holds.one_timeline and root is not None and name != "root"
                and not track.timeline.same_as(root.timeline)):
            continue
        if not holds.empty_tracks and track.data.size == 0:
            continue
        attrs = {key: value for key, value in track.attrs.items() if key not in RESTATED_ATTRS
                 and (key in MODEL_ATTRS or (holds.attrs and holds.plain(key, value)))}
        labels = track.labels if holds.labels else None
        if attrs != track.attrs or labels is not track.labels:
            track = Track(name, track.kind, track.data, track.timeline, labels, attrs)
        kept[name] = track
    meta = {key: value for key, value in motion.meta.items() if key != NOT_READ_META
            and (_meta_kept(key, value, holds) or _meta_ignored(key, value, namespaces))}
    return Motion(kept, motion.skeleton if holds.skeleton else None,
                  motion.terrain if holds.terrain else None, meta)


def ns_changed(timeline: Timeline) -> int:
    """How many integer nanosecond stamps the float seconds would not give back."""
    if timeline.stamps_ns is None:
        return 0
    try:
        back = seconds_to_ns(timeline.times)
    except ValueError:  # beyond ±9.2e9 s, where the check has no int64 room: none is sure
        return timeline.count
    return int(np.count_nonzero(back != timeline.stamps_ns))


def _untaken(motion: Motion, name: str, track: Track) -> str:
    if name == "links" and motion.tracks.is_view("root") and track.part_count > 1:
        others = track.part_count - 1
        names = list(track.labels or [])
        plural = "s" if others != 1 else ""
        if names:
            shown = ", ".join(names[1:7]) + (", …" if others > 6 else "")
            what, first = f"the pose{plural} of link{plural} {shown}", f"link, {names[0]},"
        else:
            what, first = f"the poses of {others} more link{plural}", "link"
        return (f"{what} (only the first {first} is written, as the root; write another "
                f"with {option_hint('link', 'NAME', 'write')})")
    return f"track {name!r}"


def _track_losses(track: Track, holds: Holds, reference: Timeline | None) -> list[str]:
    lost = []
    name = track.name
    if (holds.one_timeline and reference is not None and name != "root"
            and not track.timeline.same_as(reference)):
        lost.append(f"track {name!r} (its timeline differs from the root's)")
    if not holds.empty_tracks and track.data.size == 0:
        lost.append(f"empty track {name!r}")
    if track.labels and not holds.labels:
        lost.append(f"the labels of track {name!r}")
    odd = [key for key, value in track.attrs.items()
           if key not in MODEL_ATTRS | RESTATED_ATTRS and not (holds.attrs and holds.plain(key, value))]
    if odd:
        why = " (not plain data)" if holds.attrs else ""
        lost.append(f"attribute(s) {', '.join(map(repr, odd))} of track {name!r}{why}")
    if name == "root" and not holds.position_only and not track.attrs.get("orientation", True):
        lost.append("the missing orientation (identity quaternions would be written)")
    return lost


def _timeline_losses(track: Track, holds: Holds) -> list[str]:
    timeline = track.timeline
    if timeline.frame_numbered:
        return [] if holds.frame_numbers else ["invented times (the source had frame numbers only)"]
    if not holds.times:
        return ["the time stamps"]
    if not timeline.is_uniform and not holds.stamps:
        return [f"the time stamps of track {track.name!r} (a fixed rate only)"]
    if not holds.start and timeline.start != 0.0:
        return [f"start time {timeline.start:g} s of track {track.name!r} (motions start at 0)"]
    if not holds.ns_stamps and track.data.size:
        changed = ns_changed(timeline)
        if changed:
            return [f"the exact nanosecond time stamps of track {track.name!r} (the float "
                    f"seconds written would change {changed} of {track.frames})"]
    return []


def _meta_losses(meta: Mapping[str, Any], holds: Holds, namespaces: frozenset[str]) -> list[str]:
    lost = []
    for key, value in meta.items():
        if _meta_kept(key, value, holds) or _meta_ignored(key, value, namespaces):
            continue
        if key == "epsg":
            lost.append(f"the CRS (EPSG {value})")
        elif holds.meta is None or key in namespaces:
            lost.append(f"metadata {key!r} (not plain data)")
        else:
            lost.append(f"metadata {key!r}")
    return lost


def _meta_ignored(key: str, value: Any, namespaces: frozenset[str]) -> bool:
    return (key in DESCRIPTIVE_META or key == NOT_READ_META or value is None or (key == "epsg" and not value)
            or (key in namespaces and is_plain(key, value)))


def _meta_kept(key: str, value: Any, holds: Holds) -> bool:
    if key == holds.namespace:
        return True
    if holds.meta is None:
        return holds.plain(key, value)
    return key in holds.meta


def written_rate(timeline: Timeline) -> float:
    """The frame rate a fixed-rate writer states: the timeline's, or for time stamps (which
    the loss check has refused, or named under lossy) their mean rate (1 for one frame)."""
    if timeline.is_uniform and timeline.rate is not None:
        return float(timeline.rate)
    frames = timeline.count
    return (frames - 1) / timeline.duration if frames > 1 and timeline.duration > 0 else 1.0


def root_labels(obj: Motion) -> list[str]:
    """The loss of the root track's labels, for writers whose files name no root part."""
    root = obj.tracks.get("root")
    return ["the labels of track 'root' (the file names no root part)"] \
        if root is not None and root.labels else []

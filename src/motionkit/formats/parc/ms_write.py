"""Writing PARC MS containers exactly as PARC does (the rules are in :mod:`.ms`'s docstring)."""

from __future__ import annotations

import copy
import math
import os
from collections import OrderedDict
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..._io import atomic_write
from ...errors import ConversionError
from ...model import Motion, Timeline, Track
from ...model.character import Character, CharacterSource
from ...model.terrain import Terrain
from ...spatial.quaternion import positive_w
from ..loss import Holds
from ..shared.mjcf.character import load_character
from ..shared.pickles import safepickle, writepickle
from .ms_read import (
    EXTRA_TRACKS,
    EXTRAS_KEY,
    LOOP_MODES,
    OWN_META,
    contact_labels,
)

#: PARC's own rules say what is lost (``losses``: its fields, float32, integer fps, plain
#: data as pickles hold it), so the generic declaration leaves values to them.
HOLDS = Holds(namespace="parc", plain=lambda key, value: True, raw_rotations=True, start=False)
WRITES = (Motion, Terrain)


def losses(obj: Motion | Terrain, character: CharacterSource | None = None) -> list[str]:
    """What a PARC file cannot hold of ``obj`` (the rules of :func:`write`)."""
    lost: list[str] = []
    encode(_as_motion(obj), character, lost)
    return lost


def write(path: str | os.PathLike[str], obj: Motion | Terrain,
          character: CharacterSource | None = None) -> None:
    """Write an MS container exactly as PARC does (protocol 4, NumPy 1.x names).

    Numbers are stored as float32, as in PARC's own files: float64 values are rounded to
    the nearest float32 (about 7 significant digits), and finite values beyond float32's
    range raise ConversionError rather than become infinities. Plain metadata, labels and
    attrs PARC has no field for go to ``misc_data["motionkit"]`` (module docstring);
    ``meta["name"]`` is not stored, the reader names a motion after its file.

    Always refused (ConversionError): tracks on another timeline than the root's (resample
    them first) and values beyond float32's range. Refused unless ``lossy`` (then dropped,
    or rounded, with a warning): other tracks, a non-integral or stamped rate, dy != dx,
    misc entries, metadata and attrs that are not plain data or whose keys are not text.
    """
    with atomic_write(path, "wb") as handle:
        handle.write(encode(_as_motion(obj), character))


def _as_motion(obj: Motion | Terrain) -> Motion:
    return Motion(terrain=obj) if isinstance(obj, Terrain) else obj


def encode(motion: Motion, character: CharacterSource | None = None, lost: list[str] | None = None) -> bytes:
    """The bytes of the MS container for ``motion`` (the rules of :func:`write`): what a
    PARC file cannot hold is left out, and named in ``lost`` when it is given."""
    lost = [] if lost is None else lost
    char = _writer_character(motion, character)
    motion_dict = _motion_dict(motion, char, lost) if motion.tracks else None
    terrain_dict = _terrain_dict(motion.terrain, lost) if motion.terrain is not None else None
    found = motion.meta.get("parc")
    parc: dict[str, Any] = found if isinstance(found, dict) else {}
    misc = parc.get("misc", {})
    if misc is None:
        misc = {}
    if not isinstance(misc, dict):
        raise ConversionError("meta['parc']['misc'] must be a dict")
    if parc.get("misc_skipped"):
        lost.append("misc data (not read: misc=False, or it could not be decoded)")
    misc = _plain_entries(misc, "misc entry", lost)
    extras = _extras(motion, char, lost)
    if extras and EXTRAS_KEY in misc:
        raise ConversionError(f"misc entry {EXTRAS_KEY!r} holds data of its own, but motionkit "
                              "keeps the metadata, labels and attrs PARC has no field for under "
                              "that key; rename the misc entry")
    if extras:
        misc[EXTRAS_KEY] = extras
    misc_present = bool(misc) or not (parc.get("container") == "ms" and "misc_data" not in
                                      parc.get("blobs", safepickle.MS_KEYS))
    kept_groups = parc.get("dtype_groups")
    groups: dict[str, Any] = kept_groups if isinstance(kept_groups, dict) else {}
    for blob, values in (("motion_data", motion_dict), ("terrain_data", terrain_dict)):
        if values is not None:
            _share_dtypes(values, groups.get(blob))
    container = {
        "motion_data": writepickle.dumps(motion_dict) if motion_dict is not None else None,
        "terrain_data": writepickle.dumps(terrain_dict) if terrain_dict is not None else None,
        "misc_data": writepickle.dumps(misc) if misc_present else None,
    }
    return writepickle.dumps(container)


def _share_dtypes(values: dict[str, Any], groups: Any) -> None:
    """Give the arrays of ``values`` dtype objects shared as ``groups`` says (kept by the
    reader, ``ms_read.dtype_groups``), so the pickler repeats or references each dtype as
    the original writer did; without groups that fit these arrays, one object per type."""
    keys = [key for key, value in values.items() if isinstance(value, np.ndarray)]
    fits = (isinstance(groups, list) and len(groups) == len(keys)
            and all(isinstance(g, int) and 0 <= g <= i for i, g in enumerate(groups))
            and all(values[keys[g]].dtype == values[key].dtype
                    for key, g in zip(keys, groups, strict=True)))
    if not fits:
        by_type: dict[str, int] = {}
        groups = [by_type.setdefault(values[key].dtype.str, i) for i, key in enumerate(keys)]
    objects: dict[int, np.dtype[Any]] = {}
    canonical_used: set[str] = set()
    for key, group in zip(keys, groups, strict=True):
        if group not in objects:  # NumPy's own instance first (numpy scalars share it)
            kind = values[key].dtype.str
            objects[group] = np.dtype(kind) if kind not in canonical_used else copy.deepcopy(
                np.dtype(kind))
            canonical_used.add(kind)
        values[key] = values[key].view(objects[group])


def _writer_character(motion: Motion, character: CharacterSource | None) -> Character | None:
    if character is not None:
        return load_character(character)
    if motion.skeleton is not None:
        try:
            return load_character(motion.skeleton)
        except ConversionError:
            return None
    return None


def _motion_dict(motion: Motion, char: Character | None, lost: list[str]) -> dict[str, Any]:
    root = motion.root_pose()
    if root is None:
        raise ConversionError("a PARC motion needs a root pose track ('root')")
    timeline = root.timeline
    fps = _writer_fps(timeline, lost)
    kept = {"root", "joint_rotations", "contacts"}
    if char is not None:
        kept |= {"joints", "links"}  # joints converted or derived, links by forward kinematics
    elif "joint_rotations" not in motion.tracks:
        kept.add("joints")  # refused below: it needs a character
    for name, track in motion.tracks.items():
        if name == "joints" and name not in kept:
            lost.append("track 'joints' (no character to relate it to the joint rotations)")
        elif name not in kept:
            lost.append(f"track {name!r}")
        elif not track.timeline.same_as(timeline):
            raise ConversionError(f"track {name!r} has {_timeline_text(track.timeline)} but the "
                                  f"root has {_timeline_text(timeline)}; a PARC file has one "
                                  "timeline for all its tracks: resample the track onto the "
                                  "root's frame times first (e.g. motionkit resample)")
    joint_rot = _joint_rotations(motion, char, lost)
    contacts = motion.tracks.get("contacts")
    if contacts is not None and (contacts.kind != "value" or contacts.data.ndim != 2):
        lost.append(f"the layout of track 'contacts' ({contacts.kind} of shape "
                    f"{list(contacts.data.shape)}; PARC holds (frames, bodies) values, so its "
                    "parts are written flattened, without their labels)")
    loop = str(motion.meta.get("loop_mode") or "CLAMP").upper()
    if loop not in LOOP_MODES:
        lost.append(f"loop mode {loop!r} (PARC knows CLAMP and WRAP; CLAMP written)")
        loop = "CLAMP"
    data = np.asarray(root.data)
    return {
        "root_pos": _float32(data[:, :3], "the root position"),
        "root_rot": _float32(data[:, 3:7], "the root rotation"),
        "joint_rot": _float32(joint_rot, "the joint rotations"),
        "body_contacts": (_float32(contacts.data.reshape(root.frames, -1), "the contacts")
                          if contacts is not None else None),
        "fps": fps,
        "loop_mode": loop,
    }


def _timeline_text(timeline: Timeline) -> str:
    if timeline.is_uniform:
        return f"{timeline.count} frames at {timeline.rate:g} Hz from {timeline.start:g} s"
    return (f"{timeline.count} time-stamped frames from {timeline.start:g} to "
            f"{timeline.end:g} s")


def _float32(values: Any, what: str) -> NDArray[np.float32]:
    """``values`` as C-ordered float32 (PARC's type); finite values beyond its range refused.

    Rounding to the nearest float32 is the format's nature; turning a finite number into
    an infinity is not, and no ``lossy`` accepts that.
    """
    source = np.asarray(values)
    with np.errstate(over="ignore"):
        out = np.array(source, dtype=np.float32, order="C")
    if source.dtype.kind == "f" and source.dtype.itemsize > 4 and not np.isfinite(out).all():
        overflow = np.isinf(out) & np.isfinite(source)
        if overflow.any():
            index = tuple(int(i) for i in np.argwhere(overflow)[0])
            raise ConversionError(f"{what} holds finite values beyond float32's range, e.g. "
                                  f"{float(source[index]):g} at index {list(index)}; PARC files "
                                  "store float32, where they would become infinite")
    return out


def _writer_fps(timeline: Timeline, lost: list[str]) -> int:
    if not timeline.is_uniform or timeline.rate is None:
        lost.append("time stamps (PARC needs a fixed frame rate; resample with --rate)")
        rate = timeline.rate or (timeline.count - 1) / max(timeline.duration, 1e-12)
    else:
        rate = timeline.rate
    if abs(rate - round(rate)) > 1e-9 or round(rate) < 1:
        lost.append(f"frame rate {rate:g} Hz (PARC stores an integer fps; {round(rate)} written)")
    return max(1, round(rate))


def _joint_rotations(motion: Motion, char: Character | None, lost: list[str]) -> NDArray[Any]:
    track = motion.tracks.get("joint_rotations")
    if track is not None:
        if track.kind != "quaternion" or track.data.ndim != 3:
            raise ConversionError("joint_rotations must be a (frames, joints, 4) quaternion "
                                  "track")
        if char is not None and track.data.shape[1] != char.body_count - 1:
            raise ConversionError(f"joint_rotations has {track.data.shape[1]} joints but "
                                  f"character {char.name!r} has {char.body_count - 1}")
        return np.asarray(track.data)
    joints = motion.tracks.get("joints")
    if joints is None:
        raise ConversionError("a PARC motion needs joint rotations: a 'joint_rotations' track, "
                              "or a 'joints' track with a character (--character)")
    if char is None:
        raise ConversionError("joint values need a character to become PARC joint rotations; "
                              "pass character=... / --character humanoid.xml")
    dofs = np.asarray(joints.data, dtype=np.float64).reshape(joints.frames, -1)
    if joints.labels and set(char.dof_names) <= set(joints.labels):
        order = [joints.labels.index(name) for name in char.dof_names]
        dofs = dofs[:, order]
        extra = [label for label in joints.labels if label not in set(char.dof_names)]
        if extra:
            lost.append(f"joint values {safepickle.key_names(extra)} (not DOFs of character {char.name!r})")
    elif dofs.shape[1] != char.dof_count:
        raise ConversionError(f"'joints' has {dofs.shape[1]} values per frame but character "
                              f"{char.name!r} has {char.dof_count} DOFs")
    return positive_w(char.dofs_to_quats(dofs))


def _terrain_dict(terrain: Any, lost: list[str]) -> dict[str, Any]:
    if not isinstance(terrain, Terrain):
        raise ConversionError(f"motion.terrain must be a Terrain, not {type(terrain).__name__}")
    dx = float(terrain.dx)
    if terrain.dy is not None and not math.isclose(float(terrain.dy), dx, rel_tol=1e-6):
        lost.append(f"dy = {float(terrain.dy):g} (PARC cells are square; dx = {dx:g} kept)")
    bounds = terrain.bounds
    if bounds is None:
        bounds = np.stack([np.ones(terrain.shape), -np.ones(terrain.shape)], axis=-1)
    return {
        "hf": _float32(terrain.heights, "the terrain heights"),
        "hf_maxmin": _float32(bounds, "the terrain bounds"),
        "min_point": _float32(terrain.origin, "the terrain origin"),
        "dx": (_float32(dx, "the terrain cell size")[()] if terrain.attrs.get("dx_type")
               == "float32" else dx),
    }


def _extras(motion: Motion, char: Character | None, lost: list[str]) -> dict[str, Any]:
    """What PARC has no field for, as plain data for ``misc[EXTRAS_KEY]``.

    Only parts that hold something are made; what is not plain data is added to ``lost``.
    """
    extras: dict[str, Any] = {}
    meta = _plain_entries({k: v for k, v in motion.meta.items() if k not in OWN_META},
                          "metadata", lost)
    if meta:
        extras["meta"] = meta
    tracks: dict[str, Any] = {}
    for name in EXTRA_TRACKS:
        track = motion.tracks.get(name)
        if track is None or (name == "joints" and char is None):
            continue  # joints without a character are refused or reported lost elsewhere
        entry: dict[str, Any] = {}
        if (track.labels is not None and name != "joints"  # joints are the character's DOFs
                and track.labels != _character_labels(name, track, char)
                and (name != "contacts" or track.data.ndim == 2)):
            entry["labels"] = list(track.labels)
        attrs = _plain_entries({k: v for k, v in track.attrs.items() if (name, k, v) !=
                                ("joints", "derived_from", "joint_rotations")},
                               f"track {name!r} attribute", lost)
        if attrs:
            entry["attrs"] = attrs
        if entry:
            tracks[name] = entry
    if tracks:
        extras["tracks"] = tracks
    if motion.terrain is not None:
        attrs = _plain_entries({k: v for k, v in motion.terrain.attrs.items() if k != "dx_type"},
                               "terrain attribute", lost)
        if attrs:
            extras["terrain"] = {"attrs": attrs}
    return extras


def _character_labels(name: str, track: Track, char: Character | None) -> list[str] | None:
    """The labels the reader gives track ``name`` from the character (None: it gives none)."""
    if char is None:
        return None
    if name == "joint_rotations":
        return list(char.joint_labels)
    if name == "contacts":
        return contact_labels(char, track.part_count)
    return None


def _plain_entries(values: dict[Any, Any], what: str, lost: list[str]) -> dict[str, Any]:
    """The entries of ``values`` under text keys that hold plain data; the others go to ``lost``."""
    kept: dict[str, Any] = {}
    for key, value in values.items():
        if type(key) is not str:
            lost.append(f"{what} under a key of type {type(key).__name__} (keys must be text)")
            continue
        problem = _not_plain(value)
        if problem:
            lost.append(f"{what} {key[:40]!r} (not plain data: {problem}; plain data is "
                        "numbers, text, None, numeric NumPy arrays, lists, tuples and dicts)")
        else:
            kept[key] = value
    return kept


def _not_plain(value: Any, depth: int = 0, seen: set[int] | None = None) -> str | None:
    """Why ``value`` is not plain data PARC can load (None when it is).

    Exact types only: a subclass would be pickled under its own class name, which PARC
    cannot import. Each container is checked once (``seen``), so shared parts cost their
    size only.
    """
    if depth > 64:
        return "nested too deeply"
    if value is None or type(value) in (bool, int, float, str):
        return None
    if type(value) is np.ndarray:
        return None if value.dtype.kind in "biufc" else f"array of dtype {value.dtype}"
    if isinstance(value, np.generic):
        return None if value.dtype.kind in "biufc" else f"numpy {type(value).__name__}"
    seen = set() if seen is None else seen
    if id(value) in seen:
        return None
    seen.add(id(value))
    if type(value) in (dict, OrderedDict):
        for key, item in value.items():
            if type(key) not in (str, int, bool):
                return f"dict key of type {type(key).__name__}"
            problem = _not_plain(item, depth + 1, seen)
            if problem:
                return problem
        return None
    if type(value) in (list, tuple):
        for item in value:
            problem = _not_plain(item, depth + 1, seen)
            if problem:
                return problem
        return None
    return f"a {type(value).__module__}.{type(value).__qualname__}"

"""Reading PARC motion pickles (the rules are in :mod:`.ms`'s docstring)."""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, cast

import numpy as np
from numpy.typing import NDArray

from ..._io import read_bytes
from ..._limits import MAX_FPS, MIN_FPS
from ...errors import FormatError, warn
from ...model import Motion, Timeline, Track
from ...model.character import Character, CharacterSource
from ...model.terrain import Terrain
from ...spatial.quaternion import from_exp_map, positive_w
from ..shared.mjcf.character import load_character
from ..shared.pickles import safepickle

MOTION_KEYS = ("root_pos", "root_rot", "joint_rot", "body_contacts", "fps", "loop_mode")
TERRAIN_KEYS = ("hf", "hf_maxmin", "min_point", "dx")
LOOP_MODES = ("CLAMP", "WRAP")
_LEGACY_CORE = ("frames", "contacts", "terrain", "fps", "loop_mode")
#: The misc_data key that keeps what PARC has no field for (see the module docstring).
EXTRAS_KEY = "motionkit"
#: Metadata held in the file's own fields, or naming the file rather than the motion.
OWN_META = ("name", "source_format", "loop_mode", "parc")
#: Tracks written to the file (``joints`` through a character) whose labels and attrs are kept.
EXTRA_TRACKS = ("root", "joint_rotations", "contacts", "joints")
#: Frame rates accepted on reading (Hz).


# ============================================================================ reading


def read(path: str | os.PathLike[str], character: CharacterSource | None = None, misc: bool = True) -> Motion:
    """Read an MS or legacy PARC pickle into a Motion.

    ``character`` (XML path, Skeleton or Character) labels the tracks, adds the DOF
    track and checks shapes against the model; ``misc=False`` skips decoding misc data.
    """
    data = read_bytes(path)  # private bytes: nothing can change them between scan and decode
    outer: Any = safepickle.split_container(data, path, safepickle.MS_KEYS)
    legacy = False
    if outer is None:
        try:  # an MS container holds no globals (protocol 2 spells bytes with two)
            outer = safepickle.loads(data, path, "file",
                                     allowed=safepickle.CONTAINER_GLOBALS)
        except safepickle.RefusedGlobalError:
            outer = safepickle.loads(data, path, "file", allowed=safepickle.MISC_GLOBALS,
                                     lenient=True)
            legacy = True
    char = load_character(character) if character is not None else None
    if _is_container(outer):
        if legacy:
            raise safepickle.UnsafePickleError("an MS container that names globals "
                                               "(PARC's holds none)", path)
        return safepickle.converting(lambda: _read_ms(outer, path, char, misc), path)
    if isinstance(outer, dict) and "frames" in outer:
        return safepickle.converting(lambda: _read_legacy(outer, path, char, misc), path)
    if isinstance(outer, dict) and "terrain" in outer:
        return safepickle.converting(lambda: _read_terrain_only(outer, path, misc), path)
    raise FormatError("not a PARC motion file (neither an MS container nor a legacy dict "
                      "with 'frames' or 'terrain')", path)


def _is_container(outer: Any) -> bool:
    return isinstance(outer, dict) and bool(outer) and all(
        isinstance(k, str) and k in safepickle.MS_KEYS
        and (v is None or isinstance(v, (bytes, safepickle.Blob)))
        for k, v in outer.items())


def _warn(path: Any, message: str) -> None:
    warn(f"{os.fspath(path)}: {message}")


def _array(value: object, field: str, path: Any, ndim: int | None = None) -> NDArray[Any]:
    if not isinstance(value, np.ndarray) or value.dtype.kind not in "biuf":
        raise FormatError(f"{field} must be a numeric array, got a "
                          f"{safepickle.type_name(value)}", path)
    array: NDArray[Any] = value if type(value) is np.ndarray else value.view(np.ndarray)
    if ndim is not None and array.ndim == ndim + 1 and array.shape[0] == 1:
        _warn(path, f"{field} has an extra leading axis of size 1; dropped")
        array = array[0]
    if ndim is not None and array.ndim != ndim:
        raise FormatError(f"{field} must have {ndim} axes, got shape {array.shape}", path)
    return array


def _loop_mode(value: Any, path: Any) -> str:
    if value is None:
        _warn(path, "no loop_mode; using CLAMP")
        return "CLAMP"
    if not isinstance(value, str):
        raise FormatError(f"loop_mode must be CLAMP or WRAP, got a "
                          f"{safepickle.type_name(value)}", path)
    if value.upper() not in LOOP_MODES:
        raise FormatError(f"loop_mode must be CLAMP or WRAP, got {value[:20]!r}", path)
    if value != value.upper():
        _warn(path, f"loop_mode {value!r} is not upper case (PARC would reject it); read as "
                    f"{value.upper()!r}")
    return value.upper()


def _fps(value: Any, path: Any) -> float:
    if value is None:
        _warn(path, "no fps; using 30")
        return 30.0
    rate = _number(value, "fps", path)
    if not MIN_FPS <= rate <= MAX_FPS:
        raise FormatError(f"fps must be between {MIN_FPS:g} and {MAX_FPS:g}, got {rate:g}",
                          path)
    return rate


def _number(value: Any, field: str, path: Any) -> float:
    """A finite real number from decoded data (ints too large for a float refused)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(
            value, (int, float, np.integer, np.floating)):
        raise FormatError(f"{field} must be a number, got a {safepickle.type_name(value)}",
                          path)
    if isinstance(value, int) and abs(value) > 1 << 1000:
        raise FormatError(f"{field} is out of range", path)
    number = float(value)
    if not math.isfinite(number):
        raise FormatError(f"{field} must be finite, got {number}", path)
    return number


def _read_ms(outer: dict[str, Any], path: Any, char: Character | None, misc: bool) -> Motion:
    motion = Motion(meta={"name": Path(path).stem})
    parc: dict[str, Any] = {"container": "ms", "blobs": [k for k in safepickle.MS_KEYS if k in outer
                                                          and outer[k] is not None]}
    motion.meta["parc"] = parc
    blob = outer.get("motion_data")
    if blob is not None:
        values = safepickle.loads(blob, path, "motion_data")
        _motion_from_dict(motion, values, path, char)
        _note_dtype_sharing(parc, "motion_data", values)
    blob = outer.get("terrain_data")
    if blob is not None:
        values = safepickle.loads(blob, path, "terrain_data")
        motion.terrain = _terrain_from_dict(values, path)
        _note_dtype_sharing(parc, "terrain_data", values)
    blob = outer.get("misc_data")
    if blob is not None and misc:
        try:
            values = safepickle.loads(blob, path, "misc_data",
                                      allowed=safepickle.MISC_GLOBALS, lenient=True)
        except safepickle.UnsafePickleError:
            raise
        except FormatError as exc:  # broken, not hostile: PARC too reads on without it
            _warn(path, f"{exc.message}; misc data left out")
            values = None
        if isinstance(values, dict):
            parc["misc"] = _clean_misc(values, path)
            _restore_extras(motion, parc["misc"], path)
        else:
            if values is not None:
                _warn(path, f"misc_data is a {type(values).__name__}, not a dict; left out")
            parc["misc_skipped"] = True
    elif blob is not None:
        parc["misc_skipped"] = True
    return motion


def dtype_groups(values: Mapping[str, object]) -> list[int]:
    """For the arrays among ``values`` (in order), the index of the first array whose dtype
    is the very same object: how a pickler memoised them (a repeat or a new dtype)."""
    firsts: dict[int, int] = {}
    arrays = [value for value in values.values() if isinstance(value, np.ndarray)]
    return [firsts.setdefault(id(array.dtype), index) for index, array in enumerate(arrays)]


def _note_dtype_sharing(parc: dict[str, Any], blob: str, values: Any) -> None:
    """Keep how a blob's writer shared dtype objects, where it differs from sharing one per
    type (what the writer here does unasked), so a rewrite gives the same bytes."""
    if not isinstance(values, dict):
        return
    groups = dtype_groups(values)
    arrays = [value for value in values.values() if isinstance(value, np.ndarray)]
    by_type: dict[str, int] = {}
    usual = [by_type.setdefault(array.dtype.str, index) for index, array in enumerate(arrays)]
    if groups != usual:
        parc.setdefault("dtype_groups", {})[blob] = groups


def _motion_from_dict(motion: Motion, values: Any, path: Any, char: Character | None) -> None:
    if not isinstance(values, dict):
        raise FormatError(f"motion_data must be a dict, got {type(values).__name__}", path)
    missing = [k for k in ("root_pos", "root_rot", "joint_rot") if k not in values]
    if missing:
        raise FormatError(f"motion_data lacks {', '.join(missing)}", path)
    extra = [k for k in values if k not in MOTION_KEYS]
    if extra:
        _warn(path, f"motion_data has extra keys {safepickle.key_names(extra)} (ignored)")
    root_pos = _array(values["root_pos"], "root_pos", path, 2)
    root_rot = _array(values["root_rot"], "root_rot", path, 2)
    joint_rot = _array(values["joint_rot"], "joint_rot", path, 3)
    contacts: NDArray[Any] | None = None
    if values.get("body_contacts") is not None:
        contacts = _array(values["body_contacts"], "body_contacts", path)
        if contacts.ndim == 1:
            _warn(path, "body_contacts is one-dimensional; read as one column")
            contacts = contacts[:, None]
        elif contacts.ndim != 2:
            raise FormatError(f"body_contacts must be (frames, bodies), got {contacts.shape}",
                              path)
    _check_shapes(root_pos, root_rot, joint_rot, contacts, path)
    rate = _fps(values.get("fps"), path)
    motion.meta["loop_mode"] = _loop_mode(values.get("loop_mode"), path)
    cast("dict[str, object]", motion.meta["parc"])["fps"] = values.get("fps")  # _read_ms made it
    _fill_tracks(motion, root_pos, root_rot, joint_rot, contacts, rate, path, char)


def _check_shapes(root_pos: NDArray[Any], root_rot: NDArray[Any], joint_rot: NDArray[Any],
                  contacts: NDArray[Any] | None, path: Any) -> None:
    if root_pos.shape[-1] != 3:
        raise FormatError(f"root_pos must be (frames, 3), got {root_pos.shape}", path)
    for name, array in (("root_rot", root_rot), ("joint_rot", joint_rot)):
        if array.shape[-1] != 4:
            raise FormatError(f"{name}: last dimension must be 4 (x y z w), got "
                              f"{array.shape}", path)
    frames = root_pos.shape[0]
    counts = {"root_rot": root_rot.shape[0], "joint_rot": joint_rot.shape[0]}
    if contacts is not None:
        counts["body_contacts"] = contacts.shape[0]
    for name, count in counts.items():
        if count != frames:
            raise FormatError(f"{name} has {count} frames but root_pos has {frames}", path)


def _fill_tracks(motion: Motion, root_pos: NDArray[Any], root_rot: NDArray[Any],
                 joint_rot: NDArray[Any], contacts: NDArray[Any] | None, rate: float,
                 path: Any, char: Character | None) -> None:
    timeline = Timeline.uniform(rate, root_pos.shape[0])
    motion.add(Track("root", "pose", _root_pose(root_pos, root_rot), timeline))
    joint_labels = body_labels = None
    if char is not None:
        count = char.body_count
        if joint_rot.shape[1] == count:
            _warn(path, "joint_rot has one row per body including the root; root row dropped")
            joint_rot = joint_rot[:, 1:]
        if joint_rot.shape[1] != count - 1:
            raise FormatError(f"joint_rot has {joint_rot.shape[1]} joints but character "
                              f"{char.name!r} has {count - 1} non-root bodies", path)
        joint_labels = char.joint_labels
        if contacts is not None:
            body_labels = contact_labels(char, contacts.shape[1])
            if body_labels is None:
                raise FormatError(f"body_contacts has {contacts.shape[1]} columns but character "
                                  f"{char.name!r} has {count} bodies", path)
        motion.skeleton = char.to_skeleton()
    motion.add(Track("joint_rotations", "quaternion", joint_rot, timeline, joint_labels))
    if contacts is not None:
        motion.add(Track("contacts", "value", contacts, timeline, body_labels))
    if char is not None:
        dofs = char.quats_to_dofs(joint_rot)
        motion.add(Track("joints", "value", dofs, timeline, char.dof_names,
                         attrs={"derived_from": "joint_rotations"}))


def contact_labels(char: Character, width: int) -> list[str] | None:
    """The bodies the ``width`` columns of a contacts array stand for (None: no fit)."""
    if width == char.body_count:
        return list(char.body_names)
    if char.contact_bodies and width == len(char.contact_bodies):
        return list(char.contact_bodies)
    return None


def _root_pose(root_pos: NDArray[Any], root_rot: NDArray[Any]) -> NDArray[Any]:
    """Position and rotation side by side, (frames, 7), in their common float type."""
    dtype = np.result_type(root_pos.dtype, root_rot.dtype, np.float32)
    frames = root_pos.shape[0]
    if all(part.dtype == dtype and part.flags.c_contiguous for part in (root_pos, root_rot)):
        # rows copied as opaque records: several times faster than a strided copy
        pos, rot = f"V{3 * dtype.itemsize}", f"V{4 * dtype.itemsize}"
        rows = np.empty(frames, [("pos", pos), ("rot", rot)])
        rows["pos"] = root_pos.view(pos)[:, 0]
        rows["rot"] = root_rot.view(rot)[:, 0]
        return rows.view(dtype).reshape(frames, 7)
    root = np.empty((frames, 7), dtype)
    root[:, :3] = root_pos
    root[:, 3:] = root_rot
    return root


def _terrain_from_dict(values: Any, path: Any) -> Terrain:
    if not isinstance(values, dict):
        raise FormatError(f"terrain_data must be a dict, got {type(values).__name__}", path)
    missing = [k for k in ("hf", "min_point", "dx") if k not in values]
    if missing:
        raise FormatError(f"terrain_data lacks {', '.join(missing)}", path)
    extra = [k for k in values if k not in (*TERRAIN_KEYS, "dy")]
    if extra:
        _warn(path, f"terrain_data has extra keys {safepickle.key_names(extra)} (ignored)")
    hf = _array(values["hf"], "hf", path, 2)
    origin = _array(values["min_point"], "min_point", path, 1)
    if origin.shape[0] == 3:
        _warn(path, "min_point has 3 numbers; using x and y")
        origin = origin[:2]
    elif origin.shape[0] != 2:
        raise FormatError(f"min_point must hold (x, y), got shape {origin.shape}", path)
    bounds = values.get("hf_maxmin")
    if bounds is not None:
        bounds = _array(bounds, "hf_maxmin", path)
        if bounds.shape == (2,):
            _warn(path, "hf_maxmin has shape (2,); spread over the grid")
            bounds = np.broadcast_to(bounds, (*hf.shape, 2)).copy()
        elif bounds.shape != (*hf.shape, 2):
            raise FormatError(f"hf_maxmin must have shape {(*hf.shape, 2)}, got "
                              f"{bounds.shape}", path)
    dx = values["dx"]
    attrs: dict[str, object] = {"dx_type": "float32"} if isinstance(dx, np.float32) else {}
    dy = values.get("dy")
    try:
        return Terrain(hf, origin, _number(dx, "dx", path),
                       None if dy is None else _number(dy, "dy", path), bounds, attrs)
    except (ValueError, TypeError) as exc:
        raise FormatError(f"terrain_data: {exc}", path) from None


def _clean_misc(values: dict[Any, Any], path: Any) -> dict[str, Any]:
    """Per key: plain data kept, stand-ins made dicts, undecodable keys dropped with a warning.

    One :class:`~.safepickle.PlainWalk` serves all keys, so data shared between keys is
    walked once.
    """
    walk = safepickle.PlainWalk()
    out: dict[str, Any] = {}
    for key, value in values.items():
        if not isinstance(key, str):
            _warn(path, f"a misc key of type {safepickle.type_name(key)} (PARC's keys are "
                        "text); it is left out")
            continue
        try:
            out[key] = walk.plain(value)
        except safepickle.UnknownObject as exc:
            _warn(path, f"misc key {key[:40]!r} holds an object of unknown class "
                        f"{exc.global_name}; it was not decoded and is left out")
        except safepickle.PickleProblem as exc:
            raise safepickle.UnsafePickleError(f"misc_data[{key[:40]!r}]: {exc}",
                                               path) from None
    return out


def _restore_extras(motion: Motion, misc: dict[str, Any], path: Any) -> None:
    """Put back what the writer kept in ``misc[EXTRAS_KEY]``; an entry not of ours stays misc."""
    if EXTRAS_KEY not in misc:
        return
    extras = misc[EXTRAS_KEY]
    problem = _extras_problem(motion, extras)
    if problem:
        _warn(path, f"misc key {EXTRAS_KEY!r} is not motionkit's record of metadata, labels and "
                    f"attrs ({problem}); kept as misc data")
        return
    del misc[EXTRAS_KEY]
    motion.meta.update(extras.get("meta", {}))
    for name, entry in extras.get("tracks", {}).items():
        track = motion.tracks.get(name)
        if track is None:  # 'joints' exists only when read with a character
            continue
        if "labels" in entry:
            track.labels = list(entry["labels"])
        track.attrs.update(entry.get("attrs", {}))
    if motion.terrain is not None:
        motion.terrain.attrs.update(extras.get("terrain", {}).get("attrs", {}))


def _extras_problem(motion: Motion, extras: Any) -> str | None:
    """Why ``extras`` is not a record the writer makes (None when it is one)."""
    def text_keyed(value: Any) -> bool:
        return isinstance(value, dict) and all(type(key) is str for key in value)

    if not text_keyed(extras) or not set(extras) <= {"meta", "tracks", "terrain"}:
        return "not a dict of meta, tracks and terrain"
    meta = extras.get("meta", {})
    if not text_keyed(meta) or set(meta) & set(OWN_META):
        return "bad meta"
    tracks = extras.get("tracks", {})
    if not text_keyed(tracks) or not set(tracks) <= set(EXTRA_TRACKS):
        return "bad tracks"
    for name, entry in tracks.items():
        if not text_keyed(entry) or not set(entry) <= {"labels", "attrs"}:
            return f"bad entry for track {name[:40]!r}"
        if not text_keyed(entry.get("attrs", {})):
            return f"bad attrs for track {name[:40]!r}"
        if "labels" in entry:
            labels, track = entry["labels"], motion.tracks.get(name)
            if not isinstance(labels, list) or any(type(label) is not str for label in labels) \
                    or (track is not None and len(labels) != track.part_count):
                return f"bad labels for track {name[:40]!r}"
    terrain = extras.get("terrain", {})
    if not text_keyed(terrain) or not set(terrain) <= {"attrs"} or not text_keyed(
            terrain.get("attrs", {})):
        return "bad terrain"
    return None


def _read_legacy(values: dict[Any, Any], path: Any, char: Character | None,
                 misc: bool) -> Motion:
    motion = Motion(meta={"name": Path(path).stem})
    parc: dict[str, Any] = {"container": "legacy"}
    motion.meta["parc"] = parc
    frames = _array(values["frames"], "frames", path, 2)
    if frames.shape[1] < 6:
        raise FormatError(f"frames must have at least 6 columns, got {frames.shape}", path)
    rate = _fps(values.get("fps"), path)
    if 29 < rate < 31:
        rate = 30.0  # PARC snaps near-30 rates to 30
    parc["fps"] = int(rate) if rate.is_integer() else rate
    motion.meta["loop_mode"] = _loop_mode(values.get("loop_mode"), path)
    contacts = values.get("contacts")
    if contacts is not None:
        contacts = _array(contacts, "contacts", path, 2)
        if contacts.shape[0] != frames.shape[0]:
            raise FormatError(f"contacts has {contacts.shape[0]} frames but frames has "
                              f"{frames.shape[0]}", path)
    dofs = frames[:, 6:]
    root_pos = frames[:, :3]
    root_rot = positive_w(from_exp_map(frames[:, 3:6])).astype(np.float32)
    if char is not None:
        if dofs.shape[1] != char.dof_count:
            raise FormatError(f"frames carry {dofs.shape[1]} DOFs but character "
                              f"{char.name!r} has {char.dof_count}", path)
        joint_rot = positive_w(char.dofs_to_quats(dofs)).astype(np.float32)
        _fill_tracks(motion, root_pos, root_rot, joint_rot, contacts, rate, path, char)
        motion.tracks["joints"] = motion.tracks["joints"].with_data(dofs)
        motion.tracks["joints"].attrs.pop("derived_from", None)
    else:
        timeline = Timeline.uniform(rate, frames.shape[0])
        motion.add(Track("root", "pose", np.concatenate([root_pos, root_rot], axis=1),
                         timeline))
        motion.add(Track("joints", "value", dofs, timeline))
        if contacts is not None:
            motion.add(Track("contacts", "value", contacts, timeline))
    terrain = values.get("terrain")
    if isinstance(terrain, safepickle.SubTerrain):
        motion.terrain = _legacy_terrain(terrain.state(), path)
    elif terrain is not None:
        raise FormatError(f"legacy terrain is a {type(terrain).__name__}, not a SubTerrain",
                          path)
    if misc:
        rest = {k: v for k, v in values.items() if k not in _LEGACY_CORE}
        parc["misc"] = _clean_misc(rest, path)
    return motion


def _read_terrain_only(values: dict[Any, Any], path: Any, misc: bool) -> Motion:
    """A legacy dict holding a terrain and no motion (PARC/IsaacGym terrain exports)."""
    motion = Motion(meta={"name": Path(path).stem})
    parc: dict[str, Any] = {"container": "legacy-terrain"}
    motion.meta["parc"] = parc
    terrain = values["terrain"]
    if not isinstance(terrain, safepickle.SubTerrain):
        raise FormatError(f"legacy terrain is a {safepickle.type_name(terrain)}, not a SubTerrain",
                          path)
    motion.terrain = _legacy_terrain(terrain.state(), path)
    if misc:
        parc["misc"] = _clean_misc({k: v for k, v in values.items() if k != "terrain"}, path)
    return motion


def _legacy_terrain(state: dict[str, Any], path: Any) -> Terrain:
    hf = _array(state.get("hf"), "terrain.hf", path, 2)
    origin = _array(state.get("min_point"), "terrain.min_point", path, 1)
    dxdy = _array(state.get("dxdy"), "terrain.dxdy", path, 1)
    if dxdy.size == 0 or origin.size < 2:
        raise FormatError("legacy terrain: dxdy or min_point is too short", path)
    bounds = state.get("hf_maxmin")
    if bounds is not None:
        bounds = _array(bounds, "terrain.hf_maxmin", path, 3)
    attrs = {"name": state["terrain_name"]} if isinstance(state.get("terrain_name"), str) else {}
    try:
        return Terrain(hf, origin[:2], _number(dxdy[0], "terrain.dxdy", path),
                       _number(dxdy[1], "terrain.dxdy", path) if dxdy.size > 1 else None,
                       bounds, attrs)
    except (ValueError, TypeError) as exc:
        raise FormatError(f"legacy terrain: {exc}", path) from None


def describe_misc(misc: object) -> dict[str, str]:
    """One short line per misc key (type and shape), for ``motionkit info``."""
    if not isinstance(misc, dict):
        return {}
    return {str(key): _summary(value) for key, value in misc.items()}


def _summary(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return f"array {value.dtype} {list(value.shape)}"
    if isinstance(value, (list, tuple)):
        kinds = sorted({"array" if isinstance(v, np.ndarray) else type(v).__name__
                        for v in value[:100]})
        return f"{type(value).__name__} of {len(value)}" + (f" ({', '.join(kinds)})"
                                                            if kinds else "")
    if isinstance(value, dict):
        return f"dict of {len(value)} keys"
    if isinstance(value, str):
        return f"str ({len(value)} chars)"
    return type(value).__name__

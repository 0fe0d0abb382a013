"""PARC motion pickles: the MS container (``.pkl``) and the legacy single-dict format.

MS container: a pickled dict ``{"motion_data", "terrain_data", "misc_data"}`` whose
values are ``None`` or themselves pickles of plain dicts (see ``specs/parc-ms.md``).
Legacy: one pickled dict with ``frames`` (root position, root exp-map, DOFs),
``contacts``, a pickled ``SubTerrain``, ``fps``, ``loop_mode`` and misc keys.

Model mapping: ``root`` pose track (root_pos + root_rot, x y z w), ``joint_rotations``
(frames, J, 4), ``contacts`` (frames, B), ``joints`` (PARC DOF vectors; legacy frames or
derived through a character), ``motion.terrain``, ``meta["loop_mode"]``, and
``meta["parc"]`` = {container, fps, misc, …}. Everything is decoded by
:mod:`.safepickle`; the writer reproduces PARC's own bytes (:mod:`.writepickle`).

Writing: MS files hold float32, so float64 values are rounded to the nearest float32
(about 7 significant digits: 123456789.123 is stored as 123456792.0, and UTM-sized
coordinates, millions of metres, move by up to half a metre). That is the format's nature
and is done without a word; finite values beyond float32's range (±3.4e38) are refused,
never written as infinities. What PARC has no field for but is plain data —
metadata (except ``name``: a PARC motion is named by its file), track labels a character
does not explain, track and terrain attrs — is kept in ``misc_data["motionkit"]`` as
``{"meta": {…}, "tracks": {name: {"labels": […], "attrs": {…}}}, "terrain": {"attrs": {…}}}``
(parts only when they hold something). PARC's loaders hand misc keys they do not know
through untouched; the reader here puts them back (unless ``misc=False``), stored labels
over those a character would give.
"""

from __future__ import annotations

import math
import os
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..._io import atomic_write, read_bytes
from ...errors import ConversionError, FormatError, MotionkitError, warn
from ...model import Motion, Timeline, Track
from ...model.terrain import Terrain
from ...spatial.quaternion import from_exp_map, positive_w
from ..loss import Holds
from . import safepickle, writepickle
from .character import Character, load_character

#: PARC's own rules say what is lost (``losses``: its fields, float32, integer fps, plain
#: data as pickles hold it), so the generic declaration leaves values to them.
HOLDS = Holds(namespace="parc", plain=lambda key, value: True)
WRITES = (Motion, Terrain)

MS_KEYS = ("motion_data", "terrain_data", "misc_data")
MOTION_KEYS = ("root_pos", "root_rot", "joint_rot", "body_contacts", "fps", "loop_mode")
TERRAIN_KEYS = ("hf", "hf_maxmin", "min_point", "dx")
LOOP_MODES = ("CLAMP", "WRAP")
_LEGACY_CORE = ("frames", "contacts", "terrain", "fps", "loop_mode")
#: The misc_data key that keeps what PARC has no field for (see the module docstring).
EXTRAS_KEY = "motionkit"
#: Metadata held in the file's own fields, or naming the file rather than the motion.
_OWN_META = ("name", "source_format", "loop_mode", "parc")
#: Tracks written to the file (``joints`` through a character) whose labels and attrs are kept.
_EXTRA_TRACKS = ("root", "joint_rotations", "contacts", "joints")
#: Frame rates accepted on reading (Hz).
MIN_FPS = 1e-3
MAX_FPS = 1e6


def sniff(head: bytes) -> bool:
    """A pickle (protocol 2+) that looks like an MS container or a legacy PARC dict."""
    if not head.startswith(b"\x80") or len(head) < 2 or head[1] < 2:
        return False
    start = head[:256]
    return (any(key.encode() in start for key in MS_KEYS) or b"frames" in head)


# ============================================================================ reading


def read(path: str | os.PathLike[str], character: Any = None, misc: bool = True) -> Motion:
    """Read an MS or legacy PARC pickle into a Motion.

    ``character`` (XML path, Skeleton or Character) labels the tracks, adds the DOF
    track and checks shapes against the model; ``misc=False`` skips decoding misc data.
    """
    data = read_bytes(path)  # private bytes: nothing can change them between scan and decode
    outer: Any = safepickle.split_container(data, path, MS_KEYS)
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
        return _guarded(lambda: _read_ms(outer, path, char, misc), path)
    if isinstance(outer, dict) and "frames" in outer:
        return _guarded(lambda: _read_legacy(outer, path, char, misc), path)
    raise FormatError("not a PARC motion file (neither an MS container nor a legacy dict "
                      "with 'frames')", path)


def _is_container(outer: Any) -> bool:
    return isinstance(outer, dict) and bool(outer) and all(
        isinstance(k, str) and k in MS_KEYS
        and (v is None or isinstance(v, (bytes, safepickle.Blob)))
        for k, v in outer.items())


def _guarded(action: Callable[[], Motion], path: Any) -> Motion:
    """Run a conversion of decoded data; whatever it trips over becomes a FormatError."""
    try:
        return action()
    except safepickle.PickleProblem as exc:
        raise safepickle.UnsafePickleError(str(exc), path) from None
    except MotionkitError:
        raise
    except RecursionError:
        raise FormatError("data nested too deeply", path) from None
    except MemoryError:
        raise FormatError("data needs more memory than available", path) from None
    except safepickle.DATA_ERRORS as exc:
        raise FormatError(f"unreadable data ({safepickle.describe_error(exc)})",
                          path) from None


def _warn(path: Any, message: str) -> None:
    warn(f"{os.fspath(path)}: {message}")


def _array(value: Any, field: str, path: Any, ndim: int | None = None) -> NDArray[Any]:
    if not isinstance(value, np.ndarray) or value.dtype.kind not in "biuf":
        raise FormatError(f"{field} must be a numeric array, got a "
                          f"{safepickle.type_name(value)}", path)
    if type(value) is not np.ndarray:
        value = value.view(np.ndarray)
    if ndim is not None and value.ndim == ndim + 1 and value.shape[0] == 1:
        _warn(path, f"{field} has an extra leading axis of size 1; dropped")
        value = value[0]
    if ndim is not None and value.ndim != ndim:
        raise FormatError(f"{field} must have {ndim} axes, got shape {value.shape}", path)
    return value


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


def _names(keys: list[Any]) -> str:
    """Decoded dict keys for a message: text cut short, other keys by type, at most 10."""
    shown = [k[:40] if isinstance(k, str) else f"<{safepickle.type_name(k)}>"
             for k in keys[:10]]
    return ", ".join(shown) + (f" and {len(keys) - 10} more" if len(keys) > 10 else "")


def _read_ms(outer: dict[str, Any], path: Any, char: Character | None, misc: bool) -> Motion:
    motion = Motion(meta={"name": Path(path).stem, "source_format": "parc"})
    parc: dict[str, Any] = {"container": "ms", "blobs": [k for k in MS_KEYS if k in outer
                                                          and outer[k] is not None]}
    motion.meta["parc"] = parc
    blob = outer.get("motion_data")
    if blob is not None:
        values = safepickle.loads(blob, path, "motion_data")
        _motion_from_dict(motion, values, path, char)
    blob = outer.get("terrain_data")
    if blob is not None:
        values = safepickle.loads(blob, path, "terrain_data")
        motion.terrain = _terrain_from_dict(values, path)
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


def _motion_from_dict(motion: Motion, values: Any, path: Any, char: Character | None) -> None:
    if not isinstance(values, dict):
        raise FormatError(f"motion_data must be a dict, got {type(values).__name__}", path)
    missing = [k for k in ("root_pos", "root_rot", "joint_rot") if k not in values]
    if missing:
        raise FormatError(f"motion_data lacks {', '.join(missing)}", path)
    extra = [k for k in values if k not in MOTION_KEYS]
    if extra:
        _warn(path, f"motion_data has extra keys {_names(extra)} (ignored)")
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
    motion.meta["parc"]["fps"] = values.get("fps")
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
            body_labels = _contact_labels(char, contacts.shape[1])
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


def _contact_labels(char: Character, width: int) -> list[str] | None:
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
        _warn(path, f"terrain_data has extra keys {_names(extra)} (ignored)")
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
    attrs = {"dx_type": "float32"} if isinstance(dx, np.float32) else {}
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
    if not text_keyed(meta) or set(meta) & set(_OWN_META):
        return "bad meta"
    tracks = extras.get("tracks", {})
    if not text_keyed(tracks) or not set(tracks) <= set(_EXTRA_TRACKS):
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
    motion = Motion(meta={"name": Path(path).stem, "source_format": "parc"})
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


def describe_misc(misc: Any) -> dict[str, str]:
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


# ============================================================================ writing


def losses(obj: Motion | Terrain, character: Any = None) -> list[str]:
    """What a PARC file cannot hold of ``obj`` (the rules of :func:`write`)."""
    lost: list[str] = []
    encode(_as_motion(obj), character, lost)
    return lost


def write(path: str | os.PathLike[str], obj: Motion | Terrain, character: Any = None) -> None:
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


def encode(motion: Motion, character: Any = None, lost: list[str] | None = None) -> bytes:
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
                                      parc.get("blobs", MS_KEYS))
    container = {
        "motion_data": writepickle.dumps(motion_dict) if motion_dict is not None else None,
        "terrain_data": writepickle.dumps(terrain_dict) if terrain_dict is not None else None,
        "misc_data": writepickle.dumps(misc) if misc_present else None,
    }
    return writepickle.dumps(container)


def _writer_character(motion: Motion, character: Any) -> Character | None:
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
    if timeline.start != 0.0:
        lost.append(f"start time {timeline.start:g} s (PARC motions start at 0)")
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
            lost.append(f"joint values {_names(extra)} (not DOFs of character {char.name!r})")
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
    meta = _plain_entries({k: v for k, v in motion.meta.items() if k not in _OWN_META},
                          "metadata", lost)
    if meta:
        extras["meta"] = meta
    tracks: dict[str, Any] = {}
    for name in _EXTRA_TRACKS:
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
        return _contact_labels(char, track.part_count)
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

"""MimicKit motion pickles: ``{"loop_mode": 0|1, "fps": rate, "frames": rows}``.

A row is the root position (3), the root rotation as an exponential map (3) and the
character's DOF vector (hinge angles, and a 3-vector exp-map per three-hinge body, in the
depth-first body order of its MJCF) — PARC's legacy layout, but MimicKit stores the loop
mode as an int and the frames as a list of lists of floats.

Model mapping: ``root`` pose (exp-map made an x y z w quaternion with w >= 0), ``joints``
(the DOF columns; labelled, with ``joint_rotations`` and the skeleton, when a character is
given), ``meta["loop_mode"]`` ``"CLAMP"``/``"WRAP"`` and ``meta["mimickit"]`` = {protocol,
fps (as stored), fps_type, frames_container}. The writer reproduces MimicKit's own bytes:
the same key order, a list of lists, and the protocol and fps type the reader kept, so an
unchanged motion is rewritten byte for byte (the root exp-map read from the file is reused
while the root quaternions still equal it exactly; see :func:`_root_exp_map`).
"""

from __future__ import annotations

import math
import os
import pickle
import weakref
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..._io import atomic_write, read_bytes
from ..._limits import MAX_FPS, MIN_FPS
from ...errors import ConversionError, FormatError, format_hint, warn
from ...model import Motion, Timeline, Track
from ...model.character import Character, CharacterSource
from ...spatial.quaternion import from_exp_map, positive_w, to_exp_map
from ..loss import Holds, tracks
from ..shared.mjcf.character import load_character
from ..shared.pickles import safepickle

#: The keys MimicKit's loader reads (and its saver writes, in this order).
KEYS = ("loop_mode", "fps", "frames")
LOOP_MODES = ("CLAMP", "WRAP")  # index = MimicKit's int value
#: Frame rates accepted on reading (Hz).
#: Protocols the writer uses (MimicKit's files are 3 or 4; 4 by default).
PROTOCOLS = (2, 3, 4, 5)
DEFAULT_PROTOCOL = 4
LAYOUT = "mimickit-dof"
#: The tracks a file holds: the root, the DOF columns, and joint rotations through a character.
HELD = tracks(root="pose", joints="value", joint_rotations="quaternion")
_INT_OPCODES = frozenset(b"KJM\x8a")  # BININT1, BININT, BININT2, LONG1
_MEMO_WIDTHS = {0x94: 0, 0x71: 1, 0x72: 4}  # MEMOIZE, BINPUT, LONG_BINPUT
_NUMBERS = (float, int, np.floating, np.integer)
#: Where a module name starts after GLOBAL, SHORT_BINUNICODE and BINUNICODE opcodes.
_GLOBAL_NAME_AT = {ord("c"): 1, 0x8C: 2, ord("X"): 5}


def holds(character: CharacterSource | None = None) -> Holds:
    """Root pose, the DOF columns, loop mode and fps; the skeleton only by reference (the
    ``character`` the writer is given)."""
    return Holds(tracks=HELD,
                 skeleton=character is not None, terrain=False, stamps=False, start=False,
                 one_timeline=True, attrs=False, ns_stamps=False, frame_numbers=False, position_only=False,
                 meta=frozenset({"loop_mode"}), namespace="mimickit")


def sniff(head: bytes) -> bool:
    """A pickle (protocol 2+) whose ``loop_mode`` key is followed by an int (PARC's is text)."""
    if len(head) < 2 or head[0] != 0x80 or head[1] < 2:
        return False
    return any(_int_follows(head, at + len(b"loop_mode")) for at in _finds(head, b"loop_mode"))


def _finds(head: bytes, word: bytes) -> list[int]:
    found: list[int] = []
    at = head.find(word)
    while at >= 0 and len(found) < 16:
        found.append(at)
        at = head.find(word, at + 1)
    return found


def _int_follows(head: bytes, pos: int) -> bool:
    """An int opcode, or the start of a NumPy scalar (a global from ``numpy``), at ``pos``
    (memo opcodes skipped)."""
    while pos < len(head) and head[pos] in _MEMO_WIDTHS:
        pos += 1 + _MEMO_WIDTHS[head[pos]]
    if pos >= len(head):
        return False
    opcode = head[pos]
    skip = _GLOBAL_NAME_AT.get(opcode)
    return opcode in _INT_OPCODES or (
        skip is not None and head[pos + skip:pos + skip + 5] == b"numpy")


# ============================================================================ reading


def read(path: str | os.PathLike[str], character: CharacterSource | None = None) -> Motion:
    """Read a MimicKit motion pickle.

    ``character`` (MJCF path, Skeleton or Character) checks the row width, labels the DOF
    columns, adds ``joint_rotations`` and sets the skeleton.
    """
    data = read_bytes(path)
    values = decode(data, path)
    char = load_character(character) if character is not None else None
    return safepickle.converting(lambda: _motion(values, data, path, char), path)


def decode(data: bytes, path: str | os.PathLike[str]) -> dict[object, object]:
    """The file's dict, decoded by safepickle (globals only for numpy/torch scalars)."""
    if safepickle.split_container(data, path, safepickle.MS_KEYS) is not None:
        raise FormatError("a PARC MS container, not a MimicKit motion; read it with "
                          f"{format_hint('parc')}", path)
    try:
        values = safepickle.loads(data, path, "file", allowed={})
    except safepickle.RefusedGlobalError:
        values = safepickle.loads(data, path, "file", allowed=safepickle.MISC_GLOBALS,
                                  lenient=True)
    if not isinstance(values, dict):
        raise FormatError(f"not a MimicKit motion (the pickle holds a "
                          f"{safepickle.type_name(values)}, not a dict)", path)
    if "frames" not in values:
        hint = (" (this looks like a GMR robot motion: format='gmr')"
                if {"root_pos", "root_rot", "dof_pos"} <= set(values) else "")
        raise FormatError(f"not a MimicKit motion: no 'frames' key{hint}", path)
    return values


def _motion(values: dict[Any, Any], data: bytes, path: Any, char: Character | None) -> Motion:
    loop = _loop_mode(values, path)
    rate, fps, fps_type = _fps(values.get("fps"), path)
    frames, container = frame_array(values["frames"], len(data), path)
    extra = [k for k in values if k not in KEYS]
    if extra:
        warn(f"{os.fspath(path)}: keys {safepickle.key_names(extra)} ignored (MimicKit reads only "
             "loop_mode, fps and frames)")
    timeline = Timeline.uniform(rate, frames.shape[0])
    exp_map = np.ascontiguousarray(frames[:, 3:6])
    root = np.empty((frames.shape[0], 7))
    root[:, :3] = frames[:, :3]
    root[:, 3:] = positive_w(from_exp_map(exp_map))
    _remember(root, exp_map)
    dofs = np.ascontiguousarray(frames[:, 6:])
    motion = Motion(meta={"name": Path(path).stem, "loop_mode": loop,
                          "mimickit": {"protocol": data[1] if data[:1] == b"\x80" else 0,
                                       "fps": fps, "fps_type": fps_type,
                                       "frames_container": container}})
    motion.add(Track("root", "pose", root, timeline))
    if char is None:
        motion.add(Track("joints", "value", dofs, timeline, attrs={"layout": LAYOUT}))
        return motion
    if dofs.shape[1] != char.dof_count:
        raise FormatError(f"frames carry {dofs.shape[1]} DOFs (width {frames.shape[1]}) but "
                          f"character {char.name!r} has {char.dof_count} (width "
                          f"{6 + char.dof_count})", path)
    motion.add(Track("joints", "value", dofs, timeline, char.dof_names, {"layout": LAYOUT}))
    motion.add(Track("joint_rotations", "quaternion", positive_w(char.dofs_to_quats(dofs)),
                     timeline, char.joint_labels, {"derived_from": "joints"}))
    motion.skeleton = char.to_skeleton()
    return motion


def _loop_mode(values: dict[Any, Any], path: Any) -> str:
    parc = f"this is a PARC legacy motion; read it with {format_hint('parc')}"
    if "loop_mode" not in values:
        raise FormatError(f"no loop_mode (MimicKit requires it; if {parc})", path)
    value = values["loop_mode"]
    if isinstance(value, str):
        raise FormatError(f"loop_mode is the text {value[:20]!r}, not MimicKit's int: {parc}",
                          path)
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise FormatError(f"loop_mode must be the int 0 (CLAMP) or 1 (WRAP), got a "
                          f"{safepickle.type_name(value)}", path)
    if value not in (0, 1):
        raise FormatError(f"loop_mode must be 0 (CLAMP) or 1 (WRAP), got "
                          f"{int(value) if abs(value) < 10**9 else 'a huge int'}", path)
    return LOOP_MODES[int(value)]


def _fps(value: Any, path: Any) -> tuple[float, int | float, str]:
    """The rate, the value to keep (int or float) and the type it was stored as."""
    if isinstance(value, np.ndarray) and value.shape == () and value.dtype.kind in "iuf":
        kept, kind = value[()].item(), "array"  # a 0-d tensor or array
    elif isinstance(value, np.generic) and value.dtype.kind in "iuf":
        kept, kind = value.item(), "numpy"
    elif type(value) in (int, float):
        kept, kind = value, type(value).__name__
    else:
        raise FormatError(f"fps must be a number, got a {safepickle.type_name(value)}", path)
    if isinstance(kept, int) and abs(kept) > 1 << 1000:
        raise FormatError("fps is out of range", path)
    rate = float(kept)
    if not (math.isfinite(rate) and MIN_FPS <= rate <= MAX_FPS):
        raise FormatError(f"fps must be between {MIN_FPS:g} and {MAX_FPS:g}, got {rate:g}", path)
    return rate, kept, kind


def frame_array(frames: object, size: int, path: str | os.PathLike[str]
                ) -> tuple[NDArray[np.float64], str]:
    """``frames`` (list of rows, or a 2-D array) as float64 ``(N, W)`` and its container.

    The structure is checked before anything is built: every row a flat sequence of
    numbers of one width >= 6, and no more numbers than a file of ``size`` bytes can hold
    (rows shared by reference would otherwise multiply the work).
    """
    if isinstance(frames, np.ndarray):
        array = _numeric(frames, "frames", path)
        if array.ndim == 3 and array.shape[0] == 1:
            warn(f"{os.fspath(path)}: frames has an extra leading axis of size 1 (MimicKit "
                 "would take it for the frame count); dropped")
            array = array[0]
        if array.ndim != 2:
            raise FormatError(f"frames must be (frames, width), got shape {array.shape}", path)
        container = "ndarray"
    elif type(frames) is list or type(frames) is tuple:
        array = _rows(frames, size, path)
        container = "list"
    else:
        raise FormatError(f"frames must be a list of rows or an array, got a "
                          f"{safepickle.type_name(frames)}", path)
    if array.shape[0] < 1:
        raise FormatError("frames is empty", path)
    if array.shape[1] < 6:
        raise FormatError(f"rows must hold at least 6 numbers (root position and exp-map), "
                          f"got {array.shape[1]}", path)
    array = np.array(array, dtype=np.float64)
    finite = np.isfinite(array)
    if not finite.all():
        row, column = (int(i) for i in np.argwhere(~finite)[0])
        raise FormatError(f"frames hold a non-finite number (row {row}, column {column})", path)
    return array, container


def _numeric(array: NDArray[Any], what: str, path: Any) -> NDArray[Any]:
    if array.dtype.kind not in "iuf":
        raise FormatError(f"{what} must hold numbers, got an array of dtype "
                          f"{str(array.dtype)[:20]}", path)
    return array if type(array) is np.ndarray else array.view(np.ndarray)


def _rows(frames: list[Any] | tuple[Any, ...], size: int, path: Any) -> NDArray[Any]:
    if not frames:
        raise FormatError("frames is empty", path)
    first = frames[0]
    width = len(first) if type(first) in (list, tuple) or isinstance(first, np.ndarray) else -1
    if width < 0:
        raise FormatError(f"frames row 0 is a {safepickle.type_name(first)}, not a row of "
                          "numbers", path)
    if len(frames) * width > size:
        raise FormatError(f"frames declare {len(frames)} rows of {width} numbers, more than a "
                          f"file of {size} bytes holds (rows shared by reference)", path)
    for index, row in enumerate(frames):
        if type(row) in (list, tuple):
            if len(row) != width:
                raise FormatError(f"frames row {index} has {len(row)} numbers, row 0 has {width}",
                                  path)
            odd = [kind for kind in {type(value) for value in row} - {float, int}
                   if kind in (bool, np.bool_) or not issubclass(kind, _NUMBERS)]
            if odd:
                raise FormatError(f"frames row {index} holds a {odd[0].__name__[:40]}, not a "
                                  "number", path)
        elif isinstance(row, np.ndarray):
            _numeric(row, f"frames row {index}", path)
            if row.shape != (width,):
                raise FormatError(f"frames row {index} has shape {row.shape}, row 0 has "
                                  f"({width},)", path)
        else:
            raise FormatError(f"frames row {index} is a {safepickle.type_name(row)}, not a row "
                              "of numbers", path)
    return np.array(frames, dtype=np.float64).reshape(len(frames), width)


# ============================================================================ the root exp-map
#: The exp-maps read from files, per root array (by identity while the array lives), so
#: that an unchanged motion is written back with the very numbers it was read from
#: (exp-map -> quaternion -> exp-map changes the last bits).
_READ_EXP_MAPS: dict[int, tuple[weakref.ref[NDArray[Any]], NDArray[np.float64]]] = {}


def _remember(root: NDArray[Any], exp_map: NDArray[np.float64]) -> None:
    key = id(root)

    def forget(_ref: object, key: int = key) -> None:
        _READ_EXP_MAPS.pop(key, None)

    _READ_EXP_MAPS[key] = (weakref.ref(root, forget), exp_map)


def _root_exp_map(root: NDArray[Any]) -> NDArray[np.float64]:
    """The root rotations as exp-maps: the numbers read from the file while the quaternions
    are still exactly the ones read, else computed (angle in [0, pi])."""
    found = _READ_EXP_MAPS.get(id(root))
    quats = np.asarray(root[:, 3:7], dtype=np.float64)
    if found is not None and found[0]() is root and found[1].shape[0] == root.shape[0] \
            and np.array_equal(positive_w(from_exp_map(found[1])), quats):
        return found[1]
    return np.asarray(to_exp_map(quats))


# ============================================================================ writing


def losses(obj: Motion, character: CharacterSource | None = None) -> list[str]:
    """What a MimicKit file cannot hold beyond the declaration: labels it does not
    explain, joint values not in its DOF layout, joint rotations it would not write."""
    char = load_character(character) if character is not None else None
    lost: list[str] = []
    expected = {"joints": char.dof_names if char else None,
                "joint_rotations": char.joint_labels if char else None}
    for name, track in obj.tracks.items():
        if name not in HELD:
            continue  # the registry names the tracks the file does not hold
        reordered = (name == "joints" and char is not None and track.labels is not None
                     and set(char.dof_names) <= set(track.labels))
        if track.labels is not None and track.labels != expected.get(name) and not reordered:
            lost.append(f"the labels of track {name!r}")
        if reordered and char is not None and track.labels is not None:
            extra = [label for label in track.labels if label not in set(char.dof_names)]
            if extra:
                lost.append(f"joint values {', '.join(extra[:5])} (not DOFs of the character)")
        if (name == "joints" and char is None and track.attrs.get("layout") != "mimickit-dof"
                and obj.meta.get("source_format") not in ("parc", "mimickit")):  # PARC's too
            lost.append("the meaning of track 'joints' (not in MimicKit's DOF layout: give "
                        "character=... to lay them out)")
    if rotations_beside_joints(obj):
        lost.append("track 'joint_rotations' (the DOFs are written from 'joints')")
    return lost


def rotations_beside_joints(obj: Motion) -> bool:
    """True when a motion has joint values and joint rotations not derived from them: a
    writer of the values alone (MimicKit, GMR) would drop the rotations."""
    rotations = obj.tracks.get("joint_rotations")
    return ("joints" in obj.tracks and rotations is not None
            and rotations.attrs.get("derived_from") != "joints")


def write(path: str | os.PathLike[str], obj: Motion, character: CharacterSource | None = None) -> None:
    """Write a MimicKit motion: ``{"loop_mode", "fps", "frames"}`` as MimicKit saves it.

    The DOF columns come from ``joints`` (ordered by the ``character``'s DOF names when
    labelled) or from ``joint_rotations`` through the ``character``. Needs 2 frames or
    more (MimicKit divides by the length, (N - 1) / fps).
    """
    with atomic_write(path, "wb") as handle:
        handle.write(encode(obj, character))


def encode(motion: Motion, character: CharacterSource | None = None) -> bytes:
    """The bytes of the MimicKit file for ``motion`` (the rules of :func:`write`)."""
    char = load_character(character) if character is not None else None
    root = motion.tracks["root"]
    if root.frames < 2:
        raise ConversionError(f"a MimicKit motion needs 2 frames or more, this one has "
                              f"{root.frames} (MimicKit's length is (N - 1) / fps)")
    for name, track in motion.tracks.items():
        if track.frames != root.frames:
            raise ConversionError(f"track {name!r} has {track.frames} frames but the root has "
                                  f"{root.frames}; resample it onto the root's frames first")
    data = np.asarray(root.data, dtype=np.float64)
    frames = np.concatenate([data[:, :3], _root_exp_map(root.data), _dofs(motion, char)],
                            axis=1)
    own = motion.meta.get("mimickit")
    own = own if isinstance(own, dict) else {}
    loop = str(motion.meta.get("loop_mode") or "CLAMP").upper()
    if loop not in LOOP_MODES:
        raise ConversionError(f"loop mode {loop[:20]!r}: MimicKit knows CLAMP and WRAP")
    protocol = own.get("protocol")
    values = {"loop_mode": LOOP_MODES.index(loop), "fps": _writer_fps(root.timeline, own),
              "frames": frames.tolist()}
    return pickle.dumps(values, protocol=protocol if protocol in PROTOCOLS
                        else DEFAULT_PROTOCOL)


def _writer_fps(timeline: Timeline, own: dict[str, Any]) -> int | float:
    """The stored fps when it still gives the rate (its int or float kept), else the rate:
    an int when whole."""
    if timeline.is_uniform and timeline.rate is not None:
        rate = timeline.rate
    else:
        rate = (timeline.count - 1) / max(timeline.duration, 1e-12)
    stored = own.get("fps")
    if isinstance(stored, (int, float)) and not isinstance(stored, bool) \
            and own.get("fps_type") in ("int", "float") and float(stored) == rate:
        return int(stored) if own["fps_type"] == "int" else float(stored)
    return int(rate) if float(rate).is_integer() else float(rate)


def _dofs(motion: Motion, char: Character | None) -> NDArray[np.float64]:
    frames = motion.tracks["root"].frames
    joints = motion.tracks.get("joints")
    if joints is not None:
        dofs = np.asarray(joints.data, dtype=np.float64).reshape(frames, -1)
        if char is None:
            return dofs
        if joints.labels and set(char.dof_names) <= set(joints.labels):
            return dofs[:, [joints.labels.index(name) for name in char.dof_names]]
        if dofs.shape[1] != char.dof_count:
            raise ConversionError(f"'joints' has {dofs.shape[1]} values per frame but character "
                                  f"{char.name!r} has {char.dof_count} DOFs")
        return dofs
    rotations = motion.tracks.get("joint_rotations")
    if rotations is not None:
        if char is None:
            raise ConversionError("joint rotations need a character to become MimicKit DOFs; "
                                  "pass character=... (--character humanoid.xml)")
        return np.asarray(char.quats_to_dofs(rotations.data))
    if char is not None and char.dof_count:
        raise ConversionError(f"character {char.name!r} has {char.dof_count} DOFs but the "
                              "motion has no 'joints' or 'joint_rotations' track")
    return np.zeros((frames, 0))


def describe(obj: Motion) -> list[str]:
    """How the source file stored its loop mode, fps and frames (``motionkit info``)."""
    own = obj.meta.get("mimickit")
    if not isinstance(own, dict):
        return []
    return [f"mimickit: loop mode {obj.meta.get('loop_mode')}, fps {own.get('fps')!r} "
            f"({own.get('fps_type')}), frames as {own.get('frames_container')}, pickle "
            f"protocol {own.get('protocol')}"]

"""robomimic and Isaac Lab episode files (HDF5): one Motion per demo.

Both keep demos as ``data/demo_N`` groups, sorted here by N (``demo_10`` after ``demo_9``,
as robomimic sorts them). Every array under a demo whose first axis is the demo's length
becomes a track named by its path inside the demo (``actions``, ``obs/robot0_eef_pos``,
``states/articulation/robot/root_pose``); the joint positions (robomimic's
``obs/robot0_joint_pos``, Isaac Lab's first articulation's ``joint_position``) become the
``joints`` track. Neither layout stores joint names: they are ``joint_names=[...]`` or
``joint_0 …`` (said in ``meta["hdf5"]["joint_names"]``). Neither stores a frame rate:
it is ``fps=...``, else robosuite's ``control_freq`` or Isaac Lab's ``1 / (dt ×
decimation)`` where the file has them, else the frames are numbered only.

Quaternions: robosuite's are x-y-z-w already; Isaac Lab's (``root_pose`` position +
quaternion, ``*quat`` observations) are w-x-y-z and are reordered to motionkit's x-y-z-w.
External and soft links (on every demo and every member), virtual datasets and external
storage are refused: a file never makes motionkit open another. Every array read, summed
over the demos of one read, is charged to one byte budget tied to the file's size
(:func:`motionkit._limits.array_budget`): a few kilobytes of gzip never become gigabytes.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import h5py
import numpy as np
from numpy.typing import NDArray

from ..._limits import DATASET_BYTES_CAP, Budget, array_budget
from ...errors import FormatError, warn
from ...model import Motion, Timeline, Track, TrackKind

PathLike = str | os.PathLike[str]
#: The HDF5 signature (at offset 0; files with a user block have it later: not read here).
SIGNATURE = b"\x89HDF\r\n\x1a\n"
#: Deepest group nesting read (Isaac Lab's deepest is states/articulation/<name>/<key>).
MAX_DEPTH = 16
_DEMO = re.compile(r"demo_(\d+)")


def sniff(head: bytes) -> bool:
    return head.startswith(SIGNATURE)


def describe(obj: object) -> list[str]:
    """``info`` lines: layout, which demo of how many, where rate and joint names came from."""
    own = obj.meta.get("hdf5") if isinstance(obj, Motion) else None
    if not isinstance(own, dict):
        return []
    lines = [f"{own.get('layout')} file: {own.get('demo')} of {own.get('demos')} demos "
             "(demo=N reads another)",
             f"rate from: {own.get('fps')}", f"joint names: {own.get('joint_names')}"]
    if own.get("not_read"):
        lines.append("not read (listed only): " + ", ".join(
            f"{key} {shape}" for key, shape in own["not_read"].items()))
    return lines


@dataclass
class _File:
    """A checked episode file: its layout, demos in order, and its metadata."""

    layout: str  # "robomimic" or "isaaclab"
    demos: list[str]
    env_args: dict[str, object]
    masks: dict[str, list[str]]


def read(path: PathLike, *, demo: int | None = None, mask: str | None = None,
         joint_names: Sequence[str] | None = None, fps: float | None = None) -> Motion:
    """One demo: ``demo`` N (``data/demo_N``), else the first (with a warning naming how
    many there are; :func:`read_demos` gives them all). ``mask`` limits the choice to
    robomimic's filter ``mask/<name>``."""
    with _open(path) as handle:
        info = _inspect(handle, path)
        names = _selected(info, mask, path)
        if demo is None:
            if len(names) > 1:
                warn(f"{os.fspath(path)}: the file has {len(names)} demos; read {names[0]} "
                     "(demo=N reads another, motionkit.formats.hdf5.episodes.read_demos all)")
            chosen = names[0]
        else:
            chosen = f"demo_{demo}"
            if chosen not in names:
                raise FormatError(f"no {chosen}" + (f" in mask {mask!r}" if mask else "")
                                  + f" (demos: {_listing(names)})", path)
        return _demo(handle, info, chosen, path, joint_names, _told_rate(info, fps, path),
                     _budget(path))


def read_demos(path: PathLike, *, mask: str | None = None,
               joint_names: Sequence[str] | None = None, fps: float | None = None) -> list[Motion]:
    """Every demo (or those of robomimic's ``mask``), sorted by number, one Motion each."""
    with _open(path) as handle:
        info = _inspect(handle, path)
        rate = _told_rate(info, fps, path)
        budget = _budget(path)
        return [_demo(handle, info, name, path, joint_names, rate, budget)
                for name in _selected(info, mask, path)]


def _open(path: PathLike) -> h5py.File:
    try:
        return h5py.File(os.fspath(path), "r", locking=False)
    except FileNotFoundError:
        raise FormatError("no such file", path) from None
    except OSError as exc:
        raise FormatError(f"is not a readable HDF5 file ({exc})", path) from None


def _budget(path: PathLike) -> Budget:
    """One read's budget of array bytes (float64 after conversion), over all its demos."""
    return array_budget(path, os.path.getsize(path), cap=DATASET_BYTES_CAP)


def _listing(names: list[str]) -> str:
    return ", ".join(names[:8]) + (f" … ({len(names)})" if len(names) > 8 else "")


def _inspect(handle: h5py.File, path: PathLike) -> _File:
    data = _member(handle, "data", path)
    if not isinstance(data, h5py.Group):
        raise FormatError("has no group 'data' (robomimic and Isaac Lab keep demos there)", path)
    numbered = []
    for name in data:
        match = _DEMO.fullmatch(name)
        if match is None:
            raise FormatError(f"data/{name} is not named demo_N", path)
        numbered.append((int(match.group(1)), name))
    if not numbered:
        raise FormatError("holds no demos (data/demo_N)", path)
    demos = [name for _, name in sorted(numbered)]
    env_args = _env_args(data, path)
    groups = [_member(data, name, path) for name in demos]  # every demo: links refused
    first = groups[0]
    states = _member(first, "states", path) if isinstance(first, h5py.Group) else None
    layout = "isaaclab" if isinstance(states, h5py.Group) else "robomimic"
    masks: dict[str, list[str]] = {}
    group = _member(handle, "mask", path)
    if isinstance(group, h5py.Group):
        for name in group:
            values = _member(group, name, path)
            if isinstance(values, h5py.Dataset):
                masks[name] = [v.decode() if isinstance(v, bytes) else str(v)
                               for v in np.asarray(values[()]).reshape(-1)]
    return _File(layout, demos, env_args, masks)


def _env_args(data: h5py.Group, path: PathLike) -> dict[str, object]:
    text = data.attrs.get("env_args")
    if text is None:
        return {}
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    try:
        value = json.loads(str(text))
    except ValueError:
        raise FormatError("data attribute env_args is not JSON", path) from None
    return value if isinstance(value, dict) else {}


def _selected(info: _File, mask: str | None, path: PathLike) -> list[str]:
    if mask is None:
        return info.demos
    if mask not in info.masks:
        known = ", ".join(sorted(info.masks)) or "none"
        raise FormatError(f"has no mask {mask!r} (masks: {known})", path)
    missing = [name for name in info.masks[mask] if name not in info.demos]
    if missing:
        raise FormatError(f"mask/{mask} names {missing[0]}, which data does not hold", path)
    wanted = set(info.masks[mask])
    return [name for name in info.demos if name in wanted]


def _member(group: h5py.Group, name: str, path: PathLike) -> h5py.Group | h5py.Dataset | None:
    """A hard-linked member of ``group`` (None when absent); a link to another file or a
    soft link is refused, so reading never leaves the file or loops."""
    link = group.get(name, getlink=True)
    if link is None:
        return None
    if not isinstance(link, h5py.HardLink):
        raise FormatError(f"{group.name}/{name} is a {type(link).__name__}; only plain members "
                          "are read (a file must not make motionkit open another)", path)
    member = group[name]
    if isinstance(member, h5py.Dataset) and (member.is_virtual or member.external):
        raise FormatError(f"{member.name} keeps its data outside the file; refused", path)
    return member


def _leaves(group: h5py.Group, path: PathLike, prefix: str = "",
            depth: int = 0) -> Iterator[tuple[str, h5py.Dataset]]:
    """Every dataset under ``group``, by its path relative to it, in file order."""
    if depth > MAX_DEPTH:
        raise FormatError(f"{group.name} nests groups deeper than {MAX_DEPTH}", path)
    for name in group:
        member = _member(group, name, path)
        if isinstance(member, h5py.Group):
            yield from _leaves(member, path, f"{prefix}{name}/", depth + 1)
        elif isinstance(member, h5py.Dataset):
            yield f"{prefix}{name}", member


def _rate(info: _File, fps: float | None, path: PathLike) -> tuple[float | None, str]:
    """The frame rate and where it came from."""
    if fps is not None:
        if not (fps > 0 and np.isfinite(fps)):
            raise FormatError(f"fps must be a positive number, not {fps!r}", path)
        return float(fps), "the fps option"
    kwargs = info.env_args.get("env_kwargs")
    sim = info.env_args.get("sim_args")
    if isinstance(kwargs, dict) and isinstance(kwargs.get("control_freq"), (int, float)) \
            and kwargs["control_freq"] > 0:
        return float(kwargs["control_freq"]), "env_args.env_kwargs.control_freq"
    for step in (sim, kwargs):
        if isinstance(step, dict) and isinstance(step.get("dt"), (int, float)) \
                and isinstance(step.get("decimation"), (int, float)) \
                and step["dt"] > 0 and step["decimation"] > 0:
            return 1.0 / (float(step["dt"]) * float(step["decimation"])), \
                "1 / (dt × decimation) of env_args"
    return None, "none: the file has no rate (frames are numbered only; fps=... sets one)"


def _told_rate(info: _File, fps: float | None, path: PathLike) -> tuple[float | None, str]:
    """The rate, with a warning where the file has none (writers of times refuse frame
    numbers, so say how to give one)."""
    rate = _rate(info, fps, path)
    if rate[0] is None:
        warn(f"{os.fspath(path)}: the file holds no frame rate; its frames are numbered only "
             "(fps=N / -O fps=N gives them times)")
    return rate


def _demo(handle: h5py.File, info: _File, name: str, path: PathLike,
          joint_names: Sequence[str] | None, rate_and_source: tuple[float | None, str],
          budget: Budget) -> Motion:
    group = _member(handle["data"], name, path)
    if not isinstance(group, h5py.Group):
        raise FormatError(f"data/{name} is not a group of arrays", path)
    arrays: dict[str, NDArray[np.generic]] = {}
    initial: dict[str, object] = {}
    skipped: dict[str, list[int]] = {}
    for key, dataset in _leaves(group, path):
        if dataset.dtype.kind not in "fiub" or dataset.ndim == 0:
            continue
        if dataset.ndim > 2 and not key.startswith("initial_state/"):
            skipped[key] = list(dataset.shape)  # images: listed, not read
            continue
        budget.charge(int(dataset.size) * max(dataset.dtype.itemsize, 8))  # as float64
        if key.startswith("initial_state/"):
            initial[key] = np.asarray(dataset[()]).tolist()
        else:
            arrays[key] = np.asarray(dataset[()])
    if "actions" not in arrays and not arrays:
        raise FormatError(f"{name} holds no arrays", path)
    lengths = {key: int(array.shape[0]) for key, array in arrays.items()}
    frames = lengths.get("actions", next(iter(lengths.values())))
    other = {key: n for key, n in lengths.items() if n != frames}
    if other:
        key, count = next(iter(other.items()))
        raise FormatError(f"{name}: {key} has {count} rows but actions has {frames}; the "
                          "arrays of a demo have one row per step", path)
    samples = group.attrs.get("num_samples")
    if samples is not None:
        said = np.asarray(samples)
        if said.shape != () or said.dtype.kind not in "iu":
            raise FormatError(f"{name}: num_samples must be one integer, not "
                              f"{said.dtype} of shape {said.shape}", path)
        if int(said) != frames and frames:
            raise FormatError(f"{name}: num_samples is {int(said)} but the arrays have "
                              f"{frames} rows", path)
    rate, rate_from = rate_and_source
    timeline = Timeline.uniform(rate, frames) if rate else Timeline.frame_numbers(frames)
    joints_key = _joints_key(info, arrays)
    tracks: dict[str, Track] = {}
    names_from = "none"
    for key, array in arrays.items():
        data = array.reshape(frames, -1)
        if key == joints_key:
            labels, names_from = _joint_labels(joint_names, data.shape[1], path)
            tracks["joints"] = Track("joints", "value", data, timeline, labels)
            continue
        kind, data = _kind(info.layout, key, data)
        tracks[key] = Track(key, kind, data, timeline)
    meta: dict[str, object] = {"name": name, "hdf5": {
        "layout": info.layout, "demo": name, "demos": len(info.demos),
        "env_args": info.env_args, "fps": rate_from,
        "joints": joints_key, "joint_names": names_from,
        "attrs": _attrs(group), "initial_state": initial, "not_read": skipped,
    }}
    return Motion(tracks, meta=meta)


def _joints_key(info: _File, arrays: dict[str, NDArray[np.generic]]) -> str | None:
    if info.layout == "robomimic":
        return "obs/robot0_joint_pos" if "obs/robot0_joint_pos" in arrays else None
    found = [key for key in arrays
             if key.startswith("states/articulation/") and key.endswith("/joint_position")]
    return found[0] if found else None


def _joint_labels(names: Sequence[str] | None, width: int,
                  path: PathLike) -> tuple[list[str], str]:
    if names is None:
        return [f"joint_{i}" for i in range(width)], "assumed joint_0 … (the file names none)"
    if len(names) != width:
        raise FormatError(f"joint_names gives {len(names)} names for {width} joint positions",
                          path)
    return [str(name) for name in names], "the joint_names option"


def _kind(layout: str, key: str, data: NDArray[np.generic]) -> tuple[TrackKind, NDArray[np.generic]]:
    """The track kind of an array, with Isaac Lab's w-first quaternions put last."""
    leaf = key.rsplit("/", 1)[-1]
    width = data.shape[1]
    if leaf == "root_pose" and width == 7:
        if layout == "isaaclab":
            data = data[:, [0, 1, 2, 4, 5, 6, 3]]
        return "pose", data
    if leaf.endswith("quat") and width == 4:
        if layout == "isaaclab":
            data = data[:, [1, 2, 3, 0]]
        return "quaternion", data
    return "value", data


def _attrs(group: h5py.Group) -> dict[str, object]:
    """A demo's scalar attributes (num_samples, seed, success, model_file) as plain values."""
    attrs: dict[str, object] = {}
    for key, value in group.attrs.items():
        if isinstance(value, bytes):
            value = value.decode("utf-8", "replace")
        elif isinstance(value, np.generic):
            value = value.item()
        if isinstance(value, (str, int, float, bool)):
            attrs[key] = value
    return attrs

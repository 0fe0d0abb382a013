"""C3D markers as motionkit tracks.

Model mapping: one ``vector3`` track per marker, named by its ``POINT:LABELS`` text as
written (trailing spaces stripped; a blank or repeated label gets ``#<index>``), in
metres (``POINT:UNITS`` mm, cm or m), NaN where the sample's residual word is negative
(invalid); ``marker_residuals`` (value track, metres, −1 where invalid, labels = the
marker tracks); one ``value`` track per analog channel, ``analog/<label>``, at
``ANALOG:RATE`` (its own timeline), scaled as (raw − OFFSET)·GEN_SCALE·SCALE; times start
at ``first_frame / POINT:RATE``. With ``rigid="A,B,C"`` (three or more markers) a ``root``
pose track is added: the least-squares rigid motion (Kabsch) of those markers relative to
their positions in the first frame where all are valid — origin at their centroid there,
world axes — on the frames where at least three of them are valid (stamped times).
``meta["c3d"]`` records the units, scale, processor, first frame and rates.
"""

from __future__ import annotations

import io
import os
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from ..._io import open_regular
from ...errors import FormatError, warn
from ...model import Motion, Timeline, Track
from ...spatial import quaternion as quat
from .decode import Frames, Layout, decode
from .parse import BLOCK, C3D, parse

Array = NDArray[np.float64]
UNITS = {"mm": 1e-3, "cm": 1e-2, "m": 1.0, "dm": 0.1}
#: Bytes of frames read and decoded at a time (a slab that stays in cache).
CHUNK_BYTES = 1 << 20
#: Most markers and analog channels accepted (real systems have hundreds).
MAX_CHANNELS = 65536


def sniff(head: bytes) -> bool:
    """The 0x50 key in the second byte and a parameter block number of at least 2."""
    return len(head) >= 2 and head[1] == 0x50 and head[0] >= 2


def read(path: str | os.PathLike[str], rigid: str | None = None) -> Motion:
    """Read a C3D file; ``rigid="A,B,C"`` adds the rigid pose of those markers as ``root``."""
    with open_regular(path) as handle:
        c3d = parse(_head(handle, path), path)
        units = (c3d.texts("POINT:UNITS") or ["mm"])[0].strip().lower()
        if units not in UNITS:
            raise FormatError(f"POINT:UNITS {units!r} is not a length unit this reader knows "
                              f"({', '.join(UNITS)})", path)
        labels, positions, residuals, analog, analog_labels = frames(c3d, handle, path,
                                                                     UNITS[units])
    rate = c3d.number("POINT:RATE", c3d.rate) or c3d.rate
    if not (np.isfinite(rate) and rate > 0):
        raise FormatError(f"the point rate {rate!r} is not a positive number", path)
    start = (c3d.first_frame - 1) / rate
    timeline = Timeline.uniform(rate, residuals.shape[0], start)
    info: dict[str, object] = {
        "units": units, "scale": c3d.scale, "processor": c3d.processor,
        "first_frame": c3d.first_frame - 1, "rate": rate,
        "storage": "float32" if c3d.scale < 0 else "int16"}
    motion = Motion(meta={"name": Path(path).stem, "c3d": info})
    names = _track_names(labels)
    for index, name in enumerate(names):
        motion.add(Track(name, "vector3", positions[index], timeline))
    if names:
        motion.add(Track("marker_residuals", "value", residuals, timeline, names))
    if analog is not None:
        # without ANALOG:RATE: each channel's samples per point frame, at the point rate
        per_channel = c3d.analog_per_frame // max(len(analog), 1)
        analog_rate = c3d.number("ANALOG:RATE", rate * per_channel)
        if analog_rate is None or not (np.isfinite(analog_rate) and analog_rate > 0):
            raise FormatError(f"ANALOG:RATE is {analog_rate!r}; expected a positive number of "
                              "samples per second", path)
        info["analog_rate"] = analog_rate
        analog_timeline = Timeline.uniform(analog_rate, analog.shape[1], start)
        for index, name in enumerate(_track_names(analog_labels, "channel")):
            motion.add(Track(f"analog/{name}", "value", analog[index], analog_timeline))
    if rigid is not None:
        motion.add(rigid_track(motion, [name.strip() for name in rigid.split(",")], path))
    return motion


def describe(obj: object) -> list[str]:
    """The conventions ``info`` shows: units converted, validity, rates."""
    info = obj.meta.get("c3d") if isinstance(obj, Motion) else None
    if not isinstance(info, dict):
        return []
    lines = [f"markers in metres (file: {info['units']}, {info['storage']}, "
             f"{info['processor']}); NaN where the residual word is negative (invalid); no "
             "up axis stated by the format (the lab's axes as recorded)",
             f"point rate {info['rate']:g} Hz from frame {info['first_frame']}"]
    if "analog_rate" in info:
        lines.append(f"analog channels at {info['analog_rate']:g} Hz")
    return lines


def _track_names(labels: list[str], blank: str = "marker") -> list[str]:
    names: list[str] = []
    for index, label in enumerate(labels):
        name = label or f"{blank}#{index}"
        names.append(f"{name}#{index}" if name in names else name)
    return names


def _head(handle: io.BufferedReader, path: str | os.PathLike[str]) -> bytes:
    """The file's bytes through the end of its parameter section (or the whole file, when
    it ends before that: :func:`parse` then names what is missing)."""
    data = _read(handle, BLOCK, path)
    if len(data) < BLOCK or data[1] != 0x50 or data[0] < 2:
        return data
    start = (data[0] - 1) * BLOCK
    data += _read(handle, start + 4 - len(data), path)
    if len(data) < start + 4:
        return data
    return data + _read(handle, max(data[start + 2] * BLOCK - 4, 0), path)


def _read(handle: io.BufferedReader, size: int, path: str | os.PathLike[str]) -> bytes:
    try:
        return handle.read(size)
    except OSError as exc:
        raise FormatError(f"cannot read: {exc.strerror or exc}", path) from None


def frames(c3d: C3D, handle: io.BufferedReader, path: str | os.PathLike[str], metres: float = 1.0
           ) -> tuple[list[str], Array, Array, NDArray[np.float32] | None, list[str]]:
    """Labels, positions ``(markers, frames, 3)`` (file units × ``metres``, NaN where
    invalid), residuals ``(frames, markers)`` (the same units, −1 where invalid), analog
    samples (scaled, float32: what 16- and 32-bit samples carry; one row per channel) and
    analog labels; the frames are read from ``handle`` a slab at a time."""
    used = _count(c3d, "POINT:USED", c3d.points, "markers", path)
    if used != c3d.points:
        raise FormatError(f"POINT:USED is {used} but the header's marker count is "
                          f"{c3d.points}; expected them to agree (else the frame layout is "
                          "ambiguous)", path)
    labels = (c3d.texts("POINT:LABELS") + c3d.texts("POINT:LABELS2"))[:used]
    labels += [""] * (used - len(labels))
    channels = _count(c3d, "ANALOG:USED", 0, "analog channels", path)
    per_frame = c3d.analog_per_frame
    samples = per_frame // channels if channels else 0
    left = per_frame - samples * channels
    if left:
        warn(f"{os.fspath(path)}: the header has {per_frame} analog samples per frame, "
             f"ANALOG:USED {channels} channels; the last {left} of each frame are not read")
    layout = _layout(c3d, used, channels, samples, metres, path)
    stated = _frame_count(c3d)
    start = (c3d.data_block - 1) * BLOCK
    size = os.fstat(handle.fileno()).st_size
    if c3d.data_block < 1 or start > size or (stated is not None and stated < 0):
        raise FormatError("the data section lies beyond the file", path)
    frame_bytes = layout.frame_bytes
    available = (size - start) // frame_bytes if frame_bytes else (stated or 0)
    # the header's 16-bit count is full and nothing else says: every complete frame
    count = available if stated is None else stated
    if available < count:
        warn(f"{os.fspath(path)}: the file ends after {available} of {count} frames")
        count = available
    out = Frames.empty(layout, count)
    done = _stream(handle, start, count, layout, out, path) if frame_bytes else count
    if done < count:  # the file shrank while it was read
        warn(f"{os.fspath(path)}: the file ends after {done} of {count} frames")
        out = Frames(out.xyz[:, :done], out.residual[:done],
                     None if out.analog is None else out.analog[:, :done * samples])
    analog_labels = (c3d.texts("ANALOG:LABELS") + c3d.texts("ANALOG:LABELS2"))[:channels]
    analog_labels += [""] * (channels - len(analog_labels))
    if out.analog is None:
        analog_labels = []
    return labels, out.xyz, out.residual, out.analog, analog_labels


def _layout(c3d: C3D, used: int, channels: int, samples: int, metres: float,
            path: str | os.PathLike[str]) -> Layout:
    """How a frame's words become numbers: the word format, the point and residual scale
    and the analog channels' offset and gain."""
    floating = c3d.scale < 0
    if not floating and channels and " ".join(c3d.texts("ANALOG:FORMAT")).strip().upper() \
            == "UNSIGNED":
        raise FormatError("integer analog samples stored UNSIGNED (ANALOG:FORMAT); motionkit "
                          "reads signed ones only and will not give wrong values: convert the "
                          "file's analog to signed or float", path)
    kind = {"intel": "<", "dec": "<", "mips": ">"}[c3d.processor] + ("f4" if floating else "i2")
    if floating and c3d.processor == "dec":
        kind = "dec"
    offsets = _per_channel(c3d.numbers("ANALOG:OFFSET"), channels, 0.0)
    gains = _per_channel(c3d.numbers("ANALOG:SCALE"), channels, 1.0)
    general = c3d.number("ANALOG:GEN_SCALE", 1.0) or 1.0
    return Layout(used, 4 * used + c3d.analog_per_frame, kind, channels, samples,
                  (1.0 if floating else c3d.scale) * metres,  # floats are not scaled
                  abs(c3d.scale) * metres, offsets, general * gains)


def _stream(handle: io.BufferedReader, start: int, count: int, layout: Layout, out: Frames,
            path: str | os.PathLike[str]) -> int:
    """Read and decode ``count`` frames from byte ``start``, a slab at a time; the frames
    read (fewer only when the file ends early)."""
    slab = max(1, CHUNK_BYTES // layout.frame_bytes)
    buffer = bytearray(min(slab, count) * layout.frame_bytes)
    handle.seek(start)
    done = 0
    while done < count:
        want = min(slab, count - done)
        got = _fill(handle, memoryview(buffer)[:want * layout.frame_bytes], path)
        whole = got // layout.frame_bytes
        decode(buffer, whole, layout, out, done)
        done += whole
        if whole < want:
            break
    return done


def _fill(handle: io.BufferedReader, view: memoryview, path: str | os.PathLike[str]) -> int:
    """Fill ``view`` from the file; the bytes read (fewer at the end of the file)."""
    filled = 0
    while filled < len(view):
        try:
            got = handle.readinto(view[filled:])
        except OSError as exc:
            raise FormatError(f"cannot read: {exc.strerror or exc}", path) from None
        if not got:
            break
        filled += got
    return filled


def _count(c3d: C3D, key: str, default: int, what: str, path: str | os.PathLike[str]) -> int:
    """A count parameter (``POINT:USED``, ``ANALOG:USED``): a whole number from 0 to
    MAX_CHANNELS, else a FormatError naming it."""
    value = c3d.number(key, default)
    if value is None or not (np.isfinite(value) and value == int(value)
                             and 0 <= value <= MAX_CHANNELS):
        raise FormatError(f"{key} is {value!r}; expected a whole number of {what} from 0 to "
                          f"{MAX_CHANNELS}", path)
    return int(value)


def _frame_count(c3d: C3D) -> int | None:
    """Frames the file says it holds: the header's, or past 65,535 frames (where the 16-bit
    header word saturates) the 32-bit ``TRIAL:ACTUAL_START/END_FIELD``; None when the
    header is saturated and no trial fields say more."""
    if c3d.last_frame < 0xFFFF:
        return c3d.last_frame - c3d.first_frame + 1
    start, end = c3d.numbers("TRIAL:ACTUAL_START_FIELD"), c3d.numbers("TRIAL:ACTUAL_END_FIELD")
    if start.size >= 2 and end.size >= 2:
        first = int(start[0]) % 65536 + int(start[1]) % 65536 * 65536
        last = int(end[0]) % 65536 + int(end[1]) % 65536 * 65536
        return last - first + 1
    return None


def _per_channel(values: Array, channels: int, default: float) -> Array:
    out = np.full(channels, default)
    out[:min(channels, values.size)] = values[:channels]
    return out


def rigid_track(motion: Motion, markers: list[str], path: str | os.PathLike[str]) -> Track:
    """The least-squares rigid pose of ``markers`` (see the module doc) as a ``root`` track."""
    if len(markers) < 3:
        raise FormatError("rigid= needs three or more marker labels", path)
    missing = [name for name in markers if name not in motion.tracks]
    if missing:
        raise FormatError(f"rigid=: no markers {missing[:4]} in the file", path)
    points = np.stack([np.asarray(motion.tracks[name].data, dtype=np.float64)
                       for name in markers], axis=1)  # (frames, markers, 3)
    valid = np.asarray(np.isfinite(points).all(axis=2), dtype=bool)
    full = np.flatnonzero(valid.all(axis=1))
    if full.size == 0:
        raise FormatError(f"rigid=: markers {', '.join(markers)} are never all valid in one "
                          "frame", path)
    reference = points[full[0]]
    centre = reference.mean(axis=0)
    usable = np.flatnonzero(valid.sum(axis=1) >= 3)
    poses = np.empty((usable.size, 7))
    for row, frame in enumerate(usable):
        mask = valid[frame]
        poses[row] = _fit(reference[mask], points[frame, mask], centre)
    times = motion.tracks[markers[0]].times[usable]
    return Track("root", "pose", poses, Timeline.stamped(times), attrs={
        "rigid_markers": markers, "reference_frame": int(full[0]),
        "fit": "least-squares rigid (Kabsch), origin at the markers' reference centroid"})


def _fit(reference: Array, current: Array, centre: Array) -> Array:
    """Pose (x y z qx qy qz qw) of the rigid motion taking ``reference`` onto ``current``,
    as the pose of a body whose origin was at ``centre`` with world axes."""
    a, b = reference.mean(axis=0), current.mean(axis=0)
    u, _, vt = np.linalg.svd((reference - a).T @ (current - b))
    d = np.sign(np.linalg.det(vt.T @ u.T)) or 1.0
    rotation = vt.T @ np.diag([1.0, 1.0, d]) @ u.T
    position = rotation @ (centre - a) + b
    return np.concatenate([position, quat.positive_w(quat.from_matrix(rotation))])

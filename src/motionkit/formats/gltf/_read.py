"""Reading back the glTF files motionkit writes: body nodes and their TRS animation → link
poses, with the tracks, timeline and metadata kept in ``extras``.

Arbitrary glTF scenes (skins deforming meshes, morph targets, cameras, several animations
of one node …) are not read: a file without motionkit's ``extras`` is refused, naming what
it is, so nobody mistakes a scene for a motion.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import cast

import numpy as np
from numpy.typing import NDArray

from ..._limits import array_budget
from ...errors import FormatError
from ...model import Motion, Terrain, Timeline, Track
from ...spatial import quaternion
from ._build import EXTRAS, LAYOUT
from ._container import unpack

Array = NDArray[np.float64]
_COMPONENTS = {"SCALAR": 1, "VEC3": 3, "VEC4": 4}


class _File:
    """The parsed document and buffer, with checked access to its parts."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = path
        self.gltf, self.blob = unpack(path)
        #: every array the read makes is charged here (a small file cannot ask for gigabytes)
        self.budget = array_budget(path, os.stat(path).st_size)

    def fail(self, what: str) -> FormatError:
        return FormatError(what, self.path)

    def items(self, key: str) -> list[dict[str, object]]:
        found = self.gltf.get(key, [])
        if not isinstance(found, list) or not all(isinstance(x, dict) for x in found):
            raise self.fail(f"'{key}' is not a list of objects")
        return found

    def item(self, key: str, index: object) -> dict[str, object]:
        items = self.items(key)
        if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < len(items):
            raise self.fail(f"{key} index {index!r} is out of range (the file has {len(items)})")
        return items[index]

    def view_bytes(self, index: object) -> bytes:
        view = self.item("bufferViews", index)
        offset, length = view.get("byteOffset", 0), view.get("byteLength")
        if not isinstance(offset, int) or not isinstance(length, int) or offset < 0 or length < 0 \
                or offset + length > len(self.blob) or view.get("buffer", 0) != 0:
            raise self.fail(f"bufferView {index} lies outside the buffer")
        if "byteStride" in view:
            raise self.fail(f"bufferView {index} is interleaved (byteStride); not written by motionkit")
        return self.blob[offset:offset + length]

    def floats(self, index: object, kind: str) -> NDArray[np.float32]:
        """An accessor of finite float32 rows of ``kind`` (SCALAR, VEC3 or VEC4)."""
        accessor = self.item("accessors", index)
        width = _COMPONENTS[kind]
        count = accessor.get("count")
        if accessor.get("componentType") != 5126 or accessor.get("type") != kind \
                or not isinstance(count, int) or isinstance(count, bool) or count < 0 \
                or accessor.get("sparse") is not None:
            raise self.fail(f"accessor {index} is not {count!r} float32 {kind} rows")
        data = self.view_bytes(accessor.get("bufferView"))
        offset = accessor.get("byteOffset", 0)
        if not isinstance(offset, int) or offset < 0 or offset + 4 * width * count > len(data):
            raise self.fail(f"accessor {index} runs past its bufferView")
        rows = np.frombuffer(data, "<f4", width * count, offset).reshape(count, width)
        if not np.isfinite(rows).all():
            raise self.fail(f"accessor {index} holds a value that is not a finite number")
        return rows

    def raw(self, entry: Mapping[str, object], what: str) -> Array:
        """A float64 array kept by motionkit's writer (``Document.raw``)."""
        shape = entry.get("shape")
        if entry.get("dtype") != "float64" or not isinstance(shape, list) \
                or not all(isinstance(n, int) and n >= 0 for n in shape):
            raise self.fail(f"{what}: expected a float64 array with its shape")
        data = self.view_bytes(entry.get("bufferView"))
        if len(data) != 8 * int(np.prod(shape, dtype=object)):
            raise self.fail(f"{what}: its bufferView holds {len(data)} bytes, not {shape}")
        return np.frombuffer(data, "<f8").reshape(shape).astype(np.float64)


def _ours(file: _File) -> dict[str, object]:
    asset = file.gltf.get("asset")
    extras = asset.get("extras") if isinstance(asset, dict) else None
    ours = extras.get(EXTRAS) if isinstance(extras, dict) else None
    if not isinstance(ours, dict):
        generator = asset.get("generator") if isinstance(asset, dict) else None
        by = f" (written by {str(generator)[:80]!r})" if generator else ""
        raise file.fail(f"not a motion written by motionkit{by}: only motionkit's own glTF "
                        "files are read (node-per-body animation with its extras); arbitrary "
                        "glTF scenes are not")
    if ours.get("layout") != LAYOUT:
        raise file.fail(f"motionkit glTF layout {ours.get('layout')!r}; this version reads {LAYOUT}")
    return ours


def _choose(file: _File, ours: Mapping[str, object], motion: str | int | None) -> dict[str, object]:
    entries = ours.get("motions")
    if not isinstance(entries, list) or not entries or not all(isinstance(e, dict) for e in entries):
        raise file.fail("motionkit's extras list no motions")
    names = [str(e.get("name")) for e in entries]
    if motion is None:
        if len(entries) > 1:
            raise file.fail(f"holds {len(entries)} motions ({', '.join(names)}); choose one with "
                            "motion=NAME or motion=INDEX (-R motion=…)")
        return dict(entries[0])
    if isinstance(motion, int) and not isinstance(motion, bool) and 0 <= motion < len(entries):
        return dict(entries[motion])
    if str(motion) in names:
        return dict(entries[names.index(str(motion))])
    raise file.fail(f"holds no motion {motion!r} (it holds {', '.join(names)})")


def survey(path: str | os.PathLike[str]) -> list[str]:
    """One line per motion of a scene of several (what ``info`` shows where ``read`` asks
    which one); [] for anything else."""
    try:
        file = _File(path)
        entries = _ours(file).get("motions")
    except FormatError:
        return []
    if not isinstance(entries, list) or len(entries) < 2:
        return []
    lines = [f"a scene of {len(entries)} motions side by side (read one with motion=NAME or INDEX):"]
    for index, entry in enumerate(entries):
        if isinstance(entry, dict):
            rate = f", {entry['fps']:g} Hz" if isinstance(entry.get("fps"), int | float) else ""
            bodies = entry.get("bodies")
            count = len(bodies) if isinstance(bodies, list) else 0
            lines.append(f"{index}: {str(entry.get('name'))[:80]!r}: {entry.get('frames')} frames"
                         f"{rate}, {count} bodies")
    return lines


def _local(file: _File, node: Mapping[str, object], frames: int, path: str,
           animated: dict[tuple[int, str], tuple[NDArray[np.float32], NDArray[np.float32]]],
           index: int, times: Array) -> Array:
    """A body node's translation or rotation at every frame (its channel, else its own)."""
    default = (0.0, 0.0, 0.0) if path == "translation" else (0.0, 0.0, 0.0, 1.0)
    if (index, path) in animated:
        keys, values = animated[(index, path)]
        if len(keys) != frames or len(values) != frames:
            raise file.fail(f"node {index}: its {path} channel has {len(values)} keys, not "
                            f"the motion's {frames} frames")
        if frames and not (np.abs(keys.astype(np.float64)[:, 0] - (times - times[0])) <= 1e-3).all():
            raise file.fail(f"node {index}: its {path} keys are not the motion's frame times")
        return values.astype(np.float64)
    own = node.get(path, default)
    if not isinstance(own, list) or len(own) != len(default):
        raise file.fail(f"node {index}: its {path} is not {len(default)} numbers")
    return np.tile(np.asarray(own, dtype=np.float64), (frames, 1))


def _animated(file: _File) -> dict[tuple[int, str], tuple[NDArray[np.float32], NDArray[np.float32]]]:
    animations = file.items("animations")
    if len(animations) > 1:
        raise file.fail(f"{len(animations)} animations; motionkit writes one")
    found = {}
    for animation in animations:
        samplers = animation.get("samplers", [])
        channels = animation.get("channels", [])
        if not isinstance(samplers, list) or not isinstance(channels, list):
            raise file.fail("animation samplers or channels are not lists")
        for channel in channels:
            target = channel.get("target") if isinstance(channel, dict) else None
            sampler = channel.get("sampler") if isinstance(channel, dict) else None
            if not isinstance(target, dict) or not isinstance(sampler, int) \
                    or not 0 <= sampler < len(samplers) or not isinstance(samplers[sampler], dict):
                raise file.fail("an animation channel has no valid target or sampler")
            path = target.get("path")
            if path not in ("translation", "rotation") or samplers[sampler].get("interpolation",
                                                                             "LINEAR") != "LINEAR":
                raise file.fail(f"animation of {path!r} with {samplers[sampler].get('interpolation')} "
                                "keys: motionkit writes LINEAR translation and rotation only")
            key = (target.get("node"), str(path))
            if key in found:
                raise file.fail(f"node {key[0]} has two {path} channels")
            found[key] = (file.floats(samplers[sampler].get("input"), "SCALAR"),
                          file.floats(samplers[sampler].get("output"),
                                      "VEC3" if path == "translation" else "VEC4"))
    return found  # type: ignore[return-value]


def _refuse_strays(file: _File, ours: Mapping[str, object], bodies: list[object],
                   animated: Mapping[tuple[int, str], object]) -> None:
    """A body listed twice, or a channel on a node that is no motion's body (a viewer would
    play it; motionkit would read another motion than it shows), is refused."""
    if len(set(map(repr, bodies))) != len(bodies):
        raise file.fail("a body node is listed twice in the motion's extras")
    every = {repr(node) for entry in cast("list[dict[str, object]]", ours["motions"])
             for node in cast("list[object]", entry.get("bodies") or [])}
    strays = sorted({node for node, _ in animated if repr(node) not in every}, key=repr)
    if strays:
        raise file.fail(f"node {strays[0]!r} is animated but is no motion's body")


def read_motion(path: str | os.PathLike[str], motion: str | int | None = None) -> Motion:
    """The motion (one of a file's, by name or index, where it holds several) as link poses
    composed from its body nodes, with the tracks and metadata its writer kept."""
    file = _File(path)
    ours = _ours(file)
    entry = _choose(file, ours, motion)
    frames = entry.get("frames")
    bodies, labels, parents = entry.get("bodies"), entry.get("labels"), entry.get("parents")
    if not isinstance(frames, int) or frames < 1 or not isinstance(bodies, list) \
            or not isinstance(labels, list) or not isinstance(parents, list) \
            or not len(bodies) == len(labels) == len(parents) or not bodies:
        raise file.fail("the motion's extras do not list its frames and bodies")
    file.budget.charge(8 * (7 * len(bodies) + 1) * frames)  # the poses and times made below
    timeline = _timeline(file, entry, frames)
    times = timeline.times
    animated = _animated(file)
    _refuse_strays(file, ours, bodies, animated)
    poses = np.empty((frames, len(bodies), 7))
    for b, (index, parent) in enumerate(zip(bodies, parents, strict=True)):
        node = file.item("nodes", index)
        t = _local(file, node, frames, "translation", animated, index, times)
        q = quaternion.normalize(_local(file, node, frames, "rotation", animated, index, times))
        if not isinstance(parent, int) or isinstance(parent, bool) or not -1 <= parent < b:
            raise file.fail(f"body {b}'s parent {parent!r} does not come before it")
        if parent < 0:
            poses[:, b, :3], poses[:, b, 3:] = t, q
        else:
            above = poses[:, parent]
            poses[:, b, :3] = above[:, :3] + quaternion.rotate(above[:, 3:], t)
            poses[:, b, 3:] = quaternion.normalize(quaternion.multiply(above[:, 3:], q))
    result = Motion(meta=_meta(entry), terrain=_terrain(file, entry.get("terrain")))
    specs = entry.get("tracks") or []
    if not isinstance(specs, list):
        raise file.fail("the motion's tracks are not a list")
    linked = next((spec for spec in specs if isinstance(spec, dict) and spec.get("nodes")), {})
    found = linked.get("attrs")
    link_attrs: dict[str, object] = dict(found) if isinstance(found, dict) else {}
    result.add(Track("links", "pose", poses, timeline, labels=[str(x) for x in labels],
                     attrs=link_attrs))
    for spec in specs:
        if isinstance(spec, dict) and not spec.get("nodes"):
            name, kind = str(spec.get("name")), spec.get("kind")
            if kind not in ("value", "vector3", "pose", "quaternion"):
                raise file.fail(f"track {name!r} is of no kind motionkit knows ({kind!r})")
            data = file.raw(spec, f"track {name!r}")
            if len(data) != frames:
                raise file.fail(f"track {name!r} has {len(data)} frames, not {frames}")
            attrs = spec.get("attrs") if isinstance(spec.get("attrs"), dict) else {}
            result.add(Track(name, kind, data, timeline,
                             labels=spec.get("labels") or None, attrs=attrs))  # type: ignore[arg-type]
    return result


def _timeline(file: _File, entry: Mapping[str, object], frames: int) -> Timeline:
    fps, start = entry.get("fps"), entry.get("start", 0.0)
    try:
        if fps is not None:
            return Timeline.uniform(float(fps), frames, float(start))  # type: ignore[arg-type]
        times = entry.get("times")
        if not isinstance(times, dict):
            raise file.fail("the motion's extras give neither fps nor times")
        rate = entry.get("rate")
        return Timeline.stamped(file.raw(times, "times").reshape(-1),
                                float(rate) if isinstance(rate, int | float) else None)
    except (TypeError, ValueError) as exc:
        raise file.fail(f"the motion's timeline is not valid ({exc})") from None


def _terrain(file: _File, entry: object) -> Terrain | None:
    """The terrain the writer kept (heights, origin, bounds as float64), or None."""
    if entry is None:
        return None
    if not isinstance(entry, dict) or not isinstance(entry.get("heights"), dict) \
            or not isinstance(entry.get("origin"), dict):
        raise file.fail("the terrain's extras are not valid")
    bounds = entry.get("bounds")
    attrs = entry.get("attrs")
    try:
        return Terrain(file.raw(entry["heights"], "terrain heights"),
                       file.raw(entry["origin"], "terrain origin"), float(entry["dx"]),
                       float(entry["dy"]),
                       file.raw(bounds, "terrain bounds") if isinstance(bounds, dict) else None,
                       dict(attrs) if isinstance(attrs, dict) else {})
    except (KeyError, TypeError, ValueError) as exc:
        raise file.fail(f"the terrain's extras are not valid ({exc})") from None


def _meta(entry: Mapping[str, object]) -> dict[str, object]:
    meta = entry.get("meta")
    out: dict[str, object] = dict(meta) if isinstance(meta, dict) else {}
    out.setdefault("name", entry.get("name"))
    return out

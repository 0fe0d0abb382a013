"""MotionLib: batched frame sampling from a set of motions, with PARC's semantics.

All motions are packed into flat per-frame arrays once; a query ``(motion id, time)``
then costs a few gathers and one vectorised slerp, for any batch size.

Semantics (PARC's ``MotionLib``): a motion of ``N`` frames at ``fps`` lasts
``(N - 1) / fps``; frame ``k`` is at ``k / fps``. ``CLAMP`` clips the time to the motion;
``WRAP`` wraps it and shifts the root by the whole-loop displacement per completed loop
(its z component zeroed). Root position and contacts are interpolated linearly,
rotations by slerp; velocities are those of the frame at or before the query time
(root velocity by forward differences, angular velocities from consecutive
quaternions, last frame repeating the previous one). Root positions are float64 (world
coordinates grow large); rotations, velocities and contacts are float32.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import NamedTuple, Protocol, TypeAlias, TypeVar, cast

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .. import api
from ..errors import ConversionError, FormatError, MotionkitError
from ..formats import registry
from ..kinematics import character_poses
from ..model import Motion, MotionList, Skeleton
from ..model.character import Character
from ..model.character import CharacterSource as CharacterSource  # still importable from here
from ..model.motionlist import is_there
from ..quality import check
from ..quality.presets import Preset
from ..spatial import quaternion as quat
from . import packfile

ScalarT = TypeVar("ScalarT", bound=np.generic)

Array = NDArray[np.float64]
#: Most entries of a motion list (each packs its frames once more).
MAX_MOTIONS = 100_000
#: The extension of packed libraries (``motionkit pack``).
PACK_SUFFIX = ".mkpack"


class Tensor(Protocol):
    """A torch tensor, as :class:`MotionFrames` holds them with ``device=`` (float32, on
    that device). torch is optional and not a typing dependency, so this names only what
    is promised here (a shape, and the way back to NumPy); cast to ``torch.Tensor`` for
    the rest."""

    @property
    def shape(self) -> tuple[int, ...]: ...

    def cpu(self) -> Tensor: ...

    def numpy(self) -> NDArray[np.float32]: ...


#: One batched array of :class:`MotionFrames`: NumPy without ``device=`` (``root_pos`` and
#: the FK bodies float64, the rest float32, as the module docstring says), else a tensor.
FrameArray: TypeAlias = NDArray[np.float64] | NDArray[np.float32] | Tensor


@dataclass(eq=False)
class MotionFrames:
    """A batch of frames; arrays have the batch on axis 0 (NumPy or torch tensors)."""

    root_pos: FrameArray
    root_rot: FrameArray
    root_vel: FrameArray
    root_ang_vel: FrameArray
    joint_rot: FrameArray
    dof_vel: FrameArray
    contacts: FrameArray
    body_pos: FrameArray | None = None
    body_rot: FrameArray | None = None

    def as_dict(self) -> dict[str, FrameArray]:
        """Field name -> array (bodies only when computed)."""
        return {f.name: getattr(self, f.name) for f in fields(self)
                if getattr(self, f.name) is not None}


class MotionLib:
    """Motions packed for sampling: ``sample_motions``, ``sample_time``, ``frames_at``."""

    def __init__(self, motions: Sequence[Motion], weights: ArrayLike | None = None,
                 character: CharacterSource | None = None,
                 names: Sequence[str] | None = None) -> None:
        if not motions:
            raise MotionkitError("a motion library needs at least one motion")
        self.character: Character | None = None
        if character is not None:
            self.character = as_character(character)
        else:
            for motion in motions:
                if motion.skeleton is not None:
                    try:
                        self.character = Character.of(motion.skeleton)
                    except ConversionError:
                        continue
                    break
        raw = np.ones(len(motions)) if weights is None else np.asarray(weights, dtype=float)
        if raw.shape != (len(motions),) or np.any(raw < 0) or not np.isfinite(raw).all() \
                or raw.sum() <= 0:
            raise MotionkitError("weights must be one number >= 0 per motion, not all zero")
        self.weights = raw / raw.sum()
        self.names = list(names) if names is not None else [
            str(m.meta.get("name", f"motion{i}")) for i, m in enumerate(motions)]
        #: The clips ``load(filter=...)`` left out, with the reason: (file, verdict).
        self.dropped: list[tuple[str, str]] = []
        #: Each motion's terrain (or None), as PARC's MotionLib keeps them.
        self.terrains = [m.terrain for m in motions]
        self._pack(motions)

    # ------------------------------------------------------------------ construction

    @classmethod
    def load(cls, source: str | os.PathLike[str],
             character: CharacterSource | None = None, *,
             filter: MotionFilter | None = None) -> MotionLib:
        """From one motion file, a folder of ``.pkl`` files, a motion-list YAML, or a packed
        library (``.mkpack``, opened memory-mapped: see ``motionkit pack``). Each file is
        dispatched once, and read with the character where its format takes one.

        ``filter`` keeps only the clips it passes, so a training loop never sees a bad one:
        a check preset (``"default"``, ``"protomotions"`` or a :class:`Preset`: the clip is
        kept when ``motionkit.check`` passes it through the character), or any function of
        a Motion returning True to keep it. ``dropped`` lists what was left out and why. A
        pack is checked when it is made, not here (``filter`` is refused for one).
        """
        target = Path(source)
        char = as_character(character) if character is not None else None
        if target.suffix.lower() == PACK_SUFFIX:
            if filter is not None:
                raise ConversionError("filter= is not applied to a pack: filter the clips "
                                      "before packing them (motionkit check)")
            return cls.from_pack(target, char)
        paths, weights, folder, single = listing(target)
        read: dict[Path, Motion] = {}  # a file listed many times is read once
        options: dict[str, dict[str, object]] = {}  # per format, not per file
        keys = [path.resolve() for path in paths]
        for path, key in zip(paths, keys, strict=True):
            if key not in read:
                read[key] = _read_motion(path, char, single, options)
        motions = [read[key] for key in keys]
        packed, distinct = sum(m.frames for m in motions), sum(m.frames for m in read.values())
        if packed > REPEAT_FACTOR * distinct + REPEAT_SLACK:  # each entry is packed anew
            raise FormatError(f"the list repeats its files: {packed} frames to pack from "
                              f"{distinct} distinct ones; give an entry a larger weight instead "
                              "of listing it again", target)
        names = [p.stem for p in paths] if folder or weights is not None else None
        dropped: list[tuple[str, str]] = []
        if filter is not None:
            verdicts = {key: _verdict(filter, read[key], char) for key in read}
            kept = [k for k, key in enumerate(keys) if verdicts[key] == "pass"]
            dropped = [(str(paths[k]), verdicts[key]) for k, key in enumerate(keys)
                       if verdicts[key] != "pass"]
            if not kept:
                raise ConversionError(f"the filter leaves no motion of {len(keys)} "
                                      f"({dropped[0][0]}: {dropped[0][1]})")
            motions = [motions[k] for k in kept]
            names = [names[k] for k in kept] if names is not None else None
            weights = weights[kept] if weights is not None else None
        library = cls(motions, weights, character=char, names=names)
        library.dropped = dropped
        return library

    def _pack(self, motions: Sequence[Motion]) -> None:
        root_pos: list[Array] = []
        root_rot: list[Array] = []
        joint_rot: list[Array] = []
        contacts: list[Array | None] = []
        counts, rates, loops = [], [], []
        labels: list[str] = []
        given: list[bool] = []  # joint rotations from the file (checked), not from DOFs
        for index, motion in enumerate(motions):
            try:
                rp, rr, jr, ct, rate = self._arrays(motion, index)
            except MotionkitError:
                _check_units(root_rot, joint_rot, given, labels)  # an earlier motion's first
                raise
            root_pos.append(rp)
            root_rot.append(rr)
            joint_rot.append(jr)
            contacts.append(ct)
            counts.append(rp.shape[0])
            rates.append(rate)
            loops.append(str(motion.meta.get("loop_mode", "CLAMP")).upper() == "WRAP")
            labels.append(_label(motion, index))
            given.append("joint_rotations" in motion.tracks)
        self._root_rot, self._joint_rot = _check_units(root_rot, joint_rot, given, labels)
        widths = {c.shape[1] for c in contacts if c is not None}
        width = widths.pop() if len(widths) == 1 else None
        if len(widths) > 1:
            raise MotionkitError("motions have different contact columns")
        if width is None:
            width = self.character.body_count if self.character else joint_rot[0].shape[1] + 1
        filled = [c if c is not None else np.zeros((n, width)) for c, n in
                  zip(contacts, counts, strict=True)]
        self.frame_counts = np.array(counts, dtype=np.int64)
        self.starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
        self.fps = np.array(rates, dtype=np.float64)
        self.lengths = (self.frame_counts - 1) / self.fps
        self.wrap = np.array(loops, dtype=bool)
        self._root_pos = np.concatenate(root_pos)
        self._contacts = np.concatenate(filled).astype(np.float32)
        ends = self.starts + self.frame_counts - 1
        self._loop_shift = self._root_pos[ends] - self._root_pos[self.starts]
        self._loop_shift[:, 2] = 0.0
        self._root_vel, self._root_ang_vel, self._dof_vel = (
            v.astype(np.float32) for v in self._velocities())
        after = np.arange(self._root_pos.shape[0]) + 1
        after[ends] -= 1
        self._root_slerp = _SlerpTable(self._root_rot, after)
        self._joint_slerp = _SlerpTable(self._joint_rot, after)

    def _arrays(self, motion: Motion, index: int) -> tuple[Array, Array, Array,
                                                           Array | None, float]:
        """A motion's root positions, root and joint rotations (not yet normalised: see
        :func:`_check_units`), contacts and rate, its shapes checked."""
        label = _label(motion, index)
        root = motion.root_pose()
        if root is None:
            raise MotionkitError(f"{label} has no root pose")
        if not root.frames:
            raise MotionkitError(f"{label} has no frames")
        if not root.timeline.is_uniform or root.timeline.rate is None:
            raise MotionkitError(f"{label} is time-stamped; resample it first")
        track = motion.tracks.get("joint_rotations")
        if track is None and ("joints" not in motion.tracks or self.character is None):
            raise MotionkitError(f"{label} has no joint rotations (and no character to derive "
                                 "them from joint values)")
        track = track if track is not None else motion.tracks["joints"]
        for other in (track, motion.tracks.get("contacts")):
            if other is not None and other.frames != root.frames:
                raise MotionkitError(f"{label}: track {other.name!r} has {other.frames} frames, "
                                     f"the root {root.frames}")
        data = np.asarray(root.data, dtype=np.float64)
        if track.name == "joint_rotations":
            joint_rot = np.asarray(track.data, dtype=np.float64)
        else:
            assert self.character is not None
            joint_rot = self.character.dofs_to_quats(track.data)
        contacts = motion.tracks.get("contacts")
        return (data[:, :3], data[:, 3:7], joint_rot,
                None if contacts is None else np.asarray(contacts.data, dtype=np.float64)
                .reshape(root.frames, -1), float(root.timeline.rate))

    def _check_ids(self, ids: ArrayLike) -> NDArray[np.int64]:
        """``ids`` as int64, each a valid motion id (MotionkitError otherwise)."""
        out = np.asarray(ids, dtype=np.int64)
        if out.size and (out.min() < 0 or out.max() >= self.num_motions):
            raise MotionkitError(f"motion ids must be in [0, {self.num_motions})")
        return out

    def _velocities(self) -> tuple[Array, Array, Array]:
        total = self._root_pos.shape[0]
        index = np.arange(total)
        ends = self.starts + self.frame_counts - 1
        is_end = np.zeros(total, dtype=bool)
        is_end[ends] = True
        motion_start = np.repeat(self.starts, self.frame_counts)
        first = np.where(is_end, np.maximum(index - 1, motion_start), index)
        second = np.where(is_end, index, index + 1)
        fps = np.repeat(self.fps, self.frame_counts)[:, None]
        root_vel = (self._root_pos[second] - self._root_pos[first]) * fps
        delta = quat.multiply(self._root_rot[second], quat.conjugate(self._root_rot[first]))
        root_ang_vel = quat.to_exp_map(delta) * fps
        local = quat.multiply(self._joint_rot[second], quat.conjugate(self._joint_rot[first]))
        joint_vel = quat.to_exp_map(local) * fps[:, :, None]
        if self.character is not None:
            dof_vel = np.zeros((total, self.character.dof_count))
            for body in range(1, self.character.body_count):
                kind, start = self.character.kinds[body], int(self.character.dof_offsets[body])
                if kind == "hinge":
                    dof_vel[:, start] = joint_vel[:, body - 1] @ self.character.axes[body, 0]
                elif kind == "spherical":
                    dof_vel[:, start:start + 3] = joint_vel[:, body - 1]
        else:
            dof_vel = joint_vel.reshape(total, -1)
        return root_vel, root_ang_vel, dof_vel

    # ------------------------------------------------------------------ queries

    @property
    def num_motions(self) -> int:
        return int(self.frame_counts.size)

    def sample_motions(self, n: int, rng: np.random.Generator | int | None = None) -> NDArray[
            np.int64]:
        """``n`` motion ids drawn with the library's weights."""
        generator = np.random.default_rng(rng)
        return generator.choice(self.num_motions, size=n, p=self.weights).astype(np.int64)

    def sample_time(self, ids: ArrayLike, truncate_time: float | None = None,
                    rng: np.random.Generator | int | None = None) -> Array:
        """Uniform times in ``[0, length - truncate_time]`` (at least 0) of motions ``ids``."""
        ids = self._check_ids(ids)
        generator = np.random.default_rng(rng)
        lengths = self.lengths[ids]
        if truncate_time is not None:
            if truncate_time < 0:
                raise MotionkitError("truncate_time must be >= 0")
            lengths = np.maximum(lengths - truncate_time, 0.0)
        return np.asarray(generator.random(ids.shape) * lengths)

    def frames_at(self, ids: ArrayLike, times: ArrayLike, device: object = None) -> MotionFrames:
        """Interpolated frames of motions ``ids`` at ``times`` (seconds), batched; torch
        tensors on ``device`` (anything ``torch.as_tensor`` takes) when it is given."""
        ids = self._check_ids(ids)
        times = np.broadcast_to(np.asarray(times, dtype=np.float64), ids.shape)
        if not np.isfinite(times).all():
            raise MotionkitError("query times must be finite numbers")
        lengths = self.lengths[ids]
        wrap = self.wrap[ids]
        safe = np.where(lengths > 0, lengths, 1.0)
        loops = np.where(wrap & (lengths > 0), np.floor(times / safe), 0.0)
        local = np.where(wrap, times - loops * lengths, np.clip(times, 0.0, lengths))
        position = local * self.fps[ids]
        last = self.frame_counts[ids] - 1
        low = np.clip(np.floor(position).astype(np.int64), 0, last)
        high = np.minimum(low + 1, last)
        blend = np.clip(position - low, 0.0, 1.0)
        i0 = self.starts[ids] + low
        i1 = self.starts[ids] + high
        b = blend[:, None]
        root_pos = _take(self._root_pos, i0) * (1 - b) + _take(self._root_pos, i1) * b
        root_pos += loops[:, None] * _take(self._loop_shift, ids)
        root_rot = self._root_slerp.at(i0, blend)
        joint_rot = self._joint_slerp.at(i0, blend[:, None])
        b32 = b.astype(np.float32)
        contacts = _take(self._contacts, i0)
        contacts += (_take(self._contacts, i1) - contacts) * b32
        frames = MotionFrames(root_pos, root_rot, _take(self._root_vel, i0),
                              _take(self._root_ang_vel, i0), joint_rot,
                              _take(self._dof_vel, i0), contacts)
        return _to_device(frames, device)

    def frames_for(self, motion_id: int, fk: bool = True, device: object = None) -> MotionFrames:
        """Every frame of one motion; with ``fk`` also world body positions and rotations."""
        if not 0 <= motion_id < self.num_motions:
            raise MotionkitError(f"motion id must be in [0, {self.num_motions})")
        span = slice(int(self.starts[motion_id]),
                     int(self.starts[motion_id] + self.frame_counts[motion_id]))
        root_pos, root_rot = self._root_pos[span].copy(), self._root_rot[span].copy()
        joint_rot = self._joint_rot[span].copy()
        frames = MotionFrames(root_pos, root_rot, self._root_vel[span].copy(),
                              self._root_ang_vel[span].copy(), joint_rot,
                              self._dof_vel[span].copy(), self._contacts[span].copy())
        if fk:
            if self.character is None:
                raise MotionkitError("forward kinematics needs a character (character=...)")
            frames.body_pos, frames.body_rot = character_poses(
                self.character, root_pos, root_rot, joint_rot)
        return _to_device(frames, device)

    def __len__(self) -> int:
        return self.num_motions

    def state(self) -> dict[str, NDArray[np.generic]]:
        """Every array the queries use, by name: what a packed library stores."""
        arrays: dict[str, NDArray[np.generic]] = {
            "frame_counts": self.frame_counts, "fps": self.fps, "wrap": self.wrap,
            "weights": self.weights}
        arrays.update({name: getattr(self, "_" + name) for name in _STATE})
        for table in ("root_slerp", "joint_slerp"):
            slerp: _SlerpTable = getattr(self, "_" + table)
            arrays.update({f"{table}.{part}": getattr(slerp, part) for part in _SLERP})
        return arrays

    @classmethod
    def from_state(cls, arrays: dict[str, NDArray[np.generic]], names: Sequence[str],
                   character: Character | None = None) -> MotionLib:
        """A library from :meth:`state`'s arrays (used as they are: memory maps stay maps).

        The caller has checked the arrays' shapes agree (``packfile.Pack`` does), and their
        dtypes are :meth:`state`'s (``packfile.SPEC``)."""
        lib = cls.__new__(cls)
        lib.character = character
        lib.weights = arrays["weights"]
        lib.names = list(names)
        lib.frame_counts = cast("NDArray[np.int64]", arrays["frame_counts"])
        lib.fps = cast("NDArray[np.float64]", arrays["fps"])
        lib.wrap = arrays["wrap"]
        lib.starts = np.concatenate([[0], np.cumsum(lib.frame_counts)[:-1]]).astype(np.int64)
        lib.lengths = (lib.frame_counts - 1) / lib.fps
        lib.terrains = [None] * len(lib.names)
        for name in _STATE:
            setattr(lib, "_" + name, arrays[name])
        for table in ("root_slerp", "joint_slerp"):
            slerp = _SlerpTable.__new__(_SlerpTable)
            for part in _SLERP:
                setattr(slerp, part, arrays[f"{table}.{part}"])
            setattr(lib, "_" + table, slerp)
        return lib

    @classmethod
    def from_pack(cls, path: str | os.PathLike[str], character: Character | None = None,
                  verify: bool = False) -> MotionLib:
        """A library whose arrays are memory maps of a pack (``motionkit pack``).

        A truncated or damaged pack is one FormatError. ``verify`` also checks every array
        against its hash (reads the whole file)."""
        pack = packfile.Pack(Path(path))
        if verify and (problems := pack.verify()):
            raise FormatError(f"is damaged: {problems[0]}", path)
        joints = pack.arrays["joint_rot"].shape[1]
        if character is not None and character.body_count != joints + 1:
            raise MotionkitError(f"the character has {character.body_count} bodies; the "
                                 f"motions of {path} have {joints + 1}")
        return cls.from_state(pack.arrays, pack.index["names"], character)

    def __repr__(self) -> str:
        return (f"MotionLib({self.num_motions} motions, {int(self.frame_counts.sum())} frames, "
                f"{float(self.lengths.sum()):.1f} s)")


#: Per-frame arrays kept as ``_<name>`` attributes, and the parts of a slerp table.
_STATE = ("root_pos", "root_rot", "joint_rot", "contacts", "loop_shift", "root_vel",
          "root_ang_vel", "dof_vel")
_SLERP = ("start", "end", "theta", "inv_sin")


class _SlerpTable:
    """Slerp between each frame and the next, with the per-pair angle precomputed.

    Queries then cost two sines per quaternion. Rotations (like velocities and contacts)
    are kept in float32, which is what training code consumes; for nearly equal pairs the
    angle is floored at 1e-4 rad, where slerp and its linear limit agree to ~1e-9.
    """

    def __init__(self, rotations: Array, after: NDArray[np.int64]) -> None:
        start = rotations.astype(np.float32)
        end, cosine = quat.shortest_arc(start.astype(np.float64), start[after])
        theta = np.maximum(np.arccos(np.clip(cosine, 0.0, 1.0)), 1e-4)
        self.start = start
        self.end = end
        self.theta = theta.astype(np.float32)
        self.inv_sin = (1.0 / np.sin(theta)).astype(np.float32)

    def at(self, index: NDArray[np.int64], blend: Array) -> NDArray[np.float32]:
        """Slerp from frame ``index`` towards the next one by ``blend`` in [0, 1]."""
        theta = _take(self.theta, index)
        inv = _take(self.inv_sin, index)
        t = blend.astype(np.float32)
        w0 = (1.0 - t) * theta  # the weights and the result are built in place
        np.sin(w0, out=w0)
        w0 *= inv
        w1 = t * theta
        np.sin(w1, out=w1)
        w1 *= inv
        out = _take(self.start, index)
        out *= w0[..., None]
        end = _take(self.end, index)
        end *= w1[..., None]
        out += end
        return out


def _take(table: NDArray[ScalarT], index: NDArray[np.int64]) -> NDArray[ScalarT]:
    """``table[index]`` along the first axis (``take``: faster than fancy indexing)."""
    return table.take(index, axis=0)


#: How many times over a motion list may repeat its files' frames (memory is per entry).
REPEAT_FACTOR = 8
REPEAT_SLACK = 1_000_000


MotionFilter: TypeAlias = "str | Preset | Callable[[Motion], bool]"


def _verdict(rule: MotionFilter, motion: Motion, character: Character | None) -> str:
    """``pass`` when ``rule`` keeps the motion, else why not."""
    if callable(rule) and not isinstance(rule, Preset):
        return "pass" if rule(motion) else "fail:filter"
    report = check(motion, character.skeleton if character is not None else None, preset=rule)
    return report.verdict if report.passed else ", ".join(f"fail:{name}" for name in report.failed)


def as_character(source: CharacterSource) -> Character:
    """The Character of ``source``: itself, a Skeleton's, or that of the model file it
    names (read through the registry, which picks the format)."""
    if isinstance(source, (Character, Skeleton)):
        return Character.of(source)
    try:
        return Character.of(api.read_skeleton(source))
    except ConversionError as exc:
        raise FormatError(f"is not a character model: {exc}", source) from None


class Listing(NamedTuple):
    """What ``MotionLib.load`` reads for a target."""

    paths: list[Path]
    weights: Array | None  # a motion list's
    folder: bool
    single: registry.Format | None  # the format of a lone motion file (dispatched once)


def listing(target: Path) -> Listing:
    """The motion files ``MotionLib.load`` reads for ``target``: every ``.pkl``/``.ms`` of a
    folder (sorted), the entries of a motion list with its weights, or the one file."""
    if target.is_dir():
        files = sorted(p for p in target.rglob("*") if p.suffix.lower() in (".pkl", ".ms"))
        if not files:
            raise FormatError("no .pkl motion files in this folder", target)
        return Listing(files, None, True, None)
    info = registry.for_reading(target)
    if not info.lists_files:
        return Listing([target], None, False, info)
    entries = info.read(target)
    assert isinstance(entries, MotionList)
    if len(entries.paths) > MAX_MOTIONS:
        raise FormatError(f"motion list has more than {MAX_MOTIONS} entries", target)
    for entry in entries.entries:
        if not is_there(entry.path):
            raise FormatError(entry.missing(), target)
    return Listing(list(entries.paths), np.asarray(entries.weights, dtype=float), False, None)


def _read_motion(path: Path, character: Character | None,
                 info: registry.Format | None = None,
                 options: dict[str, dict[str, object]] | None = None) -> Motion:
    """A read with the character where the format's reader takes one (dispatched here
    unless ``info`` says already; ``options`` keeps each format's reader options, which
    cost a signature inspection each time they are found). Misc data is not decoded where
    a reader can skip it (PARC): a library never uses it, and most of a torch-laden PARC
    file's read time is there; what is not decoded cannot run."""
    info = info or registry.for_reading(path)
    known = options if options is not None else {}
    if info.name not in known:
        known[info.name] = info.reader_options(character=character, misc=False)
    obj = info.read(path, **known[info.name])
    if not isinstance(obj, Motion):
        raise FormatError(f"holds a {type(obj).__name__}, not a motion", path)
    return obj


def _to_device(frames: MotionFrames, device: object) -> MotionFrames:
    if device is None:
        return frames
    try:
        import torch
    except ImportError:
        raise MotionkitError("device= needs torch, which is not installed") from None
    for name, value in frames.as_dict().items():
        setattr(frames, name, torch.as_tensor(np.ascontiguousarray(value),
                                              dtype=torch.float32, device=device))
    return frames


def _label(motion: Motion, index: int) -> str:
    """How messages name a motion of the library."""
    return f"motion {index}" + (f" ({motion.meta['name']!r})" if motion.meta.get("name") else "")


def _check_units(root_rot: list[Array], joint_rot: list[Array], given: list[bool],
                 labels: list[str]) -> tuple[Array, Array]:
    """All motions' root and joint rotations, packed, as unit quaternions with w >= 0: one
    check and one normalisation per pack, not per motion. MotionkitError at the first
    motion (root before joints) with a zero or non-finite quaternion, naming its frame;
    then for joint counts that differ. Joint rotations derived from DOFs (``given``
    False) are taken as they are."""
    if not root_rot:
        return np.zeros((0, 4)), np.zeros((0, 0, 4))
    counts = [len(q) for q in root_rot]
    roots = np.concatenate(root_rot)
    root_norm, root_bad = _norms(roots)
    taken = np.repeat(np.array(given, dtype=bool), counts)
    shapes = {j.shape[1:] for j in joint_rot}
    if len(shapes) == 1:
        joints = np.concatenate(joint_rot)
        joint_norm, joint_bad = _norms(joints)
    else:  # refused below, after this check (as when each motion was checked alone)
        joint_bad = np.concatenate([_norms(j)[1] for j in joint_rot])
    joint_bad &= taken
    if root_bad.any() or joint_bad.any():
        _raise_first(root_bad, joint_bad, counts, labels)
    if len(shapes) != 1:
        raise MotionkitError("motions have different joint counts "
                             f"{sorted(shape[0] for shape in shapes)}")
    roots = quat.positive_w(roots / root_norm)
    if taken.all():
        return roots, quat.positive_w(joints / joint_norm)
    keep = taken[:, None, None]
    unit = quat.positive_w(joints / np.where(keep, joint_norm, 1.0))
    return roots, np.where(keep, unit, joints)


def _norms(q: Array) -> tuple[Array, NDArray[np.bool_]]:
    """Quaternion norms (last axis kept) and, per frame, whether any is zero or not finite."""
    norm = np.linalg.norm(q, axis=-1, keepdims=True)
    bad = ~(np.isfinite(norm) & (norm > 0))
    return norm, bad.reshape(len(q), -1).any(axis=1)


def _raise_first(root_bad: NDArray[np.bool_], joint_bad: NDArray[np.bool_], counts: list[int],
                 labels: list[str]) -> None:
    """The error the first motion with a bad rotation gets (its root first)."""
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    motion_of = np.repeat(np.arange(len(counts)), counts)
    first = {what: int(motion_of[np.argmax(bad)]) for what, bad in
             (("root orientation", root_bad), ("joint rotation", joint_bad)) if bad.any()}
    what = min(first, key=lambda key: (first[key], key != "root orientation"))
    bad = root_bad if what == "root orientation" else joint_bad
    index = first[what]
    frame = int(np.argmax(bad[starts[index]:starts[index] + counts[index]]))
    raise MotionkitError(f"{labels[index]}: {what} at frame {frame} is zero or not finite")

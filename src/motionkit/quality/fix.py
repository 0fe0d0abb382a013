"""Safe fixes of what ``check`` finds, only when asked (``motionkit fix``, ``check --fix``).

- **spikes**: runs of at most ``max_spike`` seconds of frames out of line are dropped and
  filled again from the frame before and the frame after the run (``ops.resample.sample``:
  linear, slerp for rotations), so the timeline stays as it was and no gap appears. A run
  opens after a frame pair that jumps (body or joint speed over the preset's threshold)
  and closes on the nearest later frame, after another jumping pair at most ``max_spike``
  on, that really comes back to the motion before the run:

  1. *it returns*: the run's jumps add up to nothing. Each jumping pair's motion beyond
     the velocity of the clean pairs nearest to it (before and after, averaged) is its
     jump; summed over the run's jumping pairs, for every body's position and every
     body's turn in its parent, it is within one frame at the threshold speed. A second
     step the same way, or a frame still out of line (a spike that decays over two
     frames), does not return, so it never closes a run;
  2. *it bridges*: the straight refill between the two frames (each body's chord, each
     joint's turn, over the run's time) stays under the speed thresholds.

  The speeds and the return come from the FK poses of the one check that found the
  jumps, so the search costs no further check. A frame that opens another jump may
  close a run when it returns (two spikes with a clean frame between are two runs); a
  jump after which no frame returns is a step: left alone, and said so; so is a clip
  of at least :data:`FEW_PAIRS` frame pairs of which most jump (:data:`MOST_JUMPS`: it
  is fast, not spiky). Frames that are not numbers are no steps and nothing to refill
  from: a fix refuses the motion and names them (mend or cut them first);
- **limits**: joint values are clipped into the model's ranges (a character's
  ``joint_rotations`` are made again from the clipped values);
- **lift**: the whole clip is moved up or down so that its lowest shape point over the
  clip touches the ground (the terrain under it where there is one), in every preset:
  under ``protomotions`` the flat plane its rules use, measured on the shapes (not its
  body origins, which stand above the soles).

Every fix made is listed in ``meta["quality_fixes"]`` of the motion returned (after the
fixes an input already listed), which the writer then holds or refuses under the loss
rule like any other metadata; what was found and left alone is only reported
(:attr:`Fixed.left`), since it changed nothing in the file.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import NDArray

from ..errors import ConversionError, choices
from ..kinematics.motion import coordinates, link_poses
from ..model.character import Character
from ..model.motion import Motion
from ..model.skeleton import Skeleton
from ..model.timeline import Timeline
from ..model.track import Track
from ..ops.resample import sample
from .check import (
    GroundSpec,
    check,
    frame_turns,
    local_rotations,
    model_of,
    protomotions_ground,
    require_frames,
)
from .presets import Preset
from .presets import preset as find_preset

FIXES = ("spikes", "limits", "lift")
#: A lift smaller than this (m) is not made.
LIFT_TOLERANCE = 1e-4
#: The longest run of frames refilled as one spike (s): a quick glitch of a capture or a
#: solver, not a move; at least one frame at any rate.
SPIKE_TIME = 0.1
#: The checks whose jumps make spikes.
SPEED_CHECKS = ("body_speed", "joint_speed")
#: A clip in which more than this share of frame pairs jump is fast for the thresholds
#: throughout, not spiky: refilling would rewrite most of it, so nothing is refilled.
MOST_JUMPS = 0.5
#: Below this many frame pairs a clip is too short to call fast throughout (a one-frame
#: spike in a 4-frame clip makes 2 of 3 pairs jump).
FEW_PAIRS = 8

Array = NDArray[np.float64]


@dataclass
class Fixed:
    """What :func:`apply_fixes` gives: the fixed motion, one line per fix made (also in
    its ``meta["quality_fixes"]``), and one line per thing found but left alone."""

    motion: Motion
    fixes: list[str]
    left: list[str]


def fix(motion: Motion, skeleton: Skeleton | Character | None = None, *,
        ground: GroundSpec = None, preset: str | Preset = "default",
        fixes: tuple[str, ...] = FIXES, max_spike: float = SPIKE_TIME,
        **thresholds: float | int | None) -> Motion:
    """A copy of ``motion`` with the ``fixes`` applied (see the module's docstring), in
    the order spikes, limits, lift; ``meta["quality_fixes"]`` lists each."""
    return apply_fixes(motion, skeleton, ground=ground, preset=preset, fixes=fixes,
                       max_spike=max_spike, **thresholds).motion


def check_fixes(fixes: tuple[str, ...], max_spike: float = SPIKE_TIME) -> None:
    """A ConversionError naming the first of ``fixes`` that is not one of :data:`FIXES`, or
    a ``max_spike`` that is not a time >= 0 (so a command refuses them before reading)."""
    for name in fixes:
        if name not in FIXES:
            raise ConversionError(f"unknown fix {name!r} ({choices(name, FIXES, 'fixes')})")
    if not (isinstance(max_spike, int | float) and np.isfinite(max_spike) and max_spike >= 0):
        raise ConversionError(f"the longest spike must be a time >= 0 (s), not {max_spike!r}")


def apply_fixes(motion: Motion, skeleton: Skeleton | Character | None = None, *,
                ground: GroundSpec = None, preset: str | Preset = "default",
                fixes: tuple[str, ...] = FIXES, max_spike: float = SPIKE_TIME,
                **thresholds: float | int | None) -> Fixed:
    """:func:`fix`, with the lines of what was done and of what was left alone. A motion
    without frames, with frames that are not numbers, or whose ``quality_fixes`` is not
    texts is refused (ConversionError), before anything is changed."""
    check_fixes(fixes, max_spike)
    model = model_of(motion, skeleton)
    require_frames(motion)
    before = _listed(motion.meta.get("quality_fixes"))
    out = Motion(dict(motion.tracks), motion.skeleton, motion.terrain, dict(motion.meta))
    done: list[str] = []
    left: list[str] = []
    chosen = find_preset(preset).with_options(**thresholds)
    poses = _finite_poses(out, model)
    if "spikes" in fixes:
        _spikes(out, model, poses, ground, chosen, max_spike, done, left)
    if "limits" in fixes:
        clipped = _clip_limits(out, model)
        if clipped.startswith("limits: not clipped"):
            left.append(clipped)
        elif clipped:
            done.append(clipped)
    if "lift" in fixes:
        lift = _lift(out, model, ground, chosen)
        if lift:
            done.append(lift)
    if before or done:
        out.meta["quality_fixes"] = before + done
    return Fixed(out, done, left)


def _finite_poses(motion: Motion, model: Skeleton) -> Array:
    """The FK poses ``(frames, bodies, 7)`` of ``motion``; a ConversionError naming the
    frames that are not numbers (no fix has anything to measure or refill them from)."""
    poses = np.asarray(link_poses(model, motion).data, dtype=np.float64)
    broken = ~np.isfinite(poses).all(axis=(1, 2))
    if broken.any():
        raise ConversionError(f"frames {_spans(np.flatnonzero(broken))} are not numbers (NaN "
                              "or infinite poses): nothing fixed; mend or cut them first")
    return poses


def _spans(frames: NDArray[np.intp]) -> str:
    """Frame numbers as ``[3, 7..12]``: runs of consecutive frames as first..last."""
    edges = np.flatnonzero(np.diff(frames) != 1)
    starts = np.concatenate([[0], edges + 1])
    stops = np.concatenate([edges, [len(frames) - 1]])
    return "[" + ", ".join(f"{frames[a]}" if a == b else f"{frames[a]}..{frames[b]}"
                           for a, b in zip(starts, stops, strict=True)) + "]"


def _spikes(motion: Motion, model: Skeleton, poses: Array, ground: GroundSpec,
            chosen: Preset, max_spike: float, done: list[str], left: list[str]) -> None:
    """Refill the spikes of ``motion`` in place; the lines of what was done and left."""
    speeds = tuple(name for name in SPEED_CHECKS if name in chosen.checks)
    if not speeds:
        return
    measure = replace(chosen, checks=speeds)
    first = check(motion, model, ground=ground, preset=measure)
    jumps = np.zeros(max(first.frames - 1, 0), dtype=bool)
    for result in first.results:
        if result.failing is not None and not result.passed:
            jumps |= result.failing[1:]  # frame t + 1 holds the pair (t, t + 1)
    if not jumps.any():
        return
    if len(jumps) >= FEW_PAIRS and jumps.mean() > MOST_JUMPS:
        left.append(f"spikes: {int(jumps.sum())} of {len(jumps)} frame pairs jump (more than "
                    f"{MOST_JUMPS:g} of them): the clip is faster than the thresholds "
                    "throughout, not spiky; not refilled")
        return
    longest = max(1, int(np.floor(max_spike * first.fps + 1e-9)))
    limit = f"{longest} frame(s) ({max_spike:g} s at {first.fps:g} fps)"
    main = motion.tracks.get("joints") or motion.root_pose() or motion.main_track
    assert main is not None  # require_frames
    steps = (np.full(len(jumps), 1.0 / first.fps) if chosen.protomotions
             else np.diff(np.asarray(main.times, dtype=np.float64)))
    bridge = Bridge(poses, model.parents, steps, jumps, measure, 1.0 / first.fps)
    runs, stepped = spike_runs(jumps, longest, bridge)
    if runs:
        drop = np.zeros(first.frames, dtype=bool)
        for start, stop in runs:
            drop[start:stop] = True
        _refill(motion, drop)
        frames = np.flatnonzero(drop).tolist()
        done.append(f"spikes: dropped frames {frames} and filled them from their neighbours "
                    f"(linear, slerp; runs of at most {limit} that come back to the motion "
                    "before them)")
    if stepped:
        left.append(f"spikes: the jumps after frames {stepped} do not come back within "
                    f"{limit} to the motion before them (a step, or a longer run): "
                    "not refilled")


def spike_runs(jumps: NDArray[np.bool_], longest: int, bridges: Callable[[int, int], bool],
               ) -> tuple[list[tuple[int, int]], list[int]]:
    """The runs of frames ``[start, stop)`` out of line, from which frame pairs ``(t, t +
    1)`` jump: a run opens after a jumping pair and closes with the nearest jumping pair at
    most ``longest`` frames on for which ``bridges(start - 1, stop)`` (the frame after
    the run comes back to the motion before it: :class:`Bridge`); an end frame whose one
    pair jumps, and its neighbour's next pair does not, is a run of one (a one-sided jump
    at the clip's ends). Also the pairs whose jump opens no run (a step). A frame between
    good pairs outside every run is never in one, so a refill rewrites no clean frame."""
    pairs = np.flatnonzero(jumps).tolist()
    frames = len(jumps) + 1
    runs: list[tuple[int, int]] = []
    steps: list[int] = []
    if frames < 3:
        return runs, pairs
    k = 0
    while k < len(pairs):
        opening = pairs[k]
        closing = None
        for m in range(k + 1, len(pairs)):
            if pairs[m] - opening > longest:
                break
            if bridges(opening, pairs[m] + 1):
                closing = m
                break
        if closing is not None:
            runs.append((opening + 1, pairs[closing] + 1))
            k = closing + 1
            continue
        if opening == 0 and not jumps[1]:
            runs.append((0, 1))
        elif opening == frames - 2 and not jumps[-2]:
            runs.append((frames - 1, frames))
        else:
            steps.append(opening)
        k += 1
    return runs, steps


class Bridge:
    """Whether the frame ``after`` a run comes back to the frame ``before`` it (the
    module's rules 1 and 2), from the clip's FK poses: no check per candidate."""

    def __init__(self, poses: Array, parents: NDArray[np.intp], steps: Array,
                 jumps: NDArray[np.bool_], preset: Preset, frame_time: float) -> None:
        positions = poses[..., :3]
        #: each non-root body's rotation in its parent (what joint speed measures)
        self.local = local_rotations(poses[..., 3:], parents)
        self.positions, self.steps, self.jumps, self.preset = positions, steps, jumps, preset
        self.body = "body_speed" in preset.checks
        self.joint = "joint_speed" in preset.checks
        self.frame_time = frame_time
        #: per jumping pair its motion beyond the velocity of the clean pairs nearest to it
        #: (zero on clean pairs): what a run's jumps must add up to nothing of
        self.moved = self._jumped(positions[1:] - positions[:-1])
        self.turned = self._jumped(frame_turns(self.local))

    def _jumped(self, motion: Array) -> Array:
        """Per frame pair of ``motion`` ``(pairs, ...)`` what a jumping pair moved beyond
        the rate of the nearest clean pair before it and after it (averaged; one side
        where there is no other), zero on clean pairs."""
        jumps, steps = self.jumps, self.steps
        out = np.zeros_like(motion)
        clean = np.flatnonzero(~jumps & (steps > 0))
        pairs = np.flatnonzero(jumps)
        if not len(pairs) or not len(clean):
            out[pairs] = motion[pairs]
            return out
        shape = (-1, *([1] * (motion.ndim - 1)))  # one value per pair, over the rest
        rates = motion[clean] / steps[clean].reshape(shape)
        at = np.searchsorted(clean, pairs)
        before, after = at > 0, at < len(clean)
        total = np.where(before.reshape(shape), rates[np.maximum(at - 1, 0)], 0.0) + np.where(
            after.reshape(shape), rates[np.minimum(at, len(clean) - 1)], 0.0)
        rate = total / (before.astype(np.float64) + after).reshape(shape)
        out[pairs] = motion[pairs] - rate * steps[pairs].reshape(shape)
        return out

    def _turn(self, first: int, last: int) -> Array:
        """Each joint's turn from frame ``first`` to ``last`` (exponential maps)."""
        turn: Array = frame_turns(self.local[[first, last]])[0]
        return turn

    def _size(self, vectors: Array) -> float:
        """The largest vector: its norm, or ProtoMotions' largest |component|."""
        if not vectors.size:
            return 0.0
        if self.preset.protomotions:
            return float(np.abs(vectors).max())
        return float(np.sqrt(np.einsum("...i,...i->...", vectors, vectors).max()))

    def __call__(self, before: int, after: int) -> bool:
        span = float(self.steps[before:after].sum())
        if not span > 0:
            return False
        p = self.preset
        if self.body and (
                self._size(self.positions[after] - self.positions[before]) / span > p.body_speed
                or self._size(self.moved[before:after].sum(axis=0))
                > p.body_speed * self.frame_time):
            return False
        return not self.joint or (
            self._size(self._turn(before, after)) / span <= p.joint_speed
            and self._size(self.turned[before:after].sum(axis=0)) <= p.joint_speed * self.frame_time)


def _lift(motion: Motion, model: Skeleton, ground: GroundSpec, chosen: Preset) -> str:
    """Move the root so that the lowest shape point over the clip (body origins where the
    model has no shapes) touches the ground, whatever the checking preset measures
    (ProtoMotions' body origins stand above the soles); a line saying what was done, or ''."""
    under = protomotions_ground(motion, ground) if chosen.protomotions else ground
    measure = replace(chosen, name="lift", checks=("below_ground",), protomotions=False)
    measured = check(motion, model, ground=under, preset=measure)
    result = measured.result("below_ground")
    lowest = result.value  # finite: apply_fixes refused poses that are not numbers
    if abs(lowest) <= LIFT_TOLERANCE:
        return ""
    root = motion.tracks.get("root")
    if root is None or root.kind != "pose":
        raise ConversionError("lifting needs a root pose track")
    data = np.asarray(root.data, dtype=np.float64).copy()
    data[:, 2] -= lowest
    motion.tracks["root"] = root.with_data(data)
    points = "shape point" if result.constants.get("points") == "lowest shape points" else \
        "body origin (the model has no shapes)"
    return (f"lift: root moved {-lowest:+.6f} m in z so that the lowest {points} over the "
            f"clip touches the ground ({measured.ground['source']})")


def _listed(value: object) -> list[str]:
    """The fixes an input's ``quality_fixes`` lists already: a list or tuple of texts, or
    one text (its first entry); anything else is refused by name, never dropped."""
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, list | tuple) and all(isinstance(item, str) for item in value):
        return list(value)
    raise ConversionError(f"metadata quality_fixes is a {type(value).__name__}, not a list "
                          f"of texts: {str(value)[:80]!r}; mend or drop it to fix the motion")


def _refill(motion: Motion, drop: NDArray[np.bool_]) -> None:
    """Every track on the dropped frames' timeline, those frames made again from the
    others."""
    keep = ~drop
    if keep.sum() < 2:
        raise ConversionError("a spike touches nearly every frame: nothing to fill it from")
    for name, track in list(motion.tracks.items()):
        if track.frames != len(drop) or not np.issubdtype(track.data.dtype, np.floating):
            continue
        times = track.times
        kept = Track(track.name, track.kind, np.asarray(track.data)[keep],
                     Timeline.stamped(times[keep]))
        data = np.asarray(track.data, dtype=np.float64).copy()
        data[drop] = sample(kept, times[drop])
        motion.tracks[name] = track.with_data(data.astype(track.data.dtype))


def _clip_limits(motion: Motion, skeleton: Skeleton) -> str:
    """Clip the joint values into the model's ranges; a line saying what changed, or ''."""
    joints = motion.tracks.get("joints")
    q, _ = coordinates(skeleton, motion)
    fixed = np.clip(q, skeleton.lower, skeleton.upper)
    changed = np.abs(fixed - q) > 0
    if not changed.any():
        return ""
    if joints is None:
        return ("limits: not clipped, the motion has no joint values (only rotations "
                "outside the model's joint frames)")
    data = np.asarray(joints.data, dtype=np.float64).reshape(joints.frames, -1).copy()
    names = skeleton.dof_names
    if joints.labels:
        lookup = {name: i for i, name in enumerate(names)}
        lookup.update({j.name: j.dof_offset for j in skeleton.joints if j.dof_count == 1})
        for column, label in enumerate(joints.labels):
            data[:, column] = fixed[:, lookup[label]]
    elif data.shape[1] == skeleton.dof_count:
        data = fixed
    elif data.shape[1] == skeleton.dof_count - 6:
        data = fixed[:, 6:]
    else:
        return "limits: not clipped, the joint columns do not map one to one onto the model"
    motion.tracks["joints"] = joints.with_data(data.astype(joints.data.dtype)
                                               .reshape(joints.data.shape))
    if "joint_rotations" in motion.tracks:
        rotations = motion.tracks["joint_rotations"]
        character = Character.from_skeleton(skeleton)
        values = np.asarray(motion.tracks["joints"].data, dtype=np.float64)
        if motion.tracks["joints"].labels and list(motion.tracks["joints"].labels) != list(
                character.dof_names):
            return (f"limits: clipped {int(changed.any(axis=0).sum())} coordinate(s); the "
                    "joint rotations were left as they were (their columns differ)")
        motion.tracks["joint_rotations"] = rotations.with_data(
            character.dofs_to_quats(values).astype(rotations.data.dtype))
    worst = float(np.abs(fixed - q).max())
    return (f"limits: clipped {int(changed.any(axis=0).sum())} coordinate(s) on "
            f"{int(changed.any(axis=1).sum())} frame(s) into the model's ranges (at most "
            f"{worst:.6f})")

"""Safe fixes of what ``check`` finds, only when asked (``motionkit fix``, ``check --fix``).

- **spikes**: runs of at most ``max_spike`` seconds of frames out of line (the frame pair
  before the run and the one closing it jump in body or joint speed, while the frame
  before and the frame after the run are consistent with each other: a straight bridge
  between them over the run's time stays under the preset's speed thresholds) are
  dropped and filled again from those two frames (``ops.resample.sample``: linear, slerp
  for rotations), so the timeline stays as it was and no gap appears. A jump that does
  not come back within that time is a step: left alone, and said so; so is a clip in
  which most frame pairs jump (:data:`MOST_JUMPS`: it is fast, not spiky);
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
from ..kinematics.motion import coordinates
from ..model.character import Character
from ..model.motion import Motion
from ..model.skeleton import Skeleton
from ..model.timeline import Timeline
from ..model.track import Track
from ..ops.resample import sample
from .check import GroundSpec, check, model_of, protomotions_ground
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
    """:func:`fix`, with the lines of what was done and of what was left alone."""
    check_fixes(fixes, max_spike)
    model = model_of(motion, skeleton)
    out = Motion(dict(motion.tracks), motion.skeleton, motion.terrain, dict(motion.meta))
    done: list[str] = []
    left: list[str] = []
    chosen = find_preset(preset).with_options(**thresholds)
    if "spikes" in fixes:
        _spikes(out, model, ground, chosen, max_spike, done, left)
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
    before = _listed(motion.meta.get("quality_fixes"))
    if before or done:
        out.meta["quality_fixes"] = before + done
    return Fixed(out, done, left)


def _spikes(motion: Motion, model: Skeleton, ground: GroundSpec, chosen: Preset,
            max_spike: float, done: list[str], left: list[str]) -> None:
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
    if jumps.mean() > MOST_JUMPS:
        left.append(f"spikes: {int(jumps.sum())} of {len(jumps)} frame pairs jump (more than "
                    f"{MOST_JUMPS:g} of them): the clip is faster than the thresholds "
                    "throughout, not spiky; not refilled")
        return
    longest = max(1, int(np.floor(max_spike * first.fps + 1e-9)))
    limit = f"{longest} frame(s) ({max_spike:g} s at {first.fps:g} fps)"

    def bridges(before: int, after: int) -> bool:
        return _bridges(motion, model, ground, measure, before, after)

    runs, steps = spike_runs(jumps, longest, bridges)
    if runs:
        drop = np.zeros(first.frames, dtype=bool)
        for start, stop in runs:
            drop[start:stop] = True
        _refill(motion, drop)
        frames = np.flatnonzero(drop).tolist()
        done.append(f"spikes: dropped frames {frames} and filled them from their neighbours "
                    f"(linear, slerp; runs of at most {limit} between consistent frames)")
    if steps:
        left.append(f"spikes: the jumps after frames {steps} do not come back within {limit} "
                    "to a frame consistent with the one before (a step, or a longer run): "
                    "not refilled")


def spike_runs(jumps: NDArray[np.bool_], longest: int, bridges: Callable[[int, int], bool],
               ) -> tuple[list[tuple[int, int]], list[int]]:
    """The runs of frames ``[start, stop)`` out of line, from which frame pairs ``(t, t +
    1)`` jump: a run opens after a jumping pair and closes with the nearest jumping pair at
    most ``longest`` frames on for which ``bridges(start - 1, stop)`` (the frames on either
    side are consistent with each other); an end frame whose one pair jumps, and its
    neighbour's next pair does not, is a run of one (a one-sided jump at the clip's
    ends). Also the pairs whose jump opens no run (a step). A frame between good pairs
    outside every run is never in one, so a refill rewrites no clean frame."""
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


def _bridges(motion: Motion, model: Skeleton, ground: GroundSpec, measure: Preset,
             before: int, after: int) -> bool:
    """Whether frames ``before`` and ``after`` are consistent: the frames between them
    filled from those two pass the speed checks."""
    window = _window(motion, before, after + 1)
    drop = np.ones(after + 1 - before, dtype=bool)
    drop[[0, -1]] = False
    _refill(window, drop)
    return check(window, model, ground=ground, preset=measure).passed


def _window(motion: Motion, start: int, stop: int) -> Motion:
    """Frames ``[start, stop)`` of the tracks on the motion's frames (their timeline's
    rate kept: ProtoMotions' speeds use it)."""
    frames = motion.frames
    tracks = {}
    for name, track in motion.tracks.items():
        if track.frames != frames:
            continue
        line = track.timeline
        part = (Timeline.uniform(line.rate, stop - start, float(track.times[start]))
                if line.is_uniform and line.rate else
                Timeline.stamped(track.times[start:stop], rate=line.rate))
        tracks[name] = track.with_data(np.asarray(track.data)[start:stop], part)
    return Motion(tracks, motion.skeleton, motion.terrain, dict(motion.meta))


def _lift(motion: Motion, model: Skeleton, ground: GroundSpec, chosen: Preset) -> str:
    """Move the root so that the lowest shape point over the clip (body origins where the
    model has no shapes) touches the ground, whatever the checking preset measures
    (ProtoMotions' body origins stand above the soles); a line saying what was done, or ''."""
    under = protomotions_ground(motion, ground) if chosen.protomotions else ground
    measure = replace(chosen, name="lift", checks=("below_ground",), protomotions=False)
    measured = check(motion, model, ground=under, preset=measure)
    result = measured.result("below_ground")
    lowest = result.value
    if not np.isfinite(lowest):
        raise ConversionError("lifting needs finite poses (a frame is not a number)")
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
    return [str(item) for item in value] if isinstance(value, list) else []


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

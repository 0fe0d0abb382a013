"""Safe fixes of what ``check`` finds, only when asked (``motionkit check --fix``).

- **spikes**: the frames out of line with both neighbours (:func:`spike_frames`: the
  frame pairs on both sides of it jump in body or joint speed) are dropped and filled
  again from their neighbours (``ops.resample.sample``: linear, slerp for rotations), so
  the timeline stays as it was and no gap appears;
- **limits**: joint values are clipped into the model's ranges (a character's
  ``joint_rotations`` are made again from the clipped values);
- **lift**: the whole clip is moved up or down so that its lowest shape point over the
  clip touches the ground (the terrain under it where there is one), in every preset:
  under ``protomotions`` the flat plane its rules use, measured on the shapes (not its
  body origins, which stand above the soles).

Every fix applied is listed in ``meta["quality_fixes"]`` of the motion returned, which the
writer then holds or refuses under the loss rule like any other metadata.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from numpy.typing import NDArray

from ..errors import ConversionError
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
from .report import CheckReport

FIXES = ("spikes", "limits", "lift")
#: A lift smaller than this (m) is not made.
LIFT_TOLERANCE = 1e-4


def fix(motion: Motion, skeleton: Skeleton | Character | None = None, *,
        ground: GroundSpec = None, preset: str | Preset = "default",
        fixes: tuple[str, ...] = FIXES, **thresholds: float | int | None) -> Motion:
    """A copy of ``motion`` with the ``fixes`` applied (see the module's docstring), in
    the order spikes, limits, lift; ``meta["quality_fixes"]`` lists each."""
    unknown = [name for name in fixes if name not in FIXES]
    if unknown:
        raise ConversionError(f"unknown fix {unknown[0]!r} (fixes: {', '.join(FIXES)})")
    model = model_of(motion, skeleton)
    out = Motion(dict(motion.tracks), motion.skeleton, motion.terrain, dict(motion.meta))
    done: list[str] = list(_listed(motion.meta.get("quality_fixes")))

    chosen = find_preset(preset).with_options(**thresholds)

    def report() -> CheckReport:
        return check(out, model, ground=ground, preset=chosen)

    if "spikes" in fixes:
        first = report()
        jumps = np.zeros(max(first.frames - 1, 0), dtype=bool)
        for name in ("body_speed", "joint_speed"):
            result = first.result(name) if name in {r.name for r in first.results} else None
            if result is not None and result.failing is not None and not result.passed:
                jumps |= result.failing[1:]  # frame t + 1 holds the pair (t, t + 1)
        spiky = spike_frames(jumps)
        if spiky.any():
            _refill(out, spiky)
            frames = np.flatnonzero(spiky).tolist()
            done.append(f"spikes: dropped frames {frames} and filled them from their "
                        "neighbours (linear, slerp)")
        left = jumps & ~(spiky[:-1] | spiky[1:])
        if left.any():
            done.append(f"spikes: the jumps after frames {np.flatnonzero(left).tolist()} "
                        "leave no one frame out of line (a step, or a spike of several "
                        "frames): not refilled")
    if "limits" in fixes:
        clipped = _clip_limits(out, model)
        if clipped:
            done.append(clipped)
    if "lift" in fixes:
        lift = _lift(out, model, ground, chosen)
        if lift:
            done.append(lift)
    out.meta["quality_fixes"] = done
    return out


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


def spike_frames(jumps: NDArray[np.bool_]) -> NDArray[np.bool_]:
    """The frames out of line, from which frame pairs ``(t, t + 1)`` jump: a frame whose
    pairs on both sides jump; an end frame whose one pair jumps and its neighbour's next
    pair does not (a one-sided jump at the clip's ends). A frame between two good pairs
    is never one, so a refill rewrites no clean frame."""
    frames = len(jumps) + 1
    out = np.zeros(frames, dtype=bool)
    if frames < 3:
        return out
    out[1:-1] = jumps[:-1] & jumps[1:]
    out[0] = jumps[0] and not jumps[1]
    out[-1] = jumps[-1] and not jumps[-2]
    return out


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

"""``check(motion, ...)``: every quality check of a motion, and its contact labels.

The body poses come from one batched FK of the clip through the model; heights are
measured above the ground the motion stands on (:mod:`.ground`); the constants are the
preset's (:mod:`.presets`). Each check measures its value on every frame, so the
verdict never depends on which check runs first.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from functools import cached_property, lru_cache

import numpy as np
from numpy.typing import NDArray

from ..errors import ConversionError
from ..kinematics import poses_to_matrices
from ..kinematics.motion import coordinates, link_poses
from ..model.character import Character
from ..model.motion import Motion
from ..model.skeleton import Skeleton
from ..model.track import Track
from ..spatial import quaternion
from . import _compiled
from . import ground as grounds
from .presets import Preset
from .presets import preset as find_preset
from .report import CheckReport, CheckResult
from .shapes import NEAR, Collider, bottoms, collision_shapes, feet, pair_gaps, primitives, sole_points

Array = NDArray[np.float64]
GroundSpec = float | str | grounds.Ground | None

#: ProtoMotions' velocity for contacts: forward differences over 1..HORIZON frames, the
#: one with the smallest norm per (frame, body) (``compute_cartesian_velocity``).
HORIZON = 3
#: Frames of one self-penetration step (bounded memory).
CHUNK = 2048
#: A file's contact value counts as "in contact" above this (PARC stores 0..1).
FILE_CONTACT = 0.5


@dataclass
class _Clip:
    """What the checks share: the poses of every body, times, ground, preset. The
    per-frame measures (lowest points, speeds, contact labels) come from one compiled
    pass where the extension is built (:mod:`._compiled`), else from NumPy."""

    motion: Motion
    skeleton: Skeleton
    poses: Array  # (frames, bodies, 7)
    times: Array
    ground: grounds.Ground
    preset: Preset
    feet: list[int]
    notes: list[str] = field(default_factory=list)
    #: per frame the lowest shape point above z = 0, when known already (a flat plane's
    #: heights are it less the plane's height: ``--ground auto`` measures it first)
    lowest_above_zero: Array | None = None
    #: whether the contact labels will be asked for (the compiled pass makes them)
    labels: bool = True

    @property
    def frames(self) -> int:
        return int(self.poses.shape[0])

    @cached_property
    def model(self) -> _Model:
        """The skeleton as the per-model caches know it."""
        return _Model(self.skeleton)

    @cached_property
    def positions(self) -> Array:
        """Body origins ``(frames, bodies, 3)``, contiguous (the checks pass over them)."""
        return np.ascontiguousarray(self.poses[..., :3])

    @cached_property
    def fps(self) -> float:
        main = self.motion.main_track
        if main is not None and main.timeline.rate:
            return float(main.timeline.rate)
        steps = np.diff(self.times)
        return float(1.0 / np.median(steps)) if len(steps) and np.median(steps) > 0 else 1.0

    @cached_property
    def steps(self) -> Array:
        """Seconds between frames (``1/fps`` for ProtoMotions, which ignores stamps)."""
        if self.preset.protomotions:
            return np.full(max(self.frames - 1, 0), 1.0 / self.fps)
        steps = np.diff(self.times)
        return np.where(steps > 0, steps, np.nan)

    @cached_property
    def compiled(self) -> _compiled.Frames | None:
        """The compiled pass over the poses (None where the extension is not built)."""
        kernel = _compiled.KERNEL
        if kernel is None:
            return None
        p = self.preset
        table = _lowest_table(self.model, p.protomotions)
        return _compiled.frame_checks(
            kernel, self.poses, self.skeleton.parents, table, self.kernel_ground, self.steps,
            largest=p.protomotions, fps=self.fps, contact_speed=p.contact_speed,
            contact_height=p.contact_height, body="body_speed" in p.checks,
            joint="joint_speed" in p.checks, contacts=self.labels)

    @property
    def kernel_ground(self) -> grounds.Ground:
        """The ground as the compiled path measures from it (ProtoMotions: a plane at the
        ground's height, as :meth:`_under`)."""
        return grounds.Ground(self.ground.height) if self.preset.protomotions else self.ground

    @cached_property
    def lowest(self) -> Array:
        """Per frame the height above the ground of the lowest shape point (of the lowest
        body origin without shapes, or for ProtoMotions)."""
        if self.lowest_above_zero is not None and self.ground.terrain is None:
            out: Array = self.lowest_above_zero - self.ground.height
            return out
        if self.compiled is not None:
            return self.compiled.lowest
        shapes = [] if self.preset.protomotions else primitives(self.skeleton)
        if not shapes:
            lowest: Array = (self.positions[..., 2] - self._under(self.positions)).min(axis=1)
            return lowest
        heights = np.empty((self.frames, len(shapes)))
        flat = self.ground.terrain is None
        turns = {body: _rows(self.poses[:, body, 3:], flat) for body, _ in shapes}
        for k, (body, shape) in enumerate(shapes):
            turn, at = turns[body], self.poses[:, body, :3]
            low = bottoms(shape, turn, at)
            if flat:
                heights[:, k] = low - self.ground.height
            else:
                centre = at + turn @ shape.transform[:3, 3]
                heights[:, k] = low - self._under(centre)
        out = heights.min(axis=1)
        return out

    @cached_property
    def origin_low(self) -> Array:
        """Per frame the lowest body origin's z (ProtoMotions' floating)."""
        if self.compiled is not None:
            return self.compiled.origin_low
        out: Array = self.positions[..., 2].min(axis=1)
        return out

    @cached_property
    def body_pairs(self) -> Array:
        """Per frame pair the fastest body: the norm of its forward difference, or
        ProtoMotions' largest |component|."""
        if self.compiled is not None and self.compiled.body is not None:
            return self.compiled.body
        moves = np.subtract(self.positions[1:], self.positions[:-1])
        moves *= (1.0 / self.steps)[:, None, None]
        if not len(moves):
            return np.zeros(0)
        if self.preset.protomotions:
            largest: Array = np.abs(moves, out=moves).max(axis=(1, 2))
            return largest
        out: Array = np.sqrt(np.einsum("fbi,fbi->fb", moves, moves).max(axis=1))
        return out

    @cached_property
    def joint_pairs(self) -> Array:
        """Per frame pair the fastest turning joint (its angular velocity in its parent:
        the norm, or ProtoMotions' largest |component|)."""
        if self.compiled is not None and self.compiled.joint is not None:
            return self.compiled.joint
        rates = local_angular_velocity(self.poses[..., 3:], self.skeleton.parents, self.steps)
        if not rates.size:
            return np.zeros(max(self.frames - 1, 0))
        if self.preset.protomotions:
            largest: Array = np.abs(rates).max(axis=(1, 2))
            return largest
        out: Array = np.linalg.norm(rates, axis=-1).max(axis=1)
        return out

    @cached_property
    def contacts(self) -> NDArray[np.bool_]:
        """ProtoMotions' contact labels ``(frames, bodies)``: horizon-3 speed below the
        preset's, body origin below its height above the ground."""
        if self.compiled is not None and self.compiled.contacts is not None:
            return self.compiled.contacts
        speed = contact_speed(self.positions, self.fps)
        height = self.positions[..., 2] - self._under(self.positions)
        out: NDArray[np.bool_] = (speed < self.preset.contact_speed) & (
            height < self.preset.contact_height)
        return out

    def _under(self, points: Array) -> Array:
        if self.preset.protomotions:
            return np.full(points.shape[:-1], self.ground.height)
        return self.ground.under(points)

    def series(self, pairs: Array) -> Array:
        """A per-frame series from one value per frame pair (frame t+1 gets pair t)."""
        out = np.zeros(self.frames)
        if len(pairs):
            out[1:] = pairs
            out[0] = pairs[0]
        return out


class _Model:
    """A skeleton as the per-model caches below see it: equal to another when what the
    checks read of theirs is equal (body names, parents, joint frames, primitive shapes),
    so a skeleton changed after a check is worked out again, and the copies of one model
    that the clips of a dataset each bring share one entry."""

    def __init__(self, skeleton: Skeleton) -> None:
        self.skeleton = skeleton
        digest = hashlib.blake2b(digest_size=16)
        for body in skeleton.bodies:
            digest.update(f"{body.name}\0{body.parent}\0{len(body.shapes)}\0".encode())
            for matrix in (body.joint.parent_to_joint, body.joint.child_to_joint):
                digest.update(np.ascontiguousarray(matrix, dtype=np.float64).tobytes())
            for shape in body.shapes:
                digest.update(f"{shape.kind}\0{shape.role}\0{shape.collidable}\0"
                              f"{shape.params.get('radius')!r}\0"
                              f"{shape.params.get('height')!r}\0".encode())
                for array in (shape.transform, shape.params.get("size", ())):
                    digest.update(np.ascontiguousarray(array, dtype=np.float64).tobytes())
        self.digest = digest.digest()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Model) and other.digest == self.digest

    def __hash__(self) -> int:
        return hash(self.digest)


@lru_cache(maxsize=16)
def _lowest_table(model: _Model, origins: bool) -> _compiled.Table:
    """The shapes whose lowest points the compiled pass measures (body origins for
    ProtoMotions or a model without shapes), made once per model."""
    skeleton = model.skeleton
    shapes = [] if origins else primitives(skeleton)
    return (_compiled.shape_table(shapes) if shapes
            else _compiled.origin_table(len(skeleton.bodies)))


def _rows(quats: Array, z_only: bool) -> Array:
    """The rotation matrices of quaternions ``(frames, 4)``, or only their z row (as
    ``(frames, 1, 3)``, all a flat ground needs)."""
    x, y, z, w = (quats[:, k] for k in range(4))
    norm = x * x + y * y + z * z + w * w
    s = 2.0 / np.where(norm > 0, norm, 1.0)
    row_z = np.stack([s * (x * z - w * y), s * (y * z + w * x), 1.0 - s * (x * x + y * y)],
                     axis=-1)
    if z_only:
        return row_z[:, None, :]
    row_x = np.stack([1.0 - s * (y * y + z * z), s * (x * y - w * z), s * (x * z + w * y)],
                     axis=-1)
    row_y = np.stack([s * (x * y + w * z), 1.0 - s * (x * x + z * z), s * (y * z - w * x)],
                     axis=-1)
    return np.stack([row_x, row_y, row_z], axis=1)


def _result(name: str, series: Array, threshold: float, unit: str, *, above: bool = True,
            value: float | None = None, failing: NDArray[np.bool_] | None = None,
            passed: bool | None = None, **extra: object) -> CheckResult:
    """A result from a per-frame series: its worst value, first failing and worst frame.
    A frame whose value is not a number (NaN in the poses) fails, and is the worst."""
    if not len(series):
        return CheckResult(name, float("nan"), threshold, unit, True, above, note="no frames")
    broken = np.isnan(series)
    finite = np.where(broken, np.inf if above else -np.inf, series)
    worst = int(np.argmax(finite) if above else np.argmin(finite))
    measured = float(series[worst]) if value is None else value
    bad = (series > threshold if above else series < threshold) if failing is None else failing
    bad = bad | broken
    ok = (not bad.any()) if (passed is None or broken.any()) else passed
    result = CheckResult(name, measured, threshold, unit, ok, above,
                         first_frame=int(np.argmax(bad)) if bad.any() else None, worst_frame=worst,
                         series=series, series_threshold=threshold, failing=bad)
    for key, item in extra.items():
        setattr(result, key, item)
    if broken.any():
        result.note = f"{int(broken.sum())} frame(s) not a number" + (
            f"; {result.note}" if result.note else "")
    return result


def _joined(note: str, more: str) -> str:
    """A result's note with ``more`` after it (the "not a number" count stays)."""
    return f"{note}; {more}" if note else more


def _below_ground(clip: _Clip) -> CheckResult:
    what = "body origins, absolute z" if clip.preset.protomotions else (
        "lowest shape points" if _facts(clip.model).shaped else "body origins")
    return _result("below_ground", clip.lowest, clip.preset.below_ground, "m", above=False,
                   constants={"threshold_m": clip.preset.below_ground, "points": what})


def _body_speed(clip: _Clip) -> CheckResult:
    pairs = clip.body_pairs
    how = ("largest |component| of forward differences" if clip.preset.protomotions
           else "norm of forward differences")
    return _result("body_speed", clip.series(pairs), clip.preset.body_speed, "m/s",
                   constants={"threshold_mps": clip.preset.body_speed, "speed": how})


def local_rotations(rotations: Array, parents: NDArray[np.intp]) -> Array:
    """Each non-root body's rotation in its parent, ``q_parent⁻¹ q_body``, from the bodies'
    world rotations ``(frames, B, 4)``: ``(frames, B - 1, 4)``."""
    children = np.flatnonzero(parents >= 0)
    out: Array = quaternion.multiply(quaternion.conjugate(rotations[:, parents[children]]),
                                     rotations[:, children])
    return out


def frame_turns(local: Array) -> Array:
    """Each frame pair's turn of rotations ``local`` ``(frames, …, 4)``, as exponential
    maps ``exp_map(r_t⁻¹ r_{t+1})``: ``(frames - 1, …, 3)``."""
    out: Array = quaternion.to_exp_map(quaternion.multiply(quaternion.conjugate(local[:-1]),
                                                           local[1:]))
    return out


def local_angular_velocity(rotations: Array, parents: NDArray[np.intp], steps: Array) -> Array:
    """Each non-root body's angular velocity relative to its parent, in its own frame:
    ``exp_map(r_t⁻¹ r_{t+1}) / dt`` of ``r = q_parent⁻¹ q_body``, ``(frames - 1, B - 1, 3)``
    (what the corpus oracle calls ``dof_vel``)."""
    out: Array = frame_turns(local_rotations(rotations, parents)) / steps[:, None, None]
    return out


def _joint_speed(clip: _Clip) -> CheckResult:
    pairs = clip.joint_pairs
    how = "largest |component|" if clip.preset.protomotions else "norm"
    return _result("joint_speed", clip.series(pairs), clip.preset.joint_speed, "rad/s",
                   constants={"threshold_radps": clip.preset.joint_speed,
                              "speed": f"{how} of each body's angular velocity in its parent"})


def _runs(mask: NDArray[np.bool_]) -> list[tuple[int, int]]:
    edges = np.flatnonzero(np.diff(np.concatenate([[0], mask.astype(np.int8), [0]])))
    return [(int(a), int(b)) for a, b in zip(edges[::2], edges[1::2], strict=True)]


def _floating(clip: _Clip) -> CheckResult:
    p = clip.preset
    if p.protomotions:
        low = clip.origin_low
        finite = low[np.isfinite(low)]
        above_floor = low - (finite.min() if len(finite) else np.nan)  # NaN frames stay NaN
        needed = int(p.float_time * clip.fps)
        runs = _runs(above_floor > p.float_height)
        longest = max((b - a for a, b in runs), default=0)
        failing = np.zeros(clip.frames, dtype=bool)
        for a, b in runs:
            failing[a:b] |= b - a >= needed
        result = _result("floating", above_floor, p.float_height, "frames", value=float(longest),
                         failing=failing, passed=longest < needed)
        result.threshold = float(needed)
        result.inclusive = True
        result.constants = {"height_m": p.float_height, "time_s": p.float_time,
                            "frames_needed": needed,
                            "height_of": "lowest body origin above the clip's lowest point"}
        return result
    height = clip.lowest
    needed = max(1, round(p.float_time * clip.fps))
    runs = _runs(height > p.float_height)
    longest = max((b - a for a, b in runs), default=0)
    failing = np.zeros(clip.frames, dtype=bool)
    for a, b in runs:
        failing[a:b] |= b - a >= needed
    result = _result("floating", height, p.float_height, "s", value=longest / clip.fps,
                     failing=failing, passed=longest < needed)
    result.threshold = needed / clip.fps
    result.constants = {"height_m": p.float_height, "time_s": p.float_time,
                        "height_of": "lowest shape point above the ground under it"}
    result.note = _joined(result.note, "no body part (a foot, or a hand on a ledge) that "
                          "close to the ground for that long")
    result.inclusive = True
    return result


def _joint_limits(clip: _Clip) -> CheckResult:
    q, _ = coordinates(clip.skeleton, clip.motion)
    lower, upper = clip.skeleton.lower, clip.skeleton.upper
    with np.errstate(invalid="ignore"):
        over = np.maximum(np.where(np.isfinite(lower), lower - q, 0.0),
                          np.where(np.isfinite(upper), q - upper, 0.0))
    over = np.maximum(over, 0.0)
    per_frame = over.max(axis=1) if over.shape[1] else np.zeros(len(q))
    result = _result("joint_limits", per_frame, clip.preset.limit_tolerance, "rad or m",
                     constants={"tolerance": clip.preset.limit_tolerance,
                                "limits": "the model's joint ranges"})
    if over.size and over.max() > 0:
        _frame, dof = np.unravel_index(int(np.argmax(over)), over.shape)
        result.details = {"worst_coordinate": clip.skeleton.dof_names[int(dof)],
                          "coordinates_outside": int((over > clip.preset.limit_tolerance)
                                                     .any(axis=0).sum())}
    return result


def _soles_on_ground(clip: _Clip, foot: int) -> tuple[NDArray[np.bool_], Array, NDArray[np.bool_]]:
    """Per frame whether ``foot`` is planted (every sole point within the skating height
    of the ground), between frames how far its sole's middle moved in x, y, and per frame
    whether a sole point is not a finite number."""
    local, radii = _soles(clip.model, foot)
    kernel = _compiled.KERNEL
    if kernel is not None:
        return _compiled.soles(kernel, clip.poses, foot, local, radii, clip.kernel_ground,
                               clip.preset.skate_height)
    turn = _rows(clip.poses[:, foot, 3:], False)
    world = np.einsum("fij,pj->fpi", turn, local) + clip.poses[:, foot, None, :3]
    broken: NDArray[np.bool_] = ~np.isfinite(world).all(axis=(1, 2))
    planted: NDArray[np.bool_] = (world[..., 2] - radii - clip._under(world)).max(axis=1) < (
        clip.preset.skate_height)
    step: Array = np.linalg.norm(np.diff(world.mean(axis=1)[:, :2], axis=0), axis=-1)
    return planted, step, broken


def _foot_skating(clip: _Clip) -> CheckResult:
    """A foot is planted while every sole point (:func:`.shapes.sole_points`) is within
    the contact height of the ground: flat on it. It slides between two planted frames
    when the middle of its sole moves horizontally faster than the speed; the value is
    the longest such slide within one stance (a run of planted frames)."""
    p = clip.preset
    pairs = max(clip.frames - 1, 0)
    speed = np.zeros((pairs, len(clip.feet)))
    slid = np.zeros((pairs, len(clip.feet)))
    worst, where = 0.0, (0, 0)
    total: dict[str, float] = {}
    broken = np.zeros(clip.frames, dtype=bool)
    for k, foot in enumerate(clip.feet):
        planted, step, bad = _soles_on_ground(clip, foot)
        broken |= bad
        both = planted[:-1] & planted[1:]
        speed[:, k] = np.where(both, step / clip.steps, 0.0)
        slid[:, k] = np.where(speed[:, k] > p.skate_speed, step, 0.0)
        total[clip.skeleton.bodies[foot].name] = float(slid[:, k].sum())
        for first, stop in _runs(both):
            distance = float(slid[first:stop, k].sum())
            if distance > worst:
                worst, where = distance, (first, stop)
    pair_speed = speed.max(axis=1) if speed.size else np.zeros(0)
    failing = np.zeros(clip.frames, dtype=bool)
    if worst > p.skate_distance:
        failing[where[0] + 1:where[1] + 1] = slid[where[0]:where[1]].max(axis=1) > 0
    series = clip.series(pair_speed)
    series[broken] = np.nan  # a foot that is not a number fails (neither planted nor not)
    result = _result("foot_skating", series, p.skate_speed, "m",
                     value=worst, failing=failing, passed=worst <= p.skate_distance)
    result.threshold = p.skate_distance
    result.details = {"worst_speed_mps": float(pair_speed.max()) if len(pair_speed) else 0.0,
                      "distance_by_foot_m": total}
    result.constants = {"distance_m": p.skate_distance, "speed_mps": p.skate_speed,
                        "contact_height_m": p.skate_height,
                        "feet": ", ".join(clip.skeleton.bodies[f].name for f in clip.feet)}
    result.note = _joined(result.note, "value: the longest distance a flat-planted foot "
                          "slid faster than the speed within one stance")
    return result


@lru_cache(maxsize=16)
def _collider(model: _Model, kinds: tuple[str, ...], skip_rest_overlaps: bool
              ) -> tuple[Collider, NDArray[np.intp], _compiled.Table]:
    """A model's collider, checked pairs and the compiled path's table of them, made once
    per model (a dataset checks many clips of one model)."""
    skeleton = model.skeleton
    collider = Collider.of(skeleton, kinds)
    return (collider, shape_pairs(skeleton, collider, skip_rest_overlaps),
            _compiled.collider_table(collider))


@dataclass(frozen=True)
class _ModelFacts:
    """What the checks need of a model, worked out once per model (when it is cached: a
    cached entry never works anything out later, from a skeleton changed since)."""

    #: whether it has primitive shapes (else body origins stand in for them)
    shaped: bool
    #: body pairs with collision shapes, not parent and child (``pairs_checked``)
    body_pairs: int


@lru_cache(maxsize=16)
def _facts(model: _Model) -> _ModelFacts:
    """The model's facts, made once per model."""
    skeleton = model.skeleton
    shaped = sorted({body for body, _ in collision_shapes(skeleton)})
    parents = skeleton.parents
    pairs = sum(1 for k, a in enumerate(shaped) for b in shaped[k + 1:]
                if parents[a] != b and parents[b] != a)
    return _ModelFacts(bool(primitives(skeleton)), pairs)


@lru_cache(maxsize=64)
def _soles(model: _Model, foot: int) -> tuple[Array, Array]:
    """A foot's sole points and radii, once per model (read-only: they are shared)."""
    points, radii = sole_points(model.skeleton, foot)
    points.flags.writeable = radii.flags.writeable = False
    return points, radii


@lru_cache(maxsize=16)
def _feet(model: _Model, names: tuple[str, ...] | None) -> tuple[int, ...]:
    """The feet, once per model and names (:func:`.shapes.feet`)."""
    return tuple(feet(model.skeleton, names))


def shape_pairs(skeleton: Skeleton, collider: Collider, skip_rest_overlaps: bool
                ) -> NDArray[np.intp]:
    """The shape pairs checked for self-penetration: on different bodies that are not
    parent and child, and (``skip_rest_overlaps``) apart at the rest pose."""
    parents = skeleton.parents
    body = collider.body
    i, j = np.triu_indices(len(body), k=1)
    keep = (body[i] != body[j]) & (parents[body[i]] != body[j]) & (parents[body[j]] != body[i])
    pairs = np.stack([i[keep], j[keep]], axis=1).astype(np.intp)
    if skip_rest_overlaps and len(pairs):
        rest = collider.world(skeleton.rest_poses()[None])
        pairs = pairs[pair_gaps(collider, rest, pairs)[0] > 0]
    return pairs


def _numpy_penetration(clip: _Clip, collider: Collider, pairs: NDArray[np.intp],
                       checked: NDArray[np.intp]) -> tuple[Array, NDArray[np.intp], float]:
    """Per checked frame the depth of the deepest pair and which pair it is, and the least
    gap that is a number (NumPy: shape matrices a chunk of frames at a time)."""
    depth = np.empty(len(checked))
    worst_pair = np.empty(len(checked), dtype=np.intp)
    closest = np.inf
    for start in range(0, len(checked), CHUNK):
        frames = checked[start:start + CHUNK]
        gaps = pair_gaps(collider, collider.world(poses_to_matrices(clip.poses[frames])), pairs)
        known = gaps[np.isfinite(gaps)]  # a frame that is not a number hides no gap
        if known.size:
            closest = min(closest, float(known.min()))
        worst_pair[start:start + len(frames)] = np.argmin(gaps, axis=1)
        depth[start:start + len(frames)] = np.maximum(0.0, -gaps.min(axis=1))
    return depth, worst_pair, closest


def _self_penetration(clip: _Clip) -> CheckResult:
    p = clip.preset
    collider, pairs, table = _collider(clip.model, p.penetration_shapes, p.skip_rest_overlaps)
    checked = np.arange(0, clip.frames, p.penetration_stride)
    if not len(pairs):
        return CheckResult("self_penetration", 0.0, p.penetration_depth, "m", True,
                           note="no collision shape pairs to check")
    kernel = _compiled.KERNEL
    if kernel is not None:
        least, worst_pair, nearest = _compiled.gaps(kernel, clip.poses, table, pairs,
                                                    p.penetration_stride, NEAR)
        known = nearest[np.isfinite(nearest)]
        closest = float(known.min()) if known.size else np.inf
        depth = np.maximum(0.0, -least)
    else:
        depth, worst_pair, closest = _numpy_penetration(clip, collider, pairs, checked)
    series = np.zeros(clip.frames)
    series[checked] = depth
    soft = int((depth > p.penetration_soft).sum())
    rule: dict[str, float | str]
    if p.protomotions:
        too_long = soft > p.penetration_soft_frames
        rule = {"soft_frames": p.penetration_soft_frames}
    else:
        too_long = soft * p.penetration_stride / clip.fps > p.penetration_soft_time
        rule = {"soft_time_s": p.penetration_soft_time}
    worst = float(depth.max()) if len(depth) else 0.0
    result = _result("self_penetration", series, p.penetration_depth, "m", value=worst,
                     failing=series > p.penetration_depth,
                     passed=worst <= p.penetration_depth and not too_long)
    names = [b.name for b in clip.skeleton.bodies]
    at = int(np.argmax(depth)) if len(depth) else 0
    a, b = collider.body[pairs[worst_pair[at]]] if len(depth) else (0, 0)
    result.details = {"min_gap_m": closest if np.isfinite(closest) else None,
                      "frames_checked": len(checked),
                      "pairs_checked": _facts(clip.model).body_pairs,
                      "shape_pairs": len(pairs),
                      "shape_pairs_note": "body pairs: bodies with collision shapes, not parent "
                                          "and child; shape pairs: of the kinds checked",
                      "frames_above_soft": soft,
                      "worst_pair": f"{names[a]}/{names[b]}" if worst > 0 else ""}
    result.constants = {"depth_m": p.penetration_depth, "soft_m": p.penetration_soft, **rule,
                        "stride": p.penetration_stride,
                        "shapes": ", ".join(p.penetration_shapes),
                        "pairs": "shapes on bodies not parent and child"
                                 + (", apart at rest" if p.skip_rest_overlaps else "")}
    return result


def _quaternions(clip: _Clip) -> CheckResult:
    worst, flips, where = 0.0, 0, ""
    first: int | None = None
    per_frame = np.zeros(clip.frames)
    for name in ("root", "joint_rotations"):
        track = clip.motion.tracks.get(name)
        if track is None or track.kind not in ("pose", "quaternion") or not track.data.size:
            continue
        quats = np.asarray(track.data[..., 3:] if track.kind == "pose" else track.data,
                           dtype=np.float64).reshape(track.frames, -1, 4)
        with np.errstate(invalid="ignore", over="ignore"):
            error = np.abs(np.sqrt(np.einsum("fbi,fbi->fb", quats, quats)) - 1.0)
        error = np.where(np.isfinite(error), error, np.inf).max(axis=1)
        if len(error) == clip.frames:
            per_frame = np.maximum(per_frame, error)
        if error.max() > worst:
            worst, where = float(error.max()), name
        turned = np.einsum("fbi,fbi->fb", quats[:-1], quats[1:]) < 0
        if turned.any():
            flips += int(turned.sum())
            frame = int(np.argmax(turned.any(axis=1))) + 1
            first = frame if first is None else min(first, frame)
    result = _result("quaternions", per_frame, clip.preset.quaternion_tolerance, "|norm - 1|",
                     constants={"tolerance": clip.preset.quaternion_tolerance})
    result.details = {"sign_flips": flips, "first_flip_frame": first, "worst_track": where}
    if flips:
        result.note = (f"{flips} sign flip(s) between frames (the same rotation; shortest-arc "
                       "interpolation is unaffected, finite differences of raw values are not)")
    return result


def _timing(clip: _Clip) -> CheckResult:
    main = clip.motion.main_track
    if main is None or main.timeline.is_uniform or clip.frames < 3:
        return CheckResult("timing", 1.0, clip.preset.gap_factor, "x median step", True,
                           constants={"gap_factor": clip.preset.gap_factor},
                           note="uniform timeline")
    steps = np.diff(clip.times)
    median = float(np.median(steps))
    ratio = np.where(steps > 0, steps / median, np.inf) if median > 0 else np.full_like(steps,
                                                                                         np.inf)
    result = _result("timing", clip.series(ratio), clip.preset.gap_factor, "x median step",
                     constants={"gap_factor": clip.preset.gap_factor})
    result.details = {"median_step_s": median, "gaps": int((ratio > clip.preset.gap_factor).sum())}
    return result


_RULES = {"below_ground": _below_ground, "body_speed": _body_speed, "joint_speed": _joint_speed,
          "floating": _floating, "joint_limits": _joint_limits, "foot_skating": _foot_skating,
          "self_penetration": _self_penetration, "quaternions": _quaternions, "timing": _timing}


def contact_velocity(positions: Array, fps: float, horizon: int = HORIZON) -> Array:
    """ProtoMotions' contact velocity ``(frames, bodies, 3)``: forward differences over
    1..``horizon`` frames (the last h frames repeat the last valid one), per (frame,
    body) the one of smallest norm (the shorter on ties)."""
    frames = len(positions)
    best = np.zeros_like(positions)
    best_norm = np.full(positions.shape[:-1], np.inf)
    for h in range(1, horizon + 1):
        if frames <= h:
            break
        v = np.empty_like(positions)
        v[:frames - h] = (positions[h:] - positions[:-h]) * (fps / h)
        v[frames - h:] = v[frames - h - 1]
        norm = np.linalg.norm(v, axis=-1)
        better = norm < best_norm
        best = np.where(better[..., None], v, best)
        best_norm = np.where(better, norm, best_norm)
    return best


def contact_speed(positions: Array, fps: float, horizon: int = HORIZON) -> Array:
    """The norm of :func:`contact_velocity` ``(frames, bodies)``: the least norm of the
    forward differences over 1..``horizon`` frames (without forming the chosen vectors)."""
    frames = len(positions)
    least = np.full(positions.shape[:-1], np.inf)
    for h in range(1, horizon + 1):
        if frames <= h:
            break
        step = positions[h:] - positions[:-h]
        square = np.einsum("fbi,fbi->fb", step, step) * (fps / h) ** 2
        np.minimum(least[:frames - h], square, out=least[:frames - h])
        np.minimum(least[frames - h:], square[-1], out=least[frames - h:])
    out: Array = np.sqrt(least)
    return out


def _agreement(clip: _Clip, labels: NDArray[np.bool_]) -> dict[str, object] | None:
    track = clip.motion.tracks.get("contacts")
    if track is None:
        return None
    stored = np.asarray(track.data, dtype=np.float64).reshape(track.frames, -1)
    if stored.shape != labels.shape:
        clip.notes.append(f"the file's contacts {list(stored.shape)} do not match the bodies "
                          f"{list(labels.shape)}: not compared")
        return None
    theirs = stored > FILE_CONTACT
    same = theirs == labels
    names = [b.name for b in clip.skeleton.bodies]
    return {"agreement": float(same.mean()), "compared": int(same.size),
            "file_threshold": FILE_CONTACT,
            "feet": {names[f]: float(same[:, f].mean()) for f in clip.feet}}


def model_of(motion: Motion, model: Skeleton | Character | None) -> Skeleton:
    """The skeleton a check uses: ``model`` (a character's skeleton), else the motion's."""
    if isinstance(model, Character):
        return model.skeleton
    if model is not None:
        return model
    if motion.skeleton is not None:
        return motion.skeleton
    raise ConversionError("checking a motion needs its model (pass skeleton=, or --model/"
                          "--character on the command line)")


def resolve_ground(motion: Motion, spec: GroundSpec, lowest: Array | None = None,
                   surface: str = "pinned") -> grounds.Ground:
    """The ground of ``spec``: a Ground as is; a number = a flat plane there; ``auto`` =
    from the clip's ``lowest`` points per frame; ``terrain``/``hf`` = the file's terrain
    (pinned or as stored); None = the terrain when the motion has one, else z = 0."""
    if isinstance(spec, grounds.Ground):
        return spec
    if isinstance(spec, str) and spec not in ("auto", "terrain", "hf"):
        try:
            spec = float(spec)
        except ValueError:
            raise ConversionError(f"--ground must be a height (m), auto, terrain or hf, "
                                  f"not {spec!r}") from None
    if isinstance(spec, int | float):
        return grounds.plane(float(spec))
    if spec == "auto":
        if lowest is None:
            raise ConversionError("--ground auto needs the clip's lowest points")
        return grounds.auto(lowest)
    if spec in ("terrain", "hf"):
        if motion.terrain is None:
            raise ConversionError(f"--ground {spec}: the motion has no terrain")
        return grounds.from_terrain(motion.terrain, "hf" if spec == "hf" else surface)
    if motion.terrain is not None:
        return grounds.from_terrain(motion.terrain, surface)
    return grounds.Ground()


def protomotions_ground(motion: Motion, spec: GroundSpec) -> grounds.Ground:
    """The flat plane ProtoMotions' rules measure absolute heights from: at ``spec``'s
    height (z = 0 without one); a terrain is not used."""
    height = resolve_ground(motion, spec if spec is not None else 0.0, None).height
    return grounds.Ground(height, None, f"flat plane z = {height:g} m (ProtoMotions: absolute "
                                        "heights; a terrain is not used)")


NO_FRAMES = "the motion has no frames to check"


def require_frames(motion: Motion) -> None:
    """A ConversionError when ``motion`` has no frames (before kinematics sees it)."""
    if not motion.frames:
        raise ConversionError(NO_FRAMES)


def check(motion: Motion, skeleton: Skeleton | Character | None = None, *,
          ground: GroundSpec = None, preset: str | Preset = "default",
          feet_names: tuple[str, ...] | None = None, name: str | None = None,
          **thresholds: float | int | None) -> CheckReport:
    """Every check of the preset on ``motion`` through ``skeleton`` (or the motion's own):
    one :class:`CheckResult` each, the contact labels, and agreement with the contacts
    the file holds. ``ground``: see :func:`resolve_ground`; ``thresholds`` replace the
    preset's constants (``body_speed=10``, ``contact_height=0.08``, …)."""
    chosen = find_preset(preset).with_options(**thresholds)
    model = model_of(motion, skeleton)
    require_frames(motion)
    poses = np.asarray(link_poses(model, motion).data, dtype=np.float64)
    main = motion.tracks.get("joints") or motion.root_pose() or motion.main_track
    if main is None or not len(poses):
        raise ConversionError(NO_FRAMES)
    times = np.asarray(main.timeline.times, dtype=np.float64)
    foot_bodies = list(_feet(_Model(model), feet_names))
    above_zero = None
    if chosen.protomotions:
        used = protomotions_ground(motion, ground)
    elif ground == "auto":
        above_zero = _Clip(motion, model, poses, times, grounds.Ground(),
                           replace(chosen, checks=("below_ground",)), foot_bodies,
                           labels=False).lowest
        used = resolve_ground(motion, ground, above_zero)
    else:
        used = resolve_ground(motion, ground)
    clip = _Clip(motion, model, poses, times, used, chosen, foot_bodies,
                 lowest_above_zero=above_zero)
    results = [_RULES[check_name](clip) for check_name in chosen.checks]
    labels = clip.contacts
    report = CheckReport(name or str(motion.meta.get("name") or model.name), chosen.name,
                         clip.fps, clip.frames, used.describe(), results, labels,
                         [b.name for b in model.bodies], _agreement(clip, labels), clip.notes,
                         {"speed_mps": chosen.contact_speed, "height_m": chosen.contact_height,
                          "speed": f"smallest of the forward differences over 1..{HORIZON} "
                                   "frames", "height": "body origin above the ground"})
    return report


def contact_track(report: CheckReport, motion: Motion) -> Track:
    """The report's contact labels as a ``contacts`` track (1.0 = in contact) on the
    motion's timeline, one column per body."""
    main = motion.tracks.get("joints") or motion.root_pose() or motion.main_track
    if main is None or report.contacts is None:
        raise ConversionError("the report holds no contact labels")
    return Track("contacts", "value", report.contacts.astype(np.float32), main.timeline,
                 labels=list(report.body_names),
                 attrs={"rule": f"speed < {report.contact_rule['speed_mps']} m/s and height < "
                                f"{report.contact_rule['height_m']} m above the ground"})

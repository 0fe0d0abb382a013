"""A model's primitive shapes in the world: their lowest points, its feet, and the gaps
between its collision shapes (self-penetration), vectorised over frames.

A capsule is a segment (its local z axis, ``height`` long) swept by a ball of ``radius``,
a sphere a point swept by one, a cylinder is taken as the capsule around it (a little
larger at its rims: a gap it reports is never too large). Between two swept segments the
gap is the clamped closest-point distance less both radii; between a swept segment and a
box, the least of the box's signed distance along the segment (a convex function of the
segment's parameter, found by golden-section search) less the radius; between two boxes,
the separating-axis gap over their 15 axes (the exact depth when they overlap, a lower
bound of the distance otherwise). Pairs whose bounding balls are more than :data:`NEAR`
apart keep that lower bound as their gap: a penetration is never missed, and only near
pairs cost the exact work.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ..errors import ConversionError, choices
from ..model.skeleton import Shape, Skeleton

Array = NDArray[np.float64]

PRIMITIVES = ("sphere", "capsule", "cylinder", "box")
#: Feet: bodies whose lowest shape point at rest is this close (m) to the lowest.
FOOT_BAND = 0.02
#: Sole points: corners and end centres this close (m) to a foot's lowest one at rest.
SOLE_BAND = 0.01
#: Pairs whose bounding balls are further apart than this (m) keep that distance as
#: their gap (a lower bound of it; exact work is spent only on near pairs).
NEAR = 0.1
#: Golden-section steps for a segment against a box (0.618**28 of its length: < 1e-5).
SEARCH_STEPS = 28
_GOLDEN = (np.sqrt(5.0) - 1) / 2


def primitives(skeleton: Skeleton) -> list[tuple[int, Shape]]:
    """Every sphere, capsule, cylinder and box of the skeleton, with its body's index."""
    return [(index, shape) for index, body in enumerate(skeleton.bodies)
            for shape in body.shapes if shape.kind in PRIMITIVES]


def collision_shapes(skeleton: Skeleton) -> list[tuple[int, Shape]]:
    """The primitives that collide: those marked ``collision`` (and collidable), or every
    primitive when the model marks none."""
    shapes = primitives(skeleton)
    marked = [(i, s) for i, s in shapes if s.role == "collision" and s.collidable]
    return marked or shapes


def bottoms(shape: Shape, bodies: Array, origins: Array | None = None) -> Array:
    """The lowest z of a primitive shape on each body pose: ``(frames, 4, 4)`` matrices,
    or the bodies' rotations (at least their z row, ``(frames, 1 or 3, 3)``) with their
    ``origins`` ``(frames, 3)``."""
    if origins is None:
        turn_z, centre = bodies[:, 2, :3], bodies[:, 2, 3]
    else:
        turn_z, centre = bodies[:, -1, :], origins[:, 2]
    local = shape.transform
    centre = centre + turn_z @ local[:3, 3]  # z of the shape's centre
    turn = turn_z @ local[:3, :3]  # the z row of the shape's turn
    size = shape.params
    if shape.kind == "sphere":
        out_sphere: Array = centre - float(size["radius"])
        return out_sphere
    if shape.kind == "box":
        out_box: Array = centre - np.abs(turn) @ (np.asarray(size["size"]) / 2)
        return out_box
    radius, half_height = float(size["radius"]), float(size.get("height", 0.0)) / 2
    axis_z = np.abs(turn[:, 2])
    rim = radius if shape.kind == "capsule" else radius * np.sqrt(np.maximum(0.0, 1 - axis_z**2))
    out: Array = centre - axis_z * half_height - rim
    return out


def feet(skeleton: Skeleton, names: tuple[str, ...] | None = None) -> list[int]:
    """The feet: the bodies called ``names``, else those whose lowest primitive point at
    rest lies within :data:`FOOT_BAND` of the lowest (else whose origin does)."""
    if names is not None:
        bodies = {body.name: index for index, body in enumerate(skeleton.bodies)}
        for name in names:
            if name not in bodies:
                raise ConversionError(f"no foot body {name!r} in {skeleton.name!r} "
                                      f"({choices(name, bodies, 'bodies')})")
        return [bodies[name] for name in names]
    rest = skeleton.rest_poses()
    lowest: dict[int, float] = {}
    for index, shape in primitives(skeleton):
        low = float(bottoms(shape, rest[None, index])[0])
        lowest[index] = min(lowest.get(index, np.inf), low)
    if not lowest:
        lowest = {index: float(rest[index, 2, 3]) for index in range(len(skeleton.bodies))}
    floor = min(lowest.values(), default=0.0)
    return sorted(index for index, low in lowest.items() if low <= floor + FOOT_BAND)


def sole_points(skeleton: Skeleton, body: int) -> tuple[Array, Array]:
    """The points a body stands on, in its frame ``(P, 3)``, and the radius around each
    ``(P,)``: of a box's corners, capsules' or cylinders' end centres and spheres' centres,
    those within :data:`SOLE_BAND` of the lowest at rest (a box's bottom face; the body's
    origin when it has no primitive)."""
    points: list[Array] = []
    radii: list[float] = []
    for index, shape in primitives(skeleton):
        if index != body:
            continue
        if shape.kind == "box":
            half = np.asarray(shape.params["size"], dtype=float) / 2
            corners = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)]) * half
            points += list(corners @ shape.transform[:3, :3].T + shape.transform[:3, 3])
            radii += [0.0] * 8
            continue
        half_height = 0.0 if shape.kind == "sphere" else float(shape.params.get("height", 0.0)) / 2
        for end in ((0.0,) if half_height == 0 else (-half_height, half_height)):
            points.append(shape.transform[:3, 3] + shape.transform[:3, 2] * end)
            radii.append(float(shape.params["radius"]))
    if not points:
        return np.zeros((1, 3)), np.zeros(1)
    local, radius = np.array(points), np.array(radii)
    rest = skeleton.rest_poses()[body]
    low = (local @ rest[:3, :3].T + rest[:3, 3])[:, 2] - radius
    keep = low <= low.min() + SOLE_BAND
    return local[keep], radius[keep]


@dataclass(frozen=True)
class Collider:
    """The collision shapes of a model as arrays: per shape its body, kind (0 swept
    segment, 1 box), pose in the body, half length along z (segments), radius, half sizes
    (boxes)."""

    body: NDArray[np.intp]
    box: NDArray[np.bool_]
    transform: Array  # (S, 4, 4)
    half: Array  # (S,)
    radius: Array  # (S,)
    half_size: Array  # (S, 3)

    @classmethod
    def of(cls, skeleton: Skeleton, kinds: tuple[str, ...] = PRIMITIVES) -> Collider:
        """The collision shapes of ``kinds``."""
        shapes = [(i, s) for i, s in collision_shapes(skeleton) if s.kind in kinds]
        count = len(shapes)
        half, radius, half_size = np.zeros(count), np.zeros(count), np.zeros((count, 3))
        for k, (_, shape) in enumerate(shapes):
            if shape.kind == "box":
                half_size[k] = np.asarray(shape.params["size"], dtype=float) / 2
            else:
                radius[k] = float(shape.params["radius"])
                if shape.kind != "sphere":
                    half[k] = float(shape.params.get("height", 0.0)) / 2
        return cls(np.array([i for i, _ in shapes], dtype=np.intp),
                   np.array([s.kind == "box" for _, s in shapes], dtype=bool),
                   np.array([s.transform for _, s in shapes], dtype=float).reshape(count, 4, 4),
                   half, radius, half_size)

    def world(self, bodies: Array) -> Array:
        """Shape poses ``(frames, S, 4, 4)`` from body poses ``(frames, B, 4, 4)``."""
        out: Array = bodies[:, self.body] @ self.transform
        return out


def pair_gaps(collider: Collider, poses: Array, pairs: NDArray[np.intp]) -> Array:
    """The gap (m; negative = penetration depth) of each shape pair ``(P, 2)`` on each
    frame of shape poses ``(frames, S, 4, 4)``: ``(frames, P)``."""
    out = np.empty((poses.shape[0], len(pairs)))
    centre = np.ascontiguousarray(poses[..., :3, 3])
    reach = poses[..., :3, 2] * collider.half[:, None]
    start, end = centre - reach, centre + reach  # the swept segments' ends
    a, b = pairs[:, 0], pairs[:, 1]
    box_a, box_b = collider.box[a], collider.box[b]
    round_round = ~box_a & ~box_b
    if round_round.any():
        i, j = a[round_round], b[round_round]
        gaps, near = _bounds(collider, centre, i, j)
        frame, pair = np.nonzero(near)
        if len(frame):
            si, sj = i[pair], j[pair]
            gaps[near] = (segment_distance(start[frame, si], end[frame, si], start[frame, sj],
                                           end[frame, sj])
                          - collider.radius[si] - collider.radius[sj])
        out[:, round_round] = gaps
    mixed = box_a ^ box_b
    if mixed.any():
        boxes = np.where(box_a[mixed], a[mixed], b[mixed])
        rounds = np.where(box_a[mixed], b[mixed], a[mixed])
        gaps, near = _bounds(collider, centre, boxes, rounds)
        frame, pair = np.nonzero(near)
        if len(frame):
            sb, sr = boxes[pair], rounds[pair]
            gaps[near] = _segment_box(start[frame, sr], end[frame, sr], poses[frame, sb],
                                      collider.half_size[sb]) - collider.radius[sr]
        out[:, mixed] = gaps
    both = box_a & box_b
    if both.any():
        i, j = a[both], b[both]
        gaps, near = _bounds(collider, centre, i, j)
        frame, pair = np.nonzero(near)
        if len(frame):
            gaps[near] = _box_box(poses[frame, i[pair]], collider.half_size[i[pair]],
                                  poses[frame, j[pair]], collider.half_size[j[pair]])
        out[:, both] = gaps
    return out


def _reach(collider: Collider, index: NDArray[np.intp]) -> Array:
    """The radius of a ball round each shape's centre that holds the whole shape."""
    out: Array = np.where(collider.box[index], np.linalg.norm(collider.half_size[index], axis=1),
                          collider.half[index] + collider.radius[index])
    return out


def _bounds(collider: Collider, centre: Array, i: NDArray[np.intp], j: NDArray[np.intp]
            ) -> tuple[Array, NDArray[np.bool_]]:
    """Lower bounds of the gaps of shape pairs ``i``–``j`` (shape centres ``(F, S, 3)``)
    from their bounding balls, and where they are within :data:`NEAR` (those are worked
    out exactly)."""
    apart = centre[:, i] - centre[:, j]
    gaps: Array = np.sqrt(np.einsum("fpi,fpi->fp", apart, apart)) - (
        _reach(collider, i) + _reach(collider, j))
    return gaps, gaps < NEAR


def _dot(u: Array, v: Array) -> Array:
    out: Array = np.einsum("...i,...i->...", u, v)
    return out


def segment_distance(p1: Array, q1: Array, p2: Array, q2: Array) -> Array:
    """The least distance between segments ``p1 q1`` and ``p2 q2`` (``(..., 3)`` each;
    a segment may be a point), by the clamped closest-point rule."""
    d1, d2, r = q1 - p1, q2 - p2, p1 - p2
    a, e, f = _dot(d1, d1), _dot(d2, d2), _dot(d2, r)
    c, b = _dot(d1, r), _dot(d1, d2)
    tiny = 1e-24  # squared lengths: a segment shorter than 1e-12 m is a point
    point_a, point_e = a <= tiny, e <= tiny
    safe_a, safe_e = np.where(point_a, 1.0, a), np.where(point_e, 1.0, e)
    denom = a * e - b * b
    s0 = np.where(denom > tiny * np.maximum(a * e, tiny),
                  np.clip((b * f - c * e) / np.where(denom > 0, denom, 1.0), 0.0, 1.0), 0.0)
    t0 = (b * s0 + f) / safe_e
    s_general = np.where(t0 < 0, np.clip(-c / safe_a, 0.0, 1.0),
                         np.where(t0 > 1, np.clip((b - c) / safe_a, 0.0, 1.0), s0))
    t_general = np.clip(t0, 0.0, 1.0)
    s = np.where(point_a, 0.0, np.where(point_e, np.clip(-c / safe_a, 0.0, 1.0), s_general))
    t = np.where(point_e, 0.0, np.where(point_a, np.clip(f / safe_e, 0.0, 1.0), t_general))
    gap = (p1 + d1 * s[..., None]) - (p2 + d2 * t[..., None])
    out: Array = np.sqrt(_dot(gap, gap))
    return out


def _box_distance(points: Array, boxes: Array, half: Array) -> Array:
    """Signed distance of points ``(F, P, 3)`` to boxes (poses ``(F, P, 4, 4)``)."""
    local = np.einsum("...ji,...j->...i", boxes[..., :3, :3], points - boxes[..., :3, 3])
    excess = np.abs(local) - half
    outside = np.sqrt(_dot(np.maximum(excess, 0.0), np.maximum(excess, 0.0)))
    out: Array = outside + np.minimum(excess.max(axis=-1), 0.0)
    return out


def _segment_box(p: Array, q: Array, boxes: Array, half: Array) -> Array:
    """The least signed distance from segment ``p q`` to a box (golden-section search)."""
    low, high = np.zeros(p.shape[:-1]), np.ones(p.shape[:-1])
    d = q - p

    def at(t: Array) -> Array:
        return _box_distance(p + d * t[..., None], boxes, half)

    c, e = high - _GOLDEN * (high - low), low + _GOLDEN * (high - low)
    fc, fe = at(c), at(e)
    for _ in range(SEARCH_STEPS):
        left = fc < fe  # the least lies in [low, e]
        low, high = np.where(left, low, c), np.where(left, e, high)
        span = _GOLDEN * (high - low)
        c, e = np.where(left, high - span, e), np.where(left, c, low + span)
        fresh = at(np.where(left, c, e))
        fc, fe = np.where(left, fresh, fe), np.where(left, fc, fresh)
    ends = np.minimum(at(np.zeros_like(low)), at(np.ones_like(low)))
    out: Array = np.minimum(np.minimum(fc, fe), ends)
    return out


def _box_box(a: Array, half_a: Array, b: Array, half_b: Array) -> Array:
    """The separating-axis gap of boxes ``a`` and ``b`` (poses ``(F, P, 4, 4)``)."""
    axes_a, axes_b = a[..., :3, :3], b[..., :3, :3]  # columns are the box axes
    centre = b[..., :3, 3] - a[..., :3, 3]
    candidates = [axes_a[..., :, k] for k in range(3)] + [axes_b[..., :, k] for k in range(3)]
    candidates += [np.cross(axes_a[..., :, i], axes_b[..., :, j])
                   for i in range(3) for j in range(3)]
    best = np.full(centre.shape[:-1], -np.inf)
    for axis in candidates:
        size = np.sqrt(_dot(axis, axis))
        usable = size > 1e-9
        unit = axis / np.where(usable, size, 1.0)[..., None]
        reach_a = np.abs(np.einsum("...ji,...j->...i", axes_a, unit))
        reach_b = np.abs(np.einsum("...ji,...j->...i", axes_b, unit))
        gap = (np.abs(_dot(centre, unit)) - _dot(reach_a, half_a) - _dot(reach_b, half_b))
        best = np.where(usable, np.maximum(best, gap), best)
    return best

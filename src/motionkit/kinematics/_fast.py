"""The fast forward-kinematics path: unit quaternions in component-major arrays.

Every quantity is stored as ``(components, frames)`` so each step is a handful of
contiguous whole-array operations. For a body with parent ``p`` the rule
``W = W_p · P · Q(q) · inv(C)`` becomes

* rotation: ``q_W = q_p ⊗ (M · q_Q)`` with the constant 4×4 matrix ``M`` that applies
  ``q_P ⊗ · ⊗ q_C⁻¹`` (skipped when it is the identity), and
* position: ``t_W = t_p + R_p · (t_P + R_P · t_Q) − R_W · t_C``, where only the columns of
  ``R_p`` and ``R_W`` that meet a nonzero constant (or a joint translation) are built.

Half-angle sines and cosines come from ``tan(angle / 4)`` (NumPy's float64 ``tan`` is
several times faster than ``sin`` plus ``cos``, and as accurate), and every large array
is a view of one allocation per call, so the loop over bodies allocates nothing large.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..model.skeleton import Joint, Skeleton
from ..spatial import quaternion

Array = NDArray[np.float64]
Terms = tuple[tuple[int, float], ...]  # the nonzero components (k, value) of a vector

_EYE = np.eye(3)
_UNIT = {"x": 0, "y": 1, "z": 2}
_TINY = float(np.finfo(float).tiny)
_TRANSLATING = {"prismatic", "screw", "translational", "translational2d", "planar", "free"}


def _left(q: Array) -> Array:
    """Matrix of ``q ⊗ ·`` for a quaternion (x, y, z, w)."""
    x, y, z, w = q
    return np.array([[w, -z, y, x], [z, w, -x, y], [-y, x, w, z], [-x, -y, -z, w]])


def _right(q: Array) -> Array:
    """Matrix of ``· ⊗ q`` for a quaternion (x, y, z, w)."""
    x, y, z, w = q
    return np.array([[w, z, -y, x], [-z, w, x, y], [y, -x, w, z], [-x, -y, -z, w]])


def _mul(a: Array, b: Array, out: Array) -> Array:
    """Hamilton product of component-major quaternions ``(4, frames)``; ``out`` ≠ a, b."""
    return np.transpose(quaternion.multiply(a.T, b.T, out.T))


def _axis(axis: Array, angle: Array, out: Array) -> Array:
    """Component-major quaternions ``(4, frames)`` of rotations about one axis → ``out``."""
    return np.transpose(quaternion.from_axis_angle(axis, angle, out.T))


def _half_angle(quarter: Array, cos: Array) -> tuple[Array, Array]:
    """For ``a = 4 · quarter``: write cos(a/2) to ``cos``; return ``t = tan(quarter)`` and
    ``r = 1 / (2 (1 + t²))``, so that sin(a/2) = 4·t·r."""
    t = np.tan(quarter)
    r = t * t
    r += 1.0
    np.divide(0.5, r, out=r)
    np.multiply(r, 4.0, out=cos)
    cos -= 1.0
    return t, r


def exp_quat(w: Array, out: Array) -> Array:
    """Quaternions ``(4, frames)`` of rotation vectors ``(3, frames)`` (exact near zero)."""
    quarter = w[0] * w[0]
    quarter += w[1] * w[1]
    quarter += w[2] * w[2]
    quarter *= 0.0625
    np.sqrt(quarter, out=quarter)  # θ/4
    t, r = _half_angle(quarter, out[3])
    np.maximum(quarter, _TINY, out=quarter)  # θ = 0 gives t = 0, so x y z = 0
    t *= r
    t /= quarter  # sin(θ/2) / θ
    np.multiply(w, t, out=out[:3])
    return out


def _unit(v: Array) -> Array:
    return v / float(np.linalg.norm(v))


@dataclass(frozen=True)
class _Link:
    """Per-body constants of the rule in the module doc."""

    joint: Joint
    parent: int
    mix: Array | None  # M; None when P and C do not rotate
    rest: Array  # q_P ⊗ q_C⁻¹, the rotation of a joint without one
    offset: Array  # t_P
    tilt: Array | None  # R_P for joint translations; None = identity
    offset_terms: Terms  # of t_P
    child_terms: Terms  # of −t_C
    columns: tuple[int, ...]  # columns of R_W that this body or its children use


_PLANS: weakref.WeakKeyDictionary[Skeleton, tuple[tuple[Any, ...], list[_Link]]] = \
    weakref.WeakKeyDictionary()


def _plan(skeleton: Skeleton) -> list[_Link]:
    """The skeleton's links, rebuilt only when what they derive from has changed."""
    key = tuple((body.joint, body.joint.type, body.parent, body.joint.parent_to_joint.tobytes(),
                 body.joint.child_to_joint.tobytes()) for body in skeleton.bodies)
    cached = _PLANS.get(skeleton)
    if cached is None or cached[0] != key:
        cached = key, _build_plan(skeleton)
        _PLANS[skeleton] = cached
    return cached[1]


def _terms(v: Array) -> Terms:
    return tuple((k, float(v[k])) for k in np.flatnonzero(v).tolist())


def _build_plan(skeleton: Skeleton) -> list[_Link]:
    bodies = skeleton.bodies
    used: list[set[int]] = [set() for _ in bodies]
    for index, body in enumerate(bodies):
        used[index].update(k for k, _ in _terms(body.joint.child_to_joint[:3, 3]))
        if body.parent >= 0:
            used[body.parent].update(k for k, _ in _terms(body.joint.parent_to_joint[:3, 3]))
            if body.joint.type in _TRANSLATING:
                used[body.parent].update((0, 1, 2))
    links = []
    for index, body in enumerate(bodies):
        joint = body.joint
        p_mat, c_mat = joint.parent_to_joint, joint.child_to_joint
        q_p = quaternion.from_matrix(p_mat[:3, :3])
        q_c = quaternion.from_matrix(c_mat[:3, :3])
        mix = _left(q_p) @ _right(np.array([-q_c[0], -q_c[1], -q_c[2], q_c[3]]))
        links.append(_Link(
            joint, body.parent, None if np.array_equal(mix, np.eye(4)) else mix, mix[:, 3],
            p_mat[:3, 3], None if np.array_equal(p_mat[:3, :3], _EYE) else p_mat[:3, :3],
            _terms(p_mat[:3, 3]), _terms(-c_mat[:3, 3]), tuple(sorted(used[index]))))
    return links


class _Work:
    """Every work array of one call as ``(rows, frames)`` views of a single allocation.

    One large block instead of many small ones lets the C allocator reuse the same memory
    call after call, rather than hand it back to the system and page-fault it in again.
    """

    def __init__(self, links: list[_Link], coords: Array) -> None:
        frames, dofs = coords.shape
        count = len(links)
        widths = [3 * len(link.columns) for link in links]
        block = np.empty((dofs + 7 * count + sum(widths) + 28, frames))
        self.coords = block[:dofs]
        np.copyto(self.coords, coords.T)
        #: per body: x y z qx qy qz qw
        self.poses = block[dofs:dofs + 7 * count].reshape(count, 7, frames)
        row = dofs + 7 * count
        #: per body: the columns of R_W its own child offset and its children use
        self.columns: list[dict[int, Array]] = []
        for link in links:
            self.columns.append({k: block[row + 3 * j:row + 3 * j + 3]
                                 for j, k in enumerate(link.columns)})
            row += 3 * len(link.columns)
        self.rot, self.aux, self.aux2, self.mixed = block[row:row + 16].reshape(4, 4, frames)
        self.move, self.tilted, self.twice, self.tmp = block[row + 16:].reshape(4, 3, frames)


def _joint_rotation(link: _Link, q: Array, work: _Work) -> Array | None:
    """Rotation ``(4, frames)`` of Q(q); None when the joint does not rotate."""
    joint = link.joint
    t = joint.type
    if t in ("revolute", "screw"):
        return _axis(joint.axes[0], q[0], work.rot)
    if t == "universal":
        return _mul(_axis(joint.axes[0], q[0], work.aux), _axis(joint.axes[1], q[1], work.aux2),
                    work.rot)
    if t in ("ball", "free"):
        return exp_quat(q[:3], work.rot)
    if t == "euler":
        o = joint.axis_order
        _mul(_axis(_EYE[_UNIT[o[0]]], q[0], work.aux), _axis(_EYE[_UNIT[o[1]]], q[1], work.aux2),
             work.rot)
        return _mul(work.rot, _axis(_EYE[_UNIT[o[2]]], q[2], work.aux), work.aux2)
    if t == "planar":
        return _axis(joint.plane_axes()[2], q[2], work.rot)
    return None


def _joint_translation(link: _Link, q: Array, work: _Work) -> Array | None:
    """Translation ``(3, frames)`` of Q(q); None when the joint does not translate."""
    joint = link.joint
    t = joint.type
    if t == "prismatic":
        np.multiply(_unit(joint.axes[0])[:, None], q[0], out=work.move)
        return work.move
    if t == "screw":
        step = _unit(joint.axes[0]) * joint.pitch / (2.0 * np.pi)
        np.multiply(step[:, None], q[0], out=work.move)
        return work.move
    if t in ("translational2d", "planar"):
        a1, a2, _ = joint.plane_axes()
        np.multiply(a1[:, None], q[0], out=work.move)
        work.move += np.multiply(a2[:, None], q[1], out=work.tmp)
        return work.move
    if t == "translational":
        return q
    if t == "free":
        return q[3:6]
    return None


def _columns(q: Array, out: dict[int, Array], s: Array) -> None:
    """Column ``k`` of the rotation matrices of ``q`` ``(4, frames)`` → ``out[k]``, for
    every key of ``out``; ``s`` ``(3, frames)`` is scratch."""
    if not out:
        return
    u, w = q[:3], q[3]
    np.multiply(u, 2.0, out=s)
    for k, col in out.items():
        a, b = (k + 1) % 3, (k + 2) % 3
        np.multiply(u[a], s[k], out=col[a])
        col[a] += w * s[b]
        np.multiply(u[b], s[k], out=col[b])
        col[b] -= w * s[a]
        np.multiply(u[a], s[a], out=col[k])
        col[k] += u[b] * s[b]
        np.subtract(1.0, col[k], out=col[k])


def _add_rotated(target: Array, columns: dict[int, Array], terms: Terms, tmp: Array) -> None:
    """``target += R · v`` for a constant ``v`` given by its terms, using R's columns."""
    for k, value in terms:
        target += np.multiply(columns[k], value, out=tmp)


def _orient(link: _Link, q: Array, quats: Array, out: Array, work: _Work,
            given: Array | None) -> None:
    """``out`` = q_W of one body (any sign), from its joint (or the ``given`` joint rotation)
    and its parent's ``quats``."""
    rot = given if given is not None else _joint_rotation(link, q, work)
    if rot is not None and link.mix is not None:
        rot = np.matmul(link.mix, rot, out=work.mixed)
    p = link.parent
    if rot is None:
        if p < 0:
            out[...] = link.rest[:, None]
        else:
            np.matmul(_right(link.rest), quats[p], out=out)
    elif p < 0:
        out[...] = rot
    else:
        _mul(quats[p], rot, out)


def _locate(link: _Link, q: Array, pos: Array, out: Array, work: _Work, rotated: bool) -> None:
    """``out`` = t_W of one body, from its joint (none where its rotation was ``rotated``
    in) and its parent's ``pos`` and columns."""
    move = None if rotated else _joint_translation(link, q, work)
    if move is not None and link.tilt is not None:
        move = np.matmul(link.tilt, move, out=work.tilted)
    p = link.parent
    if p < 0:
        out[...] = link.offset[:, None]
        if move is not None:
            out += move
    else:
        out[...] = pos[p]
        _add_rotated(out, work.columns[p], link.offset_terms, work.tmp)
        if move is not None:
            for k in range(3):
                out += np.multiply(work.columns[p][k], move[k], out=work.tmp)


def forward_quat(skeleton: Skeleton, coords: Array, root: Array | None,
                 rotations: Array | None = None) -> Array:
    """Poses ``(frames, bodies, 7)`` for coordinates ``(frames, dofs)`` (see module doc).

    ``rotations`` ``(bodies - 1, 4, frames)``, when given, are the joint rotations of every
    body after the first (unit quaternions, component-major), in place of what their
    coordinates give; those joints then do not translate. That is a character's FK, whose
    motions store one quaternion per joint (``joint_rot``).
    """
    links = _plan(skeleton)
    work = _Work(links, coords)
    quats, pos = work.poses[:, 3:], work.poses[:, :3]
    for index, link in enumerate(links):
        quat, columns = quats[index], work.columns[index]
        q = work.coords[link.joint.dof_slice]
        if index == 0 and root is not None:
            quat[...] = root[:, 3:7].T / np.linalg.norm(root[:, 3:7], axis=1)
        else:
            _orient(link, q, quats, quat, work, None if rotations is None or index == 0
                    else rotations[index - 1])
        # canonical sign w >= 0 (w + 0.0 turns −0.0 into +0.0, which keeps the sign);
        # products of unit quaternions stay unit to rounding error
        quat *= np.copysign(1.0, quat[3] + 0.0)
        _columns(quat, columns, work.twice)
        if index == 0 and root is not None:
            pos[0] = root[:, :3].T
        else:
            _locate(link, q, pos, pos[index], work, rotations is not None)
            _add_rotated(pos[index], columns, link.child_terms, work.tmp)
    return np.ascontiguousarray(work.poses.transpose(2, 0, 1))

"""PARC character models: the MJCF subset PARC reads, and PARC's kinematic conventions.

PARC numbers the bodies of the first ``<worldbody>`` body depth-first; each non-root body
hangs from 0 joints (fixed), 1 hinge, or 3 hinges (a spherical joint whose DOF is a
3-vector exponential map, not the three hinge angles). ``joint_rot`` in motion files
holds one (x, y, z, w) quaternion per non-root body, fixed bodies included. MuJoCo's
``qpos`` instead applies the three hinges in order, i.e. intrinsic XYZ Euler angles.

:func:`read` returns a :class:`~motionkit.model.skeleton.Skeleton` (root = ``free``
joint, spherical = ``ball`` (rotation vector = PARC's exp-map), hinge = ``revolute``,
fixed = ``weld``); :class:`Character` holds the same facts as flat arrays for
vectorised conversions and forward kinematics.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.spatial.transform import Rotation

from ...errors import ConversionError
from ...model.skeleton import Body, Dof, Joint, Shape, Skeleton
from ...spatial import quaternion as quat

Array = NDArray[np.float64]
_KINDS = ("root", "hinge", "spherical", "fixed")


def sniff(head: bytes) -> bool:
    """A MuJoCo-style model: ``<mujoco`` near the start of an XML file."""
    return b"<mujoco" in head[:4096]


def accepts(path: str) -> bool:
    """False for a MuJoCo model outside the PARC subset, or one a character reading would
    shorten: several top-level bodies (a scene, or a World written as MJCF), a root
    without a free joint (a fixed base), a joint ``ref`` (PARC measures from the XML pose
    and keeps limits as written), or three hinges that are not x, y and z (no qpos
    conversion). The general ``mjcf`` reader takes those; other errors stay this
    reader's to report. (``character=`` options read the PARC way whatever the file.)"""
    from ...errors import FormatError
    from .mjcf import ParcSubsetError, character_of, parse_tree

    try:
        tree = parse_tree(path)
        character = character_of(tree)
    except ParcSubsetError:
        return False
    except FormatError:
        return True
    tops = [body for body in tree.bodies if body.parent < 0]
    root = tops[0].found
    if len(tops) != 1 or not (root.free is not None
                              or any(attrs.get("type") == "free" for _, attrs in root.joints)):
        return False
    if any(_moves_reference(attrs.get("ref")) for body in tree.bodies
           for _, attrs in body.found.joints):
        return False
    try:
        for body, kind in enumerate(character.kinds):
            if kind == "spherical":
                character._euler_order(body)
    except ConversionError:
        return False
    return True


def _moves_reference(ref: str | None) -> bool:
    """Whether a joint's ``ref`` is set to other than 0 (unreadable counts: the general
    reader names the error)."""
    if ref is None:
        return False
    try:
        return float(ref) != 0
    except ValueError:
        return True


@dataclass(eq=False)
class Character:
    """PARC's kinematic model as arrays (body order = depth-first XML order)."""

    name: str
    body_names: list[str]
    parents: NDArray[np.intp]
    local_pos: Array
    local_rot: Array  # (n, 4) xyzw
    kinds: list[str]
    joint_names: list[str]
    axes: Array  # (n, 3, 3): hinge axis in row 0; the three hinge axes of a spherical body
    limits: Array  # (n, 3, 2) radians, NaN where absent
    contact_bodies: list[str] = field(default_factory=list)
    shapes: list[list[Shape]] = field(default_factory=list)  # per body, from <geom>

    def __post_init__(self) -> None:
        counts = [{"root": 0, "hinge": 1, "spherical": 3, "fixed": 0}[k] for k in self.kinds]
        self.dof_counts = np.array(counts, dtype=np.intp)
        self.dof_offsets = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.intp)

    @property
    def body_count(self) -> int:
        return len(self.body_names)

    @property
    def dof_count(self) -> int:
        """Length of PARC's DOF vector (root excluded)."""
        return int(self.dof_counts.sum())

    @property
    def joint_labels(self) -> list[str]:
        """Labels of ``joint_rot`` columns: the non-root body names."""
        return self.body_names[1:]

    @property
    def dof_names(self) -> list[str]:
        """One name per DOF: hinge joint names, ``<spherical>_x/_y/_z`` exp-map components."""
        names: list[str] = []
        for kind, joint in zip(self.kinds, self.joint_names, strict=True):
            if kind == "hinge":
                names.append(joint)
            elif kind == "spherical":
                names.extend(f"{joint}_{c}" for c in "xyz")
        return names

    # ------------------------------------------------------------------ DOF <-> quaternion

    def dofs_to_quats(self, dofs: ArrayLike) -> Array:
        """PARC DOF vectors ``(..., D)`` to joint quaternions ``(..., n-1, 4)`` (xyzw, w >= 0)."""
        dofs = np.asarray(dofs, dtype=np.float64)
        if dofs.shape[-1] != self.dof_count:
            raise ConversionError(f"character {self.name!r} has {self.dof_count} DOFs, "
                                  f"got vectors of {dofs.shape[-1]}")
        out = np.zeros((*dofs.shape[:-1], self.body_count - 1, 4))
        out[..., 3] = 1.0
        for body in range(1, self.body_count):
            kind, start = self.kinds[body], int(self.dof_offsets[body])
            if kind == "hinge":
                out[..., body - 1, :] = quat.from_axis_angle(self.axes[body, 0], dofs[..., start])
            elif kind == "spherical":
                out[..., body - 1, :] = quat.from_exp_map(dofs[..., start:start + 3])
        return out

    def quats_to_dofs(self, joint_rot: ArrayLike) -> Array:
        """Joint quaternions ``(..., n-1, 4)`` to PARC DOF vectors ``(..., D)``."""
        q = self._check_rot(joint_rot)
        out = np.zeros((*q.shape[:-2], self.dof_count))
        for body in range(1, self.body_count):
            kind, start = self.kinds[body], int(self.dof_offsets[body])
            if kind == "hinge":
                out[..., start] = quat.to_hinge_angle(q[..., body - 1, :], self.axes[body, 0])
            elif kind == "spherical":
                out[..., start:start + 3] = quat.to_exp_map(q[..., body - 1, :])
        return out

    def _check_rot(self, joint_rot: ArrayLike) -> Array:
        q = np.asarray(joint_rot, dtype=np.float64)
        if q.ndim < 2 or q.shape[-2:] != (self.body_count - 1, 4):
            raise ConversionError(f"character {self.name!r} needs joint rotations of shape "
                                  f"(..., {self.body_count - 1}, 4), got {q.shape}")
        return q

    # ------------------------------------------------------------------ MuJoCo qpos

    @property
    def qpos_size(self) -> int:
        """7 (root position, w-first quaternion) + one value per hinge of the XML."""
        return 7 + sum(1 if k == "hinge" else 3 if k == "spherical" else 0 for k in self.kinds)

    def to_qpos(self, root_pos: ArrayLike, root_rot: ArrayLike, joint_rot: ArrayLike) -> Array:
        """MuJoCo ``qpos`` ``(..., qpos_size)``: three-hinge bodies as intrinsic Euler angles."""
        q = self._check_rot(joint_rot)
        parts = [np.asarray(root_pos, dtype=np.float64),
                 quat.xyzw_to_wxyz(np.asarray(root_rot, dtype=np.float64))]
        for body in range(1, self.body_count):
            kind = self.kinds[body]
            if kind == "hinge":
                angle = quat.to_hinge_angle(q[..., body - 1, :], self.axes[body, 0])
                parts.append(angle[..., None])
            elif kind == "spherical":
                order, signs = self._euler_order(body)
                flat = q[..., body - 1, :].reshape(-1, 4)
                angles = Rotation.from_quat(flat).as_euler(order) * signs
                parts.append(angles.reshape(*q.shape[:-2], 3))
        return np.concatenate(parts, axis=-1)

    def from_qpos(self, qpos: ArrayLike) -> tuple[Array, Array, Array]:
        """Inverse of :meth:`to_qpos`: root position, root rotation (xyzw), joint rotations."""
        qpos = np.asarray(qpos, dtype=np.float64)
        if qpos.shape[-1] != self.qpos_size:
            raise ConversionError(f"character {self.name!r} has qpos of size {self.qpos_size}, "
                                  f"got {qpos.shape[-1]}")
        root_pos = qpos[..., :3]
        root_rot = quat.wxyz_to_xyzw(qpos[..., 3:7])
        rot = np.zeros((*qpos.shape[:-1], self.body_count - 1, 4))
        rot[..., 3] = 1.0
        at = 7
        for body in range(1, self.body_count):
            kind = self.kinds[body]
            if kind == "hinge":
                rot[..., body - 1, :] = quat.from_axis_angle(self.axes[body, 0], qpos[..., at])
                at += 1
            elif kind == "spherical":
                order, signs = self._euler_order(body)
                angles = (qpos[..., at:at + 3] * signs).reshape(-1, 3)
                rot[..., body - 1, :] = Rotation.from_euler(order, angles).as_quat().reshape(
                    *qpos.shape[:-1], 4)
                at += 3
        return root_pos, root_rot, quat.positive_w(rot)

    def _euler_order(self, body: int) -> tuple[str, Array]:
        """SciPy's intrinsic order string and per-angle signs for a three-hinge body."""
        order, signs = "", []
        for axis in self.axes[body]:
            index = int(np.argmax(np.abs(axis)))
            if not np.isclose(abs(axis[index]), 1.0) or np.count_nonzero(np.abs(axis) > 1e-9) != 1:
                raise ConversionError(f"body {self.body_names[body]!r}: qpos conversion needs "
                                      "hinge axes along x, y or z")
            order += "XYZ"[index]
            signs.append(float(np.sign(axis[index])))
        if len(set(order)) != 3:
            raise ConversionError(f"body {self.body_names[body]!r}: repeated hinge axes")
        return order, np.array(signs)

    # ------------------------------------------------------------------ kinematics

    def forward_kinematics(self, root_pos: ArrayLike, root_rot: ArrayLike,
                           joint_rot: ArrayLike) -> tuple[Array, Array]:
        """World body positions ``(..., n, 3)`` and rotations ``(..., n, 4)`` (PARC's FK).

        ``pos_j = pos_p + rot_p · local_pos_j``; ``rot_j = rot_p ⊗ local_rot_j ⊗ joint_rot_j``.
        Quaternions are normalised first (as PARC's MotionLib does on load): float32 files
        drift from unit length by up to ~1e-6, which would otherwise stretch the limbs.
        """
        q = quat.normalize(self._check_rot(joint_rot))
        root_pos = np.asarray(root_pos, dtype=np.float64)
        root_rot = quat.normalize(root_rot)
        lead = q.shape[:-2]
        pos = np.empty((*lead, self.body_count, 3))
        rot = np.empty((*lead, self.body_count, 4))
        pos[..., 0, :] = root_pos
        rot[..., 0, :] = root_rot
        for body in range(1, self.body_count):
            parent = int(self.parents[body])
            parent_rot = rot[..., parent, :]
            pos[..., body, :] = pos[..., parent, :] + quat.rotate(parent_rot,
                                                                  self.local_pos[body])
            local = quat.multiply(self.local_rot[body], q[..., body - 1, :])
            rot[..., body, :] = quat.multiply(parent_rot, local)
        return pos, rot

    # ------------------------------------------------------------------ model

    def to_skeleton(self) -> Skeleton:
        """The neutral Skeleton; this Character rides along in ``attrs["parc_character"]``."""
        bodies: list[Body] = []
        for index, name in enumerate(self.body_names):
            kind = self.kinds[index]
            transform = np.eye(4)
            transform[:3, :3] = Rotation.from_quat(self.local_rot[index]).as_matrix()
            transform[:3, 3] = self.local_pos[index]
            joint_name = self.joint_names[index]
            if kind == "root":
                joint = Joint(joint_name, "free", parent_to_joint=transform)
            elif kind == "hinge":
                lo, hi = self.limits[index, 0]
                joint = Joint(joint_name, "revolute", parent_to_joint=transform,
                              axes=self.axes[index, :1],
                              dofs=[Dof(joint_name, lower=float(lo), upper=float(hi))])
            elif kind == "spherical":
                dofs = [Dof(f"{joint_name}_{c}", lower=float(lo), upper=float(hi))
                        for c, (lo, hi) in zip("xyz", self.limits[index], strict=True)]
                joint = Joint(joint_name, "ball", parent_to_joint=transform, dofs=dofs,
                              attrs={"hinge_axes": self.axes[index].tolist(),
                                     "limits": "hinge ranges of the MJCF (Euler), not "
                                               "exp-map bounds"})
            else:
                joint = Joint(joint_name, "weld", parent_to_joint=transform)
            parent = int(self.parents[index])
            shapes = list(self.shapes[index]) if index < len(self.shapes) else []
            bodies.append(Body(name, joint, parent=parent, shapes=shapes))
        skeleton = Skeleton(self.name, bodies)
        for body, pose in zip(skeleton.bodies, skeleton.rest_poses(), strict=True):
            body.rest_pose = pose  # with the bodies' orientations (euler, xyaxes, …) too
        skeleton.attrs["parc_character"] = self
        if self.contact_bodies:
            skeleton.attrs["contact_bodies"] = list(self.contact_bodies)
        return skeleton

    @classmethod
    def from_skeleton(cls, skeleton: Skeleton) -> Character:
        """The Character of a Skeleton (its own, or derived from weld/revolute/ball joints)."""
        own = skeleton.attrs.get("parc_character")
        if isinstance(own, Character):
            return own
        names, parents, kinds, joints = [], [], [], []
        n = len(skeleton.bodies)
        local_pos, local_rot = np.zeros((n, 3)), np.zeros((n, 4))
        axes, limits = np.zeros((n, 3, 3)), np.full((n, 3, 2), np.nan)
        for index, body in enumerate(skeleton.bodies):
            joint = body.joint
            names.append(body.name)
            parents.append(body.parent)
            joints.append(joint.name)
            if not np.allclose(joint.child_to_joint, np.eye(4)):
                raise ConversionError(f"joint {joint.name!r}: PARC characters have joints at "
                                      "the child body's origin")
            local_pos[index] = joint.parent_to_joint[:3, 3]
            local_rot[index] = Rotation.from_matrix(joint.parent_to_joint[:3, :3]).as_quat()
            if index == 0:
                kinds.append("root")
            elif joint.type == "revolute":
                kinds.append("hinge")
                axes[index, 0] = joint.axes[0] / np.linalg.norm(joint.axes[0])
                limits[index, 0] = (joint.dofs[0].lower, joint.dofs[0].upper)
            elif joint.type == "ball":
                kinds.append("spherical")
                axes[index] = np.asarray(joint.attrs.get("hinge_axes", np.eye(3)))
            elif joint.type == "weld":
                kinds.append("fixed")
            else:
                raise ConversionError(f"joint {joint.name!r}: PARC characters have no "
                                      f"{joint.type} joints (root, hinge, ball, fixed only)")
        return cls(skeleton.name, names, np.array(parents, dtype=np.intp), local_pos,
                   local_rot, kinds, joints, axes, limits,
                   list(skeleton.attrs.get("contact_bodies", [])),
                   [list(body.shapes) for body in skeleton.bodies])


def read(path: str | os.PathLike[str]) -> Skeleton:
    """Read a PARC character XML into a Skeleton (with its :class:`Character` attached),
    with the masses, inertias and markers MuJoCo gives its bodies (from the general MJCF
    reader: PARC's own model has none)."""
    from .. import mjcf_read
    from .mjcf import character_of, parse_tree

    tree = parse_tree(path)  # one parse for both readings
    skeleton = character_of(tree).to_skeleton()
    general = mjcf_read.model_of(tree)
    found = general if isinstance(general, Skeleton) else general.skeletons[0]
    # both walk the first top-level body depth first; the general reader adds massless
    # bodies for joint chains, and names may repeat
    twins = [body for body in found.bodies if "mujoco_chain" not in body.attrs]
    for body, twin in zip(skeleton.bodies, twins, strict=True):
        body.inertia, body.markers = twin.inertia, list(twin.markers)
    return skeleton


def load_character(source: Any) -> Character:
    """A Character from a path (MJCF, see :mod:`.mjcf`), a Skeleton, or a Character
    (passed through)."""
    if isinstance(source, Character):
        return source
    if isinstance(source, Skeleton):
        return Character.from_skeleton(source)
    from .mjcf import parse_mjcf  # the parser builds Characters: imported on use

    return parse_mjcf(source)



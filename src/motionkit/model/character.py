"""A character's kinematic model as flat arrays: PARC's and MimicKit's conventions.

The bodies are numbered depth-first; each non-root body hangs from 0 joints (fixed), 1
hinge, or 3 hinges (a spherical joint whose DOF is a 3-vector exponential map, not the
three hinge angles). ``joint_rot`` in motion files holds one (x, y, z, w) quaternion per
non-root body, fixed bodies included. MuJoCo's ``qpos`` instead applies the three hinges
in order, i.e. intrinsic XYZ Euler angles.

A :class:`Character` converts between those forms, vectorised over frames, and maps to
and from the neutral :class:`~motionkit.model.skeleton.Skeleton` (root = ``free``,
spherical = ``ball`` (rotation vector = the exp-map), hinge = ``revolute``, fixed =
``weld``). Forward kinematics of a character is :func:`motionkit.kinematics.character_poses`;
reading one from an MJCF file is the formats' business.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TypeAlias, cast

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..errors import ConversionError
from ..spatial import quaternion as quat
from .skeleton import Body, Dof, Joint, Shape, Skeleton

Array = NDArray[np.float64]
#: What gives joints their meaning: a Character, a Skeleton, or a model file to read one from.
CharacterSource: TypeAlias = "Character | Skeleton | str | os.PathLike[str]"


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
        self._skeleton: tuple[tuple[object, ...], Skeleton] | None = None

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
        q = self.check_rotations(joint_rot)
        out = np.zeros((*q.shape[:-2], self.dof_count))
        for body in range(1, self.body_count):
            kind, start = self.kinds[body], int(self.dof_offsets[body])
            if kind == "hinge":
                out[..., start] = quat.to_hinge_angle(q[..., body - 1, :], self.axes[body, 0])
            elif kind == "spherical":
                out[..., start:start + 3] = quat.to_exp_map(q[..., body - 1, :])
        return out

    def check_rotations(self, joint_rot: ArrayLike) -> Array:
        """``joint_rot`` as float64 ``(..., n-1, 4)``; ConversionError for another shape."""
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
        from scipy.spatial.transform import Rotation  # on use: importing the model stays light

        q = self.check_rotations(joint_rot)
        parts = [np.asarray(root_pos, dtype=np.float64),
                 quat.xyzw_to_wxyz(np.asarray(root_rot, dtype=np.float64))]
        for body in range(1, self.body_count):
            kind = self.kinds[body]
            if kind == "hinge":
                angle = quat.to_hinge_angle(q[..., body - 1, :], self.axes[body, 0])
                parts.append(angle[..., None])
            elif kind == "spherical":
                order, signs = self.euler_order(body)
                flat = q[..., body - 1, :].reshape(-1, 4)
                angles = Rotation.from_quat(flat).as_euler(order) * signs
                parts.append(angles.reshape(*q.shape[:-2], 3))
        return np.concatenate(parts, axis=-1)

    def from_qpos(self, qpos: ArrayLike) -> tuple[Array, Array, Array]:
        """Inverse of :meth:`to_qpos`: root position, root rotation (xyzw), joint rotations."""
        from scipy.spatial.transform import Rotation  # on use: importing the model stays light

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
                order, signs = self.euler_order(body)
                angles = (qpos[..., at:at + 3] * signs).reshape(-1, 3)
                rot[..., body - 1, :] = Rotation.from_euler(order, angles).as_quat().reshape(
                    *qpos.shape[:-1], 4)
                at += 3
        return root_pos, root_rot, quat.positive_w(rot)

    def euler_order(self, body: int) -> tuple[str, Array]:
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

    # ------------------------------------------------------------------ model

    @property
    def skeleton(self) -> Skeleton:
        """The neutral Skeleton of this character, built again only when the arrays it comes
        from changed (FK plans are cached on it)."""
        key = (self.name, tuple(self.body_names), tuple(self.joint_names), tuple(self.kinds),
               self.parents.tobytes(), self.local_pos.tobytes(), self.local_rot.tobytes(),
               self.axes.tobytes(), self.limits.tobytes(), tuple(self.contact_bodies),
               tuple(tuple(map(id, shapes)) for shapes in self.shapes))
        if self._skeleton is None or self._skeleton[0] != key:
            self._skeleton = key, self.to_skeleton()
        return self._skeleton[1]

    def to_skeleton(self) -> Skeleton:
        """The neutral Skeleton; this Character rides along in ``attrs["parc_character"]``."""
        from scipy.spatial.transform import Rotation  # on use: importing the model stays light

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
    def of(cls, source: Character | Skeleton) -> Character:
        """``source`` itself, or the Character of a Skeleton (see :meth:`from_skeleton`)."""
        return source if isinstance(source, Character) else cls.from_skeleton(source)

    @classmethod
    def from_skeleton(cls, skeleton: Skeleton) -> Character:
        """The Character of a Skeleton (its own, or derived from weld/revolute/ball joints)."""
        from scipy.spatial.transform import Rotation  # on use: importing the model stays light

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
                   list(cast("list[str]", skeleton.attrs.get("contact_bodies", []))),
                   [list(body.shapes) for body in skeleton.bodies])

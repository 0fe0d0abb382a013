"""Choreonoid ``.body`` model (YAML) reader → :class:`~motionkit.model.skeleton.Skeleton`.

What motion files need from a model: the link tree (depth-first, part 0 = root, the order
of ``LinkPosition`` parts), each link's joint (type, axis, joint ID = the
``JointDisplacement`` column, range) and its fixed offset from the parent
(``translation``, ``rotation``), plus mass properties. A link's pose is
``T_parent · [rotation, translation] · Q(q)``, i.e. ``parent_to_joint = [R, t]`` and
``child_to_joint = I``. Angles are in ``angleUnit`` (degree by default for format 1.x,
radian from 2.0). Keys are accepted in both spellings (``joint_type`` / ``jointType``).
Visual/collision ``elements`` are not converted (they do not affect kinematics).
"""

from __future__ import annotations

import math
import os
from typing import Any

import numpy as np
import yaml
from numpy.typing import NDArray

from ..._io import read_bytes
from ...errors import warn
from ...model.skeleton import Body, Dof, Inertia, Joint, Skeleton
from ...spatial import quaternion
from .yamlnodes import Document

READ_OPTIONS: frozenset[str] = frozenset()

Array = NDArray[np.float64]
_TYPES = {"free": "free", "revolute": "revolute", "rotate": "revolute", "prismatic": "prismatic",
          "slide": "prismatic", "fixed": "weld"}
_AXES = {"X": (1.0, 0.0, 0.0), "Y": (0.0, 1.0, 0.0), "Z": (0.0, 0.0, 1.0)}


def sniff(head: bytes) -> bool:
    """True for a Choreonoid body model (``format: ChoreonoidBody`` or a ``links:`` list)."""
    return b"ChoreonoidBody" in head or (b"links:" in head and b"rootLink" in head)


def read(path: str | os.PathLike[str]) -> Skeleton:
    """Read a ``.body`` file into a Skeleton whose joints carry ``attrs["joint_id"]``."""
    return _BodyReader(Document(path, read_bytes(path))).skeleton()


class _BodyReader:
    def __init__(self, doc: Document) -> None:
        self.doc = doc
        self.degree = True

    def get(self, mapping: dict[str, yaml.Node], *keys: str) -> yaml.Node | None:
        for key in keys:
            if key in mapping:
                return mapping[key]
        return None

    def vector(self, node: yaml.Node, count: int, what: str) -> Array:
        items = self.doc.sequence(node, what)
        if len(items) != count:
            raise self.doc.error(node, f"{what} needs {count} numbers, got {len(items)}")
        return np.array([self.doc.number(item, what) for item in items])

    def angle(self, value: float) -> float:
        return math.radians(value) if self.degree else value

    def rotation(self, node: yaml.Node) -> Array:
        items = self.doc.sequence(node, "rotation")
        if items and isinstance(items[0], yaml.SequenceNode):
            out = np.eye(3)
            for item in items:
                out = out @ self.rotation(item)
            return out
        values = self.vector(node, 4, "rotation (axis x y z, angle)")
        axis = values[:3]
        norm = float(np.linalg.norm(axis))
        if norm == 0.0:
            raise self.doc.error(node, "rotation axis is zero")
        return quaternion.to_matrix(quaternion.from_axis_angle(axis, self.angle(values[3])))

    def axis(self, node: yaml.Node) -> Array:
        if isinstance(node, yaml.ScalarNode):
            text = str(node.value).strip().upper()
            sign = -1.0 if text.startswith("-") else 1.0
            base = _AXES.get(text.lstrip("+-"))
            if base is None:
                raise self.doc.error(node, f"joint axis {node.value!r} is not X, Y, Z or a "
                                     "3-vector")
            return sign * np.array(base)
        axis = self.vector(node, 3, "joint axis")
        norm = float(np.linalg.norm(axis))
        if norm == 0.0:
            raise self.doc.error(node, "joint axis is zero")
        return axis / norm

    def skeleton(self) -> Skeleton:
        doc = self.doc
        if doc.root is None:
            raise doc.error(None, "the body file is empty")
        top = doc.mapping(doc.root, "a body file")
        version_node = self.get(top, "formatVersion", "format_version")
        version = doc.number(version_node, "formatVersion") if version_node is not None else 1.0
        unit_node = self.get(top, "angleUnit", "angle_unit")
        if unit_node is not None:
            unit = doc.text(unit_node, "angleUnit").strip().lower()
            if unit not in ("degree", "radian"):
                raise doc.error(unit_node, f'angleUnit must be "degree" or "radian", not {unit!r}')
            self.degree = unit == "degree"
        else:
            self.degree = version < 2.0
        links_node = self.get(top, "links")
        if links_node is None:
            raise doc.error(doc.root, "a body file needs a 'links' list")
        links: dict[str, tuple[yaml.Node, dict[str, yaml.Node]]] = {}
        for item in doc.sequence(links_node, "links"):
            link = doc.mapping(item, "a link")
            name_node = self.get(link, "name")
            if name_node is None:
                raise doc.error(item, "a link needs a name")
            name = doc.text(name_node, "link name")
            if name in links:
                raise doc.error(name_node, f"a second link named {name!r}")
            links[name] = (item, link)
        if not links:
            raise doc.error(links_node, "the body has no links")
        root_node = self.get(top, "rootLink", "root_link")
        root = doc.text(root_node, "rootLink") if root_node is not None else next(iter(links))
        if root not in links:
            raise doc.error(root_node, f"rootLink {root!r} is not a link")
        children: dict[str, list[str]] = {name: [] for name in links}
        parent_of: dict[str, str] = {}
        for name, (_, link) in links.items():
            parent_node = self.get(link, "parent")
            if parent_node is None:
                continue
            parent = doc.text(parent_node, "parent")
            if parent not in links:
                raise doc.error(parent_node, f"link {name!r}: no link named {parent!r}")
            parent_of[name] = parent
            children[parent].append(name)
        for name, (item, _) in links.items():
            if name != root and name not in parent_of:
                raise doc.error(item, f"link {name!r} has no parent and is not the root link")
        bodies: list[Body] = []
        index: dict[str, int] = {}
        stack = [root]
        while stack:  # depth-first, children in file order
            name = stack.pop()
            if name in index:
                raise doc.error(links[name][0], f"link {name!r} is part of a cycle")
            body = self.body(name, links[name][1],
                             index[parent_of[name]] if name in parent_of else -1)
            index[name] = len(bodies)
            bodies.append(body)
            stack.extend(reversed(children[name]))
        unreached = [n for n in links if n not in index]
        if unreached:
            raise doc.error(links[unreached[0]][0], f"link {unreached[0]!r} is not connected to "
                            f"the root link {root!r} (a cycle of parents)")
        name_node = self.get(top, "name")
        skeleton = Skeleton(doc.text(name_node, "name") if name_node is not None else
                            os.path.splitext(os.path.basename(os.fspath(doc.path)))[0], bodies)
        ids = [j.attrs["joint_id"] for j in skeleton.joints if "joint_id" in j.attrs]
        if len(ids) != len(set(ids)):
            warn(f"{os.fspath(doc.path)}: joint IDs are not unique")
        for body, pose in zip(skeleton.bodies, skeleton.rest_poses(), strict=True):
            body.rest_pose = pose
        skeleton.attrs["choreonoid"] = {"format_version": version, "root_link": root}
        return skeleton

    def body(self, name: str, link: dict[str, yaml.Node], parent: int) -> Body:
        doc = self.doc
        type_node = self.get(link, "jointType", "joint_type")
        raw_type = doc.text(type_node, "jointType").strip() if type_node is not None else "fixed"
        type_ = _TYPES.get(raw_type)
        if type_ is None:
            raise doc.error(type_node, f"link {name!r}: unknown joint type {raw_type!r} "
                            f"(known: {', '.join(_TYPES)})")
        offset = np.eye(4)
        translation = self.get(link, "translation")
        if translation is not None:
            offset[:3, 3] = self.vector(translation, 3, "translation")
        rotation = self.get(link, "rotation")
        if rotation is not None:
            offset[:3, :3] = self.rotation(rotation)
        axes = np.zeros((0, 3))
        if type_ in ("revolute", "prismatic"):
            axis_node = self.get(link, "jointAxis", "joint_axis")
            axes = (self.axis(axis_node) if axis_node is not None
                    else np.array([0.0, 0.0, 1.0])).reshape(1, 3)
        joint_name_node = self.get(link, "jointName", "joint_name")
        joint_name = doc.text(joint_name_node, "jointName") if joint_name_node else name
        attrs: dict[str, Any] = {}
        id_node = self.get(link, "jointId", "joint_id")
        if id_node is not None:
            attrs["joint_id"] = doc.integer(id_node, "jointId")
        joint = Joint(joint_name, type_, parent_to_joint=offset, axes=axes, attrs=attrs)
        range_node = self.get(link, "jointRange", "joint_range")
        if range_node is not None and joint.dof_count == 1:
            items = doc.sequence(range_node, "jointRange")
            if len(items) != 2:
                raise doc.error(range_node, "jointRange needs 2 numbers (lower, upper)")
            lo, hi = (doc.number(item, "jointRange") for item in items)
            if type_ == "revolute":
                lo, hi = self.angle(lo), self.angle(hi)
            joint.dofs = [Dof(joint_name, lower=lo, upper=hi)]
        inertia = Inertia()
        mass = self.get(link, "mass")
        if mass is not None:
            inertia.mass = doc.number(mass, "mass")
        com = self.get(link, "centerOfMass", "center_of_mass")
        if com is not None:
            inertia.com = self.vector(com, 3, "centerOfMass")
        moment = self.get(link, "inertia")
        if moment is not None:
            inertia.moment = self.vector(moment, 9, "inertia").reshape(3, 3)
        return Body(name, joint, parent=parent, inertia=inertia)



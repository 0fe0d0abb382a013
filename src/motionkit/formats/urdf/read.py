"""Read a URDF file into a Skeleton (urdfdom's rules, ``specs/character-bridges.md`` §5.1).

Every link is a body whose joint has ``parent_to_joint`` = the joint's ``<origin>`` and no
child offset (the child link frame is the joint frame). ``revolute`` and ``continuous``
→ revolute (continuous unlimited), ``prismatic`` → prismatic, ``fixed`` → weld,
``floating`` → free, ``planar`` → planar about its axis. The root link gets a free joint
(the floating base DART and pinocchio add); a root link called ``world`` without mass or
geometry is the world itself, as DART reads it, and its joints become root joints.
Axes are normalised; a missing ``<inertial>`` is mass 0 (urdfdom's default).
A joint written with ``name=""`` (yourdfpy loads such files) is named ``<child link>__joint``
(numbered if a written name has it), with a warning; a joint with no name attribute is refused.
"""

from __future__ import annotations

import os

import numpy as np
from numpy.typing import NDArray
from scipy.spatial.transform import Rotation

from ..._io import read_bytes
from ...errors import FormatError, warn
from ...model.skeleton import Body, Dof, Inertia, Joint, Shape, Skeleton
from ..shared.xml import Node, parse

Array = NDArray[np.float64]

_TYPES = {"revolute": "revolute", "continuous": "revolute", "prismatic": "prismatic",
          "fixed": "weld", "floating": "free", "planar": "planar"}


def read(path: str | os.PathLike[str]) -> Skeleton:
    """Read a URDF ``<robot>`` into a Skeleton, bodies parent-first."""
    root = parse(read_bytes(path), path)
    if root.tag != "robot":
        raise FormatError(f"not a URDF file (root element <{root.tag:.40}>)", path,
                          root.line, root.column)
    return _Reader(path).robot(root)


def _unnamed(child: str, taken: set[str]) -> str:
    """The name of a joint written with ``name=""``: ``<child link>__joint`` (the ``__``
    infix marks generated names), numbered when a written name already has it."""
    name, count = f"{child}__joint", 1
    while name in taken:
        count += 1
        name = f"{child}__joint{count}"
    return name


class _Reader:
    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = path

    def error(self, node: Node, message: str) -> FormatError:
        return FormatError(message, self.path, node.line, node.column)

    def numbers(self, node: Node, name: str, count: int, default: str | None = None) -> Array:
        text = node.attrib.get(name, default)
        if text is None:
            raise self.error(node, f"<{node.tag}> needs the attribute {name!r}")
        try:
            values = np.array([float(v) for v in text.split()], dtype=float)
        except ValueError:
            raise self.error(node, f"<{node.tag} {name}=...>: not a number in {text[:40]!r}"
                             ) from None
        if values.size != count or not np.all(np.isfinite(values)):
            raise self.error(node, f"<{node.tag} {name}=...>: needs {count} finite numbers, "
                                   f"got {text[:40]!r}")
        return values

    def origin(self, parent: Node) -> Array:
        """The transform of ``parent``'s ``<origin xyz rpy>`` (identity when absent)."""
        node = parent.find("origin")
        out = np.eye(4)
        if node is None:
            return out
        out[:3, 3] = self.numbers(node, "xyz", 3, "0 0 0")
        out[:3, :3] = Rotation.from_euler("xyz", self.numbers(node, "rpy", 3, "0 0 0")
                                          ).as_matrix()
        return out

    def robot(self, root: Node) -> Skeleton:
        links: dict[str, Node] = {}
        for node in root.findall("link"):
            name = node.attrib.get("name", "")
            if not name or name in links:
                raise self.error(node, f"a link needs a unique name, got {name!r}")
            links[name] = node
        joints: dict[str, Node] = {}  # by child link
        parents: dict[str, str] = {}  # parent link by child link
        joint_names: dict[str, str] = {}  # by child link
        written = {node.attrib.get("name", "") for node in root.findall("joint")}
        names: set[str] = set()
        unnamed: list[str] = []
        for node in root.findall("joint"):
            name = node.attrib.get("name", "")
            parent, child = node.find("parent"), node.find("child")
            if "name" not in node.attrib or name in names:
                raise self.error(node, f"a joint needs a unique name, got {name!r}")
            if not name:  # yourdfpy loads it; the model needs a unique name
                name = _unnamed(child.attrib.get("link", "") if child is not None else "",
                                written | names)
                unnamed.append(name)
            if parent is None or child is None:
                raise self.error(node, f"joint {name!r} needs <parent link> and <child link>")
            for end in (parent, child):
                if end.attrib.get("link") not in links:
                    raise self.error(end, f"joint {name!r}: no link "
                                          f"{end.attrib.get('link', '')!r}")
            if child.attrib["link"] in joints:
                raise self.error(node, f"link {child.attrib['link']!r} has two parent joints")
            names.add(name)
            joints[child.attrib["link"]] = node
            joint_names[child.attrib["link"]] = name
            parents[child.attrib["link"]] = parent.attrib["link"]
        if unnamed:
            warn(f"{os.fspath(self.path)}: {len(unnamed)} joint(s) with an empty name, named "
                 f"after their child link: {', '.join(unnamed[:5])}")
        roots = [name for name in links if name not in joints]
        if len(roots) != 1:
            raise self.error(root, "no root link (a cycle)" if not roots else
                             f"{len(roots)} root links: {', '.join(roots[:3])}")
        kids: dict[str, list[str]] = {}
        for child_name, parent_name in parents.items():
            kids.setdefault(parent_name, []).append(child_name)
        world = roots[0] == "world" and self.empty(links["world"])
        bodies: list[Body] = []
        index: dict[str, int] = {}
        stack = [(name, -1) for name in reversed(kids.get(roots[0], []))] if world \
            else [(roots[0], -1)]
        while stack:
            link, above = stack.pop()
            element = joints.get(link)
            joint = (self.joint(element, joint_names[link]) if element is not None
                     else Joint(f"{link}_root", "free"))
            index[link] = len(bodies)
            bodies.append(self.body(links[link], joint, above))
            stack.extend((kid, index[link]) for kid in reversed(kids.get(link, [])))
        if len(bodies) + int(world) != len(links):
            raise self.error(root, "links unreachable from the root (a cycle)")
        return Skeleton(root.attrib.get("name", ""), bodies)

    @staticmethod
    def empty(link: Node) -> bool:
        return not link.children

    def joint(self, node: Node, name: str) -> Joint:
        kind = node.attrib.get("type", "")
        if kind not in _TYPES:
            raise self.error(node, f"joint {name!r}: unknown type {kind[:40]!r}")
        axis_node = node.find("axis")
        axis = self.numbers(axis_node, "xyz", 3) if axis_node is not None else np.eye(3)[0]
        if not np.any(axis) and kind not in ("fixed", "floating"):
            raise self.error(node, f"joint {name!r}: a zero axis")
        type_ = _TYPES[kind]
        extra: dict[str, object] = {}
        if type_ in ("revolute", "prismatic"):
            extra["axes"] = [axis / np.linalg.norm(axis)]
        elif type_ == "planar":
            normal = axis / np.linalg.norm(axis)
            first = np.cross(normal, np.eye(3)[int(np.argmin(np.abs(normal)))])
            first /= np.linalg.norm(first)
            extra.update(axes=[first, np.cross(normal, first)], plane="arbitrary")
        joint = Joint(name, type_, self.origin(node), **extra)  # type: ignore[arg-type]
        if type_ in ("revolute", "prismatic"):
            joint.dofs = [self.dof(node, name, kind)]
        return joint

    def dof(self, node: Node, name: str, kind: str) -> Dof:
        dof = Dof(name)
        limit = node.find("limit")
        if kind in ("revolute", "prismatic") and limit is None:
            raise self.error(node, f"joint {name!r}: a {kind} joint needs <limit>")
        if limit is not None:
            if kind != "continuous":
                dof.lower = float(self.numbers(limit, "lower", 1, "0")[0])
                dof.upper = float(self.numbers(limit, "upper", 1, "0")[0])
            effort = float(self.numbers(limit, "effort", 1)[0])
            velocity = float(self.numbers(limit, "velocity", 1)[0])
            dof.force_lower, dof.force_upper = -effort, effort
            dof.velocity_lower, dof.velocity_upper = -velocity, velocity
        dynamics = node.find("dynamics")
        if dynamics is not None:
            dof.damping = float(self.numbers(dynamics, "damping", 1, "0")[0])
            dof.friction = float(self.numbers(dynamics, "friction", 1, "0")[0])
        return dof

    def body(self, link: Node, joint: Joint, parent: int) -> Body:
        inertia = Inertia(0.0, np.zeros(3), np.zeros((3, 3)))
        node = link.find("inertial")
        if node is not None:
            frame = self.origin(node)
            mass_node, moment_node = node.find("mass"), node.find("inertia")
            mass = float(self.numbers(mass_node, "value", 1)[0]) if mass_node is not None else 0.0
            moment = np.zeros((3, 3))
            if moment_node is not None:
                xx, xy, xz, yy, yz, zz = (float(self.numbers(moment_node, k, 1, "0")[0])
                                          for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz"))
                moment = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
            rotation = frame[:3, :3]
            inertia = Inertia(mass, frame[:3, 3], rotation @ moment @ rotation.T)
        shapes = [shape for role in ("visual", "collision") for element in link.findall(role)
                  if (shape := self.shape(element, role)) is not None]
        return Body(link.attrib["name"], joint, parent, inertia=inertia, shapes=shapes)

    def shape(self, element: Node, role: str) -> Shape | None:
        geometry = element.find("geometry")
        if geometry is None or not geometry.children:
            raise self.error(element, f"<{role}> needs a <geometry>")
        node = geometry.children[0]
        transform = self.origin(element)
        if node.tag == "box":
            return Shape("box", {"size": self.numbers(node, "size", 3)}, transform, role)
        if node.tag == "sphere":
            return Shape("sphere", {"radius": float(self.numbers(node, "radius", 1)[0])},
                         transform, role)
        if node.tag == "cylinder":
            return Shape("cylinder", {"radius": float(self.numbers(node, "radius", 1)[0]),
                                      "height": float(self.numbers(node, "length", 1)[0])},
                         transform, role)
        if node.tag == "mesh":
            name = node.attrib.get("filename", "")
            scale = self.numbers(node, "scale", 3, "1 1 1")
            return Shape("mesh", {"file_name": name, "scale": scale,
                                  "base": os.path.dirname(os.path.abspath(self.path))},
                         transform, role)
        raise self.error(node, f"unknown geometry <{node.tag[:40]}>")


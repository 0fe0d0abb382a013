"""Choreonoid ``.body`` model (YAML) reader → :class:`~motionkit.model.skeleton.Skeleton`,
following Choreonoid's ``StdBodyLoader`` (see ``specs/choreonoid-body.md``).

What the reader does, in the loader's order: the header (``format``, a required version
below 2.1, the angle unit — degree unless ``radian`` is given with a 1.x version), then
the link nodes of ``links`` (a listing, or a mapping visited in sorted key order): plain
links, ``Skip`` (dropped with its subtree), ``ContinuousTrack`` (expanded into a chain of
shoes) and ``SubBody`` (another file grafted in; a missing or broken one is left out with
a warning, a recursive include is an error). Then the tree: root = ``rootLink`` or the
first link produced, children in production order, links in depth-first order.

Skeleton mapping: each link is a body whose joint has ``parent_to_joint = [rotation |
translation]``. Revolute and prismatic joints keep their type; the root keeps ``free``
(its pose is the initial world pose); every other type — ``fixed``, a non-root ``free``,
``pseudo_continuous_track`` — is a weld, because Choreonoid's FK moves none of them. The
Choreonoid type, axis, initial value, rotor inertia and leftover keys stay in
``body.attrs["choreonoid"]``; joint IDs ≥ 0 in ``joint.attrs["joint_id"]``. Shapes go to
``body.shapes`` (Y-axis primitives turned to DART's Z axis), devices to
``skeleton.devices``.
"""

from __future__ import annotations

import os

import numpy as np

from ..._io import read_bytes
from ..._limits import MAX_BODIES
from ...errors import FormatError, warn
from ...model.skeleton import Body, Device, Dof, Inertia, Joint, Skeleton
from .body_links import Link, LinkReader
from .body_values import Values
from .body_write import HOLDS, WRITES, losses, write
from .body_yaml import (
    Budget,
    Listing,
    Mapping,
    Node,
    Scalar,
    compose,
    error,
    plain,
    strict_int,
    to_double,
    to_int,
)

__all__ = ["HOLDS", "WRITES", "losses", "read", "sniff", "write"]


def sniff(head: bytes) -> bool:
    """True for a Choreonoid body model (``format: ChoreonoidBody`` or a ``links:`` list)."""
    return b"ChoreonoidBody" in head or (b"links:" in head and b"rootLink" in head)


def read(path: str | os.PathLike[str]) -> Skeleton:
    """Read a ``.body`` file into a Skeleton (joint IDs in ``joint.attrs["joint_id"]``)."""
    data = read_bytes(path)
    loader = _Loader(Budget(path, len(data)))
    model = loader.load(os.fspath(path), data, ())
    return _skeleton(model, os.fspath(path))


class _Recursive(FormatError):
    """A SubBody chain that includes a file it is part of (never skipped with a warning)."""


class _Model:
    """A loaded file: its name, root link (with the tree below), version and info."""

    def __init__(self, name: str, root: Link, version: float, degree: bool,
                 info: dict[str, object]) -> None:
        self.name = name
        self.root = root
        self.version = version
        self.degree = degree
        self.info = info


class _Loader:
    """Loads one main file and the SubBody files it includes (each at most once)."""

    def __init__(self, budget: Budget) -> None:
        self.budget = budget
        self.sub_bodies: dict[str, _Model | None] = {}
        self.track_bases: dict[int, str] = {}  # shoe 0 of a ContinuousTrack → its bare name

    def load(self, path: str, data: bytes, including: tuple[str, ...]) -> _Model:
        """Read ``data`` (the file at ``path``); ``including`` = the files that include it."""
        root, anchors = compose(path, data)
        if root is None:
            raise FormatError("the body file is empty", path)
        if not isinstance(root, Mapping):
            raise error(path, root, "the top level of a body file is not a mapping")
        top = root.entries
        values = Values(path, self.budget, True)
        fmt = top.pop("format", None)
        if fmt is None:
            raise error(path, root, "neither format nor modelFile is specified (this reader "
                        "needs format: ChoreonoidBody)")
        if not isinstance(fmt, Scalar) or fmt.text != "ChoreonoidBody":
            raise error(path, fmt, "format must be ChoreonoidBody")
        version_node = top.pop("format_version", None) or top.pop("formatVersion", None)
        if version_node is None:
            raise error(path, root, "the version of the Choreonoid body file format is not "
                        "specified (format_version)")
        version = to_double(path, version_node, self.budget)
        if version >= 2.1:
            raise error(path, version_node, f"version {version:g} of the Choreonoid body "
                        "format is not supported")
        unit_node = top.pop("angle_unit", None) or top.pop("angleUnit", None)
        if unit_node is not None:
            unit = unit_node.text if isinstance(unit_node, Scalar) else ""
            if unit not in ("degree", "radian"):
                raise error(path, unit_node, 'the angle unit must be either "radian" or '
                            '"degree"')
            if unit == "radian" and version >= 2.0:
                raise error(path, unit_node, "radian mode is not supported in Choreonoid "
                            "format version 2.0")
            values.degree = unit == "degree"
        name_node = top.pop("name", None)
        name = (name_node.text if isinstance(name_node, Scalar)
                else os.path.splitext(os.path.basename(path))[0])
        links_node = top.pop("links", None)
        if links_node is None:
            raise error(path, root, "a body file needs 'links'")
        root_node = top.pop("root_link", None) or top.pop("rootLink", None)
        reader = LinkReader(values, anchors)
        produced: list[Link] = []
        names: dict[str, Link] = {}
        for type_name, node in self._link_nodes(path, links_node):
            self.budget.spend(node)
            for link in self._link_node(type_name, node, reader, path, including):
                produced.append(link)
                for one in link.subtree():
                    self._register(path, names, one.name, one, node)
                base = self.track_bases.pop(id(link), "")
                self._register(path, names, base, link, node)  # the bare name = shoe 0
        if not produced:
            raise error(path, links_node, "the body has no links")
        root_link = self._root(path, root_node, names, produced)
        self._attach(path, root_link, produced, names)
        info = {key: plain(value, self.budget) for key, value in top.items() if key != "<<"}
        return _Model(name, root_link, version, values.degree, info)

    def _link_nodes(self, path: str, node: Node) -> list[tuple[str, Mapping]]:
        if isinstance(node, Listing):
            if not node.items:
                raise error(path, node, "'links' is empty")
            out = []
            for item in node.items:
                if not isinstance(item, Mapping):
                    raise error(path, item, "a link node is not a mapping")
                type_node = item.entries.pop("type", None)
                out.append((type_node.text if isinstance(type_node, Scalar) else "", item))
            return out
        if isinstance(node, Mapping):
            out = []
            for key in sorted(node.entries):  # Choreonoid visits type keys in sorted order
                item = node.entries[key]
                if not isinstance(item, Mapping):
                    raise error(path, item, f'the node type "{key}" is not defined')
                type_node = item.entries.pop("type", None)
                if type_node is not None and getattr(type_node, "text", None) != key:
                    raise error(path, type_node, f'the type of a "{key}" node is not "{key}"')
                out.append((key, item))
            return out
        raise error(path, node, "'links' must be a listing or a mapping")

    def _link_node(self, type_name: str, node: Mapping, reader: LinkReader, path: str,
                   including: tuple[str, ...]) -> list[Link]:
        if type_name in ("", "Link"):
            return [reader.link(node)]
        if type_name == "Skip":
            return []
        if type_name == "ContinuousTrack":
            return [self._track(node, reader)]
        if type_name == "SubBody":
            sub = self._sub_body(node, reader, path, including)
            return [] if sub is None else [sub]
        raise error(path, node, f"a {type_name} node cannot be specified in links")

    def _register(self, path: str, names: dict[str, Link], name: str, link: Link,
                  node: Node) -> None:
        if not name:
            return
        if len(names) >= MAX_BODIES:
            raise error(path, node, f"more than {MAX_BODIES} links")
        if name in names:
            raise error(path, link.name_node or link.node or node,
                        f'duplicated link name "{name}"')
        names[name] = link

    def _track(self, node: Mapping, reader: LinkReader) -> Link:
        """A ContinuousTrack node: shoes ``name0`` … ``name(N-1)``, 0 free, the rest
        revolute about the node's axis, each ``jointOffset`` from the previous."""
        values = reader.values
        path = values.path
        count_node = node.entries.pop("numJoints", None)
        offset_node = node.entries.pop("joint_offset", None) or node.entries.pop(
            "jointOffset", None)
        angles_node = node.entries.pop("initialJointAngles", None)
        if "parent" not in node.entries:
            raise error(path, node, "a ContinuousTrack node: parent must be specified")
        if count_node is None:
            raise error(path, node, "a ContinuousTrack node needs numJoints")
        count = to_int(path, count_node)
        if not 3 <= count <= MAX_BODIES:
            raise error(path, count_node, f"a ContinuousTrack needs 3 to {MAX_BODIES} numJoints")
        if offset_node is None:
            raise error(path, node, "a ContinuousTrack node needs jointOffset")
        offset = values.vector(offset_node, 3, "jointOffset")
        angles = ([values.angle(values.number(item)) for item in
                   values.listing(angles_node, "initialJointAngles")]
                  if angles_node is not None else [])
        template = reader.link(node)
        pristine = template.clone()  # the shoes copy the link before its type is forced
        base = template.name
        shoes: list[Link] = []
        for index in range(count):
            self.budget.spend(node)
            shoe = pristine.clone() if index else template
            shoe.name = f"{base}{index}"
            if index == 0:
                shoe.joint_type = "free"
                shoe.info["isContinuousTrack"] = True
            else:
                shoe.joint_type = "revolute"
                shoe.registers_id = False
                shoe.translation = offset.copy()
                shoe.parent = shoes[-1].name
                shoe.initial = angles[index - 1] if index - 1 < len(angles) else 0.0
                shoes[-1].children.append(shoe)
            shoes.append(shoe)
        self.track_bases[id(template)] = base
        return template

    def _sub_body(self, node: Mapping, reader: LinkReader, path: str,
                  including: tuple[str, ...]) -> Link | None:
        uri_node = node.entries.get("uri")
        if not isinstance(uri_node, Scalar):
            raise error(path, node, "a SubBody node needs a uri")
        uri = uri_node.text
        resolved = (os.path.normpath(uri) if os.path.isabs(uri)
                    else os.path.normpath(os.path.join(os.path.dirname(path), uri)))
        chain = (*including, path)
        if any(os.path.exists(p) and os.path.exists(resolved) and os.path.samefile(p, resolved)
               for p in chain):
            raise _Recursive("recursive sub-body include: " + " → ".join(
                [*(os.path.basename(p) for p in chain), os.path.basename(resolved)]),
                path, uri_node.line, uri_node.column)
        if resolved not in self.sub_bodies:
            self.sub_bodies[resolved] = self._load_sub(resolved, uri, path, uri_node, chain)
        model = self.sub_bodies[resolved]
        if model is None:
            return None
        root = model.root.clone()
        prefix = _text_or(node.entries.get("prefix"), "")
        suffix = _text_or(node.entries.get("suffix"), "")
        device_prefix = _text_or(node.entries.get("device_prefix",
                                                  node.entries.get("devicePrefix")), prefix)
        offset_node = node.entries.get("joint_id_offset", node.entries.get("jointIdOffset"))
        offset = (strict_int(offset_node) if offset_node is not None else None) or 0
        for link in root.subtree():
            link.name = prefix + link.name + suffix
            if link.joint_name:
                link.joint_name = prefix + link.joint_name + suffix
            if link.joint_id >= 0:
                link.joint_id += offset
            for device in link.devices:
                device.name = device_prefix + device.name
            link.node, link.name_node = node, None  # errors point at the SubBody node
        for key in ("uri", "prefix", "suffix", "device_prefix", "devicePrefix",
                    "joint_id_offset", "jointIdOffset", "name", "mass", "centerOfMass",
                    "center_of_mass", "inertia", "import"):
            node.entries.pop(key, None)
        reader.link(node, root)
        return root

    def _load_sub(self, resolved: str, uri: str, path: str, uri_node: Node,
                  chain: tuple[str, ...]) -> _Model | None:
        where = f"{path}:{uri_node.line}:{uri_node.column}"
        try:
            data = read_bytes(resolved)
            self.budget.grow(len(data))
            return self.load(resolved, data, chain)
        except _Recursive:
            raise
        except FormatError as exc:
            warn(f"{where}: SubBody {uri!r} ({resolved}) cannot be loaded ({exc.message}); "
                 "its links are left out, as Choreonoid does")
            return None

    def _root(self, path: str, root_node: Node | None, names: dict[str, Link],
              produced: list[Link]) -> Link:
        if root_node is None:
            return produced[0]
        name = root_node.text if isinstance(root_node, Scalar) else ""
        if name not in names:
            raise error(path, root_node, f"root link {name!r} is not defined")
        return names[name]

    def _attach(self, path: str, root: Link, produced: list[Link],
                names: dict[str, Link]) -> None:
        for link in produced:
            if not link.parent:
                if link is not root:
                    raise error(path, link.node, f'the parent of "{link.name}" is not '
                                "specified")
                continue
            if link is root:
                raise error(path, link.node, f'the root link "{link.name}" has a parent')
            parent = names.get(link.parent)
            if parent is None:
                raise error(path, link.node, f'parent link "{link.parent}" of "{link.name}" '
                            "is not defined")
            if parent is link:
                raise error(path, link.node, f'link "{link.name}" is its own parent')
            parent.children.append(link)
        reached = {id(link) for link in root.subtree()}
        for link in produced:
            if id(link) not in reached:
                raise error(path, link.node, f'link "{link.name}" is part of a cycle of '
                            "parents (Choreonoid drops such links silently)")


def _text_or(node: Node | None, default: str) -> str:
    return node.text if isinstance(node, Scalar) else default


def _skeleton(model: _Model, path: str) -> Skeleton:
    """The Skeleton of a loaded model (links depth-first from the root)."""
    links = model.root.subtree()
    index = {id(link): i for i, link in enumerate(links)}
    parent_of = {id(child): i for i, link in enumerate(links) for child in link.children}
    bodies: list[Body] = []
    devices: list[Device] = []
    seen_ids: dict[int, str] = {}
    for i, link in enumerate(links):
        joint = _joint(link, i == 0)
        if link.joint_id >= 0 and link.registers_id:
            if link.joint_id in seen_ids:
                warn(f"{path}: joint ID {link.joint_id} of {link.name!r} is also the ID of "
                     f"{seen_ids[link.joint_id]!r}; the first keeps it, as in Choreonoid")
            else:
                seen_ids[link.joint_id] = link.name
                joint.attrs["joint_id"] = link.joint_id
        body = Body(link.name, joint, parent=parent_of.get(id(link), -1),
                    inertia=Inertia(link.mass, link.com, link.inertia), shapes=link.shapes)
        body.attrs["choreonoid"] = {
            "joint_type": link.joint_type, "joint_axis": link.axis.tolist(),
            "joint_id": link.joint_id, "initial_position": link.initial, "rotor_inertia": link.rotor_inertia,
            "actuation_mode": link.actuation, "info": link.info}
        bodies.append(body)
        devices.extend(Device(d.name, d.kind, index[id(link)], d.transform, d.attrs)
                       for d in link.devices)
    skeleton = Skeleton(model.name, bodies, devices=devices)
    for body, pose in zip(skeleton.bodies, skeleton.rest_poses(), strict=True):
        body.rest_pose = pose
    skeleton.attrs["choreonoid"] = {"format_version": model.version, "root_link": links[0].name,
                                    "angle_unit": "degree" if model.degree else "radian",
                                    "info": model.info}
    return skeleton


def _joint(link: Link, root: bool) -> Joint:
    offset = np.eye(4)
    offset[:3, :3] = link.rotation
    offset[:3, 3] = link.translation
    name = link.joint_name or link.name
    if root:
        type_ = "free" if link.joint_type == "free" else "weld"
    else:
        type_ = link.joint_type if link.joint_type in ("revolute", "prismatic") else "weld"
    if type_ not in ("revolute", "prismatic"):
        return Joint(name, type_, parent_to_joint=offset)
    lower, upper = link.position_range
    dof = Dof(name, lower=lower, upper=upper, position=link.initial,
              velocity_lower=link.velocity_range[0], velocity_upper=link.velocity_range[1],
              force_lower=link.effort_range[0], force_upper=link.effort_range[1])
    return Joint(name, type_, parent_to_joint=offset, axes=link.axis.reshape(1, 3), dofs=[dof])


"""DART ``.skel`` (XML) reader and writer → :class:`~motionkit.model.skeleton.World`.

Follows DART's real ``SkelParser`` (see ``specs/dart-skel.md``) where it differs from the
seed document: ``<mobile>``, cylinder ``<height>``, actuator ``force``, rotation-vector
ball/free joints, body transforms as poses at q = 0 and joint transforms in the child
frame. Strict where DART crashes or hangs (orphan bodies, cycles, unknown bodies or joint
types, missing required elements, wrong number counts): one FormatError with the line.
Lenient where DART is lenient, with a MotionkitWarning.

This module reads the ``<world>``; the rest of the reader is split by concern: element
values (``_values``), skeletons with their build order and names (``_skeleton``), bodies
and their inertia (``_bodies``, moments derived by ``_inertia``), shapes (``_shapes``) and
joints (``_joints``).
"""

from __future__ import annotations

import os
import re

from ..._io import read_bytes
from ...errors import FormatError
from ...model.skeleton import World
from ..shared.xml import Node, parse
from ._skeleton import NameManager, SkeletonReader
from ._values import ValueReader
from .skel_write import WRITES, losses, write

__all__ = ["WRITES", "losses", "read", "sniff", "write"]

_LEGACY = re.compile(rb"^\s*(dofs|mass|node|handles|primitive)\s*\{", re.MULTILINE)


def sniff(head: bytes) -> bool:
    """True for a ``.skel`` XML document (``<skel`` root)."""
    return b"<skel" in head[:4096]


def read(path: str | os.PathLike[str]) -> World:
    """Read a ``.skel`` file into a World (``<world>`` or sibling ``<skeleton>`` form)."""
    data = read_bytes(path)
    stripped = data.lstrip(b"\xef\xbb\xbf \t\r\n")
    if not stripped.startswith(b"<") and _LEGACY.search(data[:65536]):
        raise FormatError("this is the legacy DART text .skel format (pre-2013, blocks like "
                          "'dofs { ... }'); it is not supported — only the XML .skel format is",
                          path, 1, 1)
    root = parse(data, path)
    return _world(ValueReader(path), root)


def _world(values: ValueReader, root: Node) -> World:
    """The ``<world>`` of a ``<skel>`` root, or its sibling ``<skeleton>`` elements."""
    if root.tag != "skel":
        raise values.error(root, f"the root element is <{root.tag}>, not <skel>")
    world_node = root.find("world")
    world = World()
    container = root
    if world_node is not None:
        container = world_node
        world.name = world_node.attrib.get("name", "world")
        physics = world_node.find("physics")
        if physics is not None:
            _physics(values, physics, world)
    else:
        world.attrs["sibling_form"] = True
        if root.find("skeleton") is None:
            raise values.error(root, "<skel> has neither a <world> nor a <skeleton>")
    reader = SkeletonReader(values)
    names = NameManager("skeleton")
    for node in container.findall("skeleton"):
        skeleton = reader.skeleton(node)
        issued = names.issue(skeleton.name)
        if issued != skeleton.name:
            values.warn(node, f"a second skeleton named {skeleton.name!r}; renamed {issued!r}, "
                        "as DART does")
            skeleton.attrs["skel_name"] = skeleton.name
            skeleton.name = issued
        world.skeletons.append(skeleton)
    reader.joints.report_legacy_damping()
    return world


def _physics(values: ValueReader, physics: Node, world: World) -> None:
    """Time step, gravity and collision detector of ``<physics>``."""
    world.time_step = values.child_number(physics, "time_step", 0.001)
    gravity = physics.find("gravity")
    if gravity is not None:
        world.gravity = values.vector(gravity, 3)
    detector = physics.find("collision_detector")
    if detector is not None:
        world.collision_detector = detector.text
    world.attrs["physics"] = True

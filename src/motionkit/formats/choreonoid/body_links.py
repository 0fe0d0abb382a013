"""One link node of a ``.body`` file, read key by key in ``StdBodyLoader``'s order.

Keys are consumed (popped) as Choreonoid extracts them, so what is left is the link's
``info`` — and a link mapping used twice through an alias finds its keys gone the second
time, as in Choreonoid. Where both spellings are accepted, snake_case is looked up first.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from ...errors import warn
from ...model.skeleton import Shape
from .body_elements import DeviceSpec, ElementReader, Elements
from .body_values import Values
from .body_yaml import Listing, Mapping, Node, Scalar, plain, strict_double, to_int

Array = NDArray[np.float64]

JOINT_TYPES = {"revolute": "revolute", "prismatic": "prismatic", "slide": "prismatic",
               "free": "free", "fixed": "fixed",
               "pseudo_continuous_track": "pseudo_continuous_track",
               "pseudoContinuousTrack": "pseudo_continuous_track"}
ACTUATION_MODES = {"joint_effort": "joint_effort", "jointEffort": "joint_effort",
                   "jointTorque": "joint_effort", "jointForce": "joint_effort",
                   "joint_displacement": "joint_displacement",
                   "jointDisplacement": "joint_displacement", "jointAngle": "joint_displacement",
                   "joint_velocity": "joint_velocity", "jointVelocity": "joint_velocity",
                   "jointSurfaceVelocity": "joint_surface_velocity",
                   "link_position": "link_position", "linkPosition": "link_position"}
_AXES = {"X": (1.0, 0.0, 0.0), "Y": (0.0, 1.0, 0.0), "Z": (0.0, 0.0, 1.0)}
_UNLIMITED = (-math.inf, math.inf)


@dataclass(eq=False)
class Link:
    """A link as Choreonoid's loader holds it (angles already in radians)."""

    name: str
    node: Node
    joint_name: str = ""
    parent: str = ""
    translation: Array = field(default_factory=lambda: np.zeros(3))
    rotation: Array = field(default_factory=lambda: np.eye(3))
    joint_type: str = "fixed"
    axis: Array = field(default_factory=lambda: np.array([0.0, 0.0, 1.0]))
    joint_id: int = -1
    initial: float = 0.0
    position_range: tuple[float, float] = _UNLIMITED
    velocity_range: tuple[float, float] = _UNLIMITED
    effort_range: tuple[float, float] = _UNLIMITED
    rotor_inertia: float = 0.0
    actuation: str | None = None
    mass: float = 1.0
    com: Array = field(default_factory=lambda: np.zeros(3))
    inertia: Array = field(default_factory=lambda: np.eye(3))
    shapes: list[Shape] = field(default_factory=list)
    devices: list[DeviceSpec] = field(default_factory=list)
    info: dict[str, object] = field(default_factory=dict)
    children: list[Link] = field(default_factory=list)
    name_node: Node | None = None
    registers_id: bool = True  # False for track shoes 1…N-1, which share shoe 0's id

    def subtree(self) -> list[Link]:
        """This link and its descendants, depth-first, children in attach order."""
        out: list[Link] = []
        stack = [self]
        while stack:
            link = stack.pop()
            out.append(link)
            stack.extend(reversed(link.children))
        return out

    def clone(self) -> Link:
        """A copy of this link's subtree that can be renamed and re-parented on its own
        (SubBody files are loaded once and used often); iterative, so any depth works."""
        links = self.subtree()
        copies = {id(link): copy.copy(link) for link in links}
        for link in links:
            twin = copies[id(link)]
            twin.children = [copies[id(child)] for child in link.children]
            twin.shapes = [copy.deepcopy(shape) for shape in link.shapes]
            twin.devices = [copy.deepcopy(device) for device in link.devices]
            twin.info = dict(link.info)
        return copies[id(self)]


class LinkReader:
    """Reads link nodes of one file."""

    def __init__(self, values: Values, anchors: dict[str, Node] | None = None) -> None:
        self.values = values
        self.elements = ElementReader(values, anchors)

    def pop(self, node: Mapping, *keys: str) -> Node | None:
        """Consume the first of ``keys`` present (Choreonoid's ``extract``)."""
        for key in keys:
            if key in node.entries:
                return node.entries.pop(key)
        return None

    def text(self, node: Node) -> str:
        """A scalar's text; anything else is an error."""
        if not isinstance(node, Scalar):
            raise self.values.error(node, "a mapping or listing value must be a scalar value")
        return node.text

    def link(self, node: Mapping, target: Link | None = None) -> Link:
        """A new link from ``node``, or (``target``) a SubBody root overwritten by it."""
        values = self.values
        sub_body = target is not None
        if target is None:
            name_node = self.pop(node, "name")
            link = Link(self.text(name_node) if name_node is not None else "", node,
                        name_node=name_node)
        else:
            link = target
        joint_name = self.pop(node, "joint_name")
        if joint_name is not None:
            link.joint_name = self.text(joint_name)
        parent = self.pop(node, "parent")
        link.parent = self.text(parent) if parent is not None else ""
        for key in ("translation", "rotation"):
            value_node = self.pop(node, key)
            if value_node is not None:
                vector = (values.translation(value_node) if key == "translation"
                          else values.rotation(value_node))
                if vector is None:
                    raise values.error(value_node, f"an empty {key} [] is undefined in "
                                       "Choreonoid (it reads a stale value)")
                setattr(link, key, vector)
        self._joint(node, link)
        if "elements" in node.entries:
            found = Elements()
            self.elements.read(node.entries.pop("elements"), found, masses=not sub_body)
            link.shapes.extend(found.shapes)
            link.devices.extend(found.devices)
        else:
            found = Elements()
        if sub_body:
            return link
        self._mass(node, link, found)
        imported = self.pop(node, "import")
        info = {key: plain(value, values.budget) for key, value in node.entries.items()
                if key != "<<"}
        sources = (imported.items if isinstance(imported, Listing) else
                   [imported] if imported is not None else [])
        for source in reversed(sources):
            if isinstance(source, Mapping):
                for key, value in source.entries.items():
                    info.setdefault(key, plain(value, values.budget))
        link.info = info
        return link

    def _joint(self, node: Mapping, link: Link) -> None:
        """The joint keys, in Choreonoid's order: kind, initial value, ranges, inertia."""
        self._joint_kind(node, link)
        self._joint_initial(node, link)
        self._joint_ranges(node, link)
        self._rotor_inertia(node, link)

    def _joint_kind(self, node: Mapping, link: Link) -> None:
        """Joint id, type, axis and actuation mode (a surface-velocity actuation makes the
        joint a pseudo continuous track)."""
        values = self.values
        id_node = self.pop(node, "joint_id", "jointId")
        if id_node is not None:
            link.joint_id = to_int(values.path, id_node)
        type_node = self.pop(node, "joint_type", "jointType")
        if type_node is not None:
            type_text = self.text(type_node)
            if type_text not in JOINT_TYPES:
                raise values.error(type_node, f'illegal jointType value "{type_text}" '
                                   "(revolute, prismatic, slide, free, fixed or "
                                   "pseudo_continuous_track)")
            link.joint_type = JOINT_TYPES[type_text]
        axis_node = self.pop(node, "joint_axis", "jointAxis")
        if axis_node is not None:
            link.axis = self._axis(axis_node)
        mode_node = self.pop(node, "actuation_mode", "actuationMode")
        if mode_node is not None:
            mode = self.text(mode_node)
            if mode not in ACTUATION_MODES:
                raise values.error(mode_node, f'illegal actuationMode value "{mode}"')
            link.actuation = ACTUATION_MODES[mode]
            if link.actuation == "joint_surface_velocity":
                link.joint_type = "pseudo_continuous_track"

    def _joint_initial(self, node: Mapping, link: Link) -> None:
        """The initial joint value: an angle, then a displacement (an angle only for a
        revolute joint)."""
        values = self.values
        angle = self.pop(node, "joint_angle", "jointAngle")
        if angle is not None:  # converted for every joint type, as Choreonoid does
            link.initial = values.angle(values.number(angle))
        displacement = self.pop(node, "joint_displacement", "jointDisplacement")
        if displacement is not None:
            value = values.number(displacement)
            link.initial = values.angle(value) if link.joint_type == "revolute" else value

    def _joint_ranges(self, node: Mapping, link: Link) -> None:
        """Position, velocity and effort ranges (unlimited where not given)."""
        values = self.values
        range_node = self.pop(node, "joint_range", "jointRange")
        link.position_range = self._range(range_node, link) if range_node else _UNLIMITED
        velocity = self.pop(node, "max_joint_velocity", "maxJointVelocity")
        if velocity is not None:
            if not isinstance(velocity, Scalar):
                raise values.error(velocity, "maxJointVelocity must be a single value")
            limit = values.limit(velocity, True)
            link.velocity_range = self._angles((-limit, limit), link)
        else:
            velocity = self.pop(node, "joint_velocity_range", "jointVelocityRange")
            if velocity is not None:
                if not isinstance(velocity, Listing):
                    raise values.error(velocity, "jointVelocityRange must be a listing")
                link.velocity_range = self._range(velocity, link)
            else:
                link.velocity_range = _UNLIMITED
        effort = self.pop(node, "max_joint_effort")
        if effort is not None:
            limit = values.limit(effort, True)
            link.effort_range = (-limit, limit)

    def _rotor_inertia(self, node: Mapping, link: Link) -> None:
        """``joint_axis_inertia``, else rotor inertia × gear ratio² (read, not consumed)."""
        axis_inertia = self.pop(node, "joint_axis_inertia")
        if axis_inertia is not None:
            link.rotor_inertia = self.values.number(axis_inertia)
            return
        rotor = node.entries.get("rotor_inertia", node.entries.get("rotorInertia"))
        gear = node.entries.get("gear_ratio", node.entries.get("gearRatio"))
        rotor_value = strict_double(rotor) if rotor is not None else None
        gear_value = strict_double(gear) if gear is not None else None
        link.rotor_inertia = (rotor_value or 0.0) * (
            gear_value * gear_value if gear_value is not None else 1.0)

    def _axis(self, node: Node) -> Array:
        values = self.values
        if isinstance(node, Scalar):
            text = node.text.upper()
            sign = -1.0 if text.startswith("-") else 1.0
            base = _AXES.get(text[1:] if text.startswith("-") else text)
            if base is None:
                raise values.error(node, f'illegal axis value "{node.text}" (X, Y, Z, -X, -Y, '
                                   "-Z or a 3-vector)")
            return sign * np.array(base)
        if isinstance(node, Listing):
            return values.vector(node, 3, "jointAxis")
        raise values.error(node, "jointAxis must be X, Y, Z or a 3-vector, not a mapping")

    def _range(self, node: Node, link: Link) -> tuple[float, float]:
        values = self.values
        if isinstance(node, Scalar):
            limit = values.limit(node, True)
            lower, upper = -limit, limit
        elif isinstance(node, Listing):
            if len(node.items) != 2:
                raise values.error(node, f"a range needs 2 values, got {len(node.items)}")
            lower = values.limit(node.items[0], False)
            upper = values.limit(node.items[1], True)
        else:
            raise values.error(node, "a range must be a value or a listing of two")
        return self._angles((lower, upper), link)

    def _angles(self, bounds: tuple[float, float], link: Link) -> tuple[float, float]:
        if link.joint_type != "revolute":
            return bounds
        return (bounds[0] if math.isinf(bounds[0]) else self.values.angle(bounds[0]),
                bounds[1] if math.isinf(bounds[1]) else self.values.angle(bounds[1]))

    def _mass(self, node: Mapping, link: Link, found: Elements) -> None:
        """Sum the RigidBody elements and the link's own mass keys (parallel axes)."""
        values = self.values
        bodies = list(found.masses)
        com_node = self.pop(node, "center_of_mass", "centerOfMass")
        mass_node = self.pop(node, "mass")
        inertia_node = self.pop(node, "inertia")
        if com_node is not None or mass_node is not None or inertia_node is not None:
            default = 0.0 if bodies else 1.0
            com = np.zeros(3)
            if com_node is not None:
                if not isinstance(com_node, Listing):
                    warn(f"{values.path}:{com_node.line}:{com_node.column}: centerOfMass is not "
                         "a listing; ignored as Choreonoid did before 2020 (today's Choreonoid "
                         "refuses the file)")
                else:
                    com = values.vector(com_node, 3, "centerOfMass")
            mass = values.number(mass_node) if mass_node is not None else default
            moment = values.inertia(inertia_node) if inertia_node is not None else None
            if moment is None:
                moment = np.eye(3) * default
            bodies.append((mass, com, moment))
        if not bodies:
            return
        total = sum(m for m, _, _ in bodies)
        link.mass = total
        if total <= 0.0:
            link.com, link.inertia = np.zeros(3), np.zeros((3, 3))
            return
        com = sum((m * c for m, c, _ in bodies), np.zeros(3)) / total
        moment = np.zeros((3, 3))
        for m, c, inertia in bodies:
            o = com - c
            moment += inertia + m * (float(o @ o) * np.eye(3) - np.outer(o, o))
        link.com, link.inertia = com, moment

"""A link's ``elements`` tree: shapes, devices and rigid bodies, in the link frame.

The walk follows Choreonoid's ``StdBodyLoader``: transform-like nodes compose
``M · T(p) · R · diag(scale)``; shapes inside ``Visual`` are visual only, inside
``Collision`` collision only, elsewhere both; ``RigidBody`` nodes add mass; device nodes
become devices at their accumulated pose; a ``Resource`` that is a YAML file is read as a
further ``elements`` block, any other resource is kept as a mesh reference (meshes are
never opened). Node types of Choreonoid plugins are kept as devices of that type with a
warning; other unknown types are errors unless ``isOptional: true``.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from ..._io import read_bytes
from ...errors import FormatError, warn
from ...model.skeleton import Shape, ShapeParams
from .body_values import Values
from .body_yaml import (
    MAX_DEPTH,
    Listing,
    Mapping,
    Node,
    Scalar,
    compose,
    plain,
    strict_double,
    strict_int,
    to_bool,
)

Array = NDArray[np.float64]

DEVICE_TYPES = frozenset(["ForceSensor", "RateGyroSensor", "AccelerationSensor", "IMU", "Camera",
                          "CameraDevice", "RangeSensor", "SpotLight", "PointLight",
                          "MarkerDevice", "ZmpDevice", "Holder", "Attachment", "Conveyor",
                          "DigitalIO"])
PLUGIN_TYPES = frozenset(["AGXVehicleContinuousTrackDevice", "AGXWireDevice",
                          "AGXBreakableJointDevice", "AGXMagneticJointDevice",
                          "PxContinuousTrack", "RotorDevice", "FireDevice", "SmokeDevice",
                          "FountainDevice", "RainDevice", "SnowDevice", "CompetitorMarker",
                          "LivoxMid360"])
SCENE_ONLY = frozenset(["Node", "LineSet", "DirectionalLight", "PerspectiveCamera",
                        "OrthographicCamera", "Fog", "Text"])
_RANGE_CAMERA = frozenset(["DEPTH", "COLOR_DEPTH", "POINT_CLOUD", "COLOR_POINT_CLOUD"])
_Y_TO_Z = np.array([[1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0], [0.0, -1.0, 0.0, 0.0],
                    [0.0, 0.0, 0.0, 1.0]])  # Rx(-90°): a Z-axis primitive along Y


@dataclass(eq=False)
class DeviceSpec:
    """A device found in a link's elements (pose in the link frame)."""

    name: str
    kind: str
    transform: Array
    attrs: dict[str, object] = field(default_factory=dict)


@dataclass(eq=False)
class Elements:
    """What a link's elements contribute."""

    shapes: list[Shape] = field(default_factory=list)
    devices: list[DeviceSpec] = field(default_factory=list)
    masses: list[tuple[float, Array, Array]] = field(default_factory=list)


class ElementReader:
    """Walks ``elements`` of one file; YAML resources get a reader of their own file."""

    def __init__(self, values: Values, anchors: dict[str, Node] | None = None,
                 resources: tuple[str, ...] = (), depth: int = 0) -> None:
        self.values = values
        self.anchors = anchors or {}  # the main file's, which its YAML resources see
        self.resources = resources
        self.depth = depth  # nesting of elements, YAML resources included

    def read(self, node: Node, out: Elements, frame: Array | None = None,
             role: str = "both", masses: bool = True) -> None:
        """Add the contents of an ``elements`` value to ``out``."""
        values = self.values
        frame = np.eye(4) if frame is None else frame
        if self.depth >= MAX_DEPTH:
            raise values.error(node, f"elements nest deeper than {MAX_DEPTH} levels")
        self.depth += 1
        try:
            for type_name, item in self._nodes(node):
                values.budget.spend(item)
                self._node(type_name, item, out, frame, role, masses)
        finally:
            self.depth -= 1

    def _nodes(self, node: Node) -> list[tuple[str, Mapping]]:
        values = self.values
        if isinstance(node, Listing):
            out = []
            for item in node.items:
                if not isinstance(item, Mapping):
                    raise values.error(item, "an element must be a mapping")
                type_node = item.entries.get("type")
                if type_node is None:
                    raise values.error(item, 'key "type" is not found in the element')
                out.append((self._text(type_node), item))
            return out
        if isinstance(node, Mapping):
            if "type" in node.entries:
                return [(self._text(node.entries["type"]), node)]
            out = []
            for key in sorted(node.entries):  # Choreonoid visits type keys sorted
                item = node.entries[key]
                if key == "<<" or not isinstance(item, Mapping):
                    raise values.error(item, f'the node type "{key}" is not defined')
                if "type" in item.entries and self._text(item.entries["type"]) != key:
                    raise values.error(item, f'the type of a "{key}" node is not "{key}"')
                out.append((key, item))
            return out
        raise values.error(node, 'a value of the "elements" key must be a sequence or a mapping')

    def _text(self, node: Node) -> str:
        if not isinstance(node, Scalar):
            raise self.values.error(node, "a type must be a single value")
        return node.text

    def _node(self, type_name: str, item: Mapping, out: Elements, frame: Array, role: str,
              masses: bool) -> None:
        values = self.values
        entries = item.entries
        if type_name == "Skip":
            return
        if type_name == "Group":
            self._children(item, out, frame, role, masses)
        elif type_name in ("Transform", "RigidBody", "Visual", "Collision"):
            inner = frame @ values.pose(item)
            if type_name == "RigidBody" and masses:
                out.masses.append(self._rigid_body(item, inner))
            if type_name in ("Visual", "Collision"):
                wanted = type_name.lower()
                if role not in ("both", wanted):
                    raise values.error(item, f"a {type_name} node inside a "
                                       f"{role.capitalize()} node")
                role = wanted
                if "shape" in entries:
                    self._node("Shape", self._mapping(entries["shape"]), out, inner, role,
                               masses)
                if "resource" in entries:
                    self._node("Resource", self._mapping(entries["resource"]), out, inner,
                               role, masses)
            self._children(item, out, inner, role, masses)
        elif type_name == "Resource":
            self._resource(item, out, frame, role, masses)
        elif type_name == "Shape":
            self._shape(item, out, frame, role)
        elif type_name in DEVICE_TYPES or type_name in PLUGIN_TYPES:
            inner = frame @ values.pose(item)
            self._device(type_name, item, out, inner)
            self._children(item, out, inner, role, masses)
        elif type_name not in SCENE_ONLY:
            optional = entries.get("isOptional", entries.get("is_optional"))
            if optional is not None and to_bool(optional):
                warn(f"{os.fspath(values.path)}:{item.line}: node type \"{type_name}\" is not "
                     "defined; skipped (isOptional)")
                return
            raise values.error(item, f'the node type "{type_name}" is not defined')

    def _mapping(self, node: Node) -> Mapping:
        if not isinstance(node, Mapping):
            raise self.values.error(node, "a mapping is expected here")
        return node

    def _children(self, item: Mapping, out: Elements, frame: Array, role: str,
                  masses: bool) -> None:
        if "elements" in item.entries:
            self.read(item.entries["elements"], out, frame, role, masses)

    def _rigid_body(self, item: Mapping, frame: Array) -> tuple[float, Array, Array]:
        values = self.values
        entries = item.entries
        mass_node = entries.get("mass")
        mass = (strict_double(mass_node) if mass_node is not None else None) or 0.0
        com = np.zeros(3)
        com_node = entries.get("center_of_mass", entries.get("centerOfMass"))
        if isinstance(com_node, Listing):
            com = values.vector(com_node, 3, "centerOfMass")
        inertia_node = entries.get("inertia")
        moment = values.inertia(inertia_node) if inertia_node is not None else None
        linear = frame[:3, :3]
        moment = np.zeros((3, 3)) if moment is None else moment
        return mass, linear @ com + frame[:3, 3], linear @ moment @ linear.T

    def _device(self, type_name: str, item: Mapping, out: Elements, frame: Array) -> None:
        values = self.values
        entries = item.entries
        kind = type_name
        if type_name in ("Camera", "CameraDevice"):
            fmt = entries.get("format")
            text = fmt.text if isinstance(fmt, Scalar) else ""
            if text == "COLOR":
                kind = "Camera"
            elif text in _RANGE_CAMERA:
                kind = "RangeCamera"
            else:
                return  # Choreonoid creates no device without a valid format
        if type_name == "IMU":
            kind = "Imu"
        if type_name in PLUGIN_TYPES and values.budget.first_time(type_name):
            warn(f"{os.fspath(values.path)}:{item.line}: {type_name} needs a Choreonoid plugin; "
                 "kept as a device of that type")
        name_node = entries.get("name")
        attrs: dict[str, object] = {"type": type_name, "info": plain(item, values.budget)}
        device_id = strict_int(entries["id"]) if "id" in entries else None
        if device_id is not None:
            attrs["id"] = device_id
        on = to_bool(entries["on"]) if "on" in entries else None
        if on is not None:
            attrs["on"] = on
        out.devices.append(DeviceSpec(name_node.text if isinstance(name_node, Scalar) else "",
                                      kind, frame, attrs))

    def _resource(self, item: Mapping, out: Elements, frame: Array, role: str,
                  masses: bool) -> None:
        values = self.values
        uri_node = item.entries.get("uri", item.entries.get("url"))
        if not isinstance(uri_node, Scalar):
            raise values.error(item, "a Resource needs a uri")
        uri, resolved = resolve_uri(values.path, uri_node.text)
        inner = frame @ values.pose(item)
        if os.path.splitext(uri)[1].lower() not in (".yaml", ".yml"):
            params: ShapeParams = {"file_name": resolved or uri, "uri": uri,
                                         "scale": np.ones(3)}
            fragment = item.entries.get("node", item.entries.get("fragment"))
            if isinstance(fragment, Scalar):
                params["node"] = fragment.text  # one named node of the mesh file
            self._add_shape(out, "mesh", params, inner, role)
            return
        if resolved is None:
            warn(f"{os.fspath(values.path)}:{item.line}: YAML resource {uri!r} cannot be "
                 "resolved without Choreonoid's directories; its elements are left out")
            return
        if resolved in self.resources:
            raise values.error(uri_node, f"YAML resource {uri!r} includes itself")
        try:
            data = read_bytes(resolved)
        except FormatError as exc:  # Choreonoid refuses the model; the links do not need it
            if values.budget.first_time(resolved):
                warn(f"{os.fspath(values.path)}:{uri_node.line}:{uri_node.column}: YAML resource "
                     f"{uri!r} cannot be read ({exc.message}); its shapes, devices and masses "
                     "are left out")
            return
        values.budget.grow(len(data))
        root, anchors = compose(resolved, data, self.anchors)
        fragment = item.entries.get("node", item.entries.get("fragment"))
        if isinstance(fragment, Scalar):  # its own anchors first, then the main file's
            root = anchors.get(fragment.text, self.anchors.get(fragment.text))
            if root is None:
                raise values.error(fragment, f"resource {uri!r} has no node {fragment.text!r}")
        if root is None:
            return
        reader = ElementReader(Values(resolved, values.budget, values.degree), self.anchors,
                               (*self.resources, resolved), self.depth)
        reader.read(root, out, inner, role, masses)

    def _shape(self, item: Mapping, out: Elements, frame: Array, role: str) -> None:
        values = self.values
        pose = frame @ values.pose(item)
        geometry = item.entries.get("geometry")
        if not isinstance(geometry, Mapping) or "type" not in geometry.entries:
            raise values.error(item, "a Shape needs a geometry mapping with a type")
        kind = self._text(geometry.entries["type"])
        entries = geometry.entries

        def number(key: str, default: float) -> float:
            node = entries.get(key)
            value = strict_double(node) if node is not None else None
            return default if value is None else value

        if kind == "Box":
            size = (values.vector(entries["size"], 3, "Box size") if "size" in entries
                    else np.ones(3))
            if (size < 0).any():
                raise values.error(geometry, "a Box size is negative")
            self._add_shape(out, "box", {"size": size}, pose, role)
        elif kind == "Sphere":
            self._add_shape(out, "sphere", {"radius": self._positive(geometry, number(
                "radius", 1.0))}, pose, role)
        elif kind in ("Cylinder", "Capsule", "Cone"):
            radius = self._positive(geometry, number("radius", 1.0))
            height = number("height", 1.0)
            if kind == "Capsule" and height == 0.0:
                # MeshGenerator makes a capsule of height 0 (a sphere, which is what it is
                # read as: MuJoCo and the other targets refuse a capsule of length 0)
                self._add_shape(out, "sphere", {"radius": radius}, pose, role, "capsule")
                return
            params: ShapeParams = {"radius": radius, "height": self._positive(geometry, height)}
            self._add_shape(out, kind.lower(), params, pose, role)
        elif kind == "Resource":
            uri_node = entries.get("uri")
            if not isinstance(uri_node, Scalar):
                raise values.error(geometry, "a Resource geometry needs a uri")
            uri, resolved = resolve_uri(values.path, uri_node.text)
            self._add_shape(out, "mesh", {"file_name": resolved or uri, "uri": uri,
                                          "scale": np.ones(3)}, pose, role)
        elif kind in ("Extrusion", "ElevationGrid", "IndexedFaceSet", "TriangleMesh"):
            self._add_shape(out, "mesh", {"file_name": None, "inline": kind,
                                          "scale": np.ones(3)}, pose, role)
        else:
            raise values.error(geometry, f'unknown geometry "{kind}"')

    def _positive(self, node: Node, value: float) -> float:
        if not value > 0:
            raise self.values.error(node, f"a geometry size must be positive, got {value}")
        return value

    def _add_shape(self, out: Elements, kind: str, params: ShapeParams, pose: Array,
                   role: str, written: str | None = None) -> None:
        """Fold an axis-aligned scale into the sizes, turn Y-axis primitives to DART's Z;
        ``written`` is the geometry the file names when it differs from ``kind``."""
        linear = pose[:3, :3]
        scale = np.linalg.norm(linear, axis=0)
        attrs: dict[str, object] = {"choreonoid_geometry": written or kind}
        transform = pose.copy()
        gram = linear.T @ linear
        if scale.all() and np.allclose(gram, np.diag(np.diag(gram)), atol=1e-9):
            transform[:3, :3] = linear / scale
            kind, params = _scaled(kind, params, scale)
        else:
            attrs["unfolded_scale"] = True
        if kind in ("cylinder", "capsule", "cone"):
            transform = transform @ _Y_TO_Z
        roles = ("visual", "collision") if role == "both" else (role,)
        for one in roles:
            out.shapes.append(Shape(kind, params.copy(), transform.copy(), role=one,
                                    attrs=dict(attrs)))


def _scaled(kind: str, params: ShapeParams, scale: Array) -> tuple[str, ShapeParams]:
    """Shape kind and sizes with ``scale`` (along the shape's own axes) folded in."""
    out = params.copy()
    if np.allclose(scale, 1.0):
        return kind, out
    if kind == "box":
        out["size"] = np.asarray(params["size"]) * scale
    elif kind == "mesh":
        out["scale"] = np.asarray(params["scale"]) * scale
    elif kind == "sphere":
        radius = float(params["radius"])
        if np.allclose(scale, scale[0]):
            out["radius"] = radius * scale[0]
            return kind, out
        return "ellipsoid", {"size": 2.0 * radius * scale}
    elif math.isclose(scale[0], scale[2]):
        out["radius"] = float(params["radius"]) * scale[0]
        out["height"] = float(params["height"]) * scale[1]
    else:
        out["scale"] = scale
    return kind, out


def resolve_uri(path: str | os.PathLike[str], uri: str) -> tuple[str, str | None]:
    """``(uri, file path or None)``: relative to the including file, ``file://`` stripped;
    ``${VAR}`` and other schemes cannot be resolved outside Choreonoid."""
    text = uri[7:] if uri.startswith("file://") else uri
    if text.startswith("${") or "://" in text:
        return uri, None
    if not os.path.isabs(text):
        text = os.path.join(os.path.dirname(os.fspath(path)), text)
    return uri, os.path.normpath(text)


"""A glTF 2.0 document (JSON and one binary buffer) from motions with their bodies.

The layout is ``specs/gltf-export.md`` §2-4: one static root node turns motionkit's Z up into
glTF's Y up; under it one node per motion (its side-by-side offset), and under that one node
per body, nested as the skeleton is, carrying the body's local pose (``W_parent⁻¹ · W_body``)
as translation and rotation; each shape is a static child node with a mesh, and a body
without shapes gets a stick from its parent, as the viewer draws it. One animation holds
every moving body's channels, LINEAR, all channels of one motion sharing one time accessor
(seconds from the motion's first frame). What motionkit needs to read the file back exactly
(the tracks as float64, the timeline, labels, metadata) is kept in ``extras`` and raw buffer
views: see :data:`EXTRAS`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from ...errors import ConversionError
from ...kinematics.motion import link_poses
from ...model import Motion, Skeleton
from ...model.geometry import PALETTE, STICK_ALONE, TERRAIN_COLOUR, light, mesh, shape_colour, terrain_mesh
from ...model.skeleton import Shape
from ...spatial import quaternion
from ..shared.mjcf.mesh import MeshUnreadable, read_mesh

Array = NDArray[np.float64]

#: The key of motionkit's own data in ``asset.extras`` (and in its motions' nodes).
EXTRAS = "motionkit"
#: Version of the ``extras`` layout; the reader refuses others.
LAYOUT = 1
#: The root node's name and rotation (x y z w): −90° about x, motionkit's Z up to glTF's Y up.
AXIS_NODE = "zup_to_yup"
ZUP_TO_YUP = (-math.sqrt(0.5), 0.0, 0.0, math.sqrt(0.5))
#: The conventions every file states (``asset.extras.motionkit``).
CONVENTIONS = {
    "units": "metres, seconds",
    "quaternion_order": "xyzw (glTF's order)",
    "up_axis": f"Z in motionkit's frames, below node {AXIS_NODE!r}, which turns them to glTF's Y up",
    "poses": "each body node holds its pose in its parent body's frame (the root body: in its "
             "motion node's frame, which only offsets motions shown side by side)",
}
#: A pose that moves less than this (metres, or quaternion components) over the motion is
#: written once as the node's own, not as a channel: far below float32's resolution.
STATIC = 1e-12
#: A terrain's mesh is thinned to about this many vertices (its heights are kept whole in
#: ``extras``).
MAX_TERRAIN_VERTICES = 250_000
#: Smallest float32 step the times may have (``specs/gltf-export.md`` §3).
_FLOAT32_MAX = float(np.finfo(np.float32).max)
_ARRAY_BUFFER, _ELEMENT_ARRAY_BUFFER = 34962, 34963
_FLOAT, _UINT16, _UINT32 = 5126, 5123, 5125


@dataclass
class Bodies:
    """One motion's bodies: names, parents (-1: a root), world poses ``(F, B, 7)`` in the
    motion's frame, its times (seconds) and the skeleton that gives them shapes (or None)."""

    names: list[str]
    parents: list[int]
    poses: Array
    times: Array
    skeleton: Skeleton | None


def bodies_of(motion: Motion) -> Bodies:
    """The bodies a motion moves: its ``links`` (with the skeleton's hierarchy where the
    names match), else its skeleton through forward kinematics, else its root pose alone."""
    skeleton = motion.skeleton
    links = motion.tracks.get("links")
    if links is not None and links.kind == "pose" and links.data.ndim == 3:
        names = list(links.labels or [f"link {i}" for i in range(links.part_count)])
        if skeleton is not None and [b.name for b in skeleton.bodies] != names:
            raise ConversionError(
                f"the links ({len(names)}: {', '.join(names[:3])}…) are not the bodies of "
                f"skeleton {skeleton.name!r}; write the links without it or derive them from it")
        parents = [b.parent for b in skeleton.bodies] if skeleton is not None else [-1] * len(names)
        return Bodies(names, parents, np.asarray(links.data, dtype=float), links.times, skeleton)
    if skeleton is not None and skeleton.bodies:
        track = link_poses(skeleton, motion)
        return Bodies([b.name for b in skeleton.bodies], [b.parent for b in skeleton.bodies],
                      np.asarray(track.data, dtype=float), track.times, skeleton)
    root = motion.root_pose()
    if root is None:
        raise ConversionError("glTF needs bodies to move: links, a skeleton with its joint values, "
                              "or a root pose")
    name = str(motion.meta.get("name") or "root")
    return Bodies([name], [-1], np.asarray(root.data, dtype=float)[:, None, :], root.times, None)


def local_poses(bodies: Bodies) -> tuple[Array, Array]:
    """Each body's translation ``(F, B, 3)`` and unit rotation ``(F, B, 4)`` in its parent's
    frame, the rotations normalised and sign-continuous from frame to frame (the short way
    round is what glTF's LINEAR interpolation takes, as motionkit's slerp does)."""
    poses = bodies.poses
    t = poses[..., :3].copy()
    q = quaternion.normalize(poses[..., 3:7])
    parents = np.asarray(bodies.parents)
    child = np.flatnonzero(parents >= 0)
    if child.size:
        inverse = quaternion.conjugate(q[:, parents[child]])
        t[:, child] = quaternion.rotate(inverse, poses[:, child, :3] - poses[:, parents[child], :3])
        q[:, child] = quaternion.normalize(quaternion.multiply(inverse, q[:, child]))
    if len(q) > 1:
        dots = np.einsum("fbi,fbi->fb", q[1:], q[:-1])
        signs = np.cumprod(np.where(dots < 0, -1.0, 1.0), axis=0)
        q[1:] *= signs[..., None]
    return t, q


class Buffer:
    """The binary buffer: each array a buffer view of its own, every view 4-byte aligned."""

    def __init__(self) -> None:
        self.chunks: list[bytes] = []
        self.length = 0
        self.views: list[dict[str, object]] = []
        self.accessors: list[dict[str, object]] = []

    def view(self, data: bytes, target: int | None = None) -> int:
        """A buffer view of ``data`` (``target``: vertices or indices); its index."""
        pad = -self.length % 4
        if pad:
            self.chunks.append(b"\0" * pad)
            self.length += pad
        entry: dict[str, object] = {"buffer": 0, "byteOffset": self.length, "byteLength": len(data)}
        if target is not None:
            entry["target"] = target
        self.chunks.append(data)
        self.length += len(data)
        self.views.append(entry)
        return len(self.views) - 1

    def accessor(self, array: NDArray[np.generic], kind: str, target: int | None = None,
                 bounds: bool = False) -> int:
        """An accessor of ``array`` (float32, uint16 or uint32; rows of ``kind``: SCALAR, VEC3
        …) with min and max where glTF needs them, computed from the stored values."""
        component = {np.dtype(np.float32): _FLOAT, np.dtype(np.uint16): _UINT16,
                     np.dtype(np.uint32): _UINT32}[array.dtype]
        data = np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("<"))
        rows = data.reshape(len(data), -1) if data.ndim > 1 else data.reshape(-1, 1)
        entry: dict[str, object] = {"bufferView": self.view(data.tobytes(), target),
                                    "componentType": component, "count": len(rows), "type": kind}
        if bounds:
            entry["min"] = [_number(v) for v in rows.min(axis=0)]
            entry["max"] = [_number(v) for v in rows.max(axis=0)]
        self.accessors.append(entry)
        return len(self.accessors) - 1

    def blob(self) -> bytes:
        return b"".join(self.chunks)


def _number(value: np.generic) -> float | int:
    """A stored value as JSON writes it back exactly (float32 → the float64 of the same value)."""
    return int(value) if isinstance(value, np.integer) else float(value)


@dataclass
class Document:
    """The glTF JSON being built, with its buffer."""

    buffer: Buffer = field(default_factory=Buffer)
    nodes: list[dict[str, object]] = field(default_factory=list)
    meshes: list[dict[str, object]] = field(default_factory=list)
    materials: list[dict[str, object]] = field(default_factory=list)
    samplers: list[dict[str, object]] = field(default_factory=list)
    channels: list[dict[str, object]] = field(default_factory=list)
    skins: list[dict[str, object]] = field(default_factory=list)
    names: set[str] = field(default_factory=set)
    mesh_of: dict[tuple[str, int], int] = field(default_factory=dict)
    material_of: dict[tuple[int, int, int], int] = field(default_factory=dict)

    def node(self, name: str, **fields: object) -> int:
        """A node with a name unique in the file (``name``, else ``name~2`` …); its index."""
        unique, count = name, 1
        while unique in self.names:
            count += 1
            unique = f"{name}~{count}"
        self.names.add(unique)
        self.nodes.append({"name": unique, **{k: v for k, v in fields.items() if v is not None}})
        return len(self.nodes) - 1

    def attach(self, parent: int, child: int) -> None:
        """Make node ``child`` a child of node ``parent``."""
        children = self.nodes[parent].setdefault("children", [])
        assert isinstance(children, list)
        children.append(child)

    def material(self, rgb: tuple[int, int, int]) -> int:
        if rgb not in self.material_of:
            colour = [round(c / 255, 6) for c in rgb] + [1.0]
            self.materials.append({"name": "#{:02x}{:02x}{:02x}".format(*rgb),
                                   "pbrMetallicRoughness": {"baseColorFactor": colour,
                                                            "metallicFactor": 0.0,
                                                            "roughnessFactor": 0.8}})
            self.material_of[rgb] = len(self.materials) - 1
        return self.material_of[rgb]

    def mesh(self, key: str, vertices: NDArray[np.float32], faces: NDArray[np.uint32],
             material: int) -> int:
        """One glTF mesh per distinct geometry (``key``) and material."""
        if (key, material) not in self.mesh_of:
            if not np.isfinite(vertices).all() or np.abs(vertices).max(initial=0) > _FLOAT32_MAX:
                raise ConversionError(f"shape {key}: its vertices are not finite float32 numbers")
            small = len(vertices) < 65536
            position = self.buffer.accessor(vertices.astype(np.float32), "VEC3", _ARRAY_BUFFER,
                                            bounds=True)
            indices = self.buffer.accessor(faces.reshape(-1).astype(np.uint16 if small else np.uint32),
                                           "SCALAR", _ELEMENT_ARRAY_BUFFER)
            self.meshes.append({"name": key, "primitives": [
                {"attributes": {"POSITION": position}, "indices": indices, "mode": 4,
                 "material": material}]})
            self.mesh_of[key, material] = len(self.meshes) - 1
        return self.mesh_of[key, material]

    def raw(self, array: Array) -> dict[str, object]:
        """A float64 array kept exactly in a buffer view of its own, described for ``extras``."""
        data = np.ascontiguousarray(array, dtype="<f8")
        return {"bufferView": self.buffer.view(data.tobytes()), "dtype": "float64",
                "shape": list(data.shape)}


def _vector(values: Array) -> list[float]:
    return [float(v) for v in np.asarray(values, dtype=np.float32)]


def _check_float32(name: str, values: Array) -> None:
    if not np.isfinite(values).all() or np.abs(values).max(initial=0) > _FLOAT32_MAX:
        raise ConversionError(f"{name}: glTF stores float32; the motion has values that are not "
                              "finite or beyond float32's range")


def seconds(bodies: Bodies, name: str) -> NDArray[np.float32]:
    """The key times from 0 as float32, refused where float32 cannot keep them increasing."""
    times = (bodies.times - bodies.times[0]).astype(np.float32) if len(bodies.times) else \
        np.zeros(0, np.float32)
    steps = np.diff(times)
    if np.any(steps <= 0):
        first = int(np.argmax(steps <= 0)) + 1
        raise ConversionError(
            f"{name}: glTF keeps times as float32, in which frames {first - 1} and {first} "
            f"(at {float(bodies.times[first] - bodies.times[0]):.9g} s) do not increase; "
            "resample to a lower rate or cut the motion")
    return times


def add_motion(doc: Document, parent: int, motion: Motion, name: str, index: int,
               offset: Array, skin: bool) -> dict[str, object]:
    """Add one motion's nodes, meshes and channels under node ``parent``; its ``extras`` entry."""
    bodies = bodies_of(motion)
    frames = len(bodies.times)
    if frames == 0:
        raise ConversionError(f"{name}: glTF needs at least one frame")
    _check_float32(name, bodies.poses)
    times = seconds(bodies, name)
    t, q = local_poses(bodies)
    holder = doc.node(name, translation=_vector(offset) if np.any(offset) else None)
    doc.attach(parent, holder)
    colour = PALETTE[index % len(PALETTE)]
    nodes: list[int] = []
    for b, body in enumerate(bodies.names):
        node = doc.node(body, translation=_vector(t[0, b]), rotation=_vector(q[0, b]))
        owner = holder if bodies.parents[b] < 0 else nodes[bodies.parents[b]]
        doc.attach(owner, node)
        nodes.append(node)
    _add_shapes(doc, bodies, nodes, t, colour)
    if motion.terrain is not None:
        vertices, faces = terrain_mesh(motion.terrain, MAX_TERRAIN_VERTICES)
        if len(faces):
            doc.attach(holder, doc.node(f"{name}:terrain", mesh=doc.mesh(
                f"terrain {index}", vertices, faces, doc.material(TERRAIN_COLOUR))))
    time_accessor: int | None = None
    for b, node in enumerate(nodes):
        moving = [(path, values) for path, values, width in (("translation", t[:, b], "VEC3"),
                                                              ("rotation", q[:, b], "VEC4"))
                  if bodies.parents[b] < 0 or np.ptp(values, axis=0).max() > STATIC]
        for path, values in moving:
            if time_accessor is None:
                time_accessor = doc.buffer.accessor(times, "SCALAR", bounds=True)
            output = doc.buffer.accessor(values.astype(np.float32), "VEC3" if path == "translation"
                                         else "VEC4")
            doc.samplers.append({"input": time_accessor, "output": output, "interpolation": "LINEAR"})
            doc.channels.append({"sampler": len(doc.samplers) - 1, "target": {"node": node, "path": path}})
    if skin:
        _add_skin(doc, bodies, nodes, t, q, offset)
    return _extras(doc, motion, name, holder, nodes, bodies, offset)


def _add_shapes(doc: Document, bodies: Bodies, nodes: list[int], t: Array,
                colour: tuple[int, int, int]) -> None:
    """Each body's shapes as static child nodes; a stick from the parent to each body that
    has none (where the body's place on its parent does not move), and a small ball on such
    a body where nothing hangs from it (an end joint)."""
    shaped = [False] * len(nodes)
    if bodies.skeleton is not None:
        for b, body in enumerate(bodies.skeleton.bodies):
            visual = [s for s in body.shapes if s.role == "visual"]
            for k, shape in enumerate(visual or body.shapes):
                made = _shape_mesh(shape)
                if made is None:
                    continue
                rgb = shape_colour(shape) or light(colour)
                key = _shape_key(shape, rgb)
                mesh_index = doc.mesh(key, *made, doc.material(rgb))
                transform = np.asarray(shape.transform, dtype=float)
                child = doc.node(f"{body.name}:{shape.kind}{k}", mesh=mesh_index,
                                 translation=_vector(transform[:3, 3]) if np.any(transform[:3, 3]) else None,
                                 rotation=_rotation_or_none(transform[:3, :3]))
                doc.attach(nodes[b], child)
                shaped[b] = True
    stick = mesh(Shape("cylinder", {"radius": STICK_ALONE / 2, "height": 1.0}))
    assert stick is not None
    lone = [b for b in range(len(nodes)) if not shaped[b]]
    ball = mesh(Shape("sphere", {"radius": STICK_ALONE / 2}))
    assert ball is not None
    for b in lone:
        p = bodies.parents[b]
        if b not in bodies.parents:  # an end (or a body alone): a small ball, no empty node
            child = doc.node(f"{bodies.names[b]}:marker",
                             mesh=doc.mesh("marker", *ball, doc.material(colour)))
            doc.attach(nodes[b], child)
        if p < 0:
            continue
        place = t[:, b]
        length = float(np.linalg.norm(place[0]))
        if np.ptp(place, axis=0).max() > STATIC or length < 1e-9:
            continue
        direction = place[0] / length
        child = doc.node(f"{bodies.names[b]}:stick", mesh=doc.mesh("stick", *stick, doc.material(colour)),
                         translation=_vector(place[0] / 2), rotation=_vector(_z_to(direction)),
                         scale=[1.0, 1.0, float(np.float32(length))])
        doc.attach(nodes[p], child)


def _shape_mesh(shape: Shape) -> tuple[NDArray[np.float32], NDArray[np.uint32]] | None:
    """A primitive's triangles, or a mesh file's (scaled) where the file is there."""
    if shape.kind != "mesh":
        return mesh(shape)
    path = _mesh_path(shape)
    if path is None:
        return None
    try:
        vertices, faces = read_mesh(str(path))
    except (MeshUnreadable, OSError, ValueError):
        return None
    scale = np.asarray(shape.params.get("scale", (1.0, 1.0, 1.0)), dtype=float).reshape(-1)
    vertices = vertices * (scale if scale.size == 3 else scale[0])
    faces = np.asarray(faces, dtype=np.int64).reshape(-1, 3)
    if np.prod(np.sign(scale)) < 0:  # a mirrored mesh keeps its faces outward
        faces = faces[:, ::-1]
    return vertices.astype(np.float32), faces.astype(np.uint32)


def _mesh_path(shape: Shape) -> Path | None:
    """The mesh file a shape names, where it is a readable file."""
    name = shape.params.get("file_name")
    if not name:
        return None
    path = Path(shape.params.get("base") or ".") / str(name)
    return path if path.is_file() else None


def missing_meshes(skeleton: Skeleton) -> list[str]:
    """The mesh files a skeleton's drawn shapes name that cannot be read."""
    missing = []
    for body in skeleton.bodies:
        visual = [s for s in body.shapes if s.role == "visual"]
        for shape in visual or body.shapes:
            if shape.kind == "mesh" and _shape_mesh(shape) is None:
                missing.append(f"{body.name}: {shape.params.get('uri') or shape.params.get('file_name')}")
    return missing


def _shape_key(shape: Shape, rgb: tuple[int, int, int]) -> str:
    params = json.dumps({k: np.asarray(v).tolist() if not isinstance(v, str) else v
                         for k, v in sorted(shape.params.items())}, sort_keys=True)
    return f"{shape.kind} {params} #{rgb[0]:02x}{rgb[1]:02x}{rgb[2]:02x}"


def _rotation_or_none(matrix: Array) -> list[float] | None:
    q = quaternion.from_matrix(matrix)
    return None if np.allclose(q, (0, 0, 0, 1), atol=1e-12) else _vector(quaternion.normalize(q))


def _z_to(direction: Array) -> Array:
    """The unit quaternion turning +z onto ``direction`` (unit)."""
    z = np.array([0.0, 0.0, 1.0])
    cross, dot = np.cross(z, direction), float(np.dot(z, direction))
    if dot < -1 + 1e-12:
        return np.array([1.0, 0.0, 0.0, 0.0])
    q = np.array([*cross, 1.0 + dot])
    return np.asarray(q / np.linalg.norm(q), dtype=np.float64)


def _add_skin(doc: Document, bodies: Bodies, nodes: list[int], t: Array, q: Array,
              offset: Array) -> None:
    """A skin listing the body nodes as joints (Blender then builds an armature); inverse
    bind matrices from the first frame's pose, the axis root included."""
    axis = np.eye(4)
    axis[:3, :3] = quaternion.to_matrix(np.asarray(ZUP_TO_YUP))
    holder = np.eye(4)
    holder[:3, 3] = offset
    world: list[Array] = []
    for b in range(len(nodes)):
        local = np.eye(4)
        local[:3, :3] = quaternion.to_matrix(q[0, b].astype(np.float32).astype(float))
        local[:3, 3] = t[0, b].astype(np.float32)
        above = axis @ holder if bodies.parents[b] < 0 else world[bodies.parents[b]]
        world.append(above @ local)
    inverse = np.stack([np.linalg.inv(m).T for m in world]).astype(np.float32)  # column-major
    ibm = doc.buffer.accessor(inverse.reshape(len(nodes), 16), "MAT4")
    doc.skins.append({"name": doc.nodes[nodes[0]]["name"], "joints": nodes, "inverseBindMatrices": ibm})


def _extras(doc: Document, motion: Motion, name: str, holder: int, nodes: list[int],
            bodies: Bodies, offset: Array) -> dict[str, object]:
    """What motionkit reads back of one motion: body nodes, timeline, tracks, metadata."""
    timeline = next(iter(motion.tracks.values())).timeline if motion.tracks else None
    entry: dict[str, object] = {"name": name, "node": holder, "bodies": nodes,
                                "labels": bodies.names, "parents": bodies.parents,
                                "offset": [float(v) for v in offset], "frames": len(bodies.times)}
    if timeline is not None and timeline.is_uniform:
        entry["fps"] = timeline.rate
        entry["start"] = timeline.start
    else:
        entry["times"] = doc.raw(bodies.times)
        entry["rate"] = timeline.rate if timeline is not None else None
    tracks = []
    for track_name, track in motion.tracks.items():
        if track_name == "links":
            tracks.append({"name": "links", "kind": "pose", "nodes": True,
                           "labels": track.labels, "attrs": track.attrs})
            continue
        tracks.append({"name": track_name, "kind": track.kind, "labels": track.labels,
                       "attrs": track.attrs, **doc.raw(np.asarray(track.data, dtype=float))})
    entry["tracks"] = tracks
    terrain = motion.terrain
    if terrain is not None:
        entry["terrain"] = {"heights": doc.raw(np.asarray(terrain.heights, dtype=float)),
                            "origin": doc.raw(np.asarray(terrain.origin, dtype=float)),
                            "dx": float(terrain.dx), "dy": float(terrain.dy or terrain.dx),
                            "bounds": None if terrain.bounds is None else
                            doc.raw(np.asarray(terrain.bounds, dtype=float)),
                            "attrs": terrain.attrs}
    entry["meta"] = {k: v for k, v in motion.meta.items() if k not in ("source_format",)}
    return entry


def build(motions: Sequence[tuple[str, Motion]], spacing: float | None, skin: bool,
          generator: str) -> tuple[dict[str, object], bytes]:
    """The JSON document and binary buffer of ``motions`` (name, motion), side by side
    ``spacing`` metres apart along y (None: by their size)."""
    doc = Document()
    root = doc.node(AXIS_NODE, rotation=list(ZUP_TO_YUP))
    offsets = _offsets([bodies_of(m) for _, m in motions], spacing)
    entries = [add_motion(doc, root, motion, name, i, offsets[i], skin)
               for i, (name, motion) in enumerate(motions)]
    gltf: dict[str, object] = {
        "asset": {"version": "2.0", "generator": generator,
                  "extras": {EXTRAS: {"layout": LAYOUT, **CONVENTIONS, "motions": entries}}},
        "scene": 0, "scenes": [{"name": " + ".join(n for n, _ in motions), "nodes": [root]}],
        "nodes": doc.nodes,
    }
    if doc.channels:
        gltf["animations"] = [{"name": " + ".join(n for n, _ in motions), "samplers": doc.samplers,
                               "channels": doc.channels}]
    for key, items in (("meshes", doc.meshes), ("materials", doc.materials), ("skins", doc.skins),
                       ("accessors", doc.buffer.accessors), ("bufferViews", doc.buffer.views)):
        if items:
            gltf[key] = items
    blob = doc.buffer.blob()
    if blob:
        gltf["buffers"] = [{"byteLength": len(blob)}]
    return gltf, blob


def _offsets(all_bodies: list[Bodies], spacing: float | None) -> list[Array]:
    """Where each motion's frame sits (Z up): the first at the origin, the others along +y."""
    if spacing is None:
        widths = [float(np.ptp(b.poses[..., 1])) if b.poses.size else 0.0 for b in all_bodies]
        spacing = max(widths, default=0.0) + 1.0
    return [np.array([0.0, i * spacing, 0.0]) for i in range(len(all_bodies))]

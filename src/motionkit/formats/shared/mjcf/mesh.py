"""Mass properties of MJCF mesh geoms as MuJoCo computes them (``mjCMesh``).

Mesh files are read as MuJoCo reads them: binary STL (float32 vertices, 1 to 200,000
triangles), Wavefront OBJ (``v`` and ``f`` lines, polygons as fans, float32 vertices) and
MuJoCo's MSH; the asset's ``scale`` multiplies the vertices, and a left-handed scale turns
the faces round. The mesh's ``inertia`` attribute picks the rule (MuJoCo's default is
``legacy``, measured with mujoco 3/4):

* every rule starts at the area-weighted centroid of the triangles, ``c``;
* ``exact``: each triangle spans a pyramid to ``c`` of signed volume; ``legacy``: the same
  with every volume taken positive; ``convex``: the pyramids of the convex hull's outward
  triangles (qhull, as MuJoCo uses); ``shell``: the triangles' areas;
* the centre of mass weighs each pyramid's centroid (``3/4`` triangle centre + ``1/4`` c);
* the moments come from the same triangles, now taken about the centre of mass, with the
  second moments of each pyramid (divisor 20; 12 for a shell), and the volume is summed
  again there (for ``legacy`` this second sum is the one MuJoCo keeps).

The results are per unit density; the geom's ``mass`` or ``density`` (1000) scales them.

Hostile files are bounded (:mod:`motionkit._limits`): only regular files of at most
``MAX_MESH_BYTES`` are read, a mesh holds at most ``MAX_MESH_VERTICES`` vertices and
``MAX_MESH_TRIANGLES`` triangles (kept in compact arrays, computed in blocks), and one
model's :class:`Meshes` reads each file once and charges what it reads and computes to
the model's budget.
"""

from __future__ import annotations

import io
import os
from array import array
from collections.abc import Iterator
from dataclasses import dataclass
from typing import cast

import numpy as np
from numpy.typing import NDArray
from scipy.spatial import ConvexHull, QhullError

from ...._io import file_identity, read_bytes
from ...._limits import (
    MAX_MESH_BYTES,
    MAX_MESH_TRIANGLES,
    MAX_MESH_VERTICES,
    MAX_MODEL_MESH_BYTES,
    MAX_MODEL_MESH_TRIANGLES,
)
from ....errors import FormatError
from ....spatial import quaternion

Array = NDArray[np.float64]

#: Mesh inertia rules MuJoCo knows, and its default.
RULES = ("convex", "exact", "legacy", "shell")
DEFAULT_RULE = "legacy"
#: MuJoCo's bound on the triangles of an STL file.
MAX_STL_FACES = 200_000
#: Volumes (or areas) below this are MuJoCo's "too small" (mjMINVAL).
MIN_VALUE = 1e-15


class MeshUnreadable(Exception):
    """A mesh whose mass properties cannot be computed; the message says why."""


class MeshOverBudget(MeshUnreadable):
    """A mesh left out because its model's meshes already cost their budget."""


@dataclass(frozen=True)
class MeshMass:
    """Per unit density: volume (area for a shell), centre of mass and the inertia tensor
    about it, all in the mesh file's axes after ``scale``."""

    volume: float
    com: Array
    inertia: Array


class Meshes:
    """The mesh masses of one model: each file read once (by its real path, device, inode,
    size and mtime), each asset's numbers computed once, and the model's total bounded by
    ``MAX_MODEL_MESH_BYTES`` read and ``MAX_MODEL_MESH_TRIANGLES`` computed
    (:class:`MeshOverBudget` beyond), so many assets naming one big file cost it once."""

    def __init__(self) -> None:
        self._files: dict[tuple[object, ...],
                          tuple[Array, NDArray[np.int64]] | MeshUnreadable] = {}
        self._masses: dict[tuple[object, ...], MeshMass | MeshUnreadable] = {}
        self.bytes_read = 0
        self.triangles = 0

    def mass(self, path: str, scale: Array, rule: str, refpos: Array | None = None,
             refquat: Array | None = None) -> MeshMass:
        """The mass properties of the mesh file ``path`` under ``rule`` (:data:`RULES`), its
        vertices moved by ``-refpos``, turned by the inverse of ``refquat`` (w x y z) and
        scaled, in MuJoCo's order; from this model's caches, within its budget."""
        file = file_identity(path)
        if file is None:
            raise MeshUnreadable("cannot be read (no such file)")
        key = (file, tuple(np.asarray(scale, dtype=float).ravel()), rule,
               None if refpos is None else tuple(np.asarray(refpos, dtype=float).ravel()),
               None if refquat is None else tuple(np.asarray(refquat, dtype=float).ravel()))
        found = self._masses.get(key)
        if found is None:
            try:
                vertices, faces = self._read(file, path)
                cost = len(faces) + (len(vertices) if rule == "convex" or not faces.size
                                     else 0)  # a hull's triangles are of the vertices' order
                if self.triangles + cost > MAX_MODEL_MESH_TRIANGLES:
                    raise MeshOverBudget(f"the model's meshes exceed "
                                         f"{MAX_MODEL_MESH_TRIANGLES:,} triangles")
                self.triangles += cost
                found = _placed_mass(vertices, faces, scale, rule, refpos, refquat)
            except MeshUnreadable as exc:
                found = exc
            self._masses[key] = found
        if isinstance(found, MeshUnreadable):
            raise type(found)(*found.args)
        return found

    def _read(self, file: tuple[object, ...], path: str) -> tuple[Array, NDArray[np.int64]]:
        found = self._files.get(file)
        if found is None:
            size = cast(int, file[3])
            if self.bytes_read + size > MAX_MODEL_MESH_BYTES:
                raise MeshOverBudget(f"the model's mesh files exceed "
                                     f"{MAX_MODEL_MESH_BYTES >> 20} MiB")
            self.bytes_read += size
            try:
                found = read_mesh(path)
            except MeshUnreadable as exc:
                found = exc
            self._files[file] = found
        if isinstance(found, MeshUnreadable):
            raise type(found)(*found.args)
        return found


def _placed_mass(vertices: Array, faces: NDArray[np.int64], scale: Array, rule: str,
                 refpos: Array | None, refquat: Array | None) -> MeshMass:
    """:meth:`Meshes.mass` of vertices and faces already read."""
    if refpos is not None:
        vertices = vertices - refpos
    if refquat is not None:
        if not np.linalg.norm(refquat) > 0:
            raise MeshUnreadable("refquat is zero")
        vertices = vertices @ quaternion.to_matrix(quaternion.wxyz_to_xyzw(refquat))
    vertices = vertices * scale
    if np.prod(scale) < 0:  # MuJoCo keeps the faces outward under a mirroring scale
        faces = faces[:, [0, 2, 1]]
    return mass_properties(vertices, faces, rule)


def read_mesh(path: str) -> tuple[Array, NDArray[np.int64]]:
    """Vertices (float32 values, as float64) and triangles of an STL, OBJ or MSH file."""
    suffix = os.path.splitext(path)[1].lower()
    if suffix not in (".stl", ".obj", ".msh"):
        raise MeshUnreadable(f"{suffix or 'no extension'} meshes are not read by motionkit")
    try:
        data = read_bytes(path, MAX_MESH_BYTES)  # a regular file only: never a FIFO or device
    except FormatError as exc:
        raise MeshUnreadable(exc.message) from None
    if suffix == ".stl":
        vertices, faces = _stl(data)
    elif suffix == ".obj":
        vertices, faces = _obj(data)
    else:
        vertices, faces = _msh(data)
    if len(vertices) < 4:
        raise MeshUnreadable("fewer than 4 vertices")
    if len(vertices) > MAX_MESH_VERTICES or len(faces) > MAX_MESH_TRIANGLES:
        raise _too_big()
    if faces.size and (faces.min() < 0 or faces.max() >= len(vertices)):
        raise MeshUnreadable("a face names a vertex that does not exist")
    if not np.isfinite(vertices).all():
        raise MeshUnreadable("a vertex is not finite")
    return vertices, faces


def _stl(data: bytes) -> tuple[Array, NDArray[np.int64]]:
    if len(data) < 84:
        raise MeshUnreadable("no binary STL header")
    count = int.from_bytes(data[80:84], "little")
    if not 1 <= count <= MAX_STL_FACES or len(data) != 84 + 50 * count:
        raise MeshUnreadable("not a binary STL of 1 to 200,000 triangles (MuJoCo reads no "
                             "ASCII STL)")
    records = np.frombuffer(data, np.dtype([("normal", "<f4", 3), ("corners", "<f4", (3, 3)),
                                            ("extra", "<u2")]), count, 84)
    vertices = records["corners"].reshape(-1, 3).astype(np.float64)
    return vertices, np.arange(3 * count, dtype=np.int64).reshape(-1, 3)


def _too_big() -> MeshUnreadable:
    return MeshUnreadable(f"more than {MAX_MESH_VERTICES:,} vertices or "
                          f"{MAX_MESH_TRIANGLES:,} triangles")


def _obj(data: bytes) -> tuple[Array, NDArray[np.int64]]:
    """``v`` and ``f`` lines, gathered into compact arrays (float32 vertices, as MuJoCo
    reads them; 8 bytes a face index), refused once past the vertex or triangle cap."""
    vertices = array("f")
    faces = array("q")
    for number, line in enumerate(io.BytesIO(data), 1):  # a line at a time, not a list
        parts = line.split()
        if len(parts) < 4 or parts[0] not in (b"v", b"f"):
            continue
        try:
            if parts[0] == b"v":
                if len(vertices) >= 3 * MAX_MESH_VERTICES:
                    raise _too_big()
                vertices.extend((float(parts[1]), float(parts[2]), float(parts[3])))
                continue
            if len(faces) + 3 * (len(parts) - 3) > 3 * MAX_MESH_TRIANGLES:
                raise _too_big()
            corners = [int(item.split(b"/")[0]) for item in parts[1:]]
        except ValueError:
            raise MeshUnreadable(f"line {number}: not a number") from None
        count = len(vertices) // 3
        ids = [k - 1 if k > 0 else count + k for k in corners]
        for k in range(1, len(ids) - 1):
            faces.extend((ids[0], ids[k], ids[k + 1]))
    points = np.frombuffer(vertices, dtype=np.float32).reshape(-1, 3).astype(np.float64)
    return points, np.frombuffer(faces, dtype=np.int64).reshape(-1, 3)


def _msh(data: bytes) -> tuple[Array, NDArray[np.int64]]:
    if len(data) < 16:
        raise MeshUnreadable("no MSH header")
    nv, nn, nt, nf = (int(v) for v in np.frombuffer(data, "<i4", 4))
    if nv > MAX_MESH_VERTICES or nf > MAX_MESH_TRIANGLES:
        raise _too_big()
    if nv < 4 or min(nn, nt, nf) < 0 or nn not in (0, nv) or nt not in (0, nv) or \
            len(data) != 16 + 4 * (3 * nv + 3 * nn + 2 * nt + 3 * nf):
        raise MeshUnreadable("MSH sizes do not match the file")
    vertices = np.frombuffer(data, "<f4", 3 * nv, 16).reshape(-1, 3).astype(np.float64)
    start = 16 + 4 * (3 * nv + 3 * nn + 2 * nt)
    return vertices, np.frombuffer(data, "<i4", 3 * nf, start).reshape(-1, 3).astype(np.int64)


#: Triangles computed at once: the per-triangle arrays (~500 bytes each) stay ~30 MB.
_BLOCK = 1 << 16


def mass_properties(vertices: Array, faces: NDArray[np.int64], rule: str) -> MeshMass:
    """Volume, centre of mass and inertia tensor per unit density (module docstring),
    summed over blocks of :data:`_BLOCK` triangles."""
    if rule not in RULES:
        raise MeshUnreadable(f"unknown mesh inertia {rule[:40]!r}")
    hull = _hull(vertices) if rule == "convex" or not faces.size else None
    if not faces.size:
        assert hull is not None
        faces = hull  # MuJoCo's faces of a mesh given without any
    area_sum, weighted = 0.0, np.zeros(3)
    for corners, cross in _blocks(vertices, faces):
        area = 0.5 * np.linalg.norm(cross, axis=1)
        area_sum += area.sum()
        weighted += area @ corners.mean(axis=1)
    if area_sum < MIN_VALUE:
        raise MeshUnreadable("its surface area is too small")
    middle = weighted / area_sum
    solid = hull if hull is not None and rule == "convex" else faces
    total, moment = 0.0, np.zeros(3)
    for corners, cross in _blocks(vertices, solid):
        centre = corners.mean(axis=1)
        weights = 0.5 * np.linalg.norm(cross, axis=1) if rule == "shell" else \
            np.einsum("ni,ni->n", centre - middle, cross) / 6
        if rule == "legacy":
            weights = np.abs(weights)
        total += weights.sum()
        moment += weights @ (0.75 * centre + 0.25 * middle)
    if total < MIN_VALUE:
        raise MeshUnreadable("its volume is negative (triangles facing inwards)" if total < 0
                             else "its volume is too small")
    com = moment / total
    volume, products = 0.0, np.zeros((3, 3))
    divisor = 12.0 if rule == "shell" else 20.0
    for corners, cross in _blocks(vertices, solid):
        local = corners - com
        if rule == "shell":
            weights = 0.5 * np.linalg.norm(cross, axis=1)
        else:
            weights = np.einsum("ni,ni->n", local.mean(axis=1), cross) / 6
            if rule == "legacy":
                weights = np.abs(weights)
        # second moments of each pyramid (or triangle): Σ v/C (2 Σ a_i b_i + Σ_{i≠j} a_i b_j)
        summed = local.sum(axis=1)
        second = (np.einsum("nki,nkj->nij", local, local)
                  + np.einsum("ni,nj->nij", summed, summed)) / divisor
        products += np.einsum("n,nij->ij", weights, second)
        volume += weights.sum()
    inertia = np.trace(products) * np.eye(3) - products
    return MeshMass(float(volume), com, inertia)


def _blocks(vertices: Array, faces: NDArray[np.int64]) -> Iterator[tuple[Array, Array]]:
    """Each block's triangle corners and the cross products of their edges."""
    for start in range(0, len(faces), _BLOCK):
        corners = vertices[faces[start:start + _BLOCK]]
        yield corners, np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0])


def _hull(vertices: Array) -> NDArray[np.int64]:
    """The convex hull's triangles, each facing outwards."""
    try:
        hull = ConvexHull(vertices, qhull_options="Qt")
    except (QhullError, ValueError) as exc:
        raise MeshUnreadable(f"no convex hull ({str(exc).splitlines()[0][:80]})") from None
    faces = np.asarray(hull.simplices, dtype=np.int64)
    corners = vertices[faces]
    cross = np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0])
    inward = np.einsum("ni,ni->n", cross, hull.equations[:, :3]) < 0
    faces[inward] = faces[inward][:, [0, 2, 1]]
    return faces

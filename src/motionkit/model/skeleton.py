"""Articulated models: a Skeleton is a tree of bodies, each hanging from its parent joint.

The layout follows DART, which is the most general of the ecosystems motionkit reads
(DART ``.skel``, Choreonoid ``.body``, PARC character XML all map onto it):

* ``Skeleton.bodies`` are in depth-first order; ``body.parent`` is the index of the parent
  body (``-1`` = world), always smaller than the body's own index.
* Each body owns its parent joint ``body.joint``. A joint's world transform rule is

  ``W_child = W_parent · joint.parent_to_joint · Q(q) · inv(joint.child_to_joint)``

  with ``Q(q)`` the joint motion of its type (see :data:`JOINT_DOFS` and
  :mod:`motionkit.kinematics`). ``W_parent`` is the identity for root bodies.
* The generalized coordinates of the skeleton are the joints' coordinates concatenated in
  body order; ``joint.dof_offset`` is where a joint's coordinates start (DART's layout:
  ball = rotation vector, free = rotation vector then translation, euler in ``axis_order``).
* Transforms are 4×4 homogeneous float64 matrices; all units SI (m, rad, kg).

Format readers fill these classes; format-specific extras go into ``attrs`` dicts.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypedDict, cast

import numpy as np
from numpy.typing import NDArray

from ..errors import choices

Matrix = NDArray[np.float64]

#: Joint types and their number of generalized coordinates.
JOINT_DOFS: dict[str, int] = {
    "weld": 0,
    "revolute": 1,
    "prismatic": 1,
    "screw": 1,
    "universal": 2,
    "ball": 3,
    "euler": 3,
    "translational": 3,
    "translational2d": 2,
    "planar": 3,
    "free": 6,
}

#: DART actuator types of a joint.
ACTUATORS = ("force", "passive", "servo", "acceleration", "velocity", "locked")

#: Plane types of planar / translational2d joints: (translation axis 1, axis 2, normal).
PLANES: dict[str, tuple[tuple[float, ...], tuple[float, ...], tuple[float, ...]]] = {
    "xy": ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0)),
    "yz": ((0.0, 1.0, 0.0), (0.0, 0.0, 1.0), (1.0, 0.0, 0.0)),
    "zx": ((0.0, 0.0, 1.0), (1.0, 0.0, 0.0), (0.0, 1.0, 0.0)),
}

SHAPE_KINDS = ("box", "sphere", "ellipsoid", "cylinder", "capsule", "cone", "pyramid", "plane",
               "multi_sphere", "mesh")


def identity() -> Matrix:
    """A fresh 4×4 identity transform."""
    return np.eye(4)


@dataclass(eq=False)
class Dof:
    """One generalized coordinate: name, limits, initial state and dynamics.

    Limits default to ±inf; ``position``/``velocity`` are the initial values DART assigns
    on load (``init_pos``/``init_vel`` or ``<dof><position initial=…>``).
    """

    name: str
    lower: float = -np.inf
    upper: float = np.inf
    position: float = 0.0
    velocity: float = 0.0
    velocity_lower: float = -np.inf
    velocity_upper: float = np.inf
    acceleration_lower: float = -np.inf
    acceleration_upper: float = np.inf
    acceleration: float = 0.0
    force_lower: float = -np.inf
    force_upper: float = np.inf
    force: float = 0.0
    damping: float = 0.0
    friction: float = 0.0
    spring_rest_position: float = 0.0
    spring_stiffness: float = 0.0


class _DofArrays:
    """Per-coordinate arrays (limits, initial state) of anything with a ``dofs`` list."""

    if TYPE_CHECKING:

        @property
        def dofs(self) -> list[Dof]: ...

    @property
    def lower(self) -> NDArray[np.float64]:
        """Lower position limits, one per coordinate."""
        return np.array([d.lower for d in self.dofs], dtype=float)

    @property
    def upper(self) -> NDArray[np.float64]:
        """Upper position limits, one per coordinate."""
        return np.array([d.upper for d in self.dofs], dtype=float)

    @property
    def initial_positions(self) -> NDArray[np.float64]:
        return np.array([d.position for d in self.dofs], dtype=float)

    @property
    def initial_velocities(self) -> NDArray[np.float64]:
        return np.array([d.velocity for d in self.dofs], dtype=float)


@dataclass(eq=False)
class Joint(_DofArrays):
    """The joint that attaches a body to its parent (or to the world).

    ``type`` is one of :data:`JOINT_DOFS`. ``axes`` holds the type's axes in the joint
    frame: one row for revolute/prismatic/screw, two for universal, the two translation
    axes for planar/translational2d (normal = their cross product), none otherwise.
    ``axis_order`` (euler) names the rotation sequence, e.g. ``"xyz"`` = Rx·Ry·Rz;
    ``pitch`` (screw) is metres of travel per turn; ``plane`` (planar/translational2d) is
    ``xy``/``yz``/``zx``/``arbitrary``.
    """

    name: str
    type: str
    parent_to_joint: Matrix = field(default_factory=identity)
    child_to_joint: Matrix = field(default_factory=identity)
    axes: NDArray[np.float64] = field(default_factory=lambda: np.zeros((0, 3)))
    axis_order: str = "xyz"
    pitch: float = 0.1
    plane: str = "xy"
    actuator: str = "force"
    dofs: list[Dof] = field(default_factory=list)
    dof_offset: int = 0
    attrs: dict[str, object] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.type not in JOINT_DOFS:
            raise ValueError(f"joint {self.name!r}: unknown joint type {self.type!r}")
        self.parent_to_joint = np.asarray(self.parent_to_joint, dtype=float)
        self.child_to_joint = np.asarray(self.child_to_joint, dtype=float)
        self.axes = np.asarray(self.axes, dtype=float).reshape(-1, 3)
        if self.type == "euler" and sorted(self.axis_order) != ["x", "y", "z"]:
            raise ValueError(f"joint {self.name!r}: euler axis order must be a permutation of "
                             f"xyz, got {self.axis_order!r}")
        if not self.dofs:
            self.dofs = [Dof(name) for name in default_dof_names(self.name, self.type,
                                                                 self.axis_order, self.plane)]
        if len(self.dofs) != JOINT_DOFS[self.type]:
            raise ValueError(f"joint {self.name!r}: a {self.type} joint has "
                             f"{JOINT_DOFS[self.type]} coordinates, got {len(self.dofs)}")

    @property
    def dof_count(self) -> int:
        """Number of generalized coordinates of this joint."""
        return JOINT_DOFS[self.type]

    @property
    def dof_slice(self) -> slice:
        """Where this joint's coordinates sit in the skeleton's coordinate vector."""
        return slice(self.dof_offset, self.dof_offset + self.dof_count)

    def plane_axes(self) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
        """Translation axes and normal of a planar/translational2d joint (unit, orthogonal)."""
        if self.plane in PLANES:
            a1, a2, n = (np.array(v) for v in PLANES[self.plane])
            return a1, a2, n
        a1 = self.axes[0] / np.linalg.norm(self.axes[0])
        a2 = self.axes[1] / np.linalg.norm(self.axes[1])
        if abs(float(a1 @ a2)) > 1e-6:
            a2 = a2 - (a1 @ a2) * a1
            a2 = a2 / np.linalg.norm(a2)
        n = np.cross(a1, a2)
        return a1, a2, n / np.linalg.norm(n)


def default_dof_names(joint: str, type: str, axis_order: str = "xyz",
                      plane: str = "xy") -> list[str]:
    """DART's default names of a joint's coordinates (``name``, ``name_x``, …)."""
    count = JOINT_DOFS[type]
    if count == 0:
        return []
    if count == 1:
        return [joint]
    if type in ("universal", "translational2d"):
        return [f"{joint}_1", f"{joint}_2"]
    if type == "euler":
        return [f"{joint}_{c}" for c in axis_order]
    if type in ("ball", "translational"):
        return [f"{joint}_{c}" for c in "xyz"]
    if type == "planar":
        suffix = {"xy": "xy", "yz": "yz", "zx": "zx"}.get(plane, "12")
        return [f"{joint}_{suffix[0]}", f"{joint}_{suffix[1]}", f"{joint}_rot"]
    return [f"{joint}_rot_{c}" for c in "xyz"] + [f"{joint}_pos_{c}" for c in "xyz"]


@dataclass(eq=False)
class Inertia:
    """Mass, centre of mass (body frame) and moment of inertia about the COM (body axes).

    ``derived`` says the moment was computed from the body's shapes rather than given.
    """

    mass: float = 1.0
    com: NDArray[np.float64] = field(default_factory=lambda: np.zeros(3))
    moment: Matrix = field(default_factory=lambda: np.eye(3))
    derived: bool = False

    def __post_init__(self) -> None:
        self.com = np.asarray(self.com, dtype=float).reshape(3)
        self.moment = np.asarray(self.moment, dtype=float).reshape(3, 3)


class ShapeParams(TypedDict, total=False):
    """The sizes of a :class:`Shape` or :class:`SoftShape`; each kind uses the keys its
    ``Shape`` docstring names."""

    size: NDArray[np.float64]  # box, ellipsoid
    radius: float  # sphere, cylinder, capsule, cone
    height: float  # cylinder, capsule, cone, pyramid
    base_width: float  # pyramid
    base_depth: float
    normal: NDArray[np.float64]  # plane
    offset: float
    spheres: list[tuple[float, NDArray[np.float64]]]  # multi_sphere: (radius, xyz)
    file_name: str | None  # mesh (None: geometry given inline, as ``inline`` names)
    scale: NDArray[np.float64]
    base: str  # the folder a relative file_name starts from
    uri: str  # the file as the source named it
    node: str  # one named node of the mesh file
    mesh: str  # the mesh asset's name
    inline: str  # the kind of inline geometry (Choreonoid's Extrusion, …)
    frags: NDArray[np.int64]  # soft box: fragments per axis
    num_slices: int  # soft sphere, ellipsoid, cylinder
    num_stacks: int
    num_rings: int


@dataclass(eq=False)
class Shape:
    """A geometric primitive or mesh attached to a body.

    ``kind`` is one of :data:`SHAPE_KINDS`; ``params`` its sizes (``size`` for box and
    ellipsoid — full edge lengths / diameters —, ``radius``, ``height``, ``base_width``,
    ``base_depth``, ``normal``/``offset`` for a plane, ``spheres`` as ``(radius, xyz)``
    pairs for multi_sphere, ``file_name``/``scale`` for a mesh). ``transform`` is the
    shape's pose in the body frame; ``role`` is ``"visual"`` or ``"collision"``.
    """

    kind: str
    params: ShapeParams = field(default_factory=ShapeParams)
    transform: Matrix = field(default_factory=identity)
    role: str = "visual"
    color: NDArray[np.float64] | None = None
    collidable: bool = True
    attrs: dict[str, object] = field(default_factory=dict)


@dataclass(eq=False)
class SoftShape:
    """A deformable body's shape (DART soft bodies): geometry, total mass and stiffness."""

    kind: str
    params: ShapeParams = field(default_factory=ShapeParams)
    transform: Matrix = field(default_factory=identity)
    total_mass: float = 1.0
    kv: float | None = None
    ke: float | None = None
    damp: float | None = None


@dataclass(eq=False)
class Marker:
    """A named point fixed on a body (offset in the body frame)."""

    name: str
    offset: NDArray[np.float64] = field(default_factory=lambda: np.zeros(3))


@dataclass(eq=False)
class Device:
    """A sensor or other device mounted on a body (Choreonoid ``ForceSensor``, ``Camera``…).

    ``kind`` is the device class (e.g. ``ForceSensor``, ``RangeCamera``); ``body`` the
    index of the body it is mounted on; ``transform`` its pose in that body's frame (its
    linear part may carry a scale, as Choreonoid keeps it); ``attrs`` the format's extras.
    """

    name: str
    kind: str
    body: int
    transform: Matrix = field(default_factory=identity)
    attrs: dict[str, object] = field(default_factory=dict)


@dataclass(eq=False)
class Body:
    """A rigid (or soft) body and its parent joint.

    ``parent`` is the parent body's index in ``Skeleton.bodies`` (-1 = world).
    ``rest_pose`` is the body's pose in the world when every coordinate is zero (DART's
    body ``<transformation>`` composed with the skeleton's).
    """

    name: str
    joint: Joint
    parent: int = -1
    rest_pose: Matrix = field(default_factory=identity)
    inertia: Inertia = field(default_factory=Inertia)
    shapes: list[Shape] = field(default_factory=list)
    soft_shape: SoftShape | None = None
    markers: list[Marker] = field(default_factory=list)
    gravity: bool = True
    attrs: dict[str, object] = field(default_factory=dict)


@dataclass(eq=False)
class Skeleton(_DofArrays):
    """An articulated tree of bodies in depth-first order (see the module docstring).

    ``devices`` lists the sensors and other devices mounted on the bodies, ordered by
    body index (empty for formats without devices).
    """

    name: str
    bodies: list[Body] = field(default_factory=list)
    mobile: bool = True
    attrs: dict[str, object] = field(default_factory=dict)
    devices: list[Device] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.reindex()

    def reindex(self) -> None:
        """Check the tree (parents before children) and recompute every ``dof_offset``."""
        offset = 0
        for index, body in enumerate(self.bodies):
            if not -1 <= body.parent < index:
                raise ValueError(f"skeleton {self.name!r}: body {body.name!r} (index {index}) "
                                 f"has parent index {body.parent}; parents must come first")
            body.joint.dof_offset = offset
            offset += body.joint.dof_count

    @property
    def joints(self) -> list[Joint]:
        """Every body's parent joint, in body order."""
        return [body.joint for body in self.bodies]

    @property
    def dof_count(self) -> int:
        """Number of generalized coordinates."""
        return sum(body.joint.dof_count for body in self.bodies)

    @property
    def dofs(self) -> list[Dof]:
        """Every coordinate, in the skeleton's coordinate order."""
        return [dof for body in self.bodies for dof in body.joint.dofs]

    @property
    def dof_names(self) -> list[str]:
        return [dof.name for dof in self.dofs]

    @property
    def parents(self) -> NDArray[np.intp]:
        """Parent index of every body (-1 for roots)."""
        return np.array([b.parent for b in self.bodies], dtype=np.intp)

    def rest_poses(self) -> NDArray[np.float64]:
        """Every body's world pose ``(bodies, 4, 4)`` at q = 0: ``W_p · P · inv(C)``
        (every joint motion is the identity there)."""
        out = np.empty((len(self.bodies), 4, 4))
        for index, body in enumerate(self.bodies):
            local = body.joint.parent_to_joint @ np.linalg.inv(body.joint.child_to_joint)
            out[index] = local if body.parent < 0 else out[body.parent] @ local
        return out

    def joint_id_columns(self) -> dict[int, int]:
        """Choreonoid joint ID (``joint.attrs["joint_id"]``) → index of that one-coordinate
        joint in the coordinate vector."""
        return {int(cast(int, j.attrs["joint_id"])): j.dof_offset for j in self.joints
                if "joint_id" in j.attrs and j.dof_count == 1}

    def body_index(self, name: str) -> int:
        """Index of the body called ``name``; KeyError naming the choices otherwise."""
        for index, body in enumerate(self.bodies):
            if body.name == name:
                return index
        raise KeyError(f"skeleton {self.name!r} has no body {name!r} "
                       f"({choices(name, (b.name for b in self.bodies), 'bodies')})")

    def joint(self, name: str) -> Joint:
        """The joint called ``name``."""
        for body in self.bodies:
            if body.joint.name == name:
                return body.joint
        raise KeyError(f"skeleton {self.name!r} has no joint {name!r} "
                       f"({choices(name, (b.joint.name for b in self.bodies), 'joints')})")

    def children(self, index: int) -> list[int]:
        """Indices of the bodies whose parent is ``index`` (-1: the roots)."""
        return [i for i, b in enumerate(self.bodies) if b.parent == index]

    def describe(self) -> dict[str, object]:
        """Counts for ``motionkit info --json``: name, bodies, joints, dofs."""
        return {"name": self.name, "bodies": len(self.bodies), "joints": len(self.bodies),
                "dofs": self.dof_count}

    def summary_text(self) -> str:
        """A readable listing: counts, then the body tree with joint types and DOFs."""
        lines = [f"skeleton {self.name!r}: {len(self.bodies)} bodies, {len(self.bodies)} joints, "
                 f"{self.dof_count} dofs" + ("" if self.mobile else " (immobile)")]
        lines.extend(self._tree_lines())
        return "\n".join(lines)

    def _tree_lines(self) -> Iterator[str]:
        """The body tree, depth first, with an explicit stack (any depth, linear time)."""
        kids: dict[int, list[int]] = {}
        for index, body in enumerate(self.bodies):
            kids.setdefault(body.parent, []).append(index)
        yield "  world"
        roots = kids.get(-1, [])
        stack = [(root, "  ", k == len(roots) - 1) for k, root in reversed(list(enumerate(roots)))]
        while stack:
            index, prefix, last = stack.pop()
            body = self.bodies[index]
            joint = body.joint
            dofs = f"{joint.dof_count} dof" + ("" if joint.dof_count == 1 else "s")
            if joint.dof_count:
                dofs += f" [{joint.dof_offset}:{joint.dof_offset + joint.dof_count}]"
            branch = "└─ " if last else "├─ "
            yield f"{prefix}{branch}{body.name}  ({joint.type} joint {joint.name!r}, {dofs})"
            children = kids.get(index, [])
            inner = prefix + ("   " if last else "│  ")
            stack.extend((child, inner, k == len(children) - 1)
                         for k, child in reversed(list(enumerate(children))))


@dataclass(eq=False)
class World:
    """Several skeletons plus simulation settings (DART ``<world>``/``<physics>``)."""

    skeletons: list[Skeleton] = field(default_factory=list)
    name: str = "world"
    time_step: float = 0.001
    gravity: NDArray[np.float64] = field(default_factory=lambda: np.array([0.0, 0.0, -9.81]))
    collision_detector: str | None = None
    attrs: dict[str, object] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.gravity = np.asarray(self.gravity, dtype=float).reshape(3)

    def skeleton(self, name: str) -> Skeleton:
        """The skeleton called ``name``."""
        for skeleton in self.skeletons:
            if skeleton.name == name:
                return skeleton
        raise KeyError(f"world has no skeleton {name!r}")

    def describe(self) -> dict[str, object]:
        """``{"skeletons": [...], "time_step", "gravity", "collision_detector"}`` for info."""
        return {"skeletons": [s.describe() for s in self.skeletons],
                "time_step": self.time_step, "gravity": [float(g) for g in self.gravity],
                "collision_detector": self.collision_detector}

    def summary_text(self) -> str:
        """Physics settings, then every skeleton's tree."""
        g = " ".join(f"{v:g}" for v in self.gravity)
        head = (f"world: {len(self.skeletons)} skeleton(s), time step {self.time_step:g} s, "
                f"gravity [{g}] m/s²")
        if self.collision_detector:
            head += f", collision detector {self.collision_detector}"
        return "\n".join([head, *(s.summary_text() for s in self.skeletons)])

"""Values of a ``.body`` file as Choreonoid reads them: vectors, poses, angles, inertia.

One :class:`Values` per file being read: it knows the file (for error locations), its
angle unit (each SubBody file keeps its own) and the work budget shared by the whole load.
"""

from __future__ import annotations

import math
import os

import numpy as np
from numpy.typing import NDArray

from ...errors import FormatError
from .body_yaml import Budget, Listing, Mapping, Node, Scalar, error, strict_double, to_double

Array = NDArray[np.float64]

#: Choreonoid's "no limit" (DBL_MAX); read as ±inf into a Skeleton.
DBL_MAX = 1.7976931348623157e308


def axis_angle(axis: Array, angle: float) -> Array:
    """Rotation matrix about the unit ``axis`` by ``angle`` (Rodrigues)."""
    x, y, z = axis
    c, s = math.cos(angle), math.sin(angle)
    t = 1.0 - c
    return np.array([[t * x * x + c, t * x * y - s * z, t * x * z + s * y],
                     [t * x * y + s * z, t * y * y + c, t * y * z - s * x],
                     [t * x * z - s * y, t * y * z + s * x, t * z * z + c]])


class Values:
    """Readers for the value forms of one file."""

    def __init__(self, path: str | os.PathLike[str], budget: Budget, degree: bool) -> None:
        self.path = path
        self.budget = budget
        self.degree = degree

    def error(self, node: Node | None, message: str) -> FormatError:
        """A FormatError at ``node`` of this file."""
        return error(self.path, node, message)

    def angle(self, value: float) -> float:
        """``value`` in the file's angle unit, as radians."""
        return math.radians(value) if self.degree else value

    def number(self, node: Node) -> float:
        """An extracted number (``strtod`` prefix)."""
        return to_double(self.path, node, self.budget)

    def listing(self, node: Node, what: str) -> list[Node]:
        """The items of a listing; anything else is an error."""
        self.budget.spend(node)
        if not isinstance(node, Listing):
            raise self.error(node, f"{what}: the value is not a listing")
        return node.items

    def vector(self, node: Node, count: int, what: str) -> Array:
        """Exactly ``count`` numbers."""
        items = self.listing(node, what)
        if len(items) != count:
            raise self.error(node, f"{what}: a {count} x 1 vector is expected, got "
                             f"{len(items)} values")
        return np.array([self.number(item) for item in items])

    def translation(self, node: Node) -> Array | None:
        """A 3-vector, or a listing of translations (summed, recursively); None for ``[]``."""
        items = self.listing(node, "translation")
        if not items:
            return None
        if isinstance(items[0], Listing):
            total = np.zeros(3)
            for item in items:
                part = self.translation(item)
                if part is not None:
                    total += part
            return total
        return self.vector(node, 3, "translation")

    def rotation(self, node: Node) -> Array | None:
        """An axis-angle ``[x, y, z, θ]`` or a listing of them (composed left to right);
        None for ``[]``."""
        items = self.listing(node, "rotation")
        if not items:
            return None
        if isinstance(items[0], Listing):
            out = np.eye(3)
            for item in items:
                out = out @ self._axis_angle(item)
            return out
        return self._axis_angle(node)

    def _axis_angle(self, node: Node) -> Array:
        values = self.vector(node, 4, "rotation (axis x y z, angle)")
        norm = float(np.linalg.norm(values[:3]))
        if not norm >= 1e-6:
            raise self.error(node, "rotation axis is the zero vector")
        return axis_angle(values[:3] / norm, self.angle(float(values[3])))

    def pose(self, mapping: Mapping) -> Array:
        """``T(translation) · R(rotation) · diag(scale)`` of an element node (4×4)."""
        out = np.eye(4)
        entries = mapping.entries
        if "translation" in entries:
            translation = self.translation(entries["translation"])
            if translation is None:
                raise self.error(entries["translation"], "an empty translation is undefined")
            out[:3, 3] = translation
        if "rotation" in entries:
            rotation = self.rotation(entries["rotation"])
            if rotation is None:
                raise self.error(entries["rotation"], "an empty rotation is undefined")
            out[:3, :3] = rotation
        scale = entries.get("scale")
        if isinstance(scale, Listing):
            out[:3, :3] = out[:3, :3] @ np.diag(self.vector(scale, 3, "scale"))
        return out

    def inertia(self, node: Node) -> Array | None:
        """A row-major 3×3 from 9 numbers or the upper triangle from 6; None for a
        non-listing (which Choreonoid drops silently)."""
        if not isinstance(node, Listing):
            return None
        values = [self.number(item) for item in node.items]
        if len(values) == 9:
            return np.array(values).reshape(3, 3)
        if len(values) == 6:
            xx, xy, xz, yy, yz, zz = values
            return np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
        raise self.error(node, f"inertia needs 9 numbers or the 6 of the upper triangle, got "
                         f"{len(values)}")

    def limit(self, node: Node, upper: bool) -> float:
        """A limit value: a strict number or ``unlimited`` (±DBL_MAX, read as ±inf)."""
        value = strict_double(node)
        if value is not None:
            return unlimited(value)  # ±DBL_MAX written out is "no limit" too
        if isinstance(node, Scalar) and node.text == "unlimited":
            return math.inf if upper else -math.inf
        raise self.error(node, "unknown symbol used as a joint range value (a number or "
                         "'unlimited' is expected)")


def unlimited(value: float) -> float:
    """±inf for Choreonoid's ±DBL_MAX bounds, the value otherwise."""
    if value >= DBL_MAX:
        return math.inf
    if value <= -DBL_MAX:
        return -math.inf
    return value

"""Element text of a ``.skel`` file as DART reads it (numbers through ``std::stod``,
vectors, booleans, transforms), and errors and warnings at an element's line.

Every part of the ``.skel`` reader reads its values through one :class:`ValueReader`.
"""

from __future__ import annotations

import math
import os

import numpy as np
from numpy.typing import NDArray
from scipy.spatial.transform import Rotation

from ...errors import FormatError, warn
from ..shared.xml import Node
from ._numbers import NumberError, stod, tokens

Array = NDArray[np.float64]


class ValueReader:
    """Values of the elements of one ``.skel`` file, with errors and warnings naming it."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = path

    def error(self, node: Node, message: str) -> FormatError:
        """A FormatError at ``node``'s line and column, for the caller to raise."""
        return FormatError(message, self.path, node.line, node.column)

    def warn(self, node: Node, message: str) -> None:
        """A MotionkitWarning naming the file and ``node``'s line."""
        warn(f"{os.fspath(self.path)}:{node.line}: {message}")

    def child(self, node: Node, tag: str) -> Node:
        """The first ``<tag>`` child of ``node``, which DART requires."""
        found = node.find(tag)
        if found is None:
            raise self.error(node, f"<{node.tag}> needs a <{tag}> element")
        return found

    def number(self, node: Node, text: str | None = None) -> float:
        """A scalar as DART's ``std::stod`` reads it; a warning where text is ignored."""
        raw = node.text if text is None else text
        try:
            value, whole = stod(raw)
        except NumberError as exc:
            raise self.error(node, f"<{node.tag}>: {exc} (DART fails to load)") from None
        if not whole:
            self.warn(node, f"<{node.tag}>: {raw.strip()[:40]!r} read as {value!r}, as DART "
                      "does (the rest of the text is ignored)")
        return value

    def integer(self, node: Node, text: str | None = None) -> int:
        """A scalar that must be a whole number (a count)."""
        value = self.number(node, text)
        if not math.isfinite(value) or value != math.floor(value):
            raw = (node.text if text is None else text).strip()
            raise self.error(node, f"<{node.tag}>: {raw!r} is not a whole number")
        return int(value)

    def vector(self, node: Node, count: int, short: str = "warn") -> Array:
        """``count`` numbers as DART reads a vector: extra tokens ignored (warning), missing
        ones zero — silently for a ``<transformation>`` (``short="zero"``), with a warning
        elsewhere (DART reads uninitialised memory there; real files give 0)."""
        parts = tokens(node.text)
        if len(parts) > count:
            self.warn(node, f"<{node.tag}> has {len(parts)} numbers; DART reads the first "
                      f"{count}")
        elif len(parts) < count:
            if short == "error" or not parts:
                raise self.error(node, f"<{node.tag}> needs {count} numbers, got {len(parts)}")
            if short == "warn":
                self.warn(node, f"<{node.tag}> has {len(parts)} of {count} numbers; the rest "
                          "read as 0 (DART reads uninitialised memory there)")
        values = np.zeros(count)
        for i, token in enumerate(parts[:count]):
            values[i] = self.number(node, token)
        return values

    def child_number(self, node: Node, tag: str, default: float | None = None) -> float:
        """The number in ``<tag>``; required unless a ``default`` is given."""
        found = node.find(tag)
        if found is None:
            if default is None:
                raise self.error(node, f"<{node.tag}> needs a <{tag}> element")
            return default
        return self.number(found)

    def boolean(self, node: Node) -> bool:
        """``true``/``1`` or ``false``/``0``; anything else is false with a warning, as in DART."""
        raw = node.text.strip().lower()
        if raw in ("true", "1"):
            return True
        if raw in ("false", "0"):
            return False
        self.warn(node, f"<{node.tag}>: {node.text.strip()!r} is not a boolean; read as false "
                  "(as DART does)")
        return False

    def transform(self, node: Node | None) -> Array:
        """The 4×4 matrix of a ``<transformation>`` (x y z, then intrinsic XYZ angles)."""
        out = np.eye(4)
        if node is None:
            return out
        values = self.vector(node, 6, short="zero")
        out[:3, :3] = Rotation.from_euler("XYZ", values[3:]).as_matrix()
        out[:3, 3] = values[:3]
        return out

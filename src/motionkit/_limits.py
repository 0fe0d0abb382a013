"""Resource limits for reading untrusted files: one work budget and nesting checks.

A hostile file is small but makes a reader do a lot of work (YAML aliases and merge
keys expanded, array cells, frames created, output lines). Every such unit of work is
charged to a :class:`Budget` tied to the file's size: ``WORK_PER_BYTE`` units per byte
of the file plus a fixed ``WORK_FLOOR`` (so small honest files never hit it), never more
than ``WORK_CAP``. An honest file needs at most one unit per byte (a number or a YAML
node takes at least two bytes of text), so the factor leaves a margin while keeping
memory within 32 times the file's size plus 64 MB for float64 cells. A budget that only
counts text structure (YAML nodes and expanded aliases) uses no floor. Exceeding a
budget is a ``FormatError`` that names the budget.

Nesting is limited on the raw text, before a parser sees it: PyYAML's C composer
recurses once per level and segfaults near 30,000 levels, libyaml's flow parser is
quadratic in the flow depth, and our own walks over the result are recursive.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import yaml

from .errors import FormatError

PathLike = str | os.PathLike[str]

#: Units of work a file may cause per byte of its size.
WORK_PER_BYTE = 4
#: Units of work any file may cause, however small (64 MB of float64 cells).
WORK_FLOOR = 8 * 1024 * 1024
#: Units of work no file may exceed (2 GB of float64 cells).
WORK_CAP = 256 * 1024 * 1024
#: Deepest nesting of lists and mappings accepted in YAML or JSON text.
MAX_DEPTH = 128
#: Most bodies (links) of a model: the neutral model holds ~5 KB per body, and real robots
#: and characters have tens to hundreds. Readers of body models refuse more at the place.
MAX_BODIES = 10_000
#: Longest integer accepted in a text field (Python refuses int() past 4,300 digits).
MAX_INT_DIGITS = 18
#: Most bytes of one mesh file, and most vertices or triangles of one mesh, read for its
#: mass (MuJoCo itself caps an STL at 200,000 triangles; an OBJ or MSH polygon fan makes
#: a triangle from every two bytes of text). A bigger mesh is left out, with a warning.
MAX_MESH_BYTES = 64 << 20
MAX_MESH_VERTICES = 1_000_000
MAX_MESH_TRIANGLES = 1_000_000
#: Most mesh bytes one model may have read, and most triangles whose mass it may have
#: computed (each asset's scale and frame its own: many assets on one file compute each),
#: ~10 s of work; the meshes beyond are left out, with one warning.
MAX_MODEL_MESH_BYTES = 256 << 20
MAX_MODEL_MESH_TRIANGLES = 10_000_000

#: Bytes of arrays in memory a binary file (``.npz``, HDF5, Parquet) may expand to per
#: byte of its own size (compressed smooth motion data shrinks by 2-10x; zeros by much
#: more), over a floor of 64 MiB, summed over everything one read keeps.
ARRAY_BYTES_PER_BYTE = 64
#: Most array bytes one read of a single archive may expand to (2 GiB).
ARRAY_BYTES_CAP = 8 * WORK_CAP
#: Most array bytes one read of an episode dataset (HDF5, LeRobot) may expand to (4 GiB,
#: summed over its demos or data files).
DATASET_BYTES_CAP = 16 * WORK_CAP

_CHUNK = 1 << 22
_FAST_LOADER: Any = getattr(yaml, "CBaseLoader", yaml.BaseLoader)


class Budget:
    """Work left for one read; :meth:`charge` raises a FormatError naming the budget."""

    def __init__(self, name: str, path: PathLike | None, size: int, *,
                 per_byte: int = WORK_PER_BYTE, floor: int = WORK_FLOOR,
                 cap: int = WORK_CAP) -> None:
        self.name = name
        self.path = path
        self.limit = min(cap, floor + per_byte * max(size, 0))
        self.used = 0

    def charge(self, units: int, line: int | None = None, column: int | None = None) -> None:
        """Spend ``units``; refuse the file once the budget is exceeded."""
        self.used += units
        if self.used > self.limit:
            raise self.error(line, column)

    def allows(self, units: int) -> bool:
        """True if ``units`` more would still fit (nothing is charged)."""
        return self.used + units <= self.limit

    def error(self, line: int | None = None, column: int | None = None) -> FormatError:
        """The FormatError for exceeding this budget."""
        return FormatError(f"exceeds the {self.name} budget ({self.limit:,} units for this "
                           "file's size): refused as hostile or corrupt", self.path, line, column)


def array_budget(path: PathLike | None, size: int, cap: int = ARRAY_BYTES_CAP) -> Budget:
    """The budget of array bytes one read of a binary file of ``size`` bytes may allocate:
    every array read (after any conversion, e.g. to float64) is charged to it."""
    return Budget("array byte", path, size, per_byte=ARRAY_BYTES_PER_BYTE,
                  floor=8 * WORK_FLOOR, cap=cap)


def bracket_depth(text: bytes) -> int:
    """An upper bound of the flow (``[ {``) nesting depth of YAML or JSON text.

    Brackets inside strings and comments count too, and closing brackets never take the
    depth below zero, so no arrangement of text can hide depth from this scan.
    """
    data = np.frombuffer(text, dtype=np.uint8)
    level, lowest, deepest = 0, 0, 0
    for start in range(0, len(data), _CHUNK):
        chunk = data[start:start + _CHUNK]
        step = ((chunk == 0x5B) | (chunk == 0x7B)).astype(np.int32)
        step -= ((chunk == 0x5D) | (chunk == 0x7D))
        running = np.cumsum(step, dtype=np.int64) + level
        floor = np.minimum(np.minimum.accumulate(running), lowest)
        if running.size:
            deepest = max(deepest, int((running - floor).max()))
            level, lowest = int(running[-1]), int(floor[-1])
    return deepest


def check_bracket_depth(text: bytes, path: PathLike | None, what: str = "text") -> None:
    """Refuse text nested deeper than MAX_DEPTH in flow brackets."""
    if bracket_depth(text) > MAX_DEPTH:
        raise FormatError(f"{what} nested too deeply (more than {MAX_DEPTH} levels of "
                          "brackets)", path)


def check_yaml(text: bytes | str, path: PathLike | None, loader: Any = None,
               budget: Budget | None = None) -> None:
    """Refuse YAML nested deeper than MAX_DEPTH before anything composes it.

    The brackets are checked on the raw text first (libyaml's flow parser is quadratic
    in depth), then the event stream gives the exact depth of block nesting (``- - -``)
    without recursion (``loader`` defaults to the C base loader); every node and alias is
    charged to ``budget``. YAML syntax errors
    propagate as ``yaml.YAMLError`` for the caller to locate.
    """
    raw = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    check_bracket_depth(raw, path, "YAML")
    starts = (yaml.SequenceStartEvent, yaml.MappingStartEvent)
    ends = (yaml.SequenceEndEvent, yaml.MappingEndEvent)
    nodes = (yaml.ScalarEvent, yaml.AliasEvent, *starts)
    depth = 0
    parser = (loader or _FAST_LOADER)(text)
    try:
        while (event := parser.get_event()) is not None:
            if isinstance(event, nodes):
                if budget is not None:
                    budget.charge(1)
                if isinstance(event, starts):
                    depth += 1
                    if depth > MAX_DEPTH:
                        mark = event.start_mark
                        raise FormatError(f"YAML nested too deeply (more than {MAX_DEPTH} "
                                          "levels)", path, mark.line + 1 if mark else None,
                                          mark.column + 1 if mark else None)
            elif isinstance(event, ends):
                depth -= 1
    finally:
        parser.dispose()


def parse_int(text: str) -> int | None:
    """A decimal integer of at most MAX_INT_DIGITS digits, or None."""
    body = text.strip()
    digits = body[1:] if body[:1] in ("+", "-") else body
    if not digits or len(digits) > MAX_INT_DIGITS or not (digits.isascii() and digits.isdigit()):
        return None
    return int(body, 10)

#: The frame rates a file may state (per second): beyond these it is not a motion's rate.
MIN_FPS, MAX_FPS = 1e-3, 1e6

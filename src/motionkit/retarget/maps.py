"""Body maps: which source body drives which robot body, with what weights, offsets and
scales. Read from GMR's own ``ik_config`` JSON, as GMR reads it.

Offsets are GMR's: a target is ``(p, R(q ⊗ rot_offset))`` shifted by ``R(q ⊗ rot_offset) ·
(pos_offset − ground_height·ẑ)``, with ``q`` the source body's world orientation in GMR's
convention for its source (for a BVH: Z-up, left-multiplied only; see ``targets``).
Quaternions in the file are w, x, y, z (GMR's order); inside they are rotation matrices.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from typing import cast

import numpy as np
from numpy.typing import NDArray

from .._io import read_bytes
from .._limits import check_bracket_depth
from ..errors import ConversionError, FormatError, choices
from ..spatial import quaternion as quat

Array = NDArray[np.float64]


@dataclass(frozen=True)
class Task:
    """One robot body pulled toward one source body's (offset) pose."""

    robot: str
    source: str
    position_weight: float
    rotation_weight: float
    position_offset: Array
    rotation_offset: Array  # 3×3


#: GMR's BVH loader turns Y-up into Z-up on the left only (spec §2.1): its world
#: orientations are motionkit's times this on the right.
GMR_BVH_TURN = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]])


@dataclass(frozen=True)
class BodyMap:
    """A GMR-style retargeting configuration."""

    source_root: str
    robot_root: str
    ground_height: float
    #: the source height the scales are for (None: no height scaling)
    height_assumption: float | None
    scales: dict[str, float]
    stages: tuple[tuple[Task, ...], ...]
    #: the offsets every target gets (GMR takes table 1's for both stages)
    offsets: dict[str, Task]
    #: the constant right factor from motionkit's world body frames to the frames the
    #: offsets are written for (GMR's BVH maps: GMR_BVH_TURN; maps by name: identity)
    turn: Array = field(default_factory=lambda: np.eye(3))
    #: "gmr-bvh" for GMR's BVH ik_configs (only BVH sources), "motionkit" otherwise
    convention: str = "motionkit"


def same_names(source: list[str], robot: list[str], root: str | None = None) -> BodyMap:
    """Robot → robot: every body the two share by name follows its namesake (position and
    rotation, weight 10 as GMR weighs most tasks, no offset, no scaling); the root is the
    robot's first body."""
    shared = [name for name in robot if name in set(source)]
    root = root or robot[0]
    if root not in shared:
        raise ConversionError(f"the source has no body {root!r}, the robot's root: a body map "
                              f"by name needs it ({choices(root, source, 'bodies')})")
    tasks = tuple(Task(name, name, 10.0, 10.0, np.zeros(3), np.eye(3)) for name in shared)
    return BodyMap(root, root, 0.0, None, dict.fromkeys(shared, 1.0), (tasks,),
                   {task.source: task for task in tasks})


def read_json(path: str | os.PathLike[str]) -> object:
    """A JSON file of the retargeting options (maps, name maps, frame fixes): its nesting
    bounded before it is parsed, every fault a FormatError at its place."""
    data = read_bytes(path)
    check_bracket_depth(data, path, "JSON")
    try:
        document: object = json.loads(data)
    except json.JSONDecodeError as exc:
        raise FormatError(f"not JSON: {exc.msg}", path, exc.lineno, exc.colno) from None
    except UnicodeDecodeError:
        raise FormatError("not UTF-8 text", path) from None
    return document


def read_map(path: str | os.PathLike[str]) -> BodyMap:
    """GMR's ``ik_config`` JSON (e.g. ``bvh_to_g1.json``); a FormatError at its place."""
    document = read_json(path)
    if not isinstance(document, dict):
        raise FormatError("a body map is a JSON object", path)
    fields = _Fields(document, path)
    stages = []
    for number in (1, 2):
        if fields.flag(f"use_ik_match_table{number}"):
            stages.append(tuple(fields.tasks(f"ik_match_table{number}")))
    if not stages:
        raise FormatError("both use_ik_match_table1 and use_ik_match_table2 are false: no IK",
                          path)
    first = {task.source: task for task in fields.tasks("ik_match_table1")}
    scales = fields.numbers("human_scale_table")
    lacking = sorted(set(scales) - set(first))
    if lacking:
        raise FormatError(f"human_scale_table names {', '.join(map(repr, lacking[:5]))}, which "
                          "ik_match_table1 does not drive (GMR needs their offsets)", path)
    unscaled = sorted({task.source for stage in stages for task in stage} - set(scales))
    root = fields.text("human_root_name")
    if root not in scales or unscaled:
        names = ", ".join(map(repr, ([] if root in scales else [root]) + unscaled[:5]))
        raise FormatError(f"human_scale_table lacks {names} (GMR keeps only the bodies it "
                          "scales, the root among them)", path)
    assumption = fields.number("human_height_assumption")
    if assumption <= 0:
        raise FormatError("human_height_assumption must be a positive height", path)
    return BodyMap(root, fields.text("robot_root_name"), fields.number("ground_height"),
                   assumption, scales, tuple(stages), first, GMR_BVH_TURN, "gmr-bvh")


@dataclass
class _Fields:
    document: dict[str, object]
    path: str | os.PathLike[str]

    def get(self, key: str) -> object:
        if key not in self.document:
            raise FormatError(f"the body map has no {key!r}", self.path)
        return self.document[key]

    def text(self, key: str) -> str:
        value = self.get(key)
        if not isinstance(value, str):
            raise FormatError(f"{key!r} must be a name", self.path)
        return value

    def flag(self, key: str) -> bool:
        value = self.get(key)
        if not isinstance(value, bool):
            raise FormatError(f"{key!r} must be true or false", self.path)
        return value

    def number(self, key: str, value: object = None) -> float:
        value = self.get(key) if value is None else value
        if isinstance(value, bool) or not isinstance(value, (int, float)) \
                or not math.isfinite(value):
            raise FormatError(f"{key!r} must be a finite number", self.path)
        return float(value)

    def numbers(self, key: str) -> dict[str, float]:
        table = self.get(key)
        if not isinstance(table, dict):
            raise FormatError(f"{key!r} must map body names to numbers", self.path)
        return {str(name): self.number(f"{key}.{name}", value) for name, value in table.items()}

    def tasks(self, key: str) -> list[Task]:
        table = self.get(key)
        if not isinstance(table, dict):
            raise FormatError(f"{key!r} must map robot bodies to tasks", self.path)
        out = []
        for robot, entry in table.items():
            where = f"{key}.{robot}"
            if not (isinstance(entry, list) and len(entry) == 5 and isinstance(entry[0], str)):
                raise FormatError(f"{where}: [source body, position weight, rotation weight, "
                                  "[x, y, z], [w, x, y, z]]", self.path)
            position, rotation = self.vector(where, entry[3], 3), self.vector(where, entry[4], 4)
            weights = self.number(where, entry[1]), self.number(where, entry[2])
            if weights == (0.0, 0.0):
                continue  # GMR makes no task of it
            if min(weights) < 0 or np.linalg.norm(rotation) < 1e-9:
                raise FormatError(f"{where}: weights must be ≥ 0 and the quaternion nonzero",
                                  self.path)
            out.append(Task(str(robot), entry[0], *weights, position, _matrix_wxyz(rotation)))
        return out

    def vector(self, where: str, value: object, size: int) -> Array:
        if not (isinstance(value, list) and len(value) == size):
            raise FormatError(f"{where}: needs a list of {size} numbers", self.path)
        return np.array([self.number(where, item) for item in cast(list[object], value)])


def _matrix_wxyz(quaternion: Array) -> Array:
    """The rotation matrix of a (w, x, y, z) quaternion (normalised first)."""
    return quat.to_matrix(quat.wxyz_to_xyzw(quaternion / np.linalg.norm(quaternion)))

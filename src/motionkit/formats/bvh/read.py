"""BVH reading: a token parser for the hierarchy, one vectorised pass for the numbers.

The hierarchy is read token by token with an explicit stack (no recursion, bounded depth
and joint count), so line breaks, tabs, CRLF and blank lines are all just whitespace.
The MOTION numbers are checked for size against the file before anything is allocated,
then parsed in one call; only a file that fails the fast checks is walked again, token by
token, to name the line and column of what is wrong.

Model mapping (see ``specs/character-bridges.md`` §3.7): each BVH joint is a body at its
OFFSET, its rotation channels a joint (3 → ``euler`` in the channels' order, 2 →
``universal``, 1 → ``revolute``, 0 → ``weld``) whose coordinates are the channel angles in
radians; position channels of an inner joint add a body ``<name>__translation`` with a
``translational`` joint. The root's pose per frame is the ``root`` track, every joint's
coordinates the ``joints`` track, and the local rotation of each non-root joint the
``joint_rotations`` track (labelled by joint). Positions are scaled to metres and turned to
Z up; a rotation about a file axis becomes one about the matching signed model axis.
"""

from __future__ import annotations

import functools
import os
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

import numpy as np
from numpy.typing import NDArray

from ... import _accel
from ..._io import read_bytes
from ...errors import FormatError, option_hint, warn
from ...model import Body, Joint, Motion, Skeleton, Timeline, Track
from ..shared import number_scan
from ._axes import RADIANS, UNITS, basis, rate_of, unit_scale

Array = NDArray[np.float64]

#: More joints or deeper nesting than this is refused (real skeletons have < 300).
MAX_JOINTS = 10_000
MAX_DEPTH = 1_000
#: The shortest frame time read (1 MHz; capture systems run below 10 kHz): a smaller one is
#: a broken file whose rate would overflow what a timeline can hold.
MIN_FRAME_TIME = 1e-6
_TOKEN = re.compile(rb"\S+")
_CHANNEL = re.compile(r"([xyz])(position|rotation)", re.IGNORECASE)
#: Bytes that may appear in the MOTION numbers on the fast path.
_NUMBER_BYTES = np.zeros(256, dtype=bool)
_NUMBER_BYTES[list(b"0123456789+-.eE \t\r\n\f\v")] = True
_SPACE_BYTES = np.zeros(256, dtype=bool)
_SPACE_BYTES[list(b" \t\r\n\f\v")] = True
_BLANKS = frozenset(b" \t\r\n\f\v")
_END_SITE = -2  # an open End Site on the HIERARCHY stack


@dataclass
class Node:
    """One BVH joint as written: name, parent index, OFFSET, channel names, End Sites."""

    name: str
    parent: int
    offset: list[float] | None = None
    channels: list[tuple[int, str]] = field(default_factory=list)  # (axis, "position"/"rotation")
    end_sites: list[list[float]] = field(default_factory=list)
    at: int = 0  # where its CHANNELS keyword is


class _Tokens:
    """Whitespace-separated tokens of a byte string with their positions."""

    def __init__(self, raw: bytes, path: str | os.PathLike[str]) -> None:
        self.raw = raw
        self.path = path
        self.items = _TOKEN.finditer(raw)
        self.end = 0

    def where(self, pos: int) -> tuple[int, int]:
        line = self.raw.count(b"\n", 0, pos) + 1
        return line, pos - self.raw.rfind(b"\n", 0, pos)

    def error(self, message: str, pos: int | None = None) -> FormatError:
        line, column = self.where(self.end if pos is None else pos)
        return FormatError(message, self.path, line, column)

    def next(self, expected: str | tuple[str, ...]) -> tuple[str, int]:
        """The next token and where it starts; ``expected`` (a description, or keywords
        that may come) names what is missing when the file ends."""
        match = next(self.items, None)
        if match is None:
            raise self.error(f"file ends where {_described(expected)} should be")
        self.end = match.end()
        return match.group().decode("utf-8", "replace"), match.start()

    def keyword(self, *words: str) -> tuple[str, int]:
        text, pos = self.next(words)
        lower = text.lower()
        if lower not in _lowered(words):
            raise self.error(f"expected {_described(words)}, found {text!r}", pos)
        return lower, pos

    def number(self, what: str) -> float:
        text, pos = self.next(what)
        try:
            return float(text)
        except ValueError:
            raise self.error(f"{what} must be a number, found {text!r}", pos) from None


@functools.cache
def _lowered(words: tuple[str, ...]) -> frozenset[str]:
    """The keywords in lower case (once per set of keywords)."""
    return frozenset(word.lower() for word in words)


def _described(expected: str | tuple[str, ...]) -> str:
    """What was expected, in words: a description, or the keywords joined by "or"."""
    return expected if isinstance(expected, str) else " or ".join(repr(w) for w in expected)


def parse_hierarchy(tokens: _Tokens) -> list[Node]:
    """The joints of the HIERARCHY section in file order, up to and including MOTION."""
    tokens.keyword("HIERARCHY")
    walk = _Hierarchy(tokens)
    word, pos = tokens.keyword("ROOT")
    while True:
        if word in ("root", "joint"):
            walk.open_joint(word, pos)
        elif word == "end":
            walk.open_end_site()
        elif word == "offset":
            walk.offset()
        elif word == "channels":
            walk.channels(pos)
        elif word == "}" and walk.close(pos):
            word, pos = tokens.keyword("MOTION", "ROOT")
            if word == "root":
                raise tokens.error("a second ROOT: one skeleton per file only", pos)
            return walk.nodes
        word, pos = walk.next_keyword()


class _Hierarchy:
    """The HIERARCHY walk so far: the joints, their names, and the open blocks (joint
    indices, or ``_END_SITE``), one method per keyword."""

    def __init__(self, tokens: _Tokens) -> None:
        self.tokens = tokens
        self.nodes: list[Node] = []
        self.names: set[str] = set()
        self.stack: list[int] = []
        self.site: list[float] | None = None  # the OFFSET of the open End Site

    def next_keyword(self) -> tuple[str, int]:
        """The next keyword (lower case) and its position; in an End Site only OFFSET or }."""
        if self.stack[-1] == _END_SITE:
            return self.tokens.keyword("OFFSET", "}")
        return self.tokens.keyword("OFFSET", "CHANNELS", "JOINT", "End", "}")

    def open_joint(self, word: str, pos: int) -> None:
        """``ROOT``/``JOINT`` and its name (every token up to ``{``, joined by ``_``)."""
        tokens = self.tokens
        parts: list[str] = []
        while True:
            text, _ = tokens.next("a joint name and '{'")
            if text == "{":
                break
            parts.append(text)
        name = "_".join(parts)
        if not name:
            raise tokens.error(f"{word.upper()} without a name", pos)
        if name in self.names:
            raise tokens.error(f"joint name {name!r} repeats", pos)
        if len(self.nodes) >= MAX_JOINTS or len(self.stack) >= MAX_DEPTH:
            raise tokens.error(f"more than {MAX_JOINTS} joints or nesting deeper than "
                               f"{MAX_DEPTH}", pos)
        self.names.add(name)
        self.nodes.append(Node(name, self.stack[-1] if self.stack else -1))
        self.stack.append(len(self.nodes) - 1)

    def open_end_site(self) -> None:
        """``End Site {`` (a name before the brace is ignored)."""
        tokens = self.tokens
        tokens.keyword("Site")
        text, at = tokens.next("'{'")
        if text != "{":  # a named End Site: the name is ignored
            text, at = tokens.next("'{'")
            if text != "{":
                raise tokens.error(f"expected '{{' after End Site, found {text!r}", at)
        self.site = []
        self.stack.append(_END_SITE)

    def offset(self) -> None:
        """``OFFSET x y z`` of the open joint or End Site."""
        offset = [self.tokens.number("OFFSET value") for _ in range(3)]
        if self.stack[-1] == _END_SITE:
            self.site = offset
        else:
            self.nodes[self.stack[-1]].offset = offset

    def channels(self, pos: int) -> None:
        """``CHANNELS n`` and n distinct channel names."""
        tokens = self.tokens
        if self.stack[-1] == _END_SITE:
            raise tokens.error("an End Site has no CHANNELS", pos)
        node = self.nodes[self.stack[-1]]
        node.at = pos
        text, at = tokens.next("the channel count")
        if not text.isdigit() or int(text) > 6:
            raise tokens.error(f"channel count must be 0 to 6, found {text!r}", at)
        count = int(text)
        for k in range(count):
            text, at = tokens.next("a channel name")
            match = _CHANNEL.fullmatch(text)
            if match is None:
                raise tokens.error(f"CHANNELS {count}: channel {k + 1} is {text!r}, not one of "
                                   "Xposition … Zrotation", at)
            channel = ("xyz".index(match[1].lower()), match[2].lower())
            if channel in node.channels:
                raise tokens.error(f"joint {node.name!r} has two {text} channels", at)
            node.channels.append(channel)

    def close(self, pos: int) -> bool:
        """``}`` of a joint or End Site; True when it closes the root."""
        top = self.stack.pop()
        if top == _END_SITE:
            if not self.site:
                raise self.tokens.error("End Site without OFFSET", pos)
            self.nodes[self.stack[-1]].end_sites.append(self.site)
        elif self.nodes[top].offset is None:
            raise self.tokens.error(f"joint {self.nodes[top].name!r} has no OFFSET", pos)
        return not self.stack


def read(path: str | os.PathLike[str], *, unit: str | float = "cm", up: str = "y") -> Motion:
    """Read a BVH file into a Motion with its Skeleton (metres, Z up).

    ``unit``: the file's length unit (``cm``, ``m``, ``mm``, ``in``, ``ft``, ``cmu`` or
    metres per unit); ``up``: the file's up axis (``y`` or ``z``).
    """
    scale, axes = unit_scale(unit), basis(up)
    raw = read_bytes(path)
    tokens = _Tokens(raw, path)
    nodes = parse_hierarchy(tokens)
    word, frames_at = tokens.next("'Frames:'")
    if word.lower() == "frames":
        word, _ = tokens.next("':'")
        word = "frames:" if word == ":" else word
    if word.lower() != "frames:":
        raise tokens.error(f"expected 'Frames:', found {word!r}", frames_at)
    text, at = tokens.next("the frame count")
    if not text.isdigit():
        raise tokens.error(f"frame count must be a whole number, found {text!r}", at)
    frames = int(text)
    tokens.keyword("Frame")
    tokens.keyword("Time:")
    frame_time_text, at = tokens.next("the frame time")
    try:
        frame_time = float(frame_time_text)
    except ValueError:
        frame_time = float("nan")
    if not (np.isfinite(frame_time) and frame_time >= MIN_FRAME_TIME):
        raise tokens.error(f"frame time must be a number of at least {MIN_FRAME_TIME} s (1 MHz), "
                           f"found {frame_time_text!r}", at)
    width = sum(len(node.channels) for node in nodes)
    values = _numbers(tokens, tokens.end, frames, width, frames_at)
    finite = np.isfinite(values)
    if not finite.all():
        first = int(np.argwhere(~finite)[0][0])
        warn(f"{os.fspath(path)}: {int((~finite).sum())} channel values are NaN or infinite "
             f"(the first in frame {first}); they are kept as read")
    rate, snapped = rate_of(frame_time)
    meta: dict[str, object] = {"name": Path(path).stem,
                               "bvh": {"frame_time": frame_time_text, "rate_snapped": bool(snapped),
                                       "unit": unit, "up": up.lower()}}
    del raw, tokens  # the text is not needed any more: free it before building
    motion = build(nodes, values, Timeline.uniform(rate, frames), scale, axes, meta)
    if len(nodes) >= 10:
        _check_height(motion, unit, path)
    return motion


def _check_height(motion: Motion, unit: str | float, path: str | os.PathLike[str]) -> None:
    """A warning when a character (read with 10+ joints) measures outside 0.3–3 m at rest (its
    largest extent along an axis, End Sites included): the file's unit is probably not
    ``unit`` (spec §3.3). A body read from BVH sits at its parent's rest place moved by its
    joint's translation (no rest rotations), so the rest positions are running sums."""
    skeleton = motion.skeleton
    assert skeleton is not None
    rest: list[list[float]] = []
    points: list[list[float]] = []
    for body in skeleton.bodies:
        at = [float(x) for x in body.joint.parent_to_joint[:3, 3]]
        if body.parent >= 0:
            at = [a + b for a, b in zip(rest[body.parent], at, strict=True)]
        rest.append(at)
        points.append(at)
        for site in cast("list[list[float]]", body.attrs.get("end_sites", [])):
            points.append([a + b for a, b in zip(at, site, strict=True)])
    size = max(max(axis) - min(axis) for axis in zip(*points, strict=True))
    if size > 0 and not 0.3 <= size <= 3.0:
        likely = _likely_unit(size / unit_scale(unit))
        guess = (f"; it is probably {option_hint('unit', likely)} "
                 f"({size / unit_scale(unit) * UNITS[likely]:.3g} m)") if likely else ""
        warn(f"{os.fspath(path)}: the skeleton measures {size:.3g} m at rest when read in "
             f"unit {unit!r}{guess}; pass the file's unit ({option_hint('unit', 'UNIT')}: cm, m, "
             "mm, in, cmu or metres per unit)")


#: A person's height (m): the unit that makes a character closest to it is the likely one.
_PERSON = 1.7


def _likely_unit(extent: float) -> str | None:
    """The named unit that gives ``extent`` file units the height closest to a person's
    (a CMU file of about 30 units is 1.7 m in ``cmu``, 0.76 m in inches), if any makes it
    0.3-3 m."""
    fitting = {name: extent * scale for name, scale in UNITS.items()
               if name != "inch" and 0.3 <= extent * scale <= 3.0}
    if not fitting:
        return None
    return min(fitting, key=lambda name: abs(np.log(fitting[name] / _PERSON)))


def _numbers(tokens: _Tokens, start: int, frames: int, width: int, frames_at: int) -> Array:
    """The MOTION numbers as ``(frames, width)``; FormatError at the first problem.

    ``Frames`` × channels is checked against the bytes left (two per number at least)
    before anything is allocated: a file that cannot hold them goes to the token walk,
    which allocates only for the numbers really there and says how many rows it found.
    """
    data = memoryview(tokens.raw)[start:]
    expected = frames * width
    if not width and frames > len(data) + 1:  # rows without numbers: one line each at least
        raise tokens.error(f"Frames: {frames} but the file has {len(data) + 1} lines at most "
                           "for them", frames_at)
    if expected and expected > (len(data) + 1) // 2:  # each number takes 2 bytes at least
        return _slow_numbers(tokens, start, frames, width, frames_at)  # names what is missing
    values = np.empty((frames, width))
    scanned = number_scan.scan(tokens.raw, start, values)
    if scanned is not None:
        if scanned.stop < 0 and scanned.found == expected:
            return values
        if scanned.stop >= 0:  # the first token that is not a plain number: a bad one?
            _number(tokens, _TOKEN.match(tokens.raw, scanned.stop))
        return _slow_numbers(tokens, start, frames, width, frames_at)  # names what is wrong
    fast = _with_polars(tokens.raw, start, frames, width) if width else None
    if fast is not None:
        return fast
    codes = np.frombuffer(data, dtype=np.uint8)
    space = _SPACE_BYTES[codes]
    count = int(np.count_nonzero(~space[:1])) + int(np.count_nonzero(space[:-1] & ~space[1:]))
    del space
    if count == expected and bool(_NUMBER_BYTES[codes].all()):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            try:
                parsed = np.fromstring(bytes(data), sep=" ")  # C speed; strict by the count
            except (ValueError, DeprecationWarning):
                parsed = np.empty(0)
        if parsed.size == expected:
            return parsed.reshape(frames, width)
    return _slow_numbers(tokens, start, frames, width, frames_at)


def _with_polars(raw: bytes, start: int, frames: int, width: int) -> Array | None:
    """The numbers after ``start`` through polars' CSV reader when every row is one line
    of numbers with one blank between them (what writers write); None for anything else
    or any refusal."""
    polars = _accel.polars_for(len(raw) - start)
    if polars is None:
        return None
    end = len(raw)
    while end > start and raw[end - 1] in _BLANKS:
        end -= 1
    while start < end and raw[start] in _BLANKS:
        start += 1
    body = raw[start:end]  # the one copy
    if b"\r" in body:
        body = body.replace(b"\r\n", b"\n")
    if b"\t" in body:
        body = body.replace(b"\t", b" ")
    # frames × width numbers with exactly one blank or newline between neighbours
    if body.count(b"\n") != frames - 1 or body.count(b" ") != frames * (width - 1):
        return None
    if _UNUSUAL.search(body):  # digits polars would round otherwise than float()
        return None
    return _accel.spaced_table(polars, body, frames, width)  # column-major: no second copy


#: A run of 40 digits or an exponent of 4: no writer's number, and where polars' parse and
#: ``float()`` part (``0.000…01e1000000``: polars finite, ``float()`` inf).
_UNUSUAL = re.compile(rb"\d{40}|[eE][+-]?\d{4}")


def _slow_numbers(tokens: _Tokens, start: int, frames: int, width: int, frames_at: int) -> Array:
    """Token by token, naming the line and column of the first thing that is wrong."""
    found: list[float] = []
    line_start, line_count, bad_line = start, 0, None
    raw = tokens.raw
    for match in _TOKEN.finditer(raw, start):
        newline = raw.rfind(b"\n", line_start, match.start())
        if newline >= 0:
            if line_count not in (0, width) and bad_line is None:
                bad_line = (line_start, line_count)
            line_start, line_count = newline + 1, 0
        line_count += 1
        found.append(_number(tokens, match))
    if line_count not in (0, width) and bad_line is None:
        bad_line = (line_start, line_count)
    expected = frames * width
    if len(found) != expected and bad_line is not None:
        raise tokens.error(f"a row of {bad_line[1]} numbers; each row has {width} (one per "
                           "channel)", bad_line[0])
    if len(found) < expected:
        raise tokens.error(f"Frames: {frames} but the file has {len(found) // width} rows "
                           f"(and {len(found) % width} numbers more)", frames_at)
    if len(found) > expected:
        warn(f"{os.fspath(tokens.path)}: {len(found) - expected} numbers after the "
             f"{frames} frames that 'Frames:' announces were ignored")
    return np.array(found[:expected], dtype=np.float64).reshape(frames, width)


def _number(tokens: _Tokens, match: re.Match[bytes] | None) -> float:
    """The float of a MOTION token; FormatError where it is not a number."""
    assert match is not None
    try:
        return float(match.group())
    except ValueError:
        text = match.group().decode("utf-8", "replace")[:40]
        raise tokens.error(f"not a number: {text!r}", match.start()) from None


def build(nodes: list[Node], values: Array, timeline: Timeline, scale: float,
          axes: tuple[tuple[int, float], ...], meta: dict[str, object]) -> Motion:
    """The Motion and Skeleton of parsed joints and their ``(frames, width)`` numbers."""
    layout = _Layout(values, scale, axes)
    for node in nodes:
        layout.add(node)
    skeleton = Skeleton(str(meta.get("name") or "bvh"), layout.bodies)
    names = skeleton.dof_names
    joints = _coordinates(values, names, layout.sources)
    root = layout.root
    # the root's rotation straight into its pose, the others into their own array
    _joint_rotations(joints, names, layout.turns[:1], root[:, None, 3:])
    rotations = _joint_rotations(joints, names, layout.turns[1:],
                                 np.empty((len(joints), len(nodes) - 1, 4)))
    motion = Motion(skeleton=skeleton, meta=meta)
    motion.add(Track("root", "pose", root, timeline))
    motion.add(Track("joints", "value", joints, timeline, names))
    motion.add(Track("joint_rotations", "quaternion", rotations, timeline,
                     [node.name for node in nodes[1:]]))
    return motion


class _Layout:
    """The bodies of the BVH joints, added in file order, and where their numbers go: the
    root's pose, each coordinate's values column and factor, each joint's rotation axes."""

    def __init__(self, values: Array, scale: float, axes: tuple[tuple[int, float], ...]) -> None:
        self.values = values
        self.scale = scale
        self.axes = axes
        self.bodies: list[Body] = []
        self.body_of: list[int] = []  # BVH joint → its rotating body
        self.sources: dict[str, tuple[int, float]] = {}  # dof name → (values column, factor)
        self.turns: list[list[tuple[str, int, float]]] = []  # per joint: (dof, model axis, sign)
        self.root = np.zeros((values.shape[0], 7))
        self.column = 0

    def add(self, node: Node) -> None:
        """The body (and translation body) of one joint; the root's channels fill ``root``."""
        assert node.offset is not None
        offset = np.array(_model(node.offset, self.scale, self.axes))
        rot, position = self._channels(node)
        moved = offset.copy()
        for model in position:
            moved[model] = 0.0
        parent = self.body_of[node.parent] if node.parent >= 0 else -1
        place = np.eye(4)
        if node.parent < 0:  # the root
            self.root[:, :3] = moved
            for model, (col, factor) in position.items():
                self.root[:, model] = self.values[:, col] * factor
            place[:3, 3] = offset
        elif position:
            parent = self._translation_body(node.name, moved, position, parent)
        else:
            place[:3, 3] = offset
        joint = _rotation_joint(node.name, rot, place)
        body = Body(node.name, joint, parent)
        body.attrs["bvh_channels"] = [f"{'XYZ'[a]}{k}" for a, k in node.channels]
        if node.end_sites:
            body.attrs["end_sites"] = [_model(site, self.scale, self.axes)
                                       for site in node.end_sites]
        self.bodies.append(body)
        self.body_of.append(len(self.bodies) - 1)
        euler = joint.type == "euler"  # the sign in the coordinate, else in the axis
        for dof, (_, sign, col) in zip(joint.dofs, rot, strict=True):
            self.sources[dof.name] = (col, sign * RADIANS if euler else RADIANS)
        self.turns.append([(dof.name, model, 1.0 if euler else sign)
                           for dof, (model, sign, _) in zip(joint.dofs, rot, strict=True)])

    def _channels(self, node: Node) -> tuple[list[tuple[int, float, int]],
                                             dict[int, tuple[int, float]]]:
        """The joint's rotation channels as (model axis, sign, column) and its position
        channels as model axis → (column, factor)."""
        rot: list[tuple[int, float, int]] = []
        position: dict[int, tuple[int, float]] = {}
        for axis, kind in node.channels:
            model, sign = self.axes[axis]
            if kind == "rotation":
                rot.append((model, sign, self.column))
            else:
                position[model] = (self.column, sign * self.scale)
            self.column += 1
        return rot, position

    def _translation_body(self, name: str, moved: Array, position: dict[int, tuple[int, float]],
                          parent: int) -> int:
        """The ``<name>__translation`` body that carries an inner joint's position channels
        (at its OFFSET without the moved axes); returns its index."""
        place = np.eye(4)
        place[:3, 3] = moved
        move = Joint(f"{name}__translation", "translational", place)
        self.bodies.append(Body(move.name, move, parent))
        for model, dof in enumerate(move.dofs):
            self.sources[dof.name] = position.get(model, (-1, 0.0))
        return len(self.bodies) - 1


def _coordinates(values: Array, names: list[str], sources: dict[str, tuple[int, float]]
                 ) -> Array:
    """Every coordinate's column of ``values`` times its factor (0 where no channel
    moves it)."""
    picks = np.array([sources[name][0] for name in names], dtype=np.intp)
    factors = np.array([sources[name][1] for name in names])
    if not len(names):
        return np.zeros((values.shape[0], 0))
    joints = np.take(values, np.maximum(picks, 0), axis=1)  # one new array, scaled in place
    joints *= factors
    joints[:, picks < 0] = 0.0
    return joints


#: Values (frames × joints of a group) per block of the Euler-to-quaternion pass: its
#: ~20 temporaries then stay in the CPU's L2 cache (2-3× faster than 8192-frame blocks).
_BLOCK_VALUES = 16_384


def _joint_rotations(joints: Array, names: list[str], turns: list[list[tuple[str, int, float]]],
                     rotations: Array) -> Array:
    """Quaternions into ``rotations`` ``(frames, joints, 4)`` of the joints' rotation
    channels, built in blocks of frames (bounded temporaries) and groups of joints with the
    same axes."""
    where = {name: k for k, name in enumerate(names)}
    frames = joints.shape[0]
    for group in _groups(turns):
        columns = [[(where[dof], model, sign) for dof, model, sign in turns[k]] for k in group]
        run = group == list(range(group[0], group[-1] + 1))  # a run of joints: written in place
        step = max(16, _BLOCK_VALUES // len(group))
        for start in range(0, frames, step):
            block = joints[start:start + step]
            if run:
                _chain(columns, block, rotations[start:start + step, group[0]:group[-1] + 1])
            else:
                rotations[start:start + step, group] = _chain(
                    columns, block, np.empty((len(block), len(group), 4)))
    return rotations


def _groups(turns: list[list[tuple[str, int, float]]]) -> list[list[int]]:
    """Joints with the same rotation axes, in order (their quaternions are built together)."""
    groups: dict[tuple[int, ...], list[int]] = {}
    for k, turn in enumerate(turns):
        groups.setdefault(tuple(model for _, model, _ in turn), []).append(k)
    return list(groups.values())


def _chain(turns: list[list[tuple[int, int, float]]], joints: Array, out: Array) -> Array:
    """Quaternions into ``out`` ``(frames, joints, 4)`` (w >= 0) of joints that turn about
    the same model axes in the same order: the product of one rotation per (column, axis,
    sign), each multiplied on in closed form, ``(v, w) ⊗ (s·e_m, c) = (w·s·e_m + c·v +
    s·v × e_m, w·c − s·v_m)``, skipping components that are still zero; s and c come from
    one ``tan`` of a quarter angle (faster than ``sin`` and ``cos``)."""
    v: list[Array | None] = [None, None, None]
    w: Array | None = None
    for slot in range(len(turns[0])):
        m = turns[0][slot][1]
        a, b = (m + 1) % 3, (m + 2) % 3
        t = joints[:, [turn[slot][0] for turn in turns]]
        t *= np.array([0.25 * turn[slot][2] for turn in turns])
        np.tan(t, out=t)
        r = t * t
        r += 1.0
        np.divide(2.0, r, out=r)
        cos = r - 1.0  # cos(φ/2) = 2/(1+t²) − 1
        sin = r
        sin *= t  # sin(φ/2) = 2t/(1+t²)
        if w is None:
            v[m], w = sin, cos
            continue
        v_m, v_a, v_b = v[m], v[a], v[b]
        v[m] = w * sin if v_m is None else _mix(w, sin, cos, v_m, 1)
        v[a] = _mix(cos, v_a, sin, v_b, 1)
        v[b] = _mix(cos, v_b, sin, v_a, -1)
        w = w * cos if v_m is None else _mix(w, cos, sin, v_m, -1)
    if w is None:
        out[...] = (0.0, 0.0, 0.0, 1.0)
        return out
    flip = (w < 0).astype(np.float64)  # -1.0 where w < 0, else 1.0 (faster than np.where)
    flip *= -2.0
    flip += 1.0
    for k, part in enumerate([*v, w]):
        if part is None:
            out[..., k] = 0.0
        else:
            np.multiply(part, flip, out=out[..., k])
    return out


def _mix(c: Array, x: Array | None, s: Array, y: Array | None, sign: int) -> Array | None:
    """``c·x + sign·s·y`` where None stands for zero."""
    if x is None:
        return None if y is None else (s * y if sign > 0 else np.negative(s * y))
    if y is None:
        return c * x
    first = c * x
    second = s * y
    return np.add(first, second, out=first) if sign > 0 else np.subtract(first, second, out=first)


def _model(values: list[float], scale: float, axes: tuple[tuple[int, float], ...]) -> list[float]:
    out = [0.0, 0.0, 0.0]
    for axis, value in enumerate(values):
        model, sign = axes[axis]
        out[model] = sign * (value * scale)
    return out


def _rotation_joint(name: str, rot: list[tuple[int, float, int]], place: Array) -> Joint:
    """The joint of a BVH joint's rotation channels (model axes with signs)."""
    vectors = np.zeros((len(rot), 3))
    for k, (model, sign, _) in enumerate(rot):
        vectors[k, model] = sign
    if len(rot) == 0:
        return Joint(name, "weld", place)
    if len(rot) == 1:
        return Joint(name, "revolute", place, axes=vectors)
    if len(rot) == 2:
        return Joint(name, "universal", place, axes=vectors)
    order = "".join("xyz"[model] for model, _, _ in rot)
    return Joint(name, "euler", place, axis_order=order)

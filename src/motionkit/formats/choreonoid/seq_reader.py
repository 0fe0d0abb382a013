"""Reading Choreonoid body motion files (versions 1-4) into a Motion.

Follows Choreonoid's own reader (see specs/choreonoid-seq.md): top-level keys are
inherited by every component, snake_case keys are looked up before camelCase, v1
aliases are accepted, ``numFrames`` is informational. Where Choreonoid would silently
misbehave (crash, hang, drop data) this reader raises a FormatError or warns instead,
and it is lenient where that costs nothing (``XYZQXQYQZQW`` in any version).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import yaml
from numpy.typing import NDArray

from ..._io import read_bytes
from ..._limits import MAX_DEPTH, Budget, check_bracket_depth, check_yaml
from ...errors import FormatError, MotionkitError, warn
from ...model import Motion, Timeline, Track
from ...spatial.quaternion import from_rpy, wxyz_to_xyzw
from .seq_frames import FrameBlock, cut_frame_blocks, line_pattern, parse_block
from .yamlnodes import BaseLoader, Document

JOINT_CONTENTS = frozenset({"JointDisplacement", "MultiJointDisplacementSeq", "JointPosition"})
LINK_CONTENTS = frozenset({"LinkPosition", "MultiLinkPositionSeq"})
ZMP_CONTENTS = frozenset({"ZMP", "ZMPSeq"})
RELATIVE_ZMP_CONTENTS = frozenset({"RelativeZMP", "RelativeZmp"})
SE3_TYPES = frozenset({"MultiSE3Seq", "MultiSe3Seq", "MultiAffine3Seq"})
SE3_WIDTHS = {"XYZQWQXQYQZ": 7, "XYZQXQYQZQW": 7, "XYZRPY": 6}
EXTENSION_KEY = "motionkit"  # per-component facts Choreonoid ignores (shape, kind, start, attrs)
META_KEY = "motionkit_meta"  # top-level metadata Choreonoid ignores


# Line breaks YAML knows besides LF; with any of them, block line numbers could disagree.
_OTHER_LINE_BREAKS = (b"\xc2\x85", b"\xe2\x80\xa8", b"\xe2\x80\xa9")
#: Choreonoid's timed import may fill gaps with this many values per byte of file (48
#: bytes of memory per byte), plus a floor so short honest files with gaps still import.
FRAME_CELLS_PER_BYTE = 6
FRAME_CELLS_FLOOR = 65536


class _NotCanonical(Exception):
    """A cut-out frame block did not pass the fast path: reparse the whole file."""


@dataclass
class _Frames:
    values: NDArray[np.float64]
    position_of: Callable[[int], tuple[int, int]]  # frame index -> (line, column), 1-based


Entries = dict[str, tuple[yaml.Node, yaml.Node]]


def read_seq(path: str | os.PathLike[str], *, fast: bool = True, timed: str = "stamps") -> Motion:
    """Read a ``.seq`` file. ``fast=False`` forces the full-YAML path (same result)."""
    if timed not in ("stamps", "choreonoid"):
        raise MotionkitError('timed must be "stamps" or "choreonoid"')
    text = _normalise(read_bytes(path), path)
    if fast and b"\r" not in text and (text.isascii() or not any(
            mark in text for mark in _OTHER_LINE_BREAKS)):
        header, blocks = cut_frame_blocks(text)
        try:
            return _Reader(path, header, blocks, timed, len(text)).motion()
        except _NotCanonical:
            pass
    return _Reader(path, text, {}, timed, len(text)).motion()


def _normalise(raw: bytes, path: str | os.PathLike[str]) -> bytes:
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    if b"\x00" in raw[:4096]:
        raise FormatError("binary data, not a YAML body motion file", path)
    try:
        if not raw.isascii():
            raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise FormatError("text is not valid UTF-8", path, line) from None
    if b"\r" in raw:
        raw = raw.replace(b"\r\n", b"\n")
    if not raw.endswith(b"\n"):
        raw += b"\n"
    return raw


class _Reader:
    def __init__(self, path: str | os.PathLike[str], text: bytes,
                 blocks: dict[int, FrameBlock], timed: str, size: int) -> None:
        # nodes, expanded aliases, values and frames: bounds the work by the file's size
        self.budget = Budget(".seq work", path, size, floor=0)
        self.doc = Document(path, text, self.budget)
        self.blocks = blocks
        self.used_blocks: set[int] = set()
        self.timed_mode = timed
        self.size = size

    # -- document level -------------------------------------------------------------
    def motion(self) -> Motion:
        doc = self.doc
        if doc.root is None:
            raise FormatError("empty file, not a body motion", doc.path)
        top = self._entries(doc.root, "the top level of a body motion file")
        version = self._version(top)
        type_node = self._need(top, doc.root, "type")
        top_type = doc.text(type_node, '"type"')
        if top_type not in ("BodyMotion", "CompositeSeq"):
            raise doc.error(type_node, f'not a body motion: top-level type is "{top_type}" '
                            '(expected CompositeSeq, or BodyMotion in version 1)')
        expected = "BodyMotion" if version < 2 else "CompositeSeq"
        if top_type != expected:
            warn(f"{doc.path}: top-level type {top_type} in a version {version:g} file "
                 f"(Choreonoid expects {expected}); read anyway")
        components = doc.sequence(self._need(top, doc.root, "components"), '"components"')
        motion = Motion(meta={"choreonoid": {"version": version, "opaque": []}})
        if META_KEY in top:
            kept = self._json(top[META_KEY][1], META_KEY)
            motion.meta.update({k: v for k, v in kept.items() if k not in motion.meta})
        inherited = {k: v for k, v in top.items() if k not in ("components", META_KEY)}
        for node in components:
            merged = self._entries(node, "a component")
            for key, entry in inherited.items():
                merged.setdefault(key, entry)
            self._component(node, merged, motion)
        if self.used_blocks != set(self.blocks):
            raise _NotCanonical  # a cut-out block was not where the YAML structure put frames
        if not motion.tracks and not _opaque(motion):
            raise FormatError("the file has no components with motion data", doc.path)
        return motion

    def _entries(self, node: yaml.Node, what: str) -> Entries:
        doc = self.doc
        doc.mapping(node, what)  # checks type and duplicate keys
        assert isinstance(node, yaml.MappingNode)
        return {str(key.value): (key, value) for key, value in node.value}

    def _version(self, entries: Entries) -> float:
        found = self._find(entries, "format_version", "formatVersion")
        if found is None:
            return 1.0
        version = self.doc.number(found, "the format version")
        if not version < 5:
            raise self.doc.error(found, f"format version {version:g} is not supported "
                                 "(versions 1 to 4 are)")
        if version < 1:
            warn(f"{self.doc.path}:{found.start_mark.line + 1}: format version "
                 f"{version:g} read as version 1, as Choreonoid does")
            return 1.0
        return version

    def _find(self, entries: Entries, *names: str) -> yaml.Node | None:
        for name in names:
            if name in entries:
                return entries[name][1]
        return None

    def _need(self, entries: Entries, owner: yaml.Node, *names: str) -> yaml.Node:
        found = self._find(entries, *names)
        if found is None:
            raise self.doc.error(owner, f'key "{names[0]}" is missing')
        return found

    def _json(self, node: yaml.Node, what: str) -> dict[str, Any]:
        text = self.doc.text(node, what)
        check_bracket_depth(text.encode("utf-8", "surrogatepass"), self.doc.path, what)
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            raise self.doc.error(node, f"{what} is not valid JSON: {exc.msg}") from None
        except ValueError:  # Python's limit on integer digits (4,300)
            raise self.doc.error(node, f"{what} holds an integer too long to read") from None
        if not isinstance(value, dict):
            raise self.doc.error(node, f"{what} must hold a JSON object")
        return value

    # -- component level ------------------------------------------------------------
    def _component(self, node: yaml.Node, entries: Entries, motion: Motion) -> None:
        """One component: a track of ``motion``, or (not motion data) kept verbatim."""
        doc = self.doc
        version = self._version(entries)
        seq_type = doc.text(self._need(entries, node, "type"), '"type"')
        content_node = self._find(entries, "content", *(("purpose",) if version < 2 else ()))
        content = doc.text(content_node, '"content"') if content_node is not None else ""
        kind = _kind(seq_type)
        if kind is None:
            warn(f'{doc.path}:{node.start_mark.line + 1}: component type "{seq_type}" '
                 "is not motion data Choreonoid loads; kept verbatim for writing back")
            _opaque(motion).append(self._plain(node))
            return
        timed = self._timed(entries, version)
        rate = self._frame_rate(entries, node, timed)
        extension = self._extension(entries[EXTENSION_KEY][1]) if EXTENSION_KEY in entries else {}
        frames, parts, data = self._data(node, entries, kind, timed)
        name, attrs = self._naming(kind, content, seq_type, version, entries)
        attrs.update(extension.get("attrs", {}))
        collapse = reads_as_root(kind, content, parts, extension)
        data, timeline = self._timeline(node, frames, data, timed, rate, kind, extension)
        if collapse:
            name, data = "root", data[:, 0, :]
        name = self._unique_name(extension.get("name", name), motion, node, content or seq_type)
        try:
            data = _apply_extension(data, extension)
            track = Track(name, extension.get("kind", kind), data, timeline, None, attrs)
        except ValueError as exc:
            raise doc.error(node, f"{name}: {exc}") from None
        track.labels = self._labels(entries, track)
        motion.add(track)

    def _frame_rate(self, entries: Entries, node: yaml.Node, timed: bool) -> float | None:
        """The component's frame rate (positive and finite); required unless its frames
        carry their times."""
        doc = self.doc
        rate_node = self._find(entries, "frame_rate", "frameRate")
        rate = doc.number(rate_node, "the frame rate") if rate_node is not None else None
        if rate is not None and not (rate > 0 and np.isfinite(rate)):
            raise doc.error(rate_node, f"the frame rate must be a positive number, not {rate:g}")
        if rate is None and not timed:
            raise doc.error(node, 'key "frame_rate" (or "frameRate") is missing')
        return rate

    def _data(self, node: yaml.Node, entries: Entries, kind: str, timed: bool
              ) -> tuple[_Frames, int, NDArray[np.float64]]:
        """The frames (times first when timed), the part count, and the frame values
        (poses as ``(frames, parts, 7)``: position and quaternion x, y, z, w)."""
        parts, width, se3_format = self._parts(entries, node, kind)
        frames_key = entries.get("frames")
        if frames_key is None:
            raise self.doc.error(node, 'key "frames" is missing')
        frames = self._frames(frames_key, parts, width, timed, kind == "pose")
        self._check_frame_count(entries, len(frames.values), timed)
        data = frames.values[:, 1:] if timed else frames.values
        if kind == "pose":
            data = _poses(data.reshape(len(data), parts, width), se3_format)
        return frames, parts, data

    def _parts(self, entries: Entries, node: yaml.Node, kind: str) -> tuple[int, int, str]:
        """The part count, numbers per part and SE3 format (empty but for poses)."""
        doc = self.doc
        parts, width, se3_format = 1, 3, ""
        if kind != "vector3":
            parts_node = self._need(entries, node, "num_parts", "numParts")
            parts = doc.integer(parts_node, "the number of parts")
            if parts < 1 or parts > self.size:
                raise doc.error(parts_node, f"invalid number of parts: {parts}")
            width = 1
        if kind == "pose":
            format_node = self._need(entries, node, "SE3Format", "format")
            se3_format = doc.text(format_node, "the SE3 format")
            if se3_format not in SE3_WIDTHS:
                raise doc.error(format_node, f'SE3 format "{se3_format}" is not supported '
                                f"(use one of {', '.join(SE3_WIDTHS)})")
            width = SE3_WIDTHS[se3_format]
        return parts, width, se3_format

    def _check_frame_count(self, entries: Entries, frames: int, timed: bool) -> None:
        """A warning where ``numFrames`` disagrees with the frames (it is informational)."""
        count_node = self._find(entries, "num_frames", "numFrames")
        if (isinstance(count_node, yaml.ScalarNode) and not timed
                and (declared := str(count_node.value)).strip() != str(frames)):
            warn(f"{self.doc.path}:{count_node.start_mark.line + 1}: numFrames says "
                 f"{declared.strip() or '(nothing)'} but the component has {frames} frames "
                 "(numFrames is informational; the frames count)")

    def _timeline(self, node: yaml.Node, frames: _Frames, data: NDArray[np.float64],
                  timed: bool, rate: float | None, kind: str, extension: dict[str, Any]
                  ) -> tuple[NDArray[np.float64], Timeline]:
        """The data and its timeline: uniform, the frames' own times, or (``timed=
        "choreonoid"``) resampled by Choreonoid's import rule."""
        if not timed:
            assert rate is not None
            return data, Timeline.uniform(rate, len(data), float(extension.get("start", 0.0)))
        if self.timed_mode == "choreonoid":
            return self._choreonoid_import(frames.values[:, 0], data, rate, kind, node)
        return data, self._stamps(frames.values[:, 0], rate, frames.position_of)

    def _unique_name(self, name: str, motion: Motion, node: yaml.Node, what: str) -> str:
        """``name``, or where a track has it already ``name_2``, ``name_3``… (with a
        warning naming the component ``what``)."""
        if not motion.tracks.is_stored(name):
            return name
        taken = name
        name = next(f"{taken}_{n}" for n in range(2, len(motion.tracks) + 3)
                    if f"{taken}_{n}" not in motion.tracks)
        warn(f"{self.doc.path}:{node.start_mark.line + 1}: another {what} component; kept as "
             f"{name}")
        return name

    def _labels(self, entries: Entries, track: Track) -> list[str] | None:
        """Part labels (Choreonoid ignores them for body motions; a mismatch only warns)."""
        node = self._find(entries, "part_labels", "partLabels")
        if node is None:
            return None
        labels = [self.doc.text(n, "a part label") for n in self.doc.sequence(node, "part labels")]
        if len(labels) != track.part_count:
            warn(f"{self.doc.path}:{node.start_mark.line + 1}: {len(labels)} part labels "
                 f"for {track.part_count} parts; labels ignored")
            return None
        return labels

    def _extension(self, node: yaml.Node) -> dict[str, Any]:
        """The per-component ``motionkit`` key, with every field's type checked."""
        extension = self._json(node, EXTENSION_KEY)
        start = extension.get("start", 0.0)
        shape = extension.get("shape", [1])
        checks = [
            (isinstance(start, (int, float)) and not isinstance(start, bool)
             and np.isfinite(start), "start must be a finite number"),
            (isinstance(shape, list) and bool(shape)
             and all(isinstance(n, int) and not isinstance(n, bool) and n > 0 for n in shape),
             "shape must be a list of positive integers"),
            (extension.get("kind", "value") in ("value", "vector3", "pose", "quaternion"),
             "kind must be value, vector3, pose or quaternion"),
            (isinstance(extension.get("name", ""), str), "name must be text"),
            (isinstance(extension.get("attrs", {}), dict), "attrs must be a JSON object"),
        ]
        for ok, message in checks:
            if not ok:
                raise self.doc.error(node, f"{EXTENSION_KEY}: {message}")
        return extension

    def _plain(self, node: yaml.Node, path: frozenset[int] = frozenset(),
               in_block: bool = False) -> Any:
        """An opaque component as plain data, with cut-out frame blocks put back.

        Quoted scalars stay QuotedStr; aliases count against the file-size budget and a
        recursive alias is an error, so no file can make this loop or grow without bound.
        A cut-out block goes through the same walk as on the full-YAML path, so both paths
        give the same data; any error in it is left to the full path, which knows where.
        """
        mark = node.start_mark
        self.budget.charge(1, mark.line + 1, mark.column + 1)
        if id(node) in path:
            raise self.doc.error(node, "a YAML alias refers to itself")
        if len(path) >= MAX_DEPTH:
            raise self.doc.error(node, f"kept data nested deeper than {MAX_DEPTH} levels "
                                 "(YAML aliases?)")
        inner = path | {id(node)}
        if isinstance(node, yaml.SequenceNode):
            return [self._plain(item, inner, in_block) for item in node.value]
        if not isinstance(node, yaml.MappingNode):
            return self.doc.plain(node)
        tree: dict[str, Any] = {}
        for key, value in node.value:
            line = key.start_mark.line + 1  # inside a block, marks count from its start
            if (not in_block and line in self.blocks and isinstance(value, yaml.ScalarNode)
                    and value.value == ""):
                self.used_blocks.add(line)
                try:
                    check_yaml(self.blocks[line].text, self.doc.path, BaseLoader, self.budget)
                    block = yaml.compose(self.blocks[line].text, Loader=BaseLoader)
                    if block is None:  # a block holds at least one "- [" line
                        raise _NotCanonical
                    tree[str(key.value)] = self._plain(block, inner, True)
                except (yaml.YAMLError, FormatError):
                    raise _NotCanonical from None
            else:
                tree[str(key.value)] = self._plain(value, inner, in_block)
        return tree

    def _timed(self, entries: Entries, version: float) -> bool:
        flag = self._find(entries, "has_frame_time", "hasFrameTime")
        if flag is None:
            return False
        if version < 2:
            raise self.doc.error(flag, '"hasFrameTime" is not available in format version 1')
        return self.doc.boolean(flag, '"hasFrameTime"')

    def _naming(self, kind: str, content: str, seq_type: str, version: float,
                entries: Entries) -> tuple[str, dict[str, Any]]:
        attrs: dict[str, Any] = {}
        name = standard_name(kind, content) or seq_type
        if is_zmp(kind, content):
            if version < 2:
                relative = content in RELATIVE_ZMP_CONTENTS
            else:
                flag = self._find(entries, "is_root_relative", "isRootRelative")
                relative = content in RELATIVE_ZMP_CONTENTS or (
                    flag is not None and self.doc.boolean(flag, '"isRootRelative"'))
            attrs["root_relative"] = relative
        return name, attrs

    # -- frames ---------------------------------------------------------------------
    def _frames(self, frames_key: tuple[yaml.Node, yaml.Node], parts: int, width: int,
                timed: bool, nested: bool) -> _Frames:
        key, node = frames_key
        columns = parts * width + int(timed)
        line = key.start_mark.line + 1
        block = self.blocks.get(line)
        if block is not None:
            if not (isinstance(node, yaml.ScalarNode) and node.value == ""):
                raise _NotCanonical
            self.used_blocks.add(line)
            values = parse_block(block, line_pattern(parts, width, timed, nested), columns)
            if values is None:
                raise _NotCanonical
            column = block.text.index(b"[") + 1
            return _Frames(values, lambda i: (block.first_line + i, column))
        return self._slow_frames(node, parts, width, timed, nested, columns)

    def _slow_frames(self, node: yaml.Node, parts: int, width: int, timed: bool,
                     nested: bool, columns: int) -> _Frames:
        doc = self.doc
        if isinstance(node, yaml.ScalarNode) and node.value == "":
            raise doc.error(node, 'the "frames" key has no frame data')
        frames = doc.sequence(node, '"frames"')
        if not frames:
            raise doc.error(node, 'the "frames" key has no frame data')
        mark = node.start_mark
        self.budget.charge(len(frames) * columns, mark.line + 1, mark.column + 1)
        items_per_frame = (parts if nested else parts * width) + int(timed)
        values = np.empty((len(frames), columns), dtype=np.float64)
        for row, frame in enumerate(frames):
            items = doc.sequence(frame, "a frame")
            if len(items) != items_per_frame:
                raise doc.error(frame, f"a frame has {len(items)} values where "
                                f"{items_per_frame} are expected")
            numbers: list[float] = []
            if timed:
                numbers.append(doc.number(items[0], "the frame time"))
            for item in items[int(timed):]:
                if not nested:
                    numbers.append(doc.number(item, "a frame value"))
                    continue
                entry = doc.sequence(item, "an SE3 value")
                if len(entry) != width:
                    raise doc.error(item, f"an SE3 value has {len(entry)} numbers where "
                                    f"{width} are expected")
                numbers.extend(doc.number(x, "an SE3 value") for x in entry)
            values[row] = numbers
        return _Frames(values, lambda i: (frames[i].start_mark.line + 1,
                                          frames[i].start_mark.column + 1))

    def _stamps(self, times: NDArray[np.float64], rate: float | None,
                position_of: Callable[[int], tuple[int, int]]) -> Timeline:
        bad = np.flatnonzero(~np.isfinite(times))
        if bad.size:
            raise FormatError("frame times must be finite", self.doc.path,
                              *position_of(int(bad[0])))
        bad = np.flatnonzero(~(np.diff(times) > 0))
        if bad.size:
            i = int(bad[0]) + 1
            raise FormatError(f"frame time {times[i]:g} does not come after {times[i - 1]:g}; "
                              'read with timed="choreonoid" to apply Choreonoid\'s own import '
                              "rule (later samples overwrite)", self.doc.path, *position_of(i))
        return Timeline.stamped(times, rate, check=False)

    def _choreonoid_import(self, times: NDArray[np.float64], data: NDArray[np.float64],
                           rate: float | None, kind: str, node: yaml.Node
                           ) -> tuple[NDArray[np.float64], Timeline]:
        from ...ops.resample import choreonoid_import

        if rate is None:
            raise self.doc.error(node, "the frame rate for importing timed frames is not given")
        span = float(np.max(times)) * rate if times.size else 0.0
        cells = (span + 1) * max(int(np.prod(data.shape[1:])), 1)
        frames_budget = Budget("frames created", self.doc.path, self.size,
                               per_byte=FRAME_CELLS_PER_BYTE, floor=FRAME_CELLS_FLOOR)
        if not (np.isfinite(cells) and frames_budget.allows(int(cells))):
            raise self.doc.error(node, f"time stamps up to {np.max(times):g} s at {rate:g} Hz "
                                 f"exceed the {frames_budget.name} budget")
        try:
            frames = choreonoid_import(times, data, rate, kind)
        except ValueError as exc:
            raise self.doc.error(node, str(exc)) from None
        return frames, Timeline.uniform(rate, len(frames))


def _kind(seq_type: str) -> str | None:
    """The track kind of a component type; None for a type that is not motion data."""
    if seq_type in SE3_TYPES:
        return "pose"
    return {"MultiValueSeq": "value", "Vector3Seq": "vector3"}.get(seq_type)


def standard_name(kind: str, content: str) -> str:
    """The track name a component of this kind and content reads as (before any rename)."""
    if kind == "value" and content in JOINT_CONTENTS:
        return "joints"
    if kind == "pose" and content in LINK_CONTENTS:
        return "links"
    if is_zmp(kind, content):
        return "zmp"
    return content


def reads_as_root(kind: str, content: str, parts: int, extension: Mapping[str, object]) -> bool:
    """True for a component whose one link reads as ``root`` ``(frames, 7)``: decided by the
    component alone (the writer uses the same rule), never by a name the extension gives."""
    return kind == "pose" and content in LINK_CONTENTS and parts == 1 and "shape" not in extension


def _opaque(motion: Motion) -> list[object]:
    """The components kept verbatim: the list ``read`` starts in ``meta["choreonoid"]``."""
    return cast("dict[str, list[object]]", motion.meta["choreonoid"])["opaque"]


def is_zmp(kind: str, content: str) -> bool:
    """True for a ZMP component (whose ``root_relative`` the reader derives)."""
    return kind == "vector3" and (content in ZMP_CONTENTS or content in RELATIVE_ZMP_CONTENTS)


def _poses(entries: NDArray[np.float64], se3_format: str) -> NDArray[np.float64]:
    """SE3 entries in the file's layout → ``x y z qx qy qz qw``."""
    if se3_format == "XYZQXQYQZQW":
        return np.ascontiguousarray(entries)
    if se3_format == "XYZQWQXQYQZ":
        return np.concatenate([entries[..., :3], wxyz_to_xyzw(entries[..., 3:])], axis=-1)
    return np.concatenate([entries[..., :3], from_rpy(entries[..., 3:])], axis=-1)


def _apply_extension(data: NDArray[np.float64], extension: dict[str, Any]) -> NDArray[np.float64]:
    """Restore a shape motionkit recorded for a track Choreonoid has no native form for."""
    shape = extension.get("shape")
    if shape is None:
        return data
    target = (len(data), *(int(n) for n in shape))
    if int(np.prod(target)) != data.size:
        raise ValueError(f"recorded shape {list(shape)} does not fit {data.shape[1:]} values")
    return data.reshape(target)

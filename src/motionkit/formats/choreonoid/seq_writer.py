"""Writing a Motion as a Choreonoid body motion file, in the layout Choreonoid writes.

Versions 1-4 (2 by default, as the manual documents; 4 is what Choreonoid 2.1+ writes).
Frame values are lossless by default (the shortest text that reads back to the same
float64) or ``precision=N`` significant digits (9 gives byte parity with Choreonoid's
``%.9g``). Frame rates are exact by default; with a precision they are written the way
Choreonoid writes them (``%g`` at the top, ``%.9g`` in components), whatever N is, so a
small N never moves the rate (15 Hz stays 15). What Choreonoid has no
native place for (a quaternion track, a time offset, metadata) is kept in keys Choreonoid
ignores, so nothing is lost; what cannot be kept at all is refused unless ``lossy``.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from typing import Any, cast

import numpy as np
from numpy.typing import NDArray

from ..._io import atomic_write
from ...errors import ConversionError
from ...model import Motion, Track
from ...spatial.quaternion import xyzw_to_wxyz
from ..loss import Holds
from .seq_reader import (
    EXTENSION_KEY,
    META_KEY,
    RELATIVE_ZMP_CONTENTS,
    ZMP_CONTENTS,
    is_zmp,
    reads_as_root,
    standard_name,
)
from .yamlnodes import QuotedStr

V1_COMMENT = "# Body motion data set format version 1.0 defined by Choreonoid\n\n"
NONFINITE_MODES = ("error", "choreonoid", "yaml")
_PLAIN_SAFE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_ ./+()-]*")
# Characters YAML does not allow raw (or reads as line breaks) inside a quoted scalar.
_YAML_UNPRINTABLE = re.compile("[\x7f-\x9f\u2028\u2029\ufeff\ud800-\udfff\ufffe\uffff]")


def write_seq(path: str | os.PathLike[str], motion: Motion, *, version: int = 2,
              precision: int | None = None, nonfinite: str = "error") -> None:
    """Write ``motion`` to ``path`` atomically as a ``.seq`` file.

    The registry has already applied the loss rule (``holds``): what arrives here is
    written; stamped tracks in version 1 (allowed only with ``lossy``) are resampled.
    """
    if not _is_int(version) or version not in (1, 2, 3, 4):
        raise ConversionError(f"version must be 1, 2, 3 or 4 (Choreonoid body motion versions), "
                              f"not {version!r}")
    if precision is not None and not (_is_int(precision) and 1 <= precision <= 17):
        raise ConversionError(f"precision must be a whole number of significant digits from 1 "
                              f"to 17, not {precision!r}")
    if nonfinite not in NONFINITE_MODES:
        raise ConversionError(f"nonfinite must be one of {', '.join(NONFINITE_MODES)}")
    if version == 1 and any(not t.timeline.is_uniform for t in motion.tracks.values()):
        from ...ops.resample import resample

        motion = resample(motion, None, method="linear")
    writer = _Writer(version, precision, nonfinite)
    with atomic_write(path, "wb") as handle:
        for chunk in writer.chunks(motion):
            handle.write(chunk.encode("utf-8"))


def holds(version: int = 2) -> Holds:
    """What a .seq file holds: any track (Choreonoid's components, or kept in the
    ``motionkit`` extension keys), plain attributes and metadata, the labels; not a terrain,
    not empty tracks, float seconds only, and no time stamps in version 1. The skeleton is
    not lost: a .seq motion is defined relative to a body model it never contains."""
    return Holds(terrain=False, empty_tracks=False, ns_stamps=False, stamps=version != 1,
                 raw_rotations=True, repeated_stamps=False, namespace="choreonoid")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


class _Writer:
    def __init__(self, version: int, precision: int | None, nonfinite: str) -> None:
        self.version = version
        self.snake = version >= 4
        self.precision = precision
        self.nonfinite = nonfinite
        self.number = "%r" if precision is None else f"%.{precision}g"  # frame values only

    def key(self, snake: str) -> str:
        """A key in this version's spelling (snake_case from v4, camelCase before)."""
        if self.snake:
            return snake
        head, *rest = snake.split("_")
        return head + "".join(word.capitalize() for word in rest)

    # -- document -------------------------------------------------------------------
    def chunks(self, motion: Motion) -> Iterator[str]:
        components = self._components(motion)
        if not components:
            raise ConversionError("the motion has no tracks to write")
        main = next((t for name in ("links", "root", "joints")
                     if (t := motion.tracks.get(name)) is not None), components[0][1])
        top_rate = main.timeline.rate if main.timeline.is_uniform else _nominal_rate(main)
        assert top_rate is not None
        lines = [V1_COMMENT] if self.version == 1 else []
        lines += [
            f"type: {'BodyMotion' if self.version == 1 else 'CompositeSeq'}\n",
            "content: BodyMotion\n",
            f"{self.key('format_version')}: {self.version}\n",
            f"{self.key('frame_rate')}: {self._rate(top_rate, top=True)}\n",
            f"{self.key('num_frames')}: {main.frames}\n",
        ]
        meta = {k: v for k, v in motion.meta.items() if k not in ("source_format", "choreonoid")}
        if meta:
            lines.append(f"{META_KEY}: {_quote(json.dumps(meta, allow_nan=False))}\n")
        lines.append("components:\n")
        yield "".join(lines)
        for content, track in components:
            if isinstance(track, Track):
                yield self._track(content, track)
            else:
                yield self._opaque(track)

    def _components(self, motion: Motion) -> list[tuple[str, Any]]:
        """(content, track or opaque tree) in Choreonoid's order: links, joints, the rest by name."""
        contents = {1: ("JointPosition", "LinkPosition", "ZMP"),
                    3: ("MultiJointDisplacementSeq", "MultiLinkPositionSeq", "ZMPSeq")}
        joints_name, links_name, zmp_name = contents.get(
            self.version, ("JointDisplacement", "LinkPosition", "ZMP"))
        head: list[tuple[str, Any]] = []
        rest: list[tuple[str, Any]] = []
        tracks = dict(motion.tracks)
        links = tracks.pop("links") if _is_pose(tracks.get("links")) else None
        root = tracks.pop("root") if _is_pose(tracks.get("root")) else None
        if links is not None:
            head.append((links_name, links))
            if root is not None:
                rest.append(("root", root))
        elif root is not None:
            head.append((links_name, root))
        joints = tracks.pop("joints", None)
        if joints is not None:
            head.append((joints_name, joints))
        for name, track in tracks.items():
            if name == "zmp" and track.kind == "vector3" and track.data.ndim == 2:
                relative = bool(track.attrs.get("root_relative"))
                rest.append(("RelativeZMP" if relative and self.version == 1 else zmp_name, track))
            else:
                rest.append((name, track))
        kept = cast("dict[str, list[Any]]", motion.meta.get("choreonoid", {}))
        for tree in kept.get("opaque", []):
            rest.append((str(tree.get("content", tree.get("type", ""))), tree))
        rest.sort(key=lambda item: item[0].encode("utf-8"))
        return head + rest

    # -- one component --------------------------------------------------------------
    def _track(self, content: str, track: Track) -> str:
        """One component: its keys, the ``motionkit`` extension key where it needs one, and
        its frames."""
        data = np.asarray(track.data, dtype=np.float64)
        seq_type, parts, rows, extension = self._layout(content, track, data)
        relative_flag = content in ZMP_CONTENTS and bool(track.attrs.get("root_relative"))
        self._keep_name_and_attrs(extension, content, track, seq_type, parts, relative_flag)
        self._check_finite(track, rows)
        timeline = track.timeline
        if timeline.is_uniform and timeline.start != 0:
            extension["start"] = timeline.start
        out = self._keys(content, track, seq_type, parts, relative_flag, extension)
        times = None if timeline.is_uniform else timeline.times
        out.append(self._frames(rows, parts if seq_type == "MultiSE3Seq" else 0, times))
        return "".join(out)

    def _layout(self, content: str, track: Track, data: NDArray[np.float64]
                ) -> tuple[str, int, NDArray[np.float64], dict[str, Any]]:
        """The component type, its part count, one row of numbers per frame, and the
        extension entries (shape, kind) that bring the track's own layout back."""
        frames = track.frames
        extension: dict[str, Any] = {}
        if track.kind == "pose":
            seq_type = "MultiSE3Seq"
            native = data if data.ndim == 3 else data[:, None, :]
            is_links = content in ("LinkPosition", "MultiLinkPositionSeq")
            if data.ndim == 2 and not is_links:
                extension["shape"] = [7]
            elif data.ndim == 3 and data.shape[1] == 1 and is_links:
                extension["shape"] = [1, 7]  # one link, but not the root-only layout
            parts = native.shape[1]
            rows = np.concatenate([native[..., :3], xyzw_to_wxyz(native[..., 3:])], axis=-1)
            rows = rows.reshape(frames, parts * 7)
        elif track.kind == "vector3" and data.ndim == 2:
            seq_type, parts, rows = "Vector3Seq", 1, data
        else:
            seq_type = "MultiValueSeq"
            rows = data.reshape(frames, -1)
            parts = rows.shape[1]
            if track.kind != "value":
                extension["kind"] = track.kind
            if data.ndim != 2 or track.kind != "value":
                extension["shape"] = list(data.shape[1:])
        return seq_type, parts, rows, extension

    def _keep_name_and_attrs(self, extension: dict[str, Any], content: str, track: Track,
                             seq_type: str, parts: int, relative_flag: bool) -> None:
        """Add the track's name and attributes to the extension, where the reader would not
        derive them from the component."""
        component_kind = {"MultiSE3Seq": "pose", "Vector3Seq": "vector3"}.get(seq_type, "value")
        read_as = standard_name(component_kind, content)
        if reads_as_root(component_kind, content, parts, extension):
            read_as = "root"
        if read_as != track.name:
            extension["name"] = track.name
        derived: dict[str, Any] = {}  # what the reader derives needs no copy in the extension
        if is_zmp(component_kind, content):
            derived["root_relative"] = (content in RELATIVE_ZMP_CONTENTS
                                        or (relative_flag and self.version >= 2))
        attrs = {key: value for key, value in track.attrs.items()
                 if not (key in derived and value is derived[key])}
        if attrs:
            extension["attrs"] = attrs

    def _keys(self, content: str, track: Track, seq_type: str, parts: int, relative_flag: bool,
              extension: dict[str, Any]) -> list[str]:
        """The component's lines up to and including ``frames:``."""
        timeline = track.timeline
        rate = timeline.rate if timeline.is_uniform else _nominal_rate(track)
        assert rate is not None
        indent = "    "
        out = ["  -\n", f"{indent}type: {seq_type}\n", f"{indent}content: {_plain(content)}\n",
               f"{indent}{self.key('frame_rate')}: {self._rate(rate)}\n",
               f"{indent}{self.key('num_frames')}: {track.frames}\n"]
        if seq_type != "Vector3Seq":
            out.append(f"{indent}{self.key('num_parts')}: {parts}\n")
        if seq_type == "MultiSE3Seq":
            out.append(f"{indent}{'format' if self.version == 1 else 'SE3Format'}: XYZQWQXQYQZ\n")
        if relative_flag:
            out.append(f"{indent}{self.key('is_root_relative')}: true\n")
        if not timeline.is_uniform:
            out.append(f"{indent}{self.key('has_frame_time')}: true\n")
        if track.labels:
            labels = ", ".join(_plain(label) for label in track.labels)
            out.append(f"{indent}{self.key('part_labels')}: [ {labels} ]\n")
        if extension:
            out.append(f"{indent}{EXTENSION_KEY}: {_quote(json.dumps(extension))}\n")
        out.append(f"{indent}frames:\n")
        return out

    def _frames(self, rows: NDArray[np.float64], se3_parts: int,
                times: NDArray[np.float64] | None) -> str:
        number = self.number
        if se3_parts:
            entry = "[ " + ", ".join([number] * 7) + " ]"
            body = ", ".join([entry] * se3_parts)
        else:
            body = ", ".join([number] * rows.shape[1])
        if times is not None:  # stamps keep full precision: rounding could make them collide
            body = "%r, " + body
            rows = np.column_stack([times, rows])
        template = "      - [ " + body + " ]\n"
        text = "".join([template % tuple(row) for row in rows.tolist()])
        if self.precision is None or times is not None:  # 500.0 -> 500, as Choreonoid writes
            text = text.replace(".0,", ",").replace(".0 ]", " ]")
        if self.nonfinite == "yaml":
            text = re.sub(r"(?<![\w.])(-?)(inf|nan)\b", r"\1.\2", text)
        return text

    def _check_finite(self, track: Track, rows: NDArray[np.float64]) -> None:
        if self.nonfinite != "error":
            return
        finite = np.isfinite(rows).all(axis=1)
        times_ok = track.timeline.is_uniform or np.isfinite(track.timeline.times).all()
        if not finite.all() or not times_ok:
            frame = int(np.argmin(finite)) if not finite.all() else 0
            raise ConversionError(
                f"track {track.name!r} has non-finite values (first in frame {frame}); no "
                "spelling reads back in both Choreonoid and YAML tools: pass "
                'nonfinite="choreonoid" (nan/inf) or nonfinite="yaml" (.nan/.inf)')

    def _opaque(self, tree: dict[str, Any]) -> str:
        return "  -\n" + "".join(_emit_mapping(tree, 4))


    def _rate(self, rate: float, top: bool = False) -> str:
        """A frame rate: exact by default, else as Choreonoid writes it (never rounded to
        the frame values' precision)."""
        if self.precision is None:
            return _exact(rate)
        return ("%g" if top else "%.9g") % rate


def _exact(value: float) -> str:
    """The shortest text that reads back the same float (``500`` for 500.0)."""
    text = repr(float(value))
    return text[:-2] if text.endswith(".0") else text


def _nominal_rate(track: Track) -> float:
    """A frame rate for a stamped track (Choreonoid's timed import needs one)."""
    if track.timeline.rate:
        return float(track.timeline.rate)
    steps = np.diff(track.timeline.times)
    if steps.size == 0:
        return 1.0
    return float(f"{1.0 / float(np.median(steps)):.6g}")


def _is_pose(track: Track | None) -> bool:
    return track is not None and track.kind == "pose"


def _quote(text: str) -> str:
    """A YAML single-quoted scalar."""
    return "'" + text.replace("'", "''") + "'"


def _plain(text: str) -> str:
    """Text as a YAML scalar: raw when that reads back unchanged, else double-quoted."""
    if _PLAIN_SAFE.fullmatch(text) and not isinstance(text, QuotedStr) and text.strip() == text:
        return text
    quoted = json.dumps(text, ensure_ascii=False)
    return _YAML_UNPRINTABLE.sub(lambda match: f"\\u{ord(match.group()):04x}", quoted)


def _emit_mapping(tree: dict[str, Any], indent: int) -> Iterator[str]:
    pad = " " * indent
    for key, value in tree.items():
        if isinstance(value, dict):
            yield f"{pad}{_plain(key)}:\n"
            yield from _emit_mapping(value, indent + 2)
        elif isinstance(value, list) and any(isinstance(v, (list, dict)) for v in value):
            yield f"{pad}{_plain(key)}:\n"
            for item in value:
                if isinstance(item, dict):
                    yield f"{pad}  -\n"
                    yield from _emit_mapping(item, indent + 4)
                else:
                    yield f"{pad}  - {_flow(item)}\n"
        else:
            yield f"{pad}{_plain(key)}: {_flow(value)}\n"


def _flow(value: Any) -> str:
    if isinstance(value, list):
        return "[ " + ", ".join(_flow(v) for v in value) + " ]" if value else "[ ]"
    if isinstance(value, dict):
        items = ", ".join(f"{_plain(k)}: {_flow(v)}" for k, v in value.items())
        return "{ " + items + " }" if value else "{ }"
    return _plain(value if isinstance(value, str) else str(value))

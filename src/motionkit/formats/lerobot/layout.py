"""The fixed parts of a LeRobot v3.0 dataset: paths, the five default columns, and how a
feature's ``{dtype, shape, names}`` maps to Arrow types and to Hugging Face's schema."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa

from ...errors import FormatError, warn
from ...model import TrackKind

VERSION = "v3.0"
CHUNKS_SIZE = 1000
DATA_FILES_MB = 100
VIDEO_FILES_MB = 200
DATA_PATH = "data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet"
EPISODES_PATH = "meta/episodes/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet"
INFO = "meta/info.json"
STATS = "meta/stats.json"
TASKS = "meta/tasks.parquet"
#: The columns lerobot adds to every dataset, in its order (all shape [1]).
DEFAULTS = {"timestamp": "float32", "frame_index": "int64", "episode_index": "int64",
            "index": "int64", "task_index": "int64"}
#: Features that hold no numbers in the data files: they are listed, never decoded.
NOT_NUMERIC = frozenset({"video", "image", "string"})
#: motionkit's element names for the fixed-width track kinds (quaternions x y z w).
KIND_NAMES: dict[TrackKind, list[str]] = {
    "pose": ["x", "y", "z", "qx", "qy", "qz", "qw"],
    "vector3": ["x", "y", "z"],
    "quaternion": ["qx", "qy", "qz", "qw"],
}
#: The track that ``observation.state`` becomes (joint values by name).
STATE = "observation.state"
STATE_TRACK = "joints"
#: motionkit's own column of ``meta/episodes``: the episode's first frame time in seconds
#: on its source's clock (a bag's Unix time), since lerobot's ``timestamp`` restarts at 0 in
#: every episode. Written only where some episode does not start at 0; lerobot loads the
#: episodes table whole and ignores columns it does not use.
START_COLUMN = "motionkit/start_time"
#: The track of a multi-task episode that gives each frame's position in ``meta["tasks"]``.
TASK_TRACK = "task"
#: The fields of a path template (``data_path``, ``video_path``): ``{name}`` or
#: ``{name:0Nd}`` (N of 1-9 digits), as lerobot writes them; nothing else of str.format.
_FIELD = re.compile(r"\{([a-z_]+)(?::0([1-9])d)?\}")
#: Largest ``info.json`` read (a real one is a few KiB).
MAX_INFO_BYTES = 16 * 1024 * 1024
DTYPES = {"float32": pa.float32(), "float64": pa.float64(), "int64": pa.int64(),
          "int32": pa.int32(), "int16": pa.int16(), "int8": pa.int8(), "uint8": pa.uint8(),
          "bool": pa.bool_()}
NUMPY_DTYPES = {name: name for name in DTYPES}  # the same names in NumPy


def fill_template(template: str, fields: Mapping[str, int | str], key: str,
                  path: Path) -> str:
    """``template`` with its fields (only the names in ``fields``, each ``{name}`` or
    ``{name:0Nd}``) filled in; any other brace is a FormatError naming ``key`` of ``path``
    (the file's own template never reaches str.format and its whole mini-language)."""
    out, at = [], 0
    for match in _FIELD.finditer(template):
        out.append(_plain(template[at:match.start()], key, path))
        name, width = match.group(1), match.group(2)
        if name not in fields:
            raise FormatError(f"{key} {template[:80]!r} names the field {name!r} (only "
                              f"{', '.join(sorted(fields))})", path)
        value = fields[name]
        out.append(f"{value:0{width}d}" if width and isinstance(value, int) else str(value))
        at = match.end()
    out.append(_plain(template[at:], key, path))
    return "".join(out)


def _plain(text: str, key: str, path: Path) -> str:
    if "{" in text or "}" in text:
        raise FormatError(f"{key} holds a field other than {{chunk_index}} or "
                          "{chunk_index:03d}-style ones (a brace at "
                          f"{text[:40]!r})", path)
    return text


def arrow_type(dtype: str, width: int) -> pa.DataType:
    """The Arrow type lerobot stores a feature of ``dtype`` and shape ``[width]`` as."""
    element = DTYPES[dtype]
    return element if width == 1 else pa.list_(element, width)


def hf_feature(dtype: str, width: int) -> dict[str, object]:
    """The Hugging Face ``datasets`` description of that column (the schema metadata)."""
    value: dict[str, object] = {"dtype": dtype, "_type": "Value"}
    return value if width == 1 else {"feature": value, "length": width, "_type": "List"}


def hf_metadata(features: Mapping[str, tuple[str, int]]) -> dict[bytes, bytes]:
    """The ``huggingface`` schema metadata of a data file with these (dtype, width) columns."""
    described = {name: hf_feature(dtype, width) for name, (dtype, width) in features.items()}
    return {b"huggingface": json.dumps({"info": {"features": described}}).encode()}


def kind_of(names: Sequence[str] | None) -> TrackKind:
    """The track kind a feature's element names stand for (``value`` unless they are
    motionkit's pose, vector or quaternion names)."""
    for kind, expected in KIND_NAMES.items():
        if names is not None and list(names) == expected:
            return kind
    return "value"


def element_names(names: object, width: int, feature: str, path: Path) -> list[str] | None:
    """The labels of a feature's elements from ``features.<name>.names``, in any of the
    three shapes lerobot writes: a flat list, ``{"motors": [...]}`` or a name→index map.
    None where there are none; a FormatError where they are not text."""
    if names is None:
        return None
    if isinstance(names, dict) and len(names) == 1 and isinstance(next(iter(names.values())), list):
        names = next(iter(names.values()))
    elif isinstance(names, dict):
        if not all(isinstance(index, int) for index in names.values()):
            raise FormatError(f"features.{feature}.names maps names to something other than "
                              "element indices", path)
        order: dict[str, int] = names
        if sorted(order.values()) != list(range(len(order))):
            raise FormatError(f"features.{feature}.names maps names to indices other than "
                              f"0 … {len(order) - 1}, each once", path)
        names = sorted(order, key=lambda name: order[name])
    if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
        raise FormatError(f"features.{feature}.names must be a list of texts", path)
    if len(names) != width:
        warn(f"{os.fspath(path)}: features.{feature}.names has {len(names)} names for "
             f"{width} elements; they are called joint_0 … instead")
        return [f"joint_{i}" for i in range(width)]
    return list(names)


def numpy_dtype(dtype: str) -> np.dtype[np.generic]:
    """The NumPy type of a numeric feature dtype."""
    return np.dtype(NUMPY_DTYPES[dtype])

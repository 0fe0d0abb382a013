"""The two glTF containers: GLB (a 12-byte header, a JSON chunk padded with spaces, a BIN
chunk padded with zeros; ``specs/gltf-export.md`` §5) and ``.gltf`` JSON with the buffer
embedded as a base64 ``data:`` URI (one file, written atomically, no ``.bin`` beside it)."""

from __future__ import annotations

import base64
import json
import os
import struct

from ..._io import read_bytes
from ..._limits import ARRAY_BYTES_CAP, WORK_CAP, check_bracket_depth
from ...errors import FormatError

MAGIC = b"glTF"
_JSON, _BIN = 0x4E4F534A, 0x004E4942
_DATA_URI = "data:application/octet-stream;base64,"
#: Largest file read (the arrays it holds are at most this many bytes).
MAX_BYTES = ARRAY_BYTES_CAP


def _json_text(gltf: dict[str, object]) -> bytes:
    return json.dumps(gltf, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode()


def pack_glb(gltf: dict[str, object], blob: bytes) -> bytes:
    """A GLB file of the document and its buffer."""
    text = _json_text(gltf)
    text += b" " * (-len(text) % 4)
    chunks = struct.pack("<II", len(text), _JSON) + text
    if blob:
        padded = blob + b"\0" * (-len(blob) % 4)
        chunks += struct.pack("<II", len(padded), _BIN) + padded
    return MAGIC + struct.pack("<II", 2, 12 + len(chunks)) + chunks


def pack_gltf(gltf: dict[str, object], blob: bytes) -> bytes:
    """A ``.gltf`` JSON file with the buffer in a data URI."""
    if blob:
        buffers = [{"byteLength": len(blob), "uri": _DATA_URI + base64.b64encode(blob).decode()}]
        gltf = {**gltf, "buffers": buffers}
    return _json_text(gltf) + b"\n"


#: Most JSON values a document may hold: each costs a Python object of tens of bytes, so a
#: file of bare numbers would need ~10 times its size (motionkit's own: a few thousand).
MAX_JSON_VALUES = WORK_CAP // 64


def _document(text: bytes, path: str | os.PathLike[str]) -> dict[str, object]:
    check_bracket_depth(text, path, "glTF JSON")
    values = text.count(b",") + text.count(b"[") + text.count(b"{")
    if values > MAX_JSON_VALUES:
        raise FormatError(f"the glTF JSON holds about {values:,} values (more than "
                          f"{MAX_JSON_VALUES:,}); motionkit keeps arrays in the binary buffer, "
                          "so this is not a file it wrote", path)
    try:
        found = json.loads(text.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        line, column = (exc.lineno, exc.colno) if isinstance(exc, json.JSONDecodeError) else (None, None)
        raise FormatError(f"the glTF JSON is not valid ({exc})", path, line, column) from None
    if not isinstance(found, dict):
        raise FormatError("the glTF JSON is not an object", path)
    return found


def unpack(path: str | os.PathLike[str]) -> tuple[dict[str, object], bytes]:
    """The JSON document and binary buffer of a GLB or ``.gltf`` file (FormatError where the
    container is broken; external ``.bin`` buffers are not read)."""
    data = read_bytes(path, MAX_BYTES)
    if not data.startswith(MAGIC):
        gltf = _document(data, path)
        return gltf, _embedded(gltf, path)
    if len(data) < 20:
        raise FormatError("GLB header cut short", path)
    version, length = struct.unpack_from("<II", data, 4)
    if version != 2:
        raise FormatError(f"GLB version {version}; only glTF 2.0 is read", path)
    if length != len(data):
        raise FormatError(f"GLB header says {length} bytes, the file has {len(data)}", path)
    size, kind = struct.unpack_from("<II", data, 12)
    if kind != _JSON or 20 + size > len(data):
        raise FormatError("GLB's first chunk is not a whole JSON chunk", path)
    gltf = _document(data[20:20 + size], path)
    blob = b""
    at = 20 + size + (-size % 4)
    if at + 8 <= len(data):
        size, kind = struct.unpack_from("<II", data, at)
        if kind != _BIN or at + 8 + size > len(data):
            raise FormatError("GLB's second chunk is not a whole BIN chunk", path)
        blob = data[at + 8:at + 8 + size]
    return gltf, blob


def _embedded(gltf: dict[str, object], path: str | os.PathLike[str]) -> bytes:
    buffers = gltf.get("buffers") or []
    if not isinstance(buffers, list) or len(buffers) > 1:
        raise FormatError("expected at most one buffer", path)
    if not buffers:
        return b""
    uri = buffers[0].get("uri") if isinstance(buffers[0], dict) else None
    if not isinstance(uri, str) or not uri.startswith(_DATA_URI):
        raise FormatError("the buffer is not embedded as a base64 data URI (an external file "
                          "is not read)", path)
    try:
        return base64.b64decode(uri[len(_DATA_URI):], validate=True)
    except ValueError:
        raise FormatError("the buffer's data URI is not valid base64", path) from None

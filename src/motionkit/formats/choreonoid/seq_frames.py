"""The fast path for ``.seq`` frames: canonical one-line flow frames straight into NumPy.

Choreonoid writes every frame as one line, ``<indent>- [ a, b, c ]`` (SE3 frames nest
one bracket level deeper). Such blocks are cut out of the text before the header is
parsed as YAML (their lines are left blank, so line numbers stay true) and converted in
bulk. A block is accepted only if its *structure* — the text with every number character
removed — is exactly the expected bracket/comma pattern repeated once per line, and
NumPy's strict text parser then accepts every field. Anything else (comments, quotes,
block lists, multi-line frames, a malformed field) is handed to the full YAML path,
which gives the same arrays or a precise error.
"""

from __future__ import annotations

import io
import re
import string
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ... import _accel

_ITEM = re.compile(rb"( *- \[)")
# Everything a number may be made of (plus blanks and the list marker's dash).
_NUMBER_CHARS = (string.digits + string.ascii_letters + " \t+-.").encode()


@dataclass(frozen=True)
class FrameBlock:
    """A run of canonical frame lines under one ``frames:`` key."""

    first_line: int  # 1-based line number of the first frame
    lines: int
    text: bytes


def cut_frame_blocks(text: bytes) -> tuple[bytes, dict[int, FrameBlock]]:
    """Blank out canonical frame blocks; return the remaining text and the blocks.

    Blocks are keyed by the 1-based line of their ``frames:`` key. ``text`` must use LF
    line endings and end with a newline.
    """
    blocks: dict[int, FrameBlock] = {}
    pieces: list[bytes] = []
    done = 0
    line = 1  # line number at position ``done``
    for key_start, start in _frames_keys(text):
        item = _ITEM.match(text, start)
        if item is None:
            continue
        prefix = re.escape(item.group(1))
        run = re.compile(rb"(?:" + prefix + rb"[^\n]*\n)+").match(text, start)
        assert run is not None
        end = run.end()
        if not _block_ends_cleanly(text, end, len(item.group(1)) - 3):
            continue
        block_text = text[start:end]
        count = block_text.count(b"\n")
        key_line = line + text.count(b"\n", done, key_start)
        blocks[key_line] = FrameBlock(key_line + 1, count, block_text)
        pieces.append(text[done:start])
        pieces.append(b"\n" * count)
        done = end
        line = key_line + 1 + count
    pieces.append(text[done:])
    return b"".join(pieces), blocks


def _frames_keys(text: bytes) -> Iterator[tuple[int, int]]:
    """(start of the key line, start of the next line) for each ``<spaces>frames:`` line."""
    position = text.find(b"frames:")
    while position >= 0:
        line_start = text.rfind(b"\n", 0, position) + 1
        line_end = text.find(b"\n", position)
        if (not text[line_start:position].strip(b" ")
                and not text[position + 7 : line_end].strip(b" ")):
            yield line_start, line_end + 1
        position = text.find(b"frames:", line_end)


def _block_ends_cleanly(text: bytes, end: int, item_indent: int) -> bool:
    """True when what follows the block cannot be more frames of the same list."""
    for line in text[end : end + 4096].split(b"\n"):
        stripped = line.lstrip(b" ")
        if not stripped:
            continue
        indent = len(line) - len(stripped)
        if stripped.startswith(b"#") or indent > item_indent:
            return False
        return not (indent == item_indent and stripped.startswith(b"-"))
    return len(text) - end <= 4096  # only blank lines up to the end of the text


def line_pattern(parts: int, width: int, timed: bool, nested: bool) -> bytes:
    """The structure of one canonical frame line once number characters are removed."""
    head = b"," if timed else b""
    if nested:
        entry = b"[" + b"," * (width - 1) + b"]"
        return b"[" + head + b",".join([entry] * parts) + b"]\n"
    return b"[" + head + b"," * (parts * width - 1) + b"]\n"


def parse_block(block: FrameBlock, pattern: bytes, columns: int) -> NDArray[np.float64] | None:
    """The block as a ``(lines, columns)`` array, or None when it is not canonical."""
    if len(pattern) * block.lines > len(block.text):
        return None  # cannot match, and building the pattern would cost more than the text
    if block.text.translate(None, _NUMBER_CHARS) != pattern * block.lines:
        return None
    polars = _accel.polars_for(len(block.text))
    values = _parse_with_polars(polars, block, columns) if polars is not None else None
    if values is None:
        numbers = block.text.replace(b"- [", b"", block.lines).translate(None, b"[]")
        try:
            values = np.loadtxt(io.BytesIO(numbers), delimiter=",", dtype=np.float64, ndmin=2,
                                comments=None, encoding=None)
        except ValueError:
            return None
    if values.shape != (block.lines, columns):
        return None
    return values


def _parse_with_polars(polars: Any, block: FrameBlock, columns: int) -> NDArray[np.float64] | None:
    """Canonically spaced frames (``- [ a, b ]``) through polars; None for anything else.

    polars reads no blanks around numbers, so the text is reduced to one space between
    numbers. That is exact only when every comma is followed by one space and no other
    blank is left, which is checked by counting; a missing field (null) or any refusal
    also returns None, and the block goes to np.loadtxt.
    """
    text = block.text
    indent = text[: text.index(b"-")]
    body = (b"\n" + text).replace(b"\n" + indent + b"- [ ", b"\n")[1:]
    body = body.replace(b"[ ", b"").replace(b" ]", b"")
    separators = block.lines * (columns - 1)
    if body.count(b",") != separators or body.count(b", ") != separators:
        return None
    body = body.translate(None, b",")
    if body.count(b" ") != separators:
        return None
    table = _accel.spaced_table(polars, body, block.lines, columns)
    return None if table is None else np.ascontiguousarray(table)

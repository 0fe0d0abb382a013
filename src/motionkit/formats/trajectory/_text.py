"""Fast, strict reading of delimited numeric text shared by the trajectory formats.

A file is split into comment lines (``#`` first, anywhere) and data rows. Rows are parsed
straight into one float64 array, chunk by chunk, with NumPy; a chunk that does not parse
cleanly is re-read line by line only to name the first bad line and column. Nothing is
guessed: a ragged row, an empty field or a non-number is a FormatError.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ...errors import FormatError

PathLike = str | os.PathLike[str]

_BOM = b"\xef\xbb\xbf"
_CHUNK = 1 << 22  # bytes per parsing chunk: bounds the temporary memory
_SPACE_TABLE = {sep: bytes.maketrans(sep, b" ") for sep in (b",", b";", b"\t", b"|")}


@dataclass
class TextTable:
    """A text file split into comment lines and data rows.

    ``body`` holds the data rows joined by ``\\n`` (no blank or comment rows); row ``i``
    is line ``first_line + i`` of the file, or ``line_numbers[i]`` when comment or blank
    lines were interleaved.
    """

    path: PathLike
    comments: list[tuple[int, str]]
    body: bytes
    first_line: int
    line_numbers: NDArray[np.int64] | None
    rows: int

    def line_of(self, row: int) -> int:
        """1-based line number in the file of data row ``row``."""
        if self.line_numbers is not None:
            return int(self.line_numbers[row])
        return self.first_line + row

    def lines(self) -> list[bytes]:
        """The data rows as separate byte strings (slow path helpers only)."""
        return self.body.split(b"\n") if self.rows else []


def split_text(data: bytes, path: PathLike, *, inline_comments: bool = True) -> TextTable:
    """Separate comment lines (first non-blank character ``#``) and blank lines from data.

    Handles a UTF-8 BOM and CRLF line ends. With ``inline_comments`` a ``#`` inside a data
    row ends that row's data.
    """
    if data.startswith(_BOM):
        data = data[len(_BOM):]
    if b"\r" in data:
        data = data.replace(b"\r\n", b"\n")
    comments: list[tuple[int, str]] = []
    pos, line = 0, 1
    size = len(data)
    while pos < size:
        end = data.find(b"\n", pos)
        end = size if end < 0 else end
        text = data[pos:end].strip()
        if text and not text.startswith(b"#"):
            break
        if text:
            comments.append((line, _decode(text, path, line)))
        pos, line = end + 1, line + 1
    body = data[pos:].rstrip(b" \t\n")
    if not body:
        return TextTable(path, comments, b"", line, None, 0)
    if b"#" not in body and b"\n\n" not in body and b"\n \n" not in body:
        return TextTable(path, comments, body, line, None, body.count(b"\n") + 1)
    kept: list[bytes] = []
    numbers: list[int] = []
    for offset, raw in enumerate(body.split(b"\n")):
        text = raw.strip()
        if not text:
            continue
        if text.startswith(b"#"):
            comments.append((line + offset, _decode(text, path, line + offset)))
            continue
        if inline_comments and b"#" in raw:
            raw = raw[: raw.index(b"#")].rstrip()
        kept.append(raw)
        numbers.append(line + offset)
    return TextTable(path, comments, b"\n".join(kept), line,
                     np.asarray(numbers, dtype=np.int64), len(kept))


def _decode(text: bytes, path: PathLike, line: int) -> str:
    try:
        return text.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FormatError("not UTF-8 text", path, line, exc.start + 1) from None


def detect_delimiter(table: TextTable) -> bytes | None:
    """``,`` or ``;`` when the first data row has one, else None (any whitespace)."""
    first = table.body.split(b"\n", 1)[0]
    for candidate in (b",", b";", b"\t"):
        if candidate in first:
            return None if candidate == b"\t" else candidate
    return None


def _chunks(body: bytes) -> Iterator[tuple[int, int, int]]:
    """(start, end, first row) of newline-aligned pieces of ``body``."""
    start, row, size = 0, 0, len(body)
    while start < size:
        end = body.find(b"\n", min(start + _CHUNK, size))
        end = size if end < 0 else end
        yield start, end, row
        row += body.count(b"\n", start, end) + 1
        start = end + 1


def field_count(row: bytes, delimiter: bytes | None) -> int:
    """Number of fields in one row."""
    return len(row.split(delimiter) if delimiter else row.split())


def parse_numeric(table: TextTable, delimiter: bytes | None,
                  columns: int | None = None) -> NDArray[np.float64]:
    """All data rows as a ``(rows, columns)`` float64 array.

    ``delimiter`` None means runs of spaces/tabs. ``columns`` defaults to the field count
    of the first row; every row must have exactly that many.
    """
    if table.rows == 0:
        return np.empty((0, columns or 0))
    body = table.body
    if columns is None:
        columns = field_count(body.split(b"\n", 1)[0], delimiter)
    out = np.empty((table.rows, columns))
    trans = _SPACE_TABLE.get(delimiter) if delimiter else None
    for start, end, row in _chunks(body):
        chunk = body[start:end]
        count = chunk.count(b"\n") + 1
        if not np.all(_row_field_counts(chunk, delimiter) == columns):
            _locate(table, chunk, row, delimiter, columns)
        if trans is not None:
            chunk = chunk.translate(trans)
        values = _fromstring(chunk)
        if values is None or values.size != count * columns:
            _locate(table, body[start:end], row, delimiter, columns)
            raise FormatError("cannot parse the numbers of this block", table.path,
                              table.line_of(row))
        out[row:row + count] = values.reshape(count, columns)
    return out


def _row_field_counts(chunk: bytes, delimiter: bytes | None) -> NDArray[np.int64]:
    """Fields in each row of a chunk, counted with vectorised byte comparisons."""
    raw = np.frombuffer(chunk, dtype=np.uint8)
    newlines = np.flatnonzero(raw == 10)
    rows = newlines.size + 1
    if delimiter:
        marks = np.flatnonzero(raw == delimiter[0])
        return np.bincount(np.searchsorted(newlines, marks), minlength=rows) + 1
    blank = (raw == 32) | (raw == 9) | (raw == 10)
    starts = np.flatnonzero(~blank[1:] & blank[:-1]) + 1
    counts = np.bincount(np.searchsorted(newlines, starts), minlength=rows)
    counts[0] += int(not blank[0])
    return counts


def _fromstring(chunk: bytes) -> NDArray[np.float64] | None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            return np.fromstring(chunk, dtype=np.float64, sep=" ")
        except (ValueError, DeprecationWarning):
            return None


def _locate(table: TextTable, chunk: bytes, first_row: int, delimiter: bytes | None,
            columns: int) -> None:
    """Raise a FormatError naming the first bad row and field of ``chunk`` (if any)."""
    for index, raw in enumerate(chunk.split(b"\n")):
        line = table.line_of(first_row + index)
        fields = split_fields(raw, delimiter)
        if len(fields) != columns:
            raise FormatError(f"expected {columns} fields, found {len(fields)}", table.path,
                              line)
        for column, text in fields:
            check_number(text, table.path, line, column)


def split_fields(raw: bytes, delimiter: bytes | None) -> list[tuple[int, bytes]]:
    """(1-based column, stripped text) of each field of one row."""
    fields: list[tuple[int, bytes]] = []
    if delimiter:
        pos = 0
        for piece in raw.split(delimiter):
            lead = len(piece) - len(piece.lstrip())
            fields.append((pos + lead + 1, piece.strip()))
            pos += len(piece) + len(delimiter)
        return fields
    pos, size = 0, len(raw)
    while pos < size:
        while pos < size and raw[pos] in b" \t":
            pos += 1
        if pos >= size:
            break
        end = pos
        while end < size and raw[end] not in b" \t":
            end += 1
        fields.append((pos + 1, raw[pos:end]))
        pos = end
    return fields


def check_number(text: bytes, path: PathLike, line: int, column: int) -> float:
    """The float in ``text``, or a FormatError naming line and column."""
    try:
        if not text or b"_" in text:
            raise ValueError
        return float(text)
    except ValueError:
        shown = text.decode("utf-8", "replace") or "(empty)"
        raise FormatError(f"not a number: {shown!r}", path, line, column) from None


def parse_int_column(table: TextTable, delimiter: bytes | None,
                     column: int) -> NDArray[np.int64]:
    """One column of integers (e.g. nanosecond stamps), exactly, without going through float."""
    out = np.empty(table.rows, dtype=np.int64)
    for row, raw in enumerate(table.lines()):
        fields = raw.split(delimiter) if delimiter else raw.split()
        text = fields[column].strip()
        try:
            out[row] = int(text)
        except (ValueError, OverflowError):
            pos = split_fields(raw, delimiter)[column][0]
            raise FormatError(f"not an integer: {text.decode('utf-8', 'replace')!r}",
                              table.path, table.line_of(row), pos) from None
    return out

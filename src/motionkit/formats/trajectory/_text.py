"""Fast, strict, streaming reading of delimited numeric text for the trajectory formats.

The exact reading takes two passes over newline-aligned blocks: the first counts rows and
collects comment lines (``#`` first, anywhere) so headers placed anywhere are known before
data is interpreted; the second parses rows straight into the caller's preallocated
arrays. The whole file is never held in memory. Blocks are parsed by ``np.loadtxt``, or for
big files by polars (a dependency, whose correctly rounded parser is several times faster;
NumPy takes over where it is missing); a block neither takes cleanly goes to a checked path
that parses it or names the first bad line and column. Nothing is guessed: a ragged row, an
empty field or a non-number is a FormatError.

Big files are first read in one pass (``read_table``): only the leading comments are
scanned, arrays are sized from the first block's row density, and blocks are parsed as they
are read, two at a time. Anything that pass cannot take exactly (a comment or blank line
after the data starts, a lone CR, a bad number, more rows than estimated) abandons it for
the exact two passes, so both give the same answer.
"""

from __future__ import annotations

import bisect
import io
import os
import re
import warnings
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np
from numpy.typing import NDArray

from ... import _accel
from ..._io import open_binary
from ..._limits import Budget
from ...errors import FormatError
from ...model.timeline import ns_to_seconds
from ..shared.poses import UnitRows

PathLike = str | os.PathLike[str]
#: (line, [(1-based column, stripped text) of each field]) of rows, in order.
RowFields = list[tuple[int, list[tuple[int, bytes]]]]
#: A parse target: float64 numbers, or int64 for exact integers (nanosecond stamps).
Target = NDArray[np.float64] | NDArray[np.int64]

_BOM = b"\xef\xbb\xbf"
_BLOCK = 1 << 22  # bytes per block: bounds the temporary memory
_ODD_SPACES = (b"\x0b", b"\x0c", b"\x1c", b"\x1d", b"\x1e", b"\x1f")
_SPACE_TABLE = {sep: bytes.maketrans(sep, b" ") for sep in (b",", b";", b"\t", b"|")}
_BLANK_LINE = re.compile(rb"\n[ \t\r]*\n")
#: Headroom of the one-pass row estimate over the first block's row density (rows up to a
#: third shorter later on still fit; pages never written cost no memory).
_ROOM = 1.5
#: Blocks polars parses at once in the one-pass read: two calls keep both cores of a small
#: machine busy through each call's serial parts.
_PARALLEL_BLOCKS = 2
_Result = TypeVar("_Result")


class Rescan(Exception):
    """Raised inside the one-pass read when only the exact two-pass read can go on."""


@dataclass
class DecimalSeconds:
    """A column of decimal seconds that the polars parser also reads as exact integer
    nanoseconds, block by block (see :func:`decimal_nanoseconds`, which uses them)."""

    column: int
    #: Fields per row (set by parse_into).
    columns: int = 0
    #: Sized like parse_into's targets when the first block brings nanoseconds.
    ns: NDArray[np.int64] | None = None
    #: Whether every block was read so (False after a block the other paths parsed, or
    #: one whose stamps float64 holds or that are no decimals).
    whole: bool = True

    def keep(self, piece: NDArray[np.int64] | None, row: int, rows: int) -> None:
        if piece is None:
            self.whole = False
            return
        if self.ns is None:
            self.ns = np.empty(rows, dtype=np.int64)
        self.ns[row:row + piece.size] = piece


@dataclass
class _Block:
    offset: int
    size: int
    first_line: int
    filtered: bool
    rows: int = 0
    first_row: int = 0
    skip_first: bool = False


@dataclass
class TextTable:
    """A text file's comment lines and the layout of its data rows (data stays on disk)."""

    path: PathLike
    comments: list[tuple[int, str]] = field(default_factory=list)
    rows: int = 0
    blocks: list[_Block] = field(default_factory=list)
    #: False while only the head is known (one-pass read): ``rows`` is then an estimate
    #: that arrays are sized with, and parse_into reads the rest.
    complete: bool = True
    _first: tuple[int, bytes] | None = field(default=None, repr=False)

    def line_of(self, row: int) -> int:
        """1-based line number in the file of data row ``row``."""
        starts = [block.first_row for block in self.blocks]
        block = self.blocks[max(bisect.bisect_right(starts, row) - 1, 0)]
        index = row - block.first_row
        if not block.filtered:
            return block.first_line + index
        _, numbers, first_line = self._block_rows(block)
        return int(numbers[index]) if numbers is not None else first_line + index

    def _read(self, block: _Block) -> bytes:
        try:
            with open(self.path, "rb") as handle:
                handle.seek(block.offset)
                raw = handle.read(block.size)
        except OSError as exc:
            raise FormatError(f"cannot read: {exc.strerror or exc}", self.path) from None
        if block.offset == 0 and raw.startswith(_BOM):
            raw = raw[len(_BOM):]
        return raw.replace(b"\r\n", b"\n") if b"\r" in raw else raw

    def _block_rows(self, block: _Block) -> tuple[bytes, NDArray[np.int64] | None, int]:
        """A block's data rows joined by newlines, their line numbers when not consecutive,
        and the line of its first row when they are."""
        raw = self._read(block)
        first_line = block.first_line
        numbers: NDArray[np.int64] | None = None
        if not block.filtered:
            data = raw  # may end with a newline: parse_into drops it where it matters
        else:
            kept, lines = _filter(raw, block.first_line)
            data = b"\n".join(kept)
            numbers = np.asarray(lines, dtype=np.int64)
        if block.skip_first:  # a row of column names, kept as a comment (block filtered)
            data = data.partition(b"\n")[2]
            if numbers is not None:
                numbers = numbers[1:]
            else:
                first_line += 1
        return data, numbers, first_line

    def data_blocks(self) -> Iterator[tuple[bytes, int, NDArray[np.int64] | None, int]]:
        """(rows text, first row, line numbers or None, first line) of each block with data."""
        for block in self.blocks:
            if block.rows:
                data, numbers, first_line = self._block_rows(block)
                yield data, block.first_row, numbers, first_line

    def row_chunks(self) -> Iterator[bytes]:
        """The data rows in newline-aligned pieces of about ``_BLOCK`` bytes or one block
        (a one-pass table's single block runs to the end of the file and is read piecewise,
        never whole)."""
        for block in self.blocks:
            if not block.rows:
                continue
            if block.size <= 2 * _BLOCK:
                yield self._block_rows(block)[0]
                continue
            left = block.size
            with open_binary(self.path) as handle:
                handle.seek(block.offset)
                for _, raw, end in _raw_blocks(handle):
                    piece = bytes(raw[:min(end, left)])
                    yield piece.replace(b"\r\n", b"\n") if b"\r" in piece else piece
                    left -= len(piece)
                    if left <= 0:
                        break

    def lines(self) -> Iterator[tuple[int, bytes]]:
        """(line number, text) of every data row (for the slow, per-row paths)."""
        for data, _, numbers, first_line in self.data_blocks():
            for index, raw in enumerate(data.split(b"\n")):
                if raw.strip():
                    yield (int(numbers[index]) if numbers is not None
                           else first_line + index), raw

    def first_row(self) -> bytes:
        """The first data row (empty when there is none)."""
        return self.first_line()[1]

    def first_line(self) -> tuple[int, bytes]:
        """(line number, text) of the first data row; (0, b"") when there is none."""
        if self._first is None:
            self._first = self._find_first()
        return self._first

    def _find_first(self) -> tuple[int, bytes]:
        for data, _, numbers, first_line in self.data_blocks():
            pos = index = 0
            while pos <= len(data):
                end = data.find(b"\n", pos)
                end = len(data) if end < 0 else end
                if data[pos:end].strip():
                    return (int(numbers[index]) if numbers is not None
                            else first_line + index), data[pos:end]
                pos, index = end + 1, index + 1
        return 0, b""


def _filter(raw: bytes, first_line: int) -> tuple[list[bytes], list[int]]:
    """Data rows of a block without comment and blank lines; a ``#`` inside a row ends it."""
    kept: list[bytes] = []
    lines: list[int] = []
    pieces = raw.split(b"\n")
    if raw.endswith(b"\n"):
        pieces.pop()
    for offset, piece in enumerate(pieces):
        text = piece.strip()
        if not text or text.startswith(b"#"):
            continue
        if b"#" in piece:
            piece = piece[: piece.index(b"#")].rstrip()
        kept.append(piece.rstrip())
        lines.append(first_line + offset)
    return kept, lines


def _newlines(buffer: bytes | bytearray, start: int, end: int) -> int:
    """Newlines in ``buffer[start:end]`` (NumPy counts bytes about four times faster than
    bytes.count, and reads the buffer in place)."""
    view = np.frombuffer(buffer, dtype=np.uint8, count=end - start, offset=start)
    return int(np.count_nonzero(view == 10))


def _raw_blocks(handle: io.BufferedIOBase) -> Iterator[tuple[int, bytearray, int]]:
    """(file offset, buffer, size) of consecutive newline-aligned blocks of about ``_BLOCK``
    bytes (a longer line makes a longer block). One buffer is reused, so a block is valid
    only until the next one is read and must not be held (nor viewed) meanwhile."""
    buffer = bytearray(_BLOCK)
    offset = kept = 0
    while True:
        with memoryview(buffer) as view:
            got = handle.readinto(view[kept:])
        size = kept + got
        if not size:
            return
        end = buffer.rfind(b"\n", 0, size) + 1 if got else size  # all of it at the end
        if not end:  # no line end yet: read on, into a bigger buffer when this one is full
            if size == len(buffer):
                buffer.extend(bytes(len(buffer)))
            kept = size
            continue
        yield offset, buffer, end
        offset += end
        kept = size - end
        buffer[:kept] = buffer[end:size]


def _leading_comments(raw: bytearray, start: int, end: int, line: int,
                      table: TextTable) -> tuple[int, int]:
    """Skip comment and blank lines at ``raw[start:end]``, recording the comments; return
    the offset and line number of the first data line."""
    while start < end:
        stop = raw.find(b"\n", start, end)
        stop = end if stop < 0 else stop
        stripped = bytes(raw[start:stop].strip())
        if stripped and not stripped.startswith(b"#"):
            break
        if stripped:
            table.comments.append((line, _decode(stripped, table.path, line)))
        start, line = stop + 1, line + 1
    return start, line


def scan(path: PathLike, *, header_row: bool = False) -> TextTable:
    """First pass: comment lines, data-row count and block layout of a text file.

    With ``header_row`` a first data row that does not start with a number (a line of
    column names) is taken as a comment.
    """
    table = TextTable(path)
    line = 1
    with open_binary(path) as handle:
        for offset, raw, end in _raw_blocks(handle):
            start = len(_BOM) if offset == 0 and raw.startswith(_BOM) else 0
            if table.rows == 0:  # leading comment lines stay out of the data blocks
                start, line = _leading_comments(raw, start, end, line, table)
            if start >= end:
                continue
            block = _Block(offset + start, end - start, line, raw.find(b"#", start, end) >= 0,
                           first_row=table.rows)
            if block.filtered or raw.find(b"\r", start, end) >= 0:
                line += _scan_lines(bytes(raw[start:end]).replace(b"\r\n", b"\n"), line,
                                    block, table)
            else:
                block.rows = _newlines(raw, start, end) + (raw[end - 1] != 10)
                line += block.rows
            table.rows += block.rows
            table.blocks.append(block)
    if header_row and table.rows:
        line, first = table.first_line()
        if _is_names_row(first):
            table.comments.append((line, "#" + _decode(first.strip(), path, line)))
            dropped = 0
            for block in table.blocks:
                if dropped:
                    block.first_row -= dropped
                elif block.rows:  # filtered, so that the dropped first row is the names
                    block.skip_first, block.filtered = True, True
                    rows = table._block_rows(block)[1]
                    assert rows is not None
                    dropped, block.rows = block.rows - rows.size, rows.size  # blank lines too
            table.rows -= dropped
            table._first = None
    return table


def _is_names_row(row: bytes) -> bool:
    """True when a row does not start with a number (a row of column names)."""
    tokens = row.replace(b",", b" ").replace(b";", b" ").split()
    if not tokens:  # only delimiters: a bad data row, not names
        return False
    try:
        float(tokens[0])
    except ValueError:
        return True
    return False


def read_table(path: PathLike, read: Callable[[TextTable], _Result], *,
               header_row: bool = False) -> _Result:
    """``read(table)`` for a text file (``header_row`` as in ``scan``): in one pass when
    the file is big and polars is installed, else, or when that pass gives up, on the
    exact two-pass table.

    ``read`` is then run twice, so it must warn only after its parse_into call.
    """
    table = _scan_head(path, header_row)
    if table is not None:
        try:
            return read(table)
        except (Rescan, MemoryError):  # MemoryError: an estimate too big to allocate
            pass
        except FormatError:
            if table.complete:
                raise
    return read(scan(path, header_row=header_row))


def _scan_head(path: PathLike, header_row: bool) -> TextTable | None:
    """The leading comments and first data row of a file worth reading in one pass, with
    its row count estimated from the first block; None for the exact two-pass read (also
    when the first block already holds what the one pass would give up on)."""
    try:
        size = os.stat(path).st_size
    except OSError:
        return None  # the exact read reports it
    if _accel.polars_for(size) is None:
        return None
    table = TextTable(path, complete=False)
    line, names = 1, None
    with open_binary(path) as handle:
        for offset, raw, end in _raw_blocks(handle):
            start = len(_BOM) if offset == 0 and raw.startswith(_BOM) else 0
            while True:
                start, line = _leading_comments(raw, start, end, line, table)
                stop = raw.find(b"\n", start, end)
                stop = end if stop < 0 else stop
                row = bytes(raw[start:stop]).removesuffix(b"\r")  # a CRLF line end
                if start >= end or not (header_row and names is None and _is_names_row(row)):
                    break
                if b"#" in row or b"\r" in row:
                    return None  # scan cuts the comment off a names row
                try:
                    names = (line, "#" + row.strip().decode())
                except UnicodeDecodeError:
                    return None  # scan reports the first bad line of the whole file
                start, line = stop + 1, line + 1
            if start >= end:
                continue
            if (raw.find(b"#", start, end) >= 0 or b"\r" in row
                    or _BLANK_LINE.search(raw, start, end)):
                return None  # the stream would give up at once
            if names is not None:
                table.comments.append(names)  # last, as scan adds it
            lines = _newlines(raw, start, end) + (raw[end - 1] != 10)
            rows = int((size - offset - start) * lines / (end - start) * _ROOM) + 16
            table.rows, table._first = rows, (line, row)
            table.blocks.append(_Block(offset=offset + start, size=size - offset - start,
                                       first_line=line, filtered=False, rows=rows))
            return table
    return None


def _scan_lines(text: bytes, line: int, block: _Block, table: TextTable) -> int:
    """The line count of a block (CRLF already made LF); in a block with a ``#`` its rows
    are counted line by line and its comments recorded."""
    count = _newlines(text, 0, len(text)) + (not text.endswith(b"\n"))
    if not block.filtered:
        block.rows = count
        return count
    for index, piece in enumerate(text.split(b"\n")[:count]):
        stripped = piece.strip()
        if stripped.startswith(b"#"):
            table.comments.append((line + index, _decode(stripped, table.path, line + index)))
        elif stripped:
            block.rows += 1
    return count


def _decode(text: bytes, path: PathLike, line: int) -> str:
    try:
        return text.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FormatError("not UTF-8 text", path, line, exc.start + 1) from None


def detect_delimiter(table: TextTable) -> bytes | None:
    """``,`` or ``;`` when the first data row has one, else None (any whitespace)."""
    first = table.first_row()
    for candidate in (b",", b";"):
        if candidate in first:
            return candidate
    return None


def field_count(row: bytes, delimiter: bytes | None) -> int:
    """Number of fields in one row."""
    return len(row.split(delimiter) if delimiter else row.split())


def check_cells(table: TextTable, columns: int) -> None:
    """Refuse a table whose rows × columns (from the first row's width and the row count,
    before any array is sized) could not come from a file of this size: every value needs
    at least two bytes of text, so one cell per byte (plus a small floor) is generous."""
    try:
        size = os.stat(table.path).st_size
    except OSError:
        size = sum(block.size for block in table.blocks)
    Budget("table cells", table.path, size, per_byte=1, floor=65536).charge(
        table.rows * max(columns, 0), table.line_of(0) if table.blocks else None)


def parse_numeric(table: TextTable, delimiter: bytes | None,
                  columns: int | None = None) -> NDArray[np.float64]:
    """All data rows as a ``(rows, columns)`` float64 array (column-major).

    ``delimiter`` None means runs of spaces/tabs. ``columns`` defaults to the field count
    of the first row; every row must have exactly that many.
    """
    if columns is None:
        columns = field_count(table.first_row(), delimiter) if table.rows else 0
    check_cells(table, columns)
    out = np.empty((table.rows, columns), order="F")
    rows = parse_into(table, delimiter, columns, {i: out[:, i] for i in range(columns)})
    return out[:rows]


def parse_into(table: TextTable, delimiter: bytes | None, columns: int,
               targets: Mapping[int, Target], text_ok: frozenset[int] = frozenset(),
               text: RowFields | None = None, unit: UnitRows | None = None,
               decimal: DecimalSeconds | None = None) -> int:
    """Parse every row (``columns`` fields each) and write field ``i`` of row ``r`` to
    ``targets[i][r]``; other fields must be numbers too, except those in ``text_ok``
    (skipped columns, which may hold any text). An int64 target takes whole numbers,
    exactly (never through float). Returns the row count. With ``text`` every row takes
    the per-row path, which appends its (line, fields) to ``text``. With ``unit`` its
    quaternion columns are stored scaled to unit length. With ``decimal`` its column is
    also read as exact nanoseconds where polars parses it.

    Targets hold at least ``table.rows`` rows (an upper bound before parsing). A block
    whose rows do not all count right (blank or whitespace-only lines) is re-read line by
    line; the table's row count and row-to-line map are corrected as blocks are parsed.
    Writing straight into the caller's arrays keeps no intermediate table in memory. A
    head-only table (see read_table) is parsed in one pass, or Rescan is raised.
    """
    fast = _accel.polars_for(sum(block.size for block in table.blocks))
    ints = frozenset(i for i, target in targets.items() if target.dtype == np.int64)
    separator = _polars_separator(table, delimiter)
    if decimal is not None:
        decimal.columns = columns
    if not table.complete:
        if fast is None or text is not None:
            raise Rescan
        return _stream(table, fast, separator, columns, targets, text_ok, ints, unit, decimal)
    blocks = _BlockParser(table, delimiter, columns, targets, text_ok, text, unit, decimal, fast,
                          ints, separator)
    row = 0
    for block in table.blocks:
        block.first_row = row
        if block.rows:
            row += blocks.parse(block, row)
    table.rows = row
    return row


@dataclass
class _BlockParser:
    """The blocks of a complete table parsed into targets, as one parse_into call asks
    (its arguments, the polars module or None, the int64 columns, polars' separator)."""

    table: TextTable
    delimiter: bytes | None
    columns: int
    targets: Mapping[int, Target]
    text_ok: frozenset[int]
    text: RowFields | None
    unit: UnitRows | None
    decimal: DecimalSeconds | None
    fast: Any
    ints: frozenset[int]
    separator: bytes

    def parse(self, block: _Block, row: int) -> int:
        """Store a block's rows from row ``row`` on; their count."""
        data, numbers, first_line = self.table._block_rows(block)
        parsed = self._parse_table(data, block.rows, row)
        if parsed is not None:
            _store(parsed, self.targets, row, self.unit)
            return block.rows
        return self._parse_lines(block, data, numbers, first_line, row)

    def _parse_table(self, data: bytes, rows: int, row: int) -> list[list[Any]] | None:
        """The block's columns, by polars where it is used, else by ``np.loadtxt``; None
        when neither takes the block as a clean table (or when rows keep their text)."""
        decimal = self.decimal
        parsed: list[list[Any]] | None = None
        if self.fast is not None and self.text is None:
            found = _parse_polars(self.fast, data, self.separator, self.columns, rows,
                                  self.text_ok, self.ints, decimal.column if decimal else None)
            parsed = found[1] if found is not None else None
            if decimal is not None:
                decimal.keep(found[2] if found is not None else None, row, self.table.rows)
        elif decimal is not None:
            decimal.whole = False
        if parsed is None and self.text is None:
            parsed = _parse_numpy(data, self.delimiter, self.columns, rows, self.ints)
        return parsed

    def _parse_lines(self, block: _Block, data: bytes, numbers: NDArray[np.int64] | None,
                     first_line: int, row: int) -> int:
        """A block the table parsers did not take, line by line: without its blank lines
        (the block's row count and line map corrected), through one vectorised parse of
        the text where every row has its fields, else the checked per-row path."""
        delimiter, columns, targets = self.delimiter, self.columns, self.targets
        if data.endswith(b"\n"):
            data = data[:-1]
        if not np.all(_row_field_counts(data, delimiter) == columns) and not block.filtered:
            block.filtered = True
            data, numbers, first_line = self.table._block_rows(block)
        count = data.count(b"\n") + 1 if data else 0
        block.rows = count
        if not count:
            return 0

        def line_of(index: int) -> int:
            return int(numbers[index]) if numbers is not None else first_line + index

        values = None
        if self.text is None and not self.ints and np.all(_row_field_counts(data, delimiter)
                                                          == columns):
            trans = _SPACE_TABLE.get(delimiter) if delimiter else None
            values = _fromstring(data.translate(trans) if trans is not None else data)
        if values is None or values.size != count * columns:
            _parse_rows(self.table.path, data, line_of, delimiter, columns, targets,
                        self.text_ok, row, self.text)
        else:
            block_values = values.reshape(count, columns)
            for index, target in targets.items():
                target[row:row + count] = block_values[:, index]
        if self.unit is not None:
            self.unit.scale([targets[i][row:row + count] for i in self.unit.columns], targets,
                            row)
        return count


def _polars_separator(table: TextTable, delimiter: bytes | None) -> bytes:
    """The one separator byte polars splits on: the delimiter, or for whitespace-separated
    rows a tab when the first row is separated by tabs only, else a space. polars refuses
    rows that this does not split (runs of blanks, mixed tabs and spaces), so those go to
    the NumPy paths."""
    if delimiter:
        return delimiter
    first = table.first_row().strip() if table.rows else b""
    return b"\t" if b"\t" in first and b" " not in first else b" "


def _stream(table: TextTable, pl: Any, delimiter: bytes, columns: int,
            targets: Mapping[int, Target], text_ok: frozenset[int], ints: frozenset[int],
            unit: UnitRows | None, decimal: DecimalSeconds | None) -> int:
    """The one-pass parse of a head-only table (see read_table): blocks are parsed by
    polars as they are read, ``_PARALLEL_BLOCKS`` at a time, and stored in order; Rescan
    for any block that is not a clean table of numbers with one row per line, or for more
    rows than the targets hold."""
    block = table.blocks[0]
    row = 0
    pending: deque[Future[_Parsed | None]] = deque()

    def store_next() -> None:
        nonlocal row
        parsed = pending.popleft().result()
        if parsed is None or row + parsed[0] > table.rows:
            raise Rescan
        count, pieces, ns = parsed
        _store(pieces, targets, row, unit)
        if decimal is not None:
            decimal.keep(ns, row, table.rows)
        row += count

    with open_binary(table.path) as handle, ThreadPoolExecutor(_PARALLEL_BLOCKS) as pool:
        handle.seek(block.offset)
        for _, raw, end in _raw_blocks(handle):
            if raw.find(b"#", 0, end) >= 0:  # polars splits CRLF lines itself, refuses lone CRs
                raise Rescan
            with memoryview(raw) as view:
                data = bytes(view[:end])
            pending.append(pool.submit(_parse_polars, pl, data, delimiter, columns, None,
                                       text_ok, ints, decimal.column if decimal else None))
            if len(pending) > _PARALLEL_BLOCKS:
                store_next()
        while pending:
            store_next()
    block.rows = table.rows = row
    table.complete = True
    return row


def _store(parsed: list[list[Any]], targets: Mapping[int, Target], row: int,
           unit: UnitRows | None) -> None:
    """Copy parsed column pieces to their targets from row ``row`` on (``unit``'s columns
    scaled on the way)."""
    scaled = unit.columns if unit is not None else ()
    for index, target in targets.items():
        if index in scaled:
            continue
        start = row
        for piece in parsed[index]:
            target[start:start + piece.size] = piece
            start += piece.size
    if unit is not None:
        unit.scale([np.concatenate(parsed[i]) if len(parsed[i]) != 1 else parsed[i][0]
                    for i in scaled], targets, row)


_Parsed = tuple[int, list[list[Any]], NDArray[np.int64] | None]


def _parse_polars(pl: Any, data: bytes, delimiter: bytes, columns: int, rows: int | None,
                  text_ok: frozenset[int], ints: frozenset[int], decimal: int | None = None
                  ) -> _Parsed | None:
    """A block's row count and columns parsed by polars (``ints`` as Int64), each as its
    consecutive pieces (polars' chunks, read in place; none for ``text_ok`` columns), or
    None for anything less than a clean table of ``rows`` rows (any count when None): an
    error, a missing field, a blank line, a BOM. The NumPy paths then parse it or name the
    bad line. Column ``decimal`` is read as text and converted twice: to float64 and, where
    float64 cannot hold nanoseconds, to exact ones (the third item; else None)."""
    if data.startswith(_BOM):
        return None  # polars would drop it silently
    schema = {f"c{i}": pl.String if i in text_ok or i == decimal else pl.Int64 if i in ints
              else pl.Float64 for i in range(columns)}
    ns = None
    try:
        frame = pl.read_csv(data, has_header=False, separator=delimiter.decode(),
                            schema=schema, quote_char=None, truncate_ragged_lines=False,
                            empty_string_is_null=False)
        if decimal is not None:
            stamps = frame.get_column(f"c{decimal}")
            if delimiter != b" " and b" " in data:  # a blank polars left: strip it, as
                stamps = stamps.str.strip_chars_start(" ")  # its parse of numbers does
            seconds = stamps.cast(pl.Float64)
            if seconds.abs().max() >= FLOAT_NS_LIMIT:
                exact = stamps.cast(pl.Decimal(20, 9), strict=False).to_physical().cast(
                    pl.Int64, strict=False)
                ns = None if exact.null_count() else exact.to_numpy()
            frame = frame.with_columns(seconds)
    except Exception:  # any refusal by polars: let the strict path decide
        return None
    if (rows is not None and frame.height != rows) or any(frame.null_count().row(0)):
        return None  # a null is a missing field or a blank line
    if text_ok and data.count(delimiter) != frame.height * (columns - 1):
        return None  # polars pads a short row's text columns with "", not null
    return frame.height, [[] if i in text_ok else [chunk.to_numpy() for chunk in
                                                    series.get_chunks()]
                          for i, series in enumerate(frame.get_columns())], ns


def _parse_numpy(data: bytes, delimiter: bytes | None, columns: int, rows: int,
                 ints: frozenset[int]) -> list[list[Target]] | None:
    """A block's columns (one piece each) parsed by ``np.loadtxt``, which takes only exactly
    ``columns`` numbers a row (``ints`` parsed again as int64, exactly), or None: then the
    checked path parses it or names the bad line. Text with bytes on which loadtxt and
    those checks differ (non-ASCII, rare whitespace) goes there directly."""
    if not data.isascii() or any(space in data for space in _ODD_SPACES):
        return None
    text = data.decode("ascii")
    options: dict[str, Any] = {"comments": None, "quotechar": None, "ndmin": 2,
                               "delimiter": delimiter.decode() if delimiter else None}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # e.g. "input contained no data"
        try:
            values = np.loadtxt(io.StringIO(text), **options)
            if values.shape != (rows, columns):
                return None
            whole = (np.loadtxt(io.StringIO(text), dtype=np.int64, usecols=sorted(ints),
                                **options) if ints else None)
        except (ValueError, UserWarning):
            return None
    parsed: list[list[Target]] = [[column] for column in values.T]
    for index, column in zip(sorted(ints), whole.T if whole is not None else (), strict=True):
        parsed[index] = [column]
    return parsed


def _parse_rows(path: PathLike, data: bytes, line_of: Any, delimiter: bytes | None,
                columns: int, targets: Mapping[int, Target],
                text_ok: frozenset[int], first_row: int, text: RowFields | None) -> None:
    """The checked per-row path (text in skipped columns, or a block the fast paths did
    not take): number fields are converted and checked (whole numbers for int64
    targets), with line and column in any error; each row's fields go to ``text`` when
    given."""
    ints = frozenset(i for i, target in targets.items() if target.dtype == np.int64)
    for index, raw in enumerate(data.split(b"\n")):
        line = line_of(index)
        fields = split_fields(raw, delimiter)
        if len(fields) != columns:
            raise FormatError(f"expected {columns} fields, found {len(fields)}", path, line)
        if text is not None:
            text.append((line, fields))
        for number, (column, cell) in enumerate(fields):
            if number in text_ok:
                continue
            value = (_check_integer(cell, path, line, column) if number in ints
                     else check_number(cell, path, line, column))
            if number in targets:
                targets[number][first_row + index] = value


#: From this many seconds on float64 stamps lie more than 1 ns apart (2**23 s, 97 days).
FLOAT_NS_LIMIT = 2.0**23
_BLANK_RUN = re.compile(rb"[ \t]+")
_EDGE_BLANK = re.compile(rb"(?m)^ | $")


def decimal_nanoseconds(table: TextTable, delimiter: bytes | None, seconds: NDArray[np.float64],
                        read: DecimalSeconds) -> NDArray[np.int64] | None:
    """Column ``read.column``'s decimal seconds as exact integer nanoseconds, where float64
    cannot hold nanoseconds (some stamp of 2**23 s or more: Unix time, say); None where
    it can, or where a cell is not a decimal number (the float ``seconds`` stand then).

    float64 keeps about 16 digits, so ``1403636579.763555584`` would come back as
    ``…555527``: the column is read again as fixed-point decimals, which keeps every
    digit a file can write for a nanosecond clock. Each stamp must come back as the very
    float64 it was read as: a stamp with more decimals that tell floats apart (a float's
    shortest text near 2**23 s) leaves the float stamps standing. What parse_into ``read``
    already is used when it is whole; otherwise the column is read again here (None
    without polars).
    """
    if not seconds.size or not np.max(np.abs(seconds)) >= FLOAT_NS_LIMIT:
        return None  # also for a non-finite stamp: the float path names its line
    ns = (read.ns[:seconds.size] if read.whole and read.ns is not None
          else _read_decimal_column(table, delimiter, read.column, read.columns))
    if ns is None or ns.shape != seconds.shape or not np.array_equal(ns_to_seconds(ns), seconds):
        return None
    return ns


def _read_decimal_column(table: TextTable, delimiter: bytes | None, column: int,
                         columns: int) -> NDArray[np.int64] | None:
    """Column ``column`` of every row as decimal seconds in integer nanoseconds (read in
    pieces, two at a time), or None where polars refuses a piece or is missing."""
    try:
        import polars as pl
    except ImportError:
        return None
    schema = {f"c{i}": pl.Decimal(20, 9) if i == column else pl.String for i in range(columns)}
    pieces: list[NDArray[np.int64] | None] = []
    pending: deque[Future[NDArray[np.int64] | None]] = deque()
    with ThreadPoolExecutor(_PARALLEL_BLOCKS) as pool:
        for data in table.row_chunks():
            pending.append(pool.submit(_decimal_piece, pl, data, delimiter, schema, column))
            if len(pending) > _PARALLEL_BLOCKS:
                pieces.append(pending.popleft().result())
        pieces += [future.result() for future in pending]
    found = [piece for piece in pieces if piece is not None]
    if len(found) != len(pieces):
        return None
    return np.concatenate(found) if found else np.empty(0, dtype=np.int64)


def _decimal_piece(pl: Any, data: bytes, delimiter: bytes | None, schema: dict[str, Any],
                   column: int) -> NDArray[np.int64] | None:
    found = (_decimal_column(pl, data, delimiter or b" ", schema, column)
             if delimiter is None or len(delimiter) == 1 else None)
    if found is None:  # runs of blanks, tabs, blanks around a delimiter, a wide delimiter
        found = _decimal_column(pl, _single_spaced(data, delimiter), b" ", schema, column)
    return found


def _decimal_column(pl: Any, data: bytes, separator: bytes, schema: dict[str, Any],
                    column: int) -> NDArray[np.int64] | None:
    """Decimal column ``column`` of ``data`` as its integer nanoseconds, or None for
    anything polars refuses or leaves empty (not a decimal, past int64, a ragged or
    blank row)."""
    try:
        series = pl.read_csv(data, has_header=False, separator=separator.decode(),
                             schema=schema, columns=[column], quote_char=None).to_series()
        if series.null_count():
            return None
        nanoseconds: NDArray[np.int64] = series.to_physical().cast(pl.Int64, strict=True).to_numpy()
        return nanoseconds
    except (pl.exceptions.PolarsError, ValueError):
        return None


def _single_spaced(data: bytes, delimiter: bytes | None) -> bytes:
    """Rows whose fields are parted by single spaces, none at either end of a row."""
    if delimiter:
        data = data.replace(delimiter, b" ")
    return _EDGE_BLANK.sub(b"", _BLANK_RUN.sub(b" ", data))


def _row_field_counts(chunk: bytes, delimiter: bytes | None) -> NDArray[np.int64]:
    """Fields in each row of a chunk, counted with vectorised byte comparisons."""
    if not chunk:
        return np.zeros(1, dtype=np.int64)
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


def _check_integer(text: bytes, path: PathLike, line: int, column: int) -> int:
    """The int64 in ``text``, or a FormatError naming line and column."""
    try:
        if b"_" in text:
            raise ValueError
        value = int(text)
        if not -(1 << 63) <= value < 1 << 63:
            raise ValueError
        return value
    except ValueError:
        shown = text.decode("utf-8", "replace") or "(empty)"
        raise FormatError(f"not an integer: {shown!r}", path, line, column) from None

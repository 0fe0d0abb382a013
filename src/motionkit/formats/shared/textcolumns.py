"""Tables of numbers as text, fast and exact: fixed-point or shortest round-trip text per
column, written in chunks (by polars for big tables, byte-identical to Python's own
formatting). Shared by every text writer (trajectories, BVH)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import IO, Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ... import _accel
from ...model.timeline import NS_PER_SECOND

_ROWS_PER_CHUNK = 65536
Formatter = Callable[[list[float]], list[str]]
#: One column of a table: numbers (a formatter turns them to text), or text as it is.
Column = NDArray[np.generic] | Sequence[str]


class Fixed:
    """Fixed-point formatter with ``precision`` decimals: Python's correctly rounded
    ``{:.Nf}`` (ties to even). For big tables write_rows has polars write the same text."""

    def __init__(self, precision: int) -> None:
        self.precision = int(precision)
        self._pattern = f"{{:.{self.precision}f}}"

    def __call__(self, values: list[float]) -> list[str]:
        return [self._pattern.format(v) for v in values]


def exact(value: float) -> str:
    """One float as the shortest text that reads back to it (``repr``; ``0`` for ±0.0),
    for the model writers' attributes."""
    value = float(value)
    return "0" if value == 0.0 else repr(value)


def exact_vector(values: ArrayLike) -> str:
    """Floats as :func:`exact` text parted by single spaces (flattened)."""
    return " ".join(exact(v) for v in np.asarray(values, dtype=float).ravel())


def shortest(values: list[float]) -> list[str]:
    """Shortest text that reads back to the same float64 (full precision)."""
    return [repr(v) for v in values]


def integers(values: list[float]) -> list[str]:
    """Whole numbers; write_rows hands this formatter int64 values (nanosecond stamps), so
    nothing passes through float64 on the way."""
    return [str(int(v)) for v in values]


def ns_seconds(ns: list[float]) -> list[str]:
    """Exact decimal seconds from integer nanoseconds (``1403715524.907143168``); a
    formatter that write_rows hands int64 values, like ``integers``."""
    out = []
    for value in ns:
        sign = "-" if value < 0 else ""
        whole, frac = divmod(abs(int(value)), NS_PER_SECOND)
        out.append(f"{sign}{whole}.{frac:09d}")
    return out


def write_rows(handle: IO[str], columns: Iterable[tuple[Column, Formatter | None]],
               delimiter: str, rows: int) -> None:
    """Write ``rows`` lines; each column is (array or list of str, formatter or None).
    Big tables are formatted by polars, chunk by chunk, into the same bytes."""
    cols = list(columns)
    fast = _polars_writer(cols, rows)
    for start in range(0, rows, _ROWS_PER_CHUNK):
        stop = min(start + _ROWS_PER_CHUNK, rows)
        text = _polars_rows(fast, cols, start, stop, delimiter) if fast else None
        if text is None:
            texts = []
            for values, formatter in cols:
                piece = values[start:stop]
                if formatter is None:
                    texts.append(piece)
                else:
                    kind = np.int64 if formatter in _WHOLE else np.float64  # ns stay exact
                    texts.append(formatter(np.asarray(piece, dtype=kind).tolist()))
            text = "\n".join(map(delimiter.join, zip(*texts, strict=True))) + "\n"
        handle.write(text)


def _polars_writer(cols: list[tuple[Any, Formatter | None]], rows: int
                   ) -> tuple[Any, int | None] | None:
    """polars and the one precision of the Fixed number columns (None without any), when
    the table is big enough for polars to pay and every column is text, whole numbers,
    Fixed numbers or shortest numbers."""
    formatters = [formatter for _, formatter in cols]
    precisions = {f.precision for f in formatters if isinstance(f, Fixed)}
    known = all(f is None or f in _WHOLE or f is shortest or isinstance(f, Fixed)
                for f in formatters)
    if len(precisions) > 1 or not known:
        return None
    pl = _accel.polars_for(rows * len(cols) * 12)  # about the size of the text
    return (pl, precisions.pop() if precisions else None) if pl is not None else None


def _polars_rows(fast: tuple[Any, int | None], cols: list[tuple[Any, Formatter | None]],
                 start: int, stop: int, delimiter: str) -> str | None:
    """Rows ``start:stop`` as polars writes them: the same text as the formatters give
    (tested bit for bit), several times faster; None for non-finite Fixed numbers, which
    polars spells differently."""
    pl, precision = fast
    series = []
    for index, (values, formatter) in enumerate(cols):
        name, piece = f"c{index}", values[start:stop]
        if formatter is None:
            series.append(pl.Series(name, piece, dtype=pl.String))
        elif formatter is integers:
            series.append(pl.Series(name, np.asarray(piece, dtype=np.int64)))
        elif formatter is ns_seconds:
            series.append(_seconds_text(pl, name, np.asarray(piece, dtype=np.int64)))
        elif formatter is shortest:
            series.append(_shortest_text(pl, name, np.asarray(piece, dtype=np.float64)))
        else:
            numbers = np.asarray(piece, dtype=np.float64)
            if not np.isfinite(numbers).all():
                return None
            series.append(pl.Series(name, numbers))
    return str(pl.DataFrame(series).write_csv(
        None, include_header=False, separator=delimiter, float_precision=precision,
        float_scientific=False, quote_style="never", line_terminator="\n"))


def _shortest_text(pl: Any, name: str, numbers: NDArray[np.float64]) -> Any:
    """``repr`` of each number as a polars text column: polars' own shortest round-trip
    text equals ``repr`` where ``repr`` writes positional digits (0 and 1e-4 <= |x| < 1e16;
    tested); the numbers outside, which the two spell differently, get ``repr`` itself."""
    magnitude = np.abs(numbers)
    odd = np.flatnonzero(~((magnitude >= 1e-4) & (magnitude < 1e16) | (numbers == 0)))
    text = pl.Series(name, numbers).cast(pl.String)
    if odd.size:
        text = text.scatter(odd, [repr(v) for v in numbers[odd].tolist()])
    return text


def _seconds_text(pl: Any, name: str, ns: NDArray[np.int64]) -> Any:
    """``ns_seconds`` of each stamp as a polars text column, built column-wise."""
    if ns.size and ns.min() == np.iinfo(np.int64).min:  # no int64 absolute value
        return pl.Series(name, ns_seconds(ns.tolist()), dtype=pl.String)
    whole, frac = np.divmod(np.abs(ns), NS_PER_SECOND)
    sign = pl.Series(np.where(ns < 0, "-", ""))
    text = (sign + pl.Series(whole).cast(pl.String) + "."
            + pl.Series(frac).cast(pl.String).str.zfill(9))
    return text.rename(name)


#: Formatters of whole numbers: write_rows hands them int64 values, never floats.
_WHOLE = (integers, ns_seconds)

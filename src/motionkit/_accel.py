"""Acceleration: the compiled extensions, and polars' CSV reader for big blocks of numbers.

Every compiled extension (``setup.py``) is optional, so that an install without a C
compiler still works: :func:`compiled` gives it, or None, and each caller then takes its
NumPy or Python path (the tests hold both paths to the same results).

polars parses numbers 3-5x faster than NumPy's text readers and, like them, rounds
correctly; readers use it only where it pays for its import (~0.15 s): for big inputs,
or at once when the program has imported polars already. polars is a dependency, but every
caller falls back to its strict NumPy path when polars is missing (a platform without its
wheels) or refuses a block, and the tests check that both paths give bit-identical arrays.
"""

from __future__ import annotations

import importlib
import sys
from types import ModuleType
from typing import Any

import numpy as np
from numpy.typing import NDArray


def compiled(name: str) -> ModuleType | None:
    """The compiled extension module ``name`` (its full dotted name), or None where it was
    not built."""
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


#: Inputs at least this big use polars when it is installed.
FAST_MIN_BYTES = 8 << 20


def polars_for(size: int) -> Any | None:
    """The polars module if it is installed and worth using for ``size`` bytes, else None."""
    if size < FAST_MIN_BYTES and "polars" not in sys.modules:
        return None
    try:
        import polars
    except ImportError:
        return None
    return polars


def spaced_table(polars: Any, body: bytes, rows: int, columns: int) -> NDArray[np.float64] | None:
    """``rows`` × ``columns`` numbers separated by single blanks and newlines, parsed by
    polars; None when polars refuses them or the shape is not that (the caller's strict
    NumPy path then decides). The caller has checked the separators already."""
    schema = {f"c{i}": polars.Float64 for i in range(columns)}
    try:
        table = polars.read_csv(body, has_header=False, separator=" ", schema=schema,
                                quote_char=None)
    except Exception:  # any refusal: the strict NumPy path decides
        return None
    if table.height != rows or any(table.null_count().row(0)):
        return None
    return np.asarray(table.to_numpy(), dtype=np.float64)

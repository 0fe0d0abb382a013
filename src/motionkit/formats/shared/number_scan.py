"""Blank-separated decimal numbers of a text into a float64 array, as Python's float()
reads each one, for readers of number blocks (BVH's MOTION block; trajectory text later).

:func:`scan` is the compiled walk (``_number_scan.c``, built at install; ~10 ns a number)
where it was built, else None; :func:`scan_reference` states the same rule in Python,
and the tests hold the two equal bit for bit on every input. The rule: tokens are what
``rb"\\S+"`` finds; each token that is a *plain* decimal number (sign, digits with at most
one point, optional exponent) is stored as ``float(token)``; the walk stops at the first
other token (``nan``, ``1_000``, text, a broken number) and says where it starts, so that
the caller decides about it with its own Python path and error message. At most
``len(out)`` numbers are stored; the tokens after that are still checked and counted.
"""

from __future__ import annotations

import re
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from ..._accel import compiled

TOKEN = re.compile(rb"\S+")
_PLAIN = re.compile(rb"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


class Scan(NamedTuple):
    """How many plain numbers the text holds before ``stop``, and where the first other
    token starts (-1: none, every token was a plain number)."""

    found: int
    stop: int


_COMPILED = compiled("motionkit.formats.shared._number_scan")
#: Whether the compiled walk was built (the tests require it where a compiler is).
COMPILED = _COMPILED is not None


def scan(raw: bytes, start: int, out: NDArray[np.float64]) -> Scan | None:
    """The plain numbers of ``raw[start:]`` into ``out`` (C-contiguous float64), by the
    compiled walk; None where it was not built (the caller then takes its own path)."""
    if _COMPILED is None:
        return None
    return Scan(*_COMPILED.scan(raw, start, out))


def scan_reference(raw: bytes, start: int, out: NDArray[np.float64]) -> Scan:
    """The same walk in Python: the rule :func:`scan` is held to."""
    flat = out.reshape(-1)
    found = 0
    for match in TOKEN.finditer(raw, start):
        if _PLAIN.fullmatch(match.group()) is None:
            return Scan(found, match.start())
        if found < flat.size:
            flat[found] = float(match.group())
        found += 1
    return Scan(found, -1)

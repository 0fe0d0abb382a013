"""Numbers and vectors as DART 6.20 reads them from ``.skel`` text.

Every scalar goes through ``std::stod``: leading whitespace skipped, the longest prefix
that is a C number taken (``0.0.0`` = 0.0, ``1e5x`` = 100000, ``0x10`` = 16), the rest
ignored; no number at all, an overflow or an inexact underflow is an exception (the load
fails). Vectors split on spaces, tabs and newlines only and read each token that way.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

_STOD = re.compile(
    r"[ \t\n\v\f\r]*([+-]?(?:0[xX](?:[0-9a-fA-F]+(?:\.[0-9a-fA-F]*)?|\.[0-9a-fA-F]+)"
    r"(?:[pP][+-]?[0-9]+)?|(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
    r"|[iI][nN][fF](?:[iI][nN][iI][tT][yY])?|[nN][aA][nN](?:\([0-9A-Za-z_]*\))?))")
_TOKENS = re.compile(r"[ \t\n\r]+")
_SMALLEST_NORMAL = 2.2250738585072014e-308


class NumberError(ValueError):
    """Text DART's ``std::stod`` throws on (no number, or out of range)."""


def stod(text: str) -> tuple[float, bool]:
    """``(value, whole)``: DART's value of ``text`` and whether the whole (trimmed) text
    was the number. Raises NumberError where ``std::stod`` throws."""
    match = _STOD.match(text)
    if match is None:
        raise NumberError(f"{text.strip()[:40]!r} is not a number")
    token = match.group(1)
    whole = not text[match.end():].strip(" \t\n\v\f\r")
    body = token.lstrip("+-")
    negative = token.startswith("-")
    lower = body.lower()
    if lower.startswith("inf"):
        return (-math.inf if negative else math.inf), whole
    if lower.startswith("nan"):
        return math.nan, whole
    if lower.startswith("0x"):
        mantissa, _, exponent = body[2:].lower().partition("p")
        try:
            value = float.fromhex(f"{'-' if negative else ''}0x{mantissa}p{exponent or '0'}")
        except OverflowError:
            raise NumberError(f"{token!r} is out of range") from None
        exact = Fraction(value)  # hex floats are exact unless they underflow
    else:
        value = float(token)
        exact = Fraction(token)
    if math.isinf(value):
        raise NumberError(f"{token!r} is out of range")
    if value != 0.0 and abs(value) < _SMALLEST_NORMAL and Fraction(value) != exact:
        raise NumberError(f"{token!r} is out of range (underflow)")
    if value == 0.0 and exact != 0:
        raise NumberError(f"{token!r} is out of range (underflow)")
    return value, whole


def tokens(text: str) -> list[str]:
    """The tokens of a vector: split on runs of space, tab and newline, as DART does."""
    return [t for t in _TOKENS.split(text.strip(" \t\n\r")) if t]

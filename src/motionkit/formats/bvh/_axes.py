"""Units, axes and exact number conversion shared by the BVH reader and writer.

A BVH file says nothing about its unit or up axis; both are options. The model is always
metres and Z up. A file axis maps onto a model axis with a sign (Y up: x ↦ x, y ↦ z,
z ↦ −y), so a rotation about a file axis is a rotation about a signed model axis and the
basis change is exact. Units and degrees are scale factors; the writer inverts them
exactly (:func:`invert`) so that read → write → read gives back the same numbers.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

Array = NDArray[np.float64]

#: Metres per file unit, by name.
UNITS: dict[str, float] = {"m": 1.0, "cm": 0.01, "mm": 0.001, "in": 0.0254, "inch": 0.0254,
                           "ft": 0.3048, "cmu": 0.0254 / 0.45}
#: Radians per degree: the reader multiplies by it, the writer inverts it exactly.
RADIANS = np.pi / 180.0
AXES = "xyz"
#: File axis → (model axis, sign) for each up axis.
BASIS: dict[str, tuple[tuple[int, float], ...]] = {
    "z": ((0, 1.0), (1, 1.0), (2, 1.0)),
    "y": ((0, 1.0), (2, 1.0), (1, -1.0)),
}


def unit_scale(unit: str | float) -> float:
    """Metres per file unit for a unit name or a number; ValueError naming the choices."""
    if isinstance(unit, (int, float)) and not isinstance(unit, bool):
        if not np.isfinite(unit) or unit <= 0:
            raise ValueError(f"unit must be a positive number of metres, got {unit!r}")
        return float(unit)
    try:
        return UNITS[str(unit).lower()]
    except KeyError:
        try:  # a number given as text (-O unit=0.0254)
            return unit_scale(float(unit))
        except ValueError:
            pass
        raise ValueError(f"unknown unit {unit!r}; known: {', '.join(UNITS)} or metres "
                         "per unit as a number") from None


def basis(up: str) -> tuple[tuple[int, float], ...]:
    """File axis → (model axis, sign) for a file whose up axis is ``up`` (``y`` or ``z``)."""
    try:
        return BASIS[up.lower()]
    except (KeyError, AttributeError):
        raise ValueError(f"up must be 'y' or 'z', got {up!r}") from None


def to_file(up: str) -> tuple[tuple[int, float], ...]:
    """Model axis → (file axis, sign): the inverse of :func:`basis`."""
    out: list[tuple[int, float]] = [(0, 1.0)] * 3
    for file_axis, (model_axis, sign) in enumerate(basis(up)):
        out[model_axis] = (file_axis, sign)
    return tuple(out)


def invert(y: ArrayLike, factor: float) -> Array:
    """Numbers ``x`` with ``x * factor == y`` exactly where such a double is near
    ``y / factor`` (always so for ``y`` that came from ``x * factor``), else ``y / factor``.

    Of the candidates, ``y / factor`` rounded to 15 significant digits comes first, so a
    number read as ``-3.61`` is written back as ``-3.61``, not ``-3.6099999999999994``.
    """
    y = np.asarray(y, dtype=np.float64)
    guess = y / factor
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        power = 10.0 ** (14 - np.floor(np.log10(np.abs(guess))))
        short = np.round(guess * power) / power
    best = np.where(np.isfinite(short) & (short * factor == y), short, guess)
    bad = best * factor != y
    for direction in (np.inf, -np.inf):
        step = guess
        for _ in range(3):
            if not bad.any():
                return best
            step = np.nextafter(step, direction)
            hit = bad & (step * factor == y)
            best[hit] = step[hit]
            bad &= ~hit
    return best


def rate_of(frame_time: float) -> tuple[float, bool]:
    """The rate of a frame time and whether it was snapped to a whole number: files print
    few digits (0.033333 s), so a rate within 1e-4 (relative) of an integer is that integer."""
    if not (np.isfinite(frame_time) and frame_time > 0):
        raise ValueError(f"frame time must be a positive number, got {frame_time!r}")
    rate = 1.0 / frame_time
    whole = round(rate)
    if whole > 0 and abs(whole * frame_time - 1.0) < 1e-4:
        return float(whole), True
    return rate, False

"""C3D frames into marker-major positions, frame-major residuals and channel-major analog
samples, a slab of frames at a time (so a file is streamed, never held whole).

:func:`decode` is the compiled pass (``_decode.c``, built at install) where it was built,
else :func:`decode_reference`, which states the rule in NumPy; the tests hold the two equal
bit for bit on every word format. The rule, per frame of ``words`` words (markers × x y z
residual, then ``samples`` rows of ``channels`` analog words):

* position = word × ``point_factor`` (float64), NaN where the residual word is negative;
* residual = the low byte of the residual word's integer part × ``residual_factor``, −1
  where it is negative; a word that is NaN or not below 2³¹ (no real file writes one) counts 0;
* analog = (word − offset) × factor, in float64, stored as float32.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ..._accel import compiled
from .parse import floats

#: The word formats, in the compiled pass's numbering.
KINDS = ("<f4", "<i2", ">f4", ">i2", "dec")
#: Residual words from here up (and NaN) count as a zero residual byte.
_WORD_LIMIT = 2.0**31


_COMPILED = compiled("motionkit.formats.c3d._decode")
#: Whether the compiled pass was built (the tests require it where a compiler is).
COMPILED = _COMPILED is not None


@dataclass(frozen=True)
class Layout:
    """What one frame holds and how its words become numbers."""

    markers: int
    words: int
    kind: str
    channels: int
    samples: int
    point_factor: float
    residual_factor: float
    offsets: NDArray[np.float64]
    factors: NDArray[np.float64]

    @property
    def frame_bytes(self) -> int:
        return self.words * (2 if self.kind.endswith("i2") else 4)


@dataclass
class Frames:
    """The decoded outputs for ``total`` frames: positions ``(markers, total, 3)``,
    residuals ``(total, markers)``, analog ``(channels, total × samples)`` or None."""

    xyz: NDArray[np.float64]
    residual: NDArray[np.float64]
    analog: NDArray[np.float32] | None

    @classmethod
    def empty(cls, layout: Layout, total: int) -> Frames:
        analog = (np.empty((layout.channels, total * layout.samples), dtype=np.float32)
                  if layout.channels and layout.samples else None)
        return cls(np.empty((layout.markers, total, 3)), np.empty((total, layout.markers)),
                   analog)


def decode(raw: bytes | bytearray | memoryview, frames: int, layout: Layout, out: Frames,
           first: int) -> None:
    """Frames ``[0, frames)`` of ``raw`` into ``out`` from frame ``first``."""
    if _COMPILED is None:
        decode_reference(raw, frames, layout, out, first)
        return
    _COMPILED.decode(raw, frames, layout.markers, layout.words, KINDS.index(layout.kind),
                     4 * layout.markers, layout.channels, layout.samples, layout.point_factor,
                     layout.residual_factor, layout.offsets, layout.factors, out.xyz,
                     out.residual, out.analog, first, out.residual.shape[0])


def decode_reference(raw: bytes | bytearray | memoryview, frames: int, layout: Layout,
                     out: Frames, first: int) -> None:
    """The same pass in NumPy: the rule :func:`decode` is held to (silent on infinities and
    NaN in the words, as the compiled pass is)."""
    with np.errstate(invalid="ignore", over="ignore"):
        _reference(raw, frames, layout, out, first)


def _reference(raw: bytes | bytearray | memoryview, frames: int, layout: Layout, out: Frames,
               first: int) -> None:
    size = frames * layout.frame_bytes
    if layout.kind == "dec":
        values: NDArray[np.generic] = floats(bytes(memoryview(raw)[:size]), "dec")
    else:
        values = np.frombuffer(raw, dtype=layout.kind, count=frames * layout.words)
    table = values.reshape(frames, layout.words)
    last = first + frames
    points = table[:, :4 * layout.markers].reshape(frames, layout.markers, 4)
    word = points[..., 3].astype(np.float64)
    invalid = word < 0
    kept = np.where((word >= 0) & (word < _WORD_LIMIT), word, 0.0)
    out.residual[first:last] = np.where(invalid, -1.0, (kept.astype(np.int64) & 0xFF)
                                        * np.float64(layout.residual_factor))
    xyz = out.xyz[:, first:last]
    # a float64 factor, not a Python float (which would multiply float32 words in float32)
    np.multiply(points[..., :3].transpose(1, 0, 2), np.float64(layout.point_factor), out=xyz)
    xyz[invalid.T] = np.nan
    if out.analog is not None:
        at, width = 4 * layout.markers, layout.samples * layout.channels
        rows = table[:, at:at + width].reshape(-1, layout.channels).T
        out.analog[:, first * layout.samples:last * layout.samples] = (
            (rows - layout.offsets[:, None]) * layout.factors[:, None])

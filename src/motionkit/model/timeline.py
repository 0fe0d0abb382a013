"""When a track's frames happen: a uniform rate or explicit time stamps."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray

NS_PER_SECOND = 1_000_000_000
_MAX_SECONDS = 9.2e9  # int64 nanoseconds reach about 9.22e9 s (year 2262)
_EXACT_NS = 2**53  # integers below this are exact in float64


def seconds_to_ns(seconds: ArrayLike) -> NDArray[np.int64]:
    """Float seconds to the nearest integer nanoseconds (ties to even), exactly.

    ``seconds * 1e9`` in float64 is off by up to ~128 ns near 1.7e9 s; here the whole
    seconds are scaled in integers and the fraction's product with 1e9 is corrected by its
    exact rounding error. Values must be finite and within ±9.2e9 s (ValueError).
    """
    t = np.asarray(seconds, dtype=np.float64)
    if not np.all((t > -_MAX_SECONDS) & (t < _MAX_SECONDS)):
        raise ValueError("seconds must be finite and within ±9.2e9 to be int64 nanoseconds")
    whole = np.trunc(t)
    frac = t - whole  # exact, with the sign of t
    product = frac * 1e9
    # Dekker: frac = high + low with 26-bit halves, whose products with 1e9 (21 significant
    # bits) are exact, so product + error == frac * 1e9 exactly
    split = frac * 134217729.0
    high = split - (split - frac)
    error = (high * 1e9 - product) + (frac - high) * 1e9
    nearest = np.round(product)
    off = product - nearest  # exact; only a product rounded onto a half can round wrongly
    nearest += (off == 0.5) & (error > 0)
    nearest -= (off == -0.5) & (error < 0)
    return whole.astype(np.int64) * NS_PER_SECOND + nearest.astype(np.int64)


def ns_to_seconds(ns: ArrayLike) -> NDArray[np.float64]:
    """Integer nanoseconds to the nearest float64 seconds (correctly rounded).

    ``ns / 1e9`` rounds twice once ns pass 2**53 (int64 -> float64, then the division);
    there the whole seconds and the remainder are converted apart, whose one rounding
    error is far below what could move the sum across a rounding boundary.
    """
    values = np.asarray(ns, dtype=np.int64)
    whole, rem = np.divmod(values, NS_PER_SECOND)
    seconds = np.array(whole, dtype=np.float64)  # an array even for one stamp
    del whole  # in place from here: a million stamps need 32 MB at most, not 56
    fraction = np.array(rem, dtype=np.float64)
    del rem
    fraction /= 1e9
    seconds += fraction
    small = (values > -_EXACT_NS) & (values < _EXACT_NS)
    seconds[small] = values[small] / 1e9
    return seconds


@dataclass(frozen=True, eq=False)
class Timeline:
    """Either uniform (``rate``, ``start``, ``count``) or stamped (increasing ``stamps``
    in float64 seconds).

    A stamped timeline from a source with integer nanoseconds (ROS) keeps them in
    ``stamps_ns`` so that a round trip is exact. Their order is checked on the integers:
    stamps closer than float64 resolves (about 240 ns at 1.7e9 s) may leave equal
    neighbours in ``stamps``. ``rate`` on a stamped timeline is an optional nominal rate
    (for formats that want one, e.g. Choreonoid's timed frames). ``frame_numbered`` marks a
    timeline whose "seconds" are only frame numbers 0, 1, 2 … (a source without times, such
    as KITTI without ``times.txt``): writers that need real times refuse it.
    """

    count: int
    rate: float | None = None
    start: float = 0.0
    stamps: NDArray[np.float64] | None = field(default=None, repr=False)
    stamps_ns: NDArray[np.int64] | None = field(default=None, repr=False)
    frame_numbered: bool = False

    @classmethod
    def uniform(cls, rate: float, count: int, start: float = 0.0) -> Timeline:
        """A fixed-rate timeline of ``count`` frames starting at ``start`` seconds."""
        if not (rate > 0 and np.isfinite(rate)):
            raise ValueError(f"frame rate must be a positive number, not {rate!r}")
        if count < 0:
            raise ValueError("frame count must not be negative")
        if not np.isfinite(start):
            raise ValueError(f"start must be a finite number of seconds, not {start!r}")
        return cls(count=int(count), rate=float(rate), start=float(start))

    @classmethod
    def frame_numbers(cls, count: int) -> Timeline:
        """Frames numbered 0, 1, 2 … from a source without times (one "second" per frame)."""
        return cls(count=int(count), rate=1.0, frame_numbered=True)

    @classmethod
    def stamped(
        cls, stamps: ArrayLike, rate: float | None = None, *, check: bool = True
    ) -> Timeline:
        """A timeline with explicit stamps (seconds). ``rate`` is a nominal rate only."""
        times = np.ascontiguousarray(stamps, dtype=np.float64)
        if times.ndim != 1:
            raise ValueError("time stamps must be one-dimensional")
        if check and times.size > 1 and not np.all(np.diff(times) > 0):
            raise ValueError("time stamps must be strictly increasing")
        times.setflags(write=False)
        return cls(count=int(times.size), rate=rate, start=float(times[0]) if times.size else 0.0,
                   stamps=times)

    @classmethod
    def from_nanoseconds(cls, stamps_ns: ArrayLike) -> Timeline:
        """A stamped timeline from strictly increasing integer nanoseconds, which are kept
        exactly; ``stamps`` are their nearest float64 seconds."""
        ns = np.ascontiguousarray(stamps_ns, dtype=np.int64)
        if ns.ndim != 1:
            raise ValueError("time stamps must be one-dimensional")
        if not np.all(ns[1:] > ns[:-1]):
            raise ValueError("time stamps must be strictly increasing")
        timeline = cls.stamped(ns_to_seconds(ns), check=False)
        ns.setflags(write=False)
        object.__setattr__(timeline, "stamps_ns", ns)
        return timeline

    @property
    def is_uniform(self) -> bool:
        return self.stamps is None

    @property
    def times(self) -> NDArray[np.float64]:
        """Frame times in seconds, materialised on demand for uniform timelines."""
        if self.stamps is not None:
            return self.stamps
        assert self.rate is not None
        return self.start + np.arange(self.count, dtype=np.float64) / self.rate

    @property
    def duration(self) -> float:
        """Seconds from the first to the last frame (0 for fewer than two frames)."""
        if self.count < 2:
            return 0.0
        if self.stamps_ns is not None:
            return int(self.stamps_ns[-1] - self.stamps_ns[0]) / 1e9
        if self.stamps is not None:
            return float(self.stamps[-1] - self.stamps[0])
        assert self.rate is not None
        return (self.count - 1) / self.rate

    @property
    def end(self) -> float:
        """Time of the last frame."""
        return self.start + self.duration

    def same_as(self, other: Timeline) -> bool:
        """True when both timelines give the same frame times."""
        if self.count != other.count or self.is_uniform != other.is_uniform:
            return False
        if self.is_uniform:
            return self.rate == other.rate and self.start == other.start
        if self.stamps_ns is not None and other.stamps_ns is not None:
            return bool(np.array_equal(self.stamps_ns, other.stamps_ns))
        return bool(np.array_equal(self.times, other.times))

    def __repr__(self) -> str:
        if self.is_uniform:
            return f"Timeline(uniform, rate={self.rate:g}, count={self.count}, start={self.start:g})"
        return f"Timeline(stamped, count={self.count}, {self.start:g}..{self.end:g} s)"

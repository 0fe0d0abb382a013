"""When a track's frames happen: a uniform rate or explicit time stamps."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray


@dataclass(frozen=True, eq=False)
class Timeline:
    """Either uniform (``rate``, ``start``, ``count``) or stamped (strictly increasing
    ``stamps`` in float64 seconds).

    A stamped timeline from a source with integer nanoseconds (ROS) keeps them in
    ``stamps_ns`` so that a round trip is exact. ``rate`` on a stamped timeline is an
    optional nominal rate (for formats that want one, e.g. Choreonoid's timed frames).
    """

    count: int
    rate: float | None = None
    start: float = 0.0
    stamps: NDArray[np.float64] | None = field(default=None, repr=False)
    stamps_ns: NDArray[np.int64] | None = field(default=None, repr=False)

    @classmethod
    def uniform(cls, rate: float, count: int, start: float = 0.0) -> Timeline:
        """A fixed-rate timeline of ``count`` frames starting at ``start`` seconds."""
        if not (rate > 0 and np.isfinite(rate)):
            raise ValueError(f"frame rate must be a positive number, not {rate!r}")
        if count < 0:
            raise ValueError("frame count must not be negative")
        return cls(count=int(count), rate=float(rate), start=float(start))

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
        """A stamped timeline from integer nanoseconds, which are kept exactly."""
        ns = np.ascontiguousarray(stamps_ns, dtype=np.int64)
        seconds = ns.astype(np.float64) / 1e9
        timeline = cls.stamped(seconds)
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
        return bool(np.array_equal(self.times, other.times))

    def __repr__(self) -> str:
        if self.is_uniform:
            return f"Timeline(uniform, rate={self.rate:g}, count={self.count}, start={self.start:g})"
        return f"Timeline(stamped, count={self.count}, {self.start:g}..{self.end:g} s)"

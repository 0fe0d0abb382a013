"""Timelines: uniform or stamped, exact nanoseconds, conversions that round correctly."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import motionkit as mk
from motionkit.model.timeline import ns_to_seconds, seconds_to_ns


def test_timeline_keeps_nanoseconds_exactly() -> None:
    ns = np.array([1_700_000_000_123_456_789, 1_700_000_000_223_456_789])
    timeline = mk.Timeline.from_nanoseconds(ns)
    assert timeline.stamps_ns is not None and timeline.stamps_ns.tolist() == ns.tolist()
    assert timeline.duration == pytest.approx(0.1)


def test_seconds_to_nanoseconds_is_exact() -> None:
    # t * 1e9 in float64 gave 1700000000221699840 (125 ns off) and 511821624 (a product
    # rounded onto a half, then to even)
    t = [1700000000.2216997, 0.5118216245, -0.5118216245, -1.25, 0.0]
    assert seconds_to_ns(t).tolist() == [1700000000221699715, 511821625, -511821625,
                                         -1250000000, 0]
    assert seconds_to_ns(1.5) == 1_500_000_000
    for bad in (np.nan, np.inf, 1e10, -1e10):
        with pytest.raises(ValueError, match="finite"):
            seconds_to_ns([0.0, bad])


def test_nanoseconds_to_seconds_is_correctly_rounded() -> None:
    # int64 -> float64 -> / 1e9 gave 1700000000.0, rounding twice
    assert ns_to_seconds([1700000000000000126]).tolist() == [1700000000.0000002]
    assert mk.Timeline.from_nanoseconds([1700000000000000126]).times[0] == 1700000000.0000002


@given(st.floats(-9.1e9, 9.1e9))
@example(0.5118216245)
@example(1700000000.2216997)
def test_seconds_to_ns_gives_the_nearest_nanosecond(t: float) -> None:
    assert seconds_to_ns([t]).tolist() == [round(Fraction(t) * 10**9)]


@given(st.floats(2.0**23, 2.0**33))  # where float64 steps are coarser than 2 ns
def test_seconds_survive_a_trip_through_nanoseconds(t: float) -> None:
    assert ns_to_seconds(seconds_to_ns([t])).tolist() == [t]


@given(st.integers(-(2**63), 2**63 - 1))
@example(1700000000000000126)
def test_ns_to_seconds_is_the_nearest_float(ns: int) -> None:
    assert ns_to_seconds([ns]).tolist() == [float(Fraction(ns, 10**9))]


@given(st.integers(-(2**23) * 10**9, 2**23 * 10**9))  # float64 steps below 1 ns
def test_nanoseconds_survive_a_trip_through_seconds(ns: int) -> None:
    assert seconds_to_ns(ns_to_seconds([ns])).tolist() == [ns]


def test_nanosecond_stamps_closer_than_float_seconds_resolve() -> None:
    ns = np.array([1_700_000_000_000_000_000, 1_700_000_000_000_000_100,
                   1_700_000_000_010_000_000])
    timeline = mk.Timeline.from_nanoseconds(ns)  # was "must be strictly increasing"
    assert timeline.stamps_ns is not None and timeline.stamps_ns.tolist() == ns.tolist()
    assert timeline.times[0] == timeline.times[1]  # both round to the same float
    assert timeline.duration == 0.01
    other = mk.Timeline.from_nanoseconds(ns - [0, 50, 0])  # the same floats, other ns
    assert not timeline.same_as(other) and timeline.same_as(mk.Timeline.from_nanoseconds(ns))
    assert timeline.same_as(mk.Timeline.stamped(timeline.times, check=False))
    for bad in ([5, 5], [5, 4], [[1, 2]]):
        with pytest.raises(ValueError, match=r"strictly increasing|one-dimensional"):
            mk.Timeline.from_nanoseconds(bad)


@pytest.mark.parametrize("start", [float("inf"), float("-inf"), float("nan")])
def test_uniform_timeline_needs_a_finite_start(start: float) -> None:
    with pytest.raises(ValueError, match="start must be a finite number"):
        mk.Timeline.uniform(10.0, 3, start=start)


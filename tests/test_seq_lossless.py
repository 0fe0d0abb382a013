"""Round trips found lossy by a bug hunt: nanosecond stamps, track attributes, frame rates
under ``precision``, link-position names, and quotes in kept components."""

from __future__ import annotations

import warnings
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import motionkit as mk
from motionkit.errors import MotionkitWarning

UNIT = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0])


def read_quietly(path: Path, **options: object) -> mk.Motion:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return mk.read(path, **options)


def one_track(name: str, kind: str, data: np.ndarray, attrs: dict | None = None,
              timeline: mk.Timeline | None = None) -> mk.Motion:
    motion = mk.Motion()
    motion.add(mk.Track(name, kind, data, timeline or mk.Timeline.uniform(100.0, len(data)),  # type: ignore[arg-type]
                        None, attrs or {}))
    return motion


# -- nanosecond stamps (r01) ----------------------------------------------------------------
EPOCH_NS = np.array([1502792570283404827, 1502792572263514280, 1502792574304265260])


@pytest.mark.parametrize("ns", [EPOCH_NS, EPOCH_NS * 6 + 1])  # also beyond 9.2e9 s
def test_nanosecond_stamps_that_float_seconds_change_are_refused(tmp_path: Path,
                                                                 ns: np.ndarray) -> None:
    motion = one_track("root", "pose", np.tile(UNIT, (3, 1)),
                       timeline=mk.Timeline.from_nanoseconds(ns))
    with pytest.raises(mk.ConversionError, match=r"nanosecond.*lossy=True \(--lossy\)"):
        mk.write(tmp_path / "m.seq", motion)
    assert not (tmp_path / "m.seq").exists()


def test_lossy_writes_nanosecond_stamps_as_float_seconds_with_a_warning(tmp_path: Path) -> None:
    timeline = mk.Timeline.from_nanoseconds(EPOCH_NS)
    motion = one_track("root", "pose", np.tile(UNIT, (3, 1)), timeline=timeline)
    with pytest.warns(MotionkitWarning, match="nanosecond"):
        mk.write(tmp_path / "m.seq", motion, lossy=True)
    again = read_quietly(tmp_path / "m.seq").tracks["root"].timeline
    assert again.times.tobytes() == timeline.times.tobytes()


def test_nanosecond_stamps_that_float_seconds_hold_write_without_complaint(tmp_path: Path) -> None:
    ns = np.array([-1_500_000_000, 0, 10_000_000, 1_000_000_001, 3_600_123_456_789])
    motion = one_track("root", "pose", np.tile(UNIT, (len(ns), 1)),
                       timeline=mk.Timeline.from_nanoseconds(ns))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mk.write(tmp_path / "m.seq", motion)
    again = read_quietly(tmp_path / "m.seq").tracks["root"].timeline
    assert [round(Fraction(t) * 10**9) for t in again.times.tolist()] == ns.tolist()


def fabricated(times: list[float], ns: list[int]) -> mk.Timeline:
    """A stamped timeline whose float and integer stamps are given separately."""
    timeline = mk.Timeline.stamped(times)
    object.__setattr__(timeline, "stamps_ns", np.array(ns, dtype=np.int64))
    return timeline


@settings(max_examples=300, deadline=None)
@given(seconds=st.lists(st.one_of(
    st.floats(-9.2e9, 9.2e9, exclude_min=True, exclude_max=True),
    st.builds(lambda k, big: big + k / 1024, st.integers(-2**20, 2**20),  # exact half-ns ties
              st.sampled_from([0.0, 2.0**23, 1.5e9])),
), min_size=1, max_size=8, unique=True), shift=st.integers(-1, 1))
def test_the_nanosecond_check_is_exact(seconds: list[float], shift: int) -> None:
    from motionkit.formats.choreonoid.seq_writer import _ns_changed

    times = sorted(seconds)
    exact = [round(Fraction(t) * 10**9) for t in times]  # ties to even, as np.round
    ns = [n + shift * (i == 0) for i, n in enumerate(exact)]
    changed = _ns_changed(fabricated(times, ns))
    assert changed == abs(shift)

"""The front door: registry, options, atomic writes, the model's own checks."""

from __future__ import annotations

import os
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import motionkit as mk
from motionkit._io import atomic_write
from motionkit.formats import registry
from motionkit.model.timeline import ns_to_seconds, seconds_to_ns
from seqfiles import V4_ALL


def test_atomic_write_keeps_the_old_file_when_writing_fails(tmp_path: Path) -> None:
    target = tmp_path / "keep.seq"
    target.write_text("old")
    with pytest.raises(RuntimeError), atomic_write(target, "w") as handle:
        handle.write("half")
        raise RuntimeError("interrupted")
    assert target.read_text() == "old"
    assert os.listdir(tmp_path) == ["keep.seq"]


def test_refused_write_leaves_no_file(tmp_path: Path) -> None:
    motion = mk.Motion()
    motion.add(mk.Track("joints", "value", np.array([[np.nan]]), mk.Timeline.uniform(10, 1)))
    target = tmp_path / "nan.seq"
    target.write_text("old")
    with pytest.raises(mk.ConversionError, match="non-finite"):
        mk.write(target, motion)
    assert target.read_text() == "old" and os.listdir(tmp_path) == ["nan.seq"]


@pytest.mark.parametrize("mode,spelling", [("choreonoid", "nan, inf, -inf"),
                                           ("yaml", ".nan, .inf, -.inf")])
def test_non_finite_values_when_asked(tmp_path: Path, mode: str, spelling: str) -> None:
    motion = mk.Motion()
    values = np.array([[np.nan, np.inf, -np.inf]])
    motion.add(mk.Track("joints", "value", values, mk.Timeline.uniform(10, 1)))
    target = tmp_path / "nan.seq"
    mk.write(target, motion, nonfinite=mode)
    assert f"- [ {spelling} ]" in target.read_text()
    data = mk.read(target).tracks["joints"].data[0]
    assert np.isnan(data[0]) and data[1] == np.inf and data[2] == -np.inf


def test_what_a_seq_cannot_hold_is_refused_unless_lossy(tmp_path: Path) -> None:
    path = tmp_path / "in.seq"
    path.write_text(V4_ALL)
    motion = mk.read(path)
    motion.terrain = object()
    motion.meta["misc"] = {"array": np.zeros(2)}
    with pytest.raises(mk.ConversionError, match=r"terrain.*metadata 'misc'"):
        mk.write(tmp_path / "out.seq", motion)
    with pytest.warns(mk.MotionkitWarning, match="dropped"):
        mk.write(tmp_path / "out.seq", motion, lossy=True)
    assert "misc" not in mk.read(tmp_path / "out.seq").meta


def test_stamped_tracks_in_version_1_need_lossy(tmp_path: Path) -> None:
    motion = mk.Motion()
    motion.add(mk.Track("joints", "value", np.zeros((3, 1)), mk.Timeline.stamped([0, 0.1, 0.3])))
    with pytest.raises(mk.ConversionError, match="time stamps"):
        mk.write(tmp_path / "v1.seq", motion, version=1)
    with pytest.warns(mk.MotionkitWarning):
        mk.write(tmp_path / "v1.seq", motion, version=1, lossy=True)
    assert mk.read(tmp_path / "v1.seq").tracks["joints"].timeline.is_uniform


def test_registry_by_extension_name_and_content(tmp_path: Path) -> None:
    assert registry.for_reading("x.seq").name == "seq"
    assert registry.for_reading("x", "SEQ").name == "seq"
    assert registry.for_writing("x.yaml").name == "seq"
    assert registry.by_name("yaml").name == "seq"
    unknown = tmp_path / "x.weird"
    unknown.write_text("hello")
    with pytest.raises(mk.FormatError, match="unknown file type"):
        mk.read(unknown)
    with pytest.raises(mk.MotionkitError, match="unknown format"):
        registry.by_name("nope")


def test_options_are_checked(tmp_path: Path) -> None:
    path = tmp_path / "in.seq"
    path.write_text(V4_ALL)
    with pytest.raises(mk.MotionkitError, match="does not take option"):
        mk.read(path, colour="red")
    with pytest.raises(mk.MotionkitError, match="does not take option"):
        mk.convert(path, tmp_path / "out.seq", colour="red")


def test_convert_routes_options_and_resamples(tmp_path: Path) -> None:
    path = tmp_path / "in.seq"
    path.write_text(V4_ALL)
    out = tmp_path / "out.seq"
    mk.convert(path, out, version=4, precision=9, rate=1000, fast=False)
    motion = mk.read(out)
    assert motion.meta["choreonoid"]["version"] == 4
    assert motion.tracks["joints"].frames == 5 and motion.tracks["joints"].timeline.rate == 1000


def test_track_checks_shapes_and_labels() -> None:
    timeline = mk.Timeline.uniform(10, 2)
    with pytest.raises(ValueError, match="needs 7"):
        mk.Track("root", "pose", np.zeros((2, 6)), timeline)
    with pytest.raises(ValueError, match="frames"):
        mk.Track("joints", "value", np.zeros((3, 2)), timeline)
    with pytest.raises(ValueError, match="labels"):
        mk.Track("joints", "value", np.zeros((2, 2)), timeline, labels=["a"])
    with pytest.raises(ValueError, match="increasing"):
        mk.Timeline.stamped([0, 1, 1])


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


def test_import_is_light() -> None:
    import subprocess
    import sys

    heavy = ("scipy", "yaml", "click", "polars", "rosbags", "pyproj")
    code = f"import sys, motionkit; print(sorted(m for m in {heavy!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("start", [float("inf"), float("-inf"), float("nan")])
def test_uniform_timeline_needs_a_finite_start(start: float) -> None:
    with pytest.raises(ValueError, match="start must be a finite number"):
        mk.Timeline.uniform(10.0, 3, start=start)

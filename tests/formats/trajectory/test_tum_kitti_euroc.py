"""TUM / KITTI / EuRoC: tolerant reading of variants, canonical writing, round trips."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import motionkit as mk
from conftest import corpus_file, require_peer, use_polars
from motionkit.errors import ConversionError, FormatError, MotionkitWarning
from motionkit.model import Motion, Timeline, Track

ROW = "1305031102.160407 1.5 -2.25 3 0 0 0.6 0.8"


def _write(tmp_path: Path, text: str, name: str = "t.tum") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize("text", [
    ROW + "\n",
    ROW.replace(" ", ",") + "\n",
    ROW.replace(" ", "\t") + "\n",
    ROW.replace(" ", "   ") + "   \n\n",
    "  # indented comment\n" + ROW + " # inline\n",
    "timestamp tx ty tz qx qy qz qw\n" + ROW + "\n",
    ROW + " 17 18\n",
])
def test_tum_variants_read(tmp_path: Path, text: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MotionkitWarning)
        root = mk.read(_write(tmp_path, text), format="tum").tracks["root"]
    np.testing.assert_array_equal(root.data[0], [1.5, -2.25, 3, 0, 0, 0.6, 0.8])
    assert root.times[0] == 1305031102.160407


def test_tum_w_first_from_header_or_option(tmp_path: Path) -> None:
    text = "t,x,y,z,qw,qx,qy,qz\n1,0,0,0,0.8,0,0,0.6\n"
    root = mk.read(_write(tmp_path, text), format="tum").tracks["root"]
    np.testing.assert_allclose(root.data[0, 3:], [0, 0, 0.6, 0.8])
    plain = _write(tmp_path, "1 0 0 0 0.8 0 0 0.6\n", "w.tum")
    root = mk.read(plain, quaternion_order="wxyz").tracks["root"]
    np.testing.assert_allclose(root.data[0, 3:], [0, 0, 0.6, 0.8])


@pytest.mark.parametrize(("text", "message", "line"), [
    (ROW + "\n1 2 3\n", "expected 8 fields, found 3", 2),
    ("# c\n" + ROW + "\n2 1 1 x 0 0 0 1\n", "not a number: 'x'", 3),
    ("1 2 3 4 5 6 7\n", "needs 8 numbers", 1),
    ("1 2 3 4 0 0 0 0\n", "zero", 1),
])
def test_tum_errors_name_the_line(tmp_path: Path, text: str, message: str, line: int) -> None:
    with pytest.raises(FormatError, match=message) as info:
        mk.read(_write(tmp_path, text), format="tum")
    assert info.value.line == line


def test_tum_time_unit(tmp_path: Path) -> None:
    root = mk.read(_write(tmp_path, "1500 0 0 0 0 0 0 1\n"), time_unit="ms").tracks["root"]
    assert root.times[0] == 1.5


def test_kitti_errors_and_times_mismatch(tmp_path: Path) -> None:
    with pytest.raises(FormatError, match="expected 12 fields") as info:
        mk.read(_write(tmp_path, "1 0 0 0 0 1 0 0 0 0 1 0\n1 0 0\n", "k.kitti"))
    assert info.value.line == 2
    times = _write(tmp_path, "0.0\n", "times.txt")
    with pytest.raises(FormatError, match="1 times for 2 poses"):
        mk.read(_write(tmp_path, "1 0 0 0 0 1 0 0 0 0 1 0\n" * 2, "k2.kitti"), times=times)


IDENTITY_ROW = "1 0 0 0 0 1 0 0 0 0 1 0\n"


@pytest.mark.parametrize(("row", "determinant"), [
    ("0 0 0 0 0 0 0 0 0 0 0 0\n", "0"),
    ("1 0 0 0 0 1 0 0 0 0 -1 0\n", "-1"),
])
def test_kitti_row_that_is_no_rotation(tmp_path: Path, row: str, determinant: str) -> None:
    path = _write(tmp_path, IDENTITY_ROW + "# a comment\n" + row, "k.kitti")
    with pytest.raises(FormatError, match=f"determinant {determinant}: zero or mirrored") as info:
        mk.read(path)
    assert info.value.line == 3 and info.value.path == str(path)


def test_kitti_times_checked_like_every_stamp(tmp_path: Path) -> None:
    poses = _write(tmp_path, "".join(IDENTITY_ROW.replace(" 0\n", f" {i}\n")
                                     for i in range(3)), "k.kitti")
    with pytest.warns(MotionkitWarning, match="go backwards 1 time"):
        mk.read(poses, times=_write(tmp_path, "0\n2\n1\n", "times.txt"))
    root = mk.read(poses, times=tmp_path / "times.txt", sort=True).tracks["root"]
    assert root.times.tolist() == [0, 1, 2]
    assert root.data[:, 2].tolist() == [0, 2, 1]
    bad = _write(tmp_path, "0\n\nnan\n1\n", "bad_times.txt")
    with pytest.raises(FormatError, match="not a finite number") as info:
        mk.read(poses, times=bad)
    assert info.value.line == 3 and info.value.path == str(bad)


def test_tum_nan_stamp_names_its_line(tmp_path: Path) -> None:
    with pytest.raises(FormatError, match="not a finite number") as info:
        mk.read(_write(tmp_path, "0 0 0 0 0 0 0 1\nnan 0 0 0 0 0 0 1\n"), format="tum")
    assert info.value.line == 2


def _position_only() -> Motion:
    root = np.zeros((2, 7))
    root[:, 6] = 1.0
    motion = Motion(meta={"name": "p"})
    motion.add(Track("root", "pose", root, Timeline.stamped(np.array([0.0, 1.0])),
                     attrs={"orientation": False}))
    return motion


@pytest.mark.parametrize("fmt", ["tum", "kitti", "euroc", "rosbag"])
def test_position_only_root_refused_unless_lossy(tmp_path: Path, fmt: str) -> None:
    target = tmp_path / ("out.bag" if fmt == "rosbag" else f"out.{fmt}")
    options = {"times": tmp_path / "times.txt"} if fmt == "kitti" else {}
    with pytest.raises(ConversionError, match="identity quaternions would be written"):
        mk.write(target, _position_only(), format=fmt, **options)
    assert not target.exists()
    with pytest.warns(MotionkitWarning, match="identity quaternions"):
        mk.write(target, _position_only(), format=fmt, lossy=True, **options)
    assert target.exists()


@pytest.mark.parametrize("fmt", ["tum", "kitti", "euroc", "rosbag"])
def test_crs_refused_by_every_writer_but_traj(tmp_path: Path, fmt: str) -> None:
    motion = Motion(meta={"name": "g", "epsg": 25832})
    motion.add(Track("root", "pose", np.array([[1.0, 2, 3, 0, 0, 0, 1]]),
                     Timeline.stamped(np.array([1.0]))))
    target = tmp_path / ("out.bag" if fmt == "rosbag" else f"out.{fmt}")
    options = {"times": tmp_path / "times.txt"} if fmt == "kitti" else {}
    with pytest.raises(ConversionError, match="the CRS \\(EPSG 25832\\)"):
        mk.write(target, motion, format=fmt, **options)
    mk.write(tmp_path / "out.traj", motion)
    assert mk.read(tmp_path / "out.traj").meta["epsg"] == 25832


def test_euroc_bad_stamp(tmp_path: Path) -> None:
    text = "#timestamp,x,y,z,qw,qx,qy,qz\n1403715524907143168,0,0,0,1,0,0,0\n1.5e18,0,0,0,1,0,0,0\n"
    with pytest.raises(FormatError, match="not an integer") as info:
        mk.read(_write(tmp_path, text, "e.csv"))
    assert (info.value.line, info.value.column) == (3, 1)


@pytest.mark.parametrize("fast", [False, True])
def test_integer_stamps_parsed_exactly_by_the_block_parsers(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fast: bool) -> None:
    from motionkit.formats.trajectory import _text

    use_polars(monkeypatch, fast)
    monkeypatch.setattr(_text.TextTable, "lines", None)  # no second, line-by-line pass
    stamps = [1403715524907143168 + 3 * i for i in range(5)]  # beyond float64's 2**53
    rows = "".join(f"{ns},{i},0,0,1,0,0,0\n" for i, ns in enumerate(stamps))
    euroc = _write(tmp_path, "#timestamp,x,y,z,qw,qx,qy,qz\n" + rows, "e.csv")
    assert mk.read(euroc).tracks["root"].timeline.stamps_ns.tolist() == stamps
    for tail, fields in (("", "t,px,py,pz"), (",note", "t,px,py,pz,-")):  # text: per-row path
        text = "#time_unit ns\n#fields " + fields + "\n" + rows.replace(",1,0,0,0", tail)
        traj = _write(tmp_path, text, "t.traj")
        assert mk.read(traj).tracks["root"].timeline.stamps_ns.tolist() == stamps
    for bad, column in (("1.5e18", 1), ("99999999999999999999", 1), ("1_0", 1)):
        text = "#timestamp,x,y,z,qw,qx,qy,qz\n" + rows + f"{bad},0,0,0,1,0,0,0\n"
        with pytest.raises(FormatError, match="not an integer") as info:
            mk.read(_write(tmp_path, text, "bad.csv"))
        assert (info.value.line, info.value.column) == (7, column)


def _motion(times: list[float], xyz: np.ndarray, quat: np.ndarray) -> Motion:
    motion = Motion(meta={"name": "h"})
    pose = np.hstack([xyz, quat / np.linalg.norm(quat, axis=1, keepdims=True)])
    motion.add(Track("root", "pose", pose, Timeline.stamped(times)))
    return motion


_finite = st.floats(-1e4, 1e4, allow_nan=False, allow_subnormal=False)
_unit = st.floats(0.1, 1.0)


@st.composite
def _trajectories(draw: st.DrawFn) -> Motion:
    count = draw(st.integers(1, 12))
    steps = draw(st.lists(st.floats(1e-3, 100.0), min_size=count, max_size=count))
    start = draw(st.floats(0.0, 2e9))
    times = list(np.cumsum(steps) + start)
    if len(set(times)) != count or np.any(np.diff(times) <= 0):
        times = [start + i for i in range(count)]
    xyz = np.array(draw(st.lists(st.tuples(_finite, _finite, _finite), min_size=count,
                                 max_size=count)), dtype=float)
    quat = np.array(draw(st.lists(st.tuples(_unit, _unit, _unit, _unit), min_size=count,
                                  max_size=count)), dtype=float)
    return _motion(times, xyz, quat)


@settings(max_examples=40, deadline=None)
@given(_trajectories())
def test_traj_round_trip_is_exact(tmp_path_factory: pytest.TempPathFactory, motion: Motion) -> None:
    out = tmp_path_factory.mktemp("rt") / "h.traj"
    mk.write(out, motion)
    again = mk.read(out)
    assert np.array_equal(again.tracks["root"].data, motion.tracks["root"].data)
    assert np.array_equal(again.tracks["root"].times, motion.tracks["root"].times)


@settings(max_examples=40, deadline=None)
@given(_trajectories(), st.sampled_from(["tum", "kitti", "euroc"]))
def test_fixed_point_round_trips(tmp_path_factory: pytest.TempPathFactory, motion: Motion,
                                 fmt: str) -> None:
    folder = tmp_path_factory.mktemp("rt")
    out = folder / f"h.{'csv' if fmt == 'euroc' else fmt}"
    options = {"times": folder / "times.txt"} if fmt == "kitti" else {}
    mk.write(out, motion, format=fmt, precision=9, **options)
    again = mk.read(out, format=fmt, **options).tracks["root"]
    root = motion.tracks["root"]
    np.testing.assert_allclose(again.data[:, :3], root.data[:, :3], atol=1e-9, rtol=0)
    sign = np.sign(np.sum(again.data[:, 3:] * root.data[:, 3:], axis=1, keepdims=True))
    np.testing.assert_allclose(again.data[:, 3:] * sign, root.data[:, 3:], atol=5e-9)
    np.testing.assert_allclose(again.times, root.times, atol=1e-6 if fmt == "euroc" else 1e-9,
                               rtol=0)


@settings(max_examples=40, deadline=None)
@given(start=st.integers(2**53, 9 * 10**18),  # where float64 cannot hold every ns
       steps=st.lists(st.integers(10_000, 10**12), min_size=1, max_size=20))
def test_euroc_any_int64_stamps_round_trip_exactly(tmp_path_factory: pytest.TempPathFactory,
                                                   start: int, steps: list[int]) -> None:
    ns = start + np.cumsum([0, *steps], dtype=np.int64)
    motion = Motion()
    pose = np.tile([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0], (ns.size, 1))
    motion.add(Track("root", "pose", pose, Timeline.from_nanoseconds(ns)))
    out = tmp_path_factory.mktemp("ns") / "e.csv"
    mk.write(out, motion, format="euroc")
    assert mk.read(out, format="euroc").tracks["root"].timeline.stamps_ns.tolist() == ns.tolist()


def test_euroc_writes_float_seconds_as_their_nearest_nanoseconds(tmp_path: Path) -> None:
    from motionkit.model.timeline import seconds_to_ns

    times = 1.7e9 + np.cumsum(np.random.default_rng(4).uniform(0.001, 0.02, size=400))
    naive = np.round(times * 1e9).astype(np.int64)  # off by up to ~128 ns here
    exact = seconds_to_ns(times)
    assert np.any(naive != exact)
    motion = Motion()
    pose = np.tile([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0], (times.size, 1))
    motion.add(Track("root", "pose", pose, Timeline.stamped(times)))
    mk.write(tmp_path / "f.csv", motion, format="euroc")
    again = mk.read(tmp_path / "f.csv", format="euroc").tracks["root"].timeline
    assert again.stamps_ns.tolist() == exact.tolist()


def test_euroc_ns_round_trip_exact(tmp_path: Path) -> None:
    # the last two are no float64 numbers (beyond 2**53 and not multiples of 256)
    ns = np.array([1403715524907143168, 1403715524912143104, 1403715524917143040,
                   1403715524917144041, 1403715524922143001])
    motion = Motion()
    pose = np.tile([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0], (ns.size, 1))
    motion.add(Track("root", "pose", pose, Timeline.from_nanoseconds(ns)))
    for fmt, name in (("euroc", "e.csv"), ("tum", "e.tum"), ("traj", "e.traj")):
        mk.write(tmp_path / name, motion, format=fmt)
    assert list(mk.read(tmp_path / "e.csv").tracks["root"].timeline.stamps_ns) == list(ns)
    assert (tmp_path / "e.tum").read_text().startswith("1403715524.907143168 0.000000000")
    traj = mk.read(tmp_path / "e.traj", time_unit="s").tracks["root"]
    np.testing.assert_array_equal(traj.times, ns / 1e9)


def test_kitti_without_times_refuses_tum(tmp_path: Path) -> None:
    kitti = _write(tmp_path, "1 0 0 0 0 1 0 0 0 0 1 0\n1 0 0 1 0 1 0 0 0 0 1 0\n", "k.txt")
    motion = mk.read(kitti)
    assert motion.meta["kitti"]["time"] == "index"
    with pytest.raises(mk.ConversionError, match="frame numbers"):
        mk.write(tmp_path / "k.tum", motion)
    mk.write(tmp_path / "k2.kitti", motion)  # index times: nothing lost in KITTI


@pytest.mark.parametrize("block", [1, 7, 64, 1000])
def test_small_blocks_give_the_same_answer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           block: int) -> None:
    from motionkit.formats.trajectory import _text

    rows = [f"{i}.5 {i} {-i}.25 3 0 0 0 1" for i in range(40)]
    rows.insert(0, "timestamp x y z qx qy qz qw")
    rows.insert(7, "# a comment in the middle")
    rows.insert(20, "")
    text = "\r\n".join(rows) + "\r\n"
    path = _write(tmp_path, text)
    expected = mk.read(path, format="tum").tracks["root"]
    monkeypatch.setattr(_text, "_BLOCK", block)
    root = mk.read(path, format="tum").tracks["root"]
    np.testing.assert_array_equal(root.data, expected.data)
    np.testing.assert_array_equal(root.times, np.arange(40) + 0.5)
    bad = _write(tmp_path, text.replace("30.5 30", "30.5 3x0"), "bad.tum")
    with pytest.raises(FormatError) as info:
        mk.read(bad, format="tum")
    assert (info.value.line, info.value.column) == (34, 6)


def _both_paths(path: Path, monkeypatch: pytest.MonkeyPatch, **options: object) -> list[object]:
    """Read with the optional polars parser forced on, then with NumPy only."""
    from motionkit.formats.trajectory import _text

    results: list[object] = []
    for fast in (True, False):
        use_polars(monkeypatch, fast)
        monkeypatch.setattr(_text, "_BLOCK", 256)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", MotionkitWarning)
                results.append(mk.read(path, **options).tracks["root"].data)
        except FormatError as exc:
            results.append((exc.line, exc.column, exc.message))
    return results


def test_fast_parser_equals_numpy_bit_for_bit(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    require_peer("polars")
    rng = np.random.default_rng(5)
    table = np.column_stack([np.arange(300) * 0.1 + 1.7e9, rng.normal(size=(300, 3)) * 1e3,
                             rng.normal(size=(300, 4))])
    table[:, 4:] /= np.linalg.norm(table[:, 4:], axis=1, keepdims=True)
    text = "\n".join(" ".join(repr(v) for v in row) for row in table.tolist()) + "\n"
    fast, slow = _both_paths(_write(tmp_path, text), monkeypatch)
    assert isinstance(fast, np.ndarray) and np.array_equal(fast, slow)
    np.testing.assert_array_equal(fast[:, :3], table[:, 1:4])


@pytest.mark.parametrize("bad", ["1 2 3 4 5 6 7 8 9", "1 2 3", "1 2 3  4 0 0 0 1",
                                 "1 2 3 x 0 0 0 1", "   ", "1 2 3 4 0 0 0 1 # note",
                                 "\t1 2 3 4 0 0 0 1", "1 2 3 4 0 0 0 nan"])
def test_fast_parser_falls_back_to_the_strict_path(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch,
                                                   bad: str) -> None:
    require_peer("polars")
    rows = [f"{i} {i} 0 0 0 0 0 1" for i in range(60)]
    rows[41] = bad
    fast, slow = _both_paths(_write(tmp_path, "\n".join(rows) + "\n"), monkeypatch,
                             format="tum")
    if isinstance(slow, np.ndarray):
        assert np.array_equal(fast, slow, equal_nan=True)  # type: ignore[arg-type]
    else:
        assert fast == slow and slow[0] == 42


def test_extra_columns_are_named_and_kept_when_asked() -> None:
    path = corpus_file("trajectory", "open_vins", "neighborhood_01.txt")  # + 12 covariances
    with pytest.raises(mk.FormatError, match=r"20 numbers.*format='tum'.*extra='NAME'"):
        mk.read(path)
    with pytest.warns(mk.MotionkitWarning, match="columns after the 8th ignored"):
        plain = mk.read(path, format="tum")
    assert list(plain.tracks) == ["root"]
    kept = mk.read(path, format="tum", extra="covariance")
    covariance = kept.tracks["covariance"]
    assert covariance.labels is not None and covariance.labels[0] == "Pr11"
    assert covariance.labels[-1] == "Pt33"
    first = np.array(path.read_text().splitlines()[1].split(), dtype=float)  # row 1, by hand
    np.testing.assert_array_equal(covariance.data[0], first[8:])
    np.testing.assert_array_equal(kept.tracks["root"].data, plain.tracks["root"].data)

"""trajectopy ASCII: our own fixtures for what no corpus file has, and the error table."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

import motionkit as mk
from conftest import DATA as FIXTURES
from conftest import require_peer, use_polars
from motionkit.errors import ConversionError, FormatError, MotionkitWarning
from motionkit.model import Motion, Timeline, Track
from motionkit.spatial import gpstime
from motionkit.spatial.quaternion import multiply, rotate

DATA = FIXTURES / "trajectory"


def _root(name: str, **options: object) -> Track:
    return mk.read(DATA / name, **options).tracks["root"]


def _axis_quat(axis: int, degrees: float) -> np.ndarray:
    q = np.zeros(4)
    q[axis] = np.sin(np.radians(degrees) / 2)
    q[3] = np.cos(np.radians(degrees) / 2)
    return q


def test_datetime_with_a_real_time_zone() -> None:
    root = _root("datetime_berlin.traj")
    # winter: UTC+1, summer: UTC+2 (trajectopy 5 would read both as UTC)
    np.testing.assert_array_equal(root.times, [1704106800.0, 1719828000.5])
    np.testing.assert_array_equal(root.data[:, :3], [[1, 2, 3], [4, 5, 6]])
    assert root.attrs["orientation"] is False


def test_split_date_and_time_columns_with_tab_delimiter() -> None:
    root = _root("split_date_time_tab.traj")
    np.testing.assert_array_equal(root.times, [1704110400.25, 1704110401.25])
    np.testing.assert_array_equal(root.data[:, 2], [3, 4])


def test_gps_week_and_seconds_across_a_leap_second() -> None:
    root = _root("gps_leap.traj")
    # week 1930 began 17 s ahead of UTC; the 2017 leap second falls inside this span
    np.testing.assert_array_equal(root.times, [1483228783.0, 1483228882.0])


def test_datetime_in_gps_time() -> None:
    np.testing.assert_array_equal(_root("datetime_gps.traj").times,
                                  [1483228783.0, 1483228882.0])


def test_leap_second_table_by_date() -> None:
    assert gpstime.leap_seconds_at_unix(1483228799.0) == 17
    assert gpstime.leap_seconds_at_unix(1483228800.0) == 18
    assert gpstime.leap_seconds_at_unix(1000000000.0) == 13  # 2001
    unix = np.array([400000000.0, 1300000000.0, 1700000000.0])
    np.testing.assert_array_equal(gpstime.gps_to_unix(gpstime.unix_to_gps(unix)), unix)


def test_euler_degrees_extrinsic_xyz() -> None:
    root = _root("euler_xyz_deg.traj")
    np.testing.assert_allclose(root.data[0, 3:], _axis_quat(2, 90), atol=1e-12)
    expected = multiply(_axis_quat(2, 90), _axis_quat(0, 90))  # about x first, then fixed z
    sign = np.sign(np.dot(root.data[1, 3:], expected))
    np.testing.assert_allclose(root.data[1, 3:] * sign, expected, atol=1e-12)


def test_euler_degrees_intrinsic_zyx() -> None:
    root = _root("euler_ZYX_deg.traj")
    np.testing.assert_allclose(root.data[0, 3:], _axis_quat(2, 90), atol=1e-12)
    expected = multiply(_axis_quat(2, 90), _axis_quat(0, 90))  # Z, then the new X
    sign = np.sign(np.dot(root.data[1, 3:], expected))
    np.testing.assert_allclose(root.data[1, 3:] * sign, expected, atol=1e-12)


def test_ned_becomes_enu_and_body_axes_are_kept() -> None:
    motion = mk.read(DATA / "ned.traj")
    root = motion.tracks["root"]
    np.testing.assert_allclose(root.data[0, :3], [2, 1, -3])
    np.testing.assert_allclose(motion.tracks["velocity"].data, [[0, 1, 0], [0, 0, -1]])
    q = root.data[0, 3:]
    np.testing.assert_allclose(rotate(q, [1, 0, 0]), [0, 1, 0], atol=1e-12)  # body x north
    np.testing.assert_allclose(rotate(q, [0, 0, 1]), [0, 0, -1], atol=1e-12)  # body z down
    assert motion.meta["nframe"] == "enu"
    assert motion.meta["traj"]["file_nframe"] == "ned"


def test_ned_keeps_nan_in_its_own_coordinate(tmp_path: Path) -> None:
    path = _write(tmp_path, "#nframe ned\n" + HEAD + "1,nan,2,3\n")
    np.testing.assert_array_equal(mk.read(path).tracks["root"].data[0, :3], [2, np.nan, -3])


def test_spaced_header_key_warns(tmp_path: Path) -> None:
    with pytest.warns(MotionkitWarning, match="is a comment, not a header"):
        mk.read(_write(tmp_path, "# fields t,px,py,pz\n1,2,3,4,0,0,0,1\n"))


def test_epsg_4326_kept_as_metadata() -> None:
    motion = mk.read(DATA / "epsg4326.traj")
    assert motion.meta["epsg"] == 4326
    np.testing.assert_array_equal(motion.tracks["root"].data[:, 0], [50.7, 50.7001])


def test_epsg_4326_to_local_enu_and_utm() -> None:
    require_peer("pyproj")
    local = mk.read(DATA / "epsg4326.traj", local_enu=True)
    xyz = local.tracks["root"].data[:, :3]
    north = xyz[1] - xyz[0]
    assert local.meta["epsg"] == 0
    assert abs(north[1] - 11.13) < 0.02 and abs(north[0]) < 1e-6 and abs(north[2]) < 1e-3
    utm = mk.read(DATA / "epsg4326.traj", to_epsg=25832).tracks["root"].data
    assert 3.5e5 < utm[0, 0] < 4.5e5 and 5.5e6 < utm[0, 1] < 5.7e6  # easting, northing


@pytest.mark.parametrize("name", ["semicolon_unquoted.traj", "semicolon_quoted.traj"])
def test_semicolon_delimiter_quoted_or_not(name: str) -> None:
    root = _root(name)
    np.testing.assert_array_equal(root.times, [1700000000.0, 1700000001.0])
    np.testing.assert_array_equal(root.data[:, :3], [[1, 2, 3], [4, 5, 6]])


def test_bom_and_crlf() -> None:
    motion = mk.read(DATA / "bom_crlf.traj")
    assert motion.meta["name"] == "bom crlf"
    np.testing.assert_array_equal(motion.tracks["root"].times, [1, 2])


def _write(tmp_path: Path, text: str, name: str = "bad.traj") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


HEAD = "#fields t,px,py,pz\n"
ERRORS = [
    ("#fields t,px,py\n1,2,3\n", "px, py but not pz", 1),
    ("#fields t,px,py,pz,qx,qy,qz,qw\n1,2,3,4\n", "names 8 columns", 2),
    (HEAD + "1,2,3,4\n2,3,4\n", "expected 4 fields, found 3", 3),
    (HEAD + "1,2,3,4\n2,3,abc,5\n", "not a number: 'abc'", 3),
    (HEAD + "1,2,3,4\n2,3,,5\n", "not a number", 3),
    ("#fields t,px,py,pz,qx,qy,qz,qw\n1,0,0,0,0,0,0,1\n2,0,0,0,0,0,0,0\n", "zero", 3),
    ("#time_format gpst\n" + HEAD + "1,2,3,4\n", "unknown #time_format", 1),
    ("#sorting fancy\n" + HEAD + "1,2,3,4\n", "unknown #sorting", 1),
    ("#nframe nwu\n" + HEAD + "1,2,3,4\n", "permutation", 1),
    ("#epsg abc\n" + HEAD + "1,2,3,4\n", "integer", 1),
    ("#rot_unit degree\n#fields t,px,py,pz,ex,ey,ez\n1,2,3,4,0,0,0\n", "'rad' or 'deg'", 1),
    ("#euler_rot_seq xzz\n#fields t,px,py,pz,ex,ey,ez\n1,2,3,4,0,0,0\n", "three axes", 1),
    ("#time_format datetime\n" + HEAD + "2024-01-01 12:00,1,2,3\n", "does not match", 3),
    ("#time_format datetime\n#datetime_timezone Mars/Base\n" + HEAD + "x,1,2,3\n",
     "unknown time zone", 2),
    ("#time_format gps_sow\n" + HEAD + "1,2,3,4\n", "needs #gps_week", 1),
    ("#fields t,t,px,py,pz\n1,2,3,4,5\n", "need #time_format datetime", 1),
    ("#fields t, px, py, pz, foo\n1,2,3,4,5\n", "unknown field 'foo'", 1),
    ("#fields t,px,px,py,pz\n1,2,3,4,5\n", "appears twice", 1),
    ("#delimiter ab\n" + HEAD + "1,2,3,4\n", "one character", 1),
    ("#nframe end\n#fields t,px,py,pz,qx,qy,qz,qw\n1,0,0,0,0,0,0,1\n", "left-handed", 1),
    ("#time_unit ns\n#time_offset nan\n" + HEAD + "1,0,0,0\n", "finite number", 2),
    ("#time_unit ns\n#time_offset 1e300\n" + HEAD + "1,0,0,0\n", "int64 range", 2),
    ("#time_unit ns\n#time_offset 9e9\n" + HEAD + "9223372036854775000,0,0,0\n",
     "int64 range", 2),
    ("#time_offset inf\n" + HEAD + "1,0,0,0\n", "finite number", 1),
    (HEAD + "1,0,0,0\nnan,0,0,0\n", "not a finite number", 3),
    ("#time_format gps_sow\n#gps_week 2000\n" + HEAD + "1,0,0,0\n# note\ninf,0,0,0\n",
     "not a finite number", 6),
]


@pytest.mark.parametrize(("text", "message", "line"), ERRORS)
def test_error_table(tmp_path: Path, text: str, message: str, line: int) -> None:
    with pytest.raises(FormatError, match=message) as info:
        mk.read(_write(tmp_path, text))
    assert info.value.line == line
    assert info.value.path is not None and info.value.path.endswith("bad.traj")


def test_error_names_the_column(tmp_path: Path) -> None:
    with pytest.raises(FormatError) as info:
        mk.read(_write(tmp_path, HEAD + "1,2,3,4\n2, 3,x5,5\n"))
    assert (info.value.line, info.value.column) == (3, 6)
    with pytest.raises(FormatError) as info:
        mk.read(_write(tmp_path, "#epsg abc\n" + HEAD))
    assert (info.value.line, info.value.column) == (1, 7)


def test_warnings_for_unknown_keys_duplicates_and_unsorted(tmp_path: Path) -> None:
    text = "#colour blue\n" + HEAD + "3,0,0,0\n1,1,1,1\n1,2,2,2\n"
    path = _write(tmp_path, text)
    with pytest.warns(MotionkitWarning) as caught:
        kept = mk.read(path)
    messages = " ".join(str(w.message) for w in caught)
    assert "unknown header key #colour" in messages and ":1:" in messages
    assert "backwards" in messages and "duplicate" in messages
    np.testing.assert_array_equal(kept.tracks["root"].times, [3, 1, 1])  # kept as in file
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tidy = mk.read(path, sort=True, dedupe=True)
    np.testing.assert_array_equal(tidy.tracks["root"].times, [1, 3])
    np.testing.assert_array_equal(tidy.tracks["root"].data[:, 0], [1, 0])


def test_time_unit_and_offset(tmp_path: Path) -> None:
    path = _write(tmp_path, "#time_offset 0.5\n" + HEAD + "1700000000123456789,1,2,3\n"
                  "1700000000123456790,1,2,3\n")
    root = mk.read(path, time_unit="ns").tracks["root"]
    assert root.timeline.stamps_ns is not None
    assert list(root.timeline.stamps_ns) == [1700000000623456789, 1700000000623456790]
    ms = _write(tmp_path, "#time_unit ms\n" + HEAD + "1500,1,2,3\n", "ms.traj")
    assert mk.read(ms).tracks["root"].times[0] == 1.5


def test_whitespace_and_named_delimiters(tmp_path: Path) -> None:
    spaced = _write(tmp_path, HEAD + "1  2\t3   4\n2 3 4 5\n", "s.traj")
    np.testing.assert_array_equal(mk.read(spaced).tracks["root"].data[:, 0], [2, 3])
    tab = _write(tmp_path, '#delimiter "tab"\n' + HEAD + "1\t2\t3\t4\n", "t.traj")
    assert mk.read(tab).tracks["root"].data[0, 2] == 4


def test_legacy_sorting_and_empty_file(tmp_path: Path) -> None:
    legacy = mk.read(_write(tmp_path, "#sorting spatial\n" + HEAD + "1,2,3,4\n"))
    assert legacy.meta["sorting"] == "arc_length"
    empty = mk.read(_write(tmp_path, HEAD, "empty.traj"))
    assert empty.frames == 0


def test_sniff_routes_shared_extensions(tmp_path: Path) -> None:
    traj_txt = _write(tmp_path, HEAD + "1,2,3,4\n", "a.txt")
    assert mk.read(traj_txt).meta["source_format"] == "traj"
    tum_txt = _write(tmp_path, "1 2 3 4 0 0 0 1\n", "b.txt")
    assert mk.read(tum_txt).meta["source_format"] == "tum"
    kitti_txt = _write(tmp_path, "1 0 0 1 0 1 0 2 0 0 1 3\n", "c.txt")
    assert mk.read(kitti_txt).meta["source_format"] == "kitti"
    traj_csv = _write(tmp_path, HEAD + "1,2,3,4\n", "d.csv")
    assert mk.read(traj_csv).meta["source_format"] == "traj"
    euroc_csv = _write(tmp_path, "1403715524907143168,1,2,3,1,0,0,0\n", "e.csv")
    assert mk.read(euroc_csv).meta["source_format"] == "euroc"


def test_writer_layout_and_refusals(tmp_path: Path) -> None:
    timeline = Timeline.stamped([0.0, 0.1])
    motion = Motion(meta={"name": "w", "epsg": 25832, "sorting": "arc_length"})
    motion.add(Track("root", "pose", [[1, 2, 3, 0, 0, 0, 1], [4, 5, 6, 0, 0, 0, 1]], timeline))
    motion.add(Track("arc_length", "value", [0.0, 5.196152422706632], timeline))
    out = tmp_path / "w.traj"
    mk.write(out, motion)
    lines = out.read_text().splitlines()
    assert lines[:5] == ["#epsg 25832", "#name w", "#nframe enu", "#sorting path_length",
                         "#fields t,l,px,py,pz,qx,qy,qz,qw"]
    assert lines[6] == "0.1,5.196152422706632,4.0,5.0,6.0,0.0,0.0,0.0,1.0"
    mk.write(out, motion, precision=3)
    assert out.read_text().splitlines()[6] == "0.100,5.196,4.000,5.000,6.000,0.000,0.000,0.000,1.000"
    joints_only = Motion()
    joints_only.add(Track("joints", "value", np.zeros((2, 3)), timeline))
    with pytest.raises(ConversionError, match="root pose"):
        mk.write(out, joints_only)
    motion.add(Track("joints", "value", np.zeros((2, 3)), timeline))
    before = out.read_bytes()
    with pytest.raises(ConversionError, match="joints"):
        mk.write(out, motion)
    assert out.read_bytes() == before  # refused write leaves the old file
    with pytest.warns(MotionkitWarning, match="joints"):
        mk.write(out, motion, lossy=True)


def test_links_without_root_use_part_zero(tmp_path: Path) -> None:
    timeline = Timeline.uniform(10.0, 2)
    links = np.zeros((2, 1, 7))
    links[:, 0, 6] = 1.0
    links[1, 0, 0] = 2.5
    motion = Motion()
    motion.add(Track("links", "pose", links, timeline, labels=["WAIST"]))
    with pytest.raises(ConversionError, match="the labels of track 'links'"):
        mk.write(tmp_path / "l.traj", motion)  # .traj has no place for the link's name
    with pytest.warns(MotionkitWarning, match="labels"):
        mk.write(tmp_path / "l.traj", motion, lossy=True)
    np.testing.assert_array_equal(mk.read(tmp_path / "l.traj").tracks["root"].data[:, 0],
                                  [0.0, 2.5])


def test_datetime_rows_with_quaternions(tmp_path: Path) -> None:
    text = ("#time_format datetime\n#fields t,px,py,pz,qx,qy,qz,qw,vx,vy,vz\n"
            "2024-01-01 00:00:00.0,1,2,3,0,0,2,0,7,8,9\n")
    motion = mk.read(_write(tmp_path, text))
    np.testing.assert_array_equal(motion.tracks["root"].data, [[1, 2, 3, 0, 0, 1, 0]])
    np.testing.assert_array_equal(motion.tracks["velocity"].data, [[7, 8, 9]])
    assert motion.tracks["root"].times[0] == 1704067200.0


@pytest.mark.parametrize("fast", [False, True])
def test_skipped_and_extra_columns_may_hold_text(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 fast: bool) -> None:

    if fast:
        use_polars(monkeypatch, True)
    text = "#fields t,-,px,py,pz\n1,ok,2,3,4,note\n2,,5,6,7,x\n"
    with pytest.warns(MotionkitWarning, match="beyond #fields"):
        root = mk.read(_write(tmp_path, text)).tracks["root"]
    np.testing.assert_array_equal(root.data[:, :3], [[2, 3, 4], [5, 6, 7]])
    with pytest.raises(FormatError, match="not a number: 'x'") as info:
        mk.read(_write(tmp_path, "#fields t,-,px,py,pz\n1,ok,2,3,4\n2,a,x,6,7\n", "b.traj"))
    assert (info.value.line, info.value.column) == (3, 5)
    with pytest.raises(FormatError, match="expected 5 fields, found 4") as info:
        mk.read(_write(tmp_path, "#fields t,-,px,py,pz\n1,ok,2,3,4\n2,a,5,6\n", "c.traj"))
    assert info.value.line == 3  # the short row, not the text in the skipped column before it


def test_datetime_rows_checked_like_numeric_ones(tmp_path: Path) -> None:
    head = "#time_format datetime\n#fields t,px,py,pz,-\n"
    row = "2024-01-01 00:00:00.0,1,2,3,note\n"
    with pytest.warns(MotionkitWarning, match="1 column\\(s\\) beyond #fields"):
        root = mk.read(_write(tmp_path, head + row.replace("note", "note,x"))).tracks["root"]
    np.testing.assert_array_equal(root.data[0, :3], [1, 2, 3])
    with pytest.raises(FormatError, match="expected 5 fields, found 6") as info:
        mk.read(_write(tmp_path, head + row + row.replace("note", "a,b"), "d.traj"))
    assert info.value.line == 4
    with pytest.raises(FormatError, match="not a number: 'y'") as info:
        mk.read(_write(tmp_path, head + row + row.replace(",2,", ",y,"), "e.traj"))
    assert (info.value.line, info.value.column) == (4, 25)


def test_header_lines_after_the_data_apply(tmp_path: Path) -> None:
    path = _write(tmp_path, HEAD + "1,2,3,4\n2,3,4,5\n#time_offset 10\n#name late\n")
    motion = mk.read(path)
    np.testing.assert_array_equal(motion.tracks["root"].times, [11, 12])
    assert motion.meta["name"] == "late"


@pytest.mark.parametrize(("name", "fmt"), [("e.tum", "tum"), ("e.kitti", "kitti"),
                                           ("e.csv", "euroc"), ("e.traj", "traj")])
def test_empty_files_give_empty_trajectories(tmp_path: Path, name: str, fmt: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MotionkitWarning)
        motion = mk.read(_write(tmp_path, "# nothing here\n", name), format=fmt)
    assert motion.frames == 0


@pytest.mark.parametrize(("key", "value"), [("epsg", 25832.5), ("epsg", "EPSG:4326"),
                                            ("epsg", True), ("sorting", "banana")])
def test_header_values_traj_cannot_say_are_named(tmp_path: Path, key: str, value: object) -> None:
    motion = Motion(meta={key: value})
    root = np.zeros((2, 7))
    root[:, 6] = 1.0
    motion.add(Track("root", "pose", root, Timeline.uniform(10.0, 2)))
    with pytest.raises(ConversionError, match=f"metadata '{key}'"):
        mk.write(tmp_path / "m.traj", motion)

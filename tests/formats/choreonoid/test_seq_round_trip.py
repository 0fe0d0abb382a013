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
    with pytest.raises(mk.ConversionError, match=r"nanosecond.*pass lossy=True to"):
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
    from motionkit.formats.loss import ns_changed

    times = sorted(seconds)
    exact = [round(Fraction(t) * 10**9) for t in times]  # ties to even, as np.round
    ns = [n + shift * (i == 0) for i, n in enumerate(exact)]
    changed = ns_changed(fabricated(times, ns))
    assert changed == abs(shift)


# -- track attributes (r04) -----------------------------------------------------------------
@pytest.mark.parametrize("version", [1, 2, 4])
@pytest.mark.parametrize("fast", [True, False])
def test_plain_track_attributes_survive(tmp_path: Path, version: int, fast: bool) -> None:
    motion = mk.Motion()
    uniform = mk.Timeline.uniform(30.0, 2)
    motion.add(mk.Track("root", "pose", np.tile(UNIT, (2, 1)), uniform,
                        attrs={"orientation": False, "topic": "/odom", "frame_id": "map"}))
    motion.add(mk.Track("zmp", "vector3", np.zeros((2, 3)), uniform,
                        attrs={"root_relative": True, "source": {"n": [1, 2.5, None]}}))
    motion.add(mk.Track("ZMP", "vector3", np.ones((2, 3)), uniform,
                        attrs={"root_relative": True}))  # the v1 file cannot flag it natively
    motion.add(mk.Track("force", "value", np.ones((2, 2)), uniform,
                        attrs={"root_relative": None, "unit": "N"}))
    mk.write(tmp_path / "m.seq", motion, version=version)
    again = read_quietly(tmp_path / "m.seq", fast=fast)
    for name, track in motion.tracks.items():
        assert again.tracks[name].attrs == track.attrs, name


def test_a_choreonoid_zmp_flag_is_not_copied_into_the_extension(tmp_path: Path) -> None:
    motion = one_track("zmp", "vector3", np.zeros((2, 3)), {"root_relative": True})
    mk.write(tmp_path / "m.seq", motion)
    text = (tmp_path / "m.seq").read_text()
    assert "isRootRelative: true" in text
    assert "motionkit:" not in text


def test_position_only_root_stays_position_only_through_seq(tmp_path: Path) -> None:
    motion = one_track("root", "pose", np.tile(UNIT, (3, 1)), {"orientation": False})
    mk.write(tmp_path / "m.seq", motion)
    with pytest.raises(mk.ConversionError, match="identity quaternions"):
        mk.write(tmp_path / "m.tum", read_quietly(tmp_path / "m.seq"))


@pytest.mark.parametrize("value", [{1, 2}, (1, 2), np.int64(3), float("nan"), {1: "a"}])
def test_non_plain_attributes_are_refused_unless_lossy(tmp_path: Path, value: object) -> None:
    motion = one_track("joints", "value", np.zeros((2, 1)), {"odd": value, "unit": "rad"})
    with pytest.raises(mk.ConversionError, match=r"'odd' of track 'joints'.*lossy=True"):
        mk.write(tmp_path / "m.seq", motion)
    with pytest.warns(MotionkitWarning, match="'odd'"):
        mk.write(tmp_path / "m.seq", motion, lossy=True)
    assert read_quietly(tmp_path / "m.seq").tracks["joints"].attrs == {"unit": "rad"}
    assert motion.tracks["joints"].attrs["odd"] is value  # the caller's motion is untouched


def test_attrs_of_the_wrong_type_in_a_file_are_a_format_error(tmp_path: Path) -> None:
    mk.write(tmp_path / "m.seq", one_track("joints", "value", np.zeros((2, 1)), {"a": 1}))
    path = tmp_path / "m.seq"
    path.write_text(path.read_text().replace('"attrs": {"a": 1}', '"attrs": [1]'))
    with pytest.raises(mk.FormatError, match="attrs must be a JSON object"):
        mk.read(path)


# -- precision applies to frame values, rates are written as Choreonoid writes them (r08) -----
@pytest.mark.parametrize(("rate", "digits"), [(15.0, 1), (125.0, 2), (1000.0, 1), (30.0, 3)])
def test_precision_does_not_round_the_frame_rate(tmp_path: Path, rate: float, digits: int) -> None:
    motion = one_track("joints", "value", np.arange(6.0).reshape(3, 2) / 7,
                       timeline=mk.Timeline.uniform(rate, 3, start=1 / 3))
    mk.write(tmp_path / "m.seq", motion, precision=digits)
    again = read_quietly(tmp_path / "m.seq").tracks["joints"]
    assert again.timeline.same_as(motion.tracks["joints"].timeline)
    frame = f"%.{digits}g" % (1 / 7)
    assert frame in (tmp_path / "m.seq").read_text()


# -- link-position names (r09) --------------------------------------------------------------
POSES_1 = np.tile(UNIT, (3, 1))
CASES = [
    ("links", "pose", POSES_1),
    ("links", "pose", POSES_1[:, None, :]),
    ("LinkPosition", "pose", POSES_1),
    ("LinkPosition", "pose", POSES_1[:, None, :]),
    ("LinkPosition", "pose", np.stack([POSES_1, POSES_1], axis=1)),
    ("MultiLinkPositionSeq", "pose", POSES_1),
    ("root", "pose", POSES_1[:, None, :]),
    ("links", "value", np.zeros((3, 1))),
    ("links", "value", np.zeros((3, 2, 2))),
    ("links", "vector3", np.zeros((3, 3))),
    ("links", "vector3", np.zeros((3, 2, 3))),
    ("links", "quaternion", np.tile(UNIT[3:], (3, 1, 1))),
    ("root", "value", np.zeros((3, 1))),
    ("root", "vector3", np.zeros((3, 2, 3))),
    ("LinkPosition", "value", np.zeros((3, 1))),
]


@pytest.mark.parametrize(("name", "kind", "data"), CASES)
@pytest.mark.parametrize("version", [1, 2, 3, 4])
def test_link_position_names_and_shapes_survive(tmp_path: Path, name: str, kind: str,
                                                data: np.ndarray, version: int) -> None:
    motion = one_track(name, kind, data)
    mk.write(tmp_path / "m.seq", motion, version=version)
    for fast in (True, False):
        again = read_quietly(tmp_path / "m.seq", fast=fast)
        if name == "links" and kind == "pose" and data.ndim == 3:  # root: a view of part 0
            assert again.tracks.is_view("root")
            root = again.tracks["root"]
            assert root.data.tobytes() == again.tracks["links"].data[:, 0].tobytes()
        assert {n: (t.kind, t.data.shape) for n, t in again.tracks.items()} == \
            {name: (kind, data.shape)}


def test_links_beside_a_root_keep_both(tmp_path: Path) -> None:
    motion = one_track("links", "value", np.zeros((3, 2, 2)))
    motion.add(mk.Track("root", "pose", POSES_1, mk.Timeline.uniform(100.0, 3)))
    mk.write(tmp_path / "m.seq", motion)
    again = read_quietly(tmp_path / "m.seq")
    assert {n: t.data.shape for n, t in again.tracks.items()} == {"links": (3, 2, 2), "root": (3, 7)}


@pytest.mark.parametrize("extension", ['{"kind": "vector3"}', '{"kind": "value", "name": "links"}',
                                       '{"shape": [3], "kind": "vector3", "name": "links"}',
                                       '{"name": "links"}', '{"name": "root"}'])
@pytest.mark.parametrize("parts", [1, 2])
@pytest.mark.parametrize("seq_type", ["MultiSE3Seq", "MultiValueSeq"])
def test_odd_link_components_read_or_fail_with_a_format_error(tmp_path: Path, extension: str,
                                                              parts: int, seq_type: str) -> None:
    """(Written by the earlier writer for a value track named links: an IndexError.)"""
    frame = ", ".join(["[ 0, 0, 0, 1, 0, 0, 0 ]" if seq_type == "MultiSE3Seq" else "0"] * parts)
    path = tmp_path / "m.seq"
    path.write_text("type: CompositeSeq\nformatVersion: 2\nframeRate: 10\ncomponents:\n  -\n"
                    f"    type: {seq_type}\n    content: LinkPosition\n    numParts: {parts}\n"
                    f"    SE3Format: XYZQWQXQYQZ\n    motionkit: '{extension}'\n"
                    f"    frames:\n      - [ {frame} ]\n")
    for fast in (True, False):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                mk.read(path, fast=fast)
        except mk.FormatError:
            pass


def test_a_value_component_named_links_gives_no_root(tmp_path: Path) -> None:
    path = tmp_path / "m.seq"
    path.write_text("type: CompositeSeq\nformatVersion: 2\nframeRate: 10\ncomponents:\n  -\n"
                    "    type: MultiValueSeq\n    content: links\n    numParts: 14\n"
                    '    motionkit: \'{"shape": [2, 7]}\'\n'
                    "    frames:\n      - [ 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1 ]\n")
    again = read_quietly(path)
    assert {n: (t.kind, t.data.shape) for n, t in again.tracks.items()} == {"links": ("value", (1, 2, 7))}


# -- quotes in kept components (r12) --------------------------------------------------------
OPAQUE = """\
type: CompositeSeq
content: BodyMotion
formatVersion: 2
frameRate: 100
components:
  -
    type: MultiValueSeq
    content: JointDisplacement
    numParts: 1
    frames:
      - [ 1 ]
  -
    type: MultiDeviceStateSeq
    content: DeviceState
    frameRate: 100
    numParts: 1
    frames:
      - [ [ "on", '007', off, 1.5 ] ]
      - [ [ "", 'x''y', "a: b", 2 ] ]
"""


def test_quotes_in_kept_components_survive_on_both_paths(tmp_path: Path) -> None:
    path = tmp_path / "m.seq"
    path.write_text(OPAQUE)
    trees, texts = [], []
    for fast in (True, False):
        with pytest.warns(MotionkitWarning, match="kept verbatim"):
            motion = mk.read(path, fast=fast)
        opaque = motion.meta["choreonoid"]["opaque"]
        trees.append([(type(v).__name__, v) for row in opaque[0]["frames"] for v in row[0]])
        mk.write(tmp_path / f"{fast}.seq", motion)
        texts.append((tmp_path / f"{fast}.seq").read_text())
    assert trees[0] == trees[1]
    assert ("QuotedStr", "on") in trees[0] and ("str", "off") in trees[0]
    assert texts[0] == texts[1]
    assert '      - [ [ "on", "007", off, 1.5 ] ]\n' in texts[0]


@pytest.mark.parametrize("frames", ["      - [ &a [ *a ] ]\n",
                                    "      - [ &a [ 1, 2 ], [ *a, *a ], [ *a ] ]\n"])
def test_aliases_in_kept_frames_give_the_same_result_on_both_paths(tmp_path: Path, frames: str) -> None:
    path = tmp_path / "m.seq"
    path.write_text(OPAQUE.split("      - [ [")[0] + frames)
    results = []
    for fast in (True, False):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                results.append(mk.read(path, fast=fast).meta["choreonoid"]["opaque"])
            except mk.FormatError as exc:
                results.append(str(exc))
    assert results[0] == results[1]

"""Inputs found by review and fuzzing: the fast path never disagrees with YAML, no file
makes the reader work beyond its size, and the writer never produces an unreadable file."""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import numpy as np
import pytest

import motionkit as mk
from conftest import cpu_bound
from motionkit.ops import resample
from seqfiles import V2_TIMED, V4_ALL, v2_values


def write(tmp_path: Path, text: str | bytes, name: str = "m.seq") -> Path:
    path = tmp_path / name
    if isinstance(text, str):
        path.write_text(text, encoding="utf-8")
    else:
        path.write_bytes(text)
    return path


@pytest.mark.parametrize("frames", [
    "      - [ 1, 2 ]\n      - [ 5, 6 ]\n    - [ 3, 4 ]\n",   # a frame indented less
    "        - [ 1, 2 ]\n      - [ 3, 4 ]\n      - [ 5, 6 ]\n",  # the first indented more
])
def test_misindented_frames_are_an_error_on_both_paths(tmp_path: Path, frames: str) -> None:
    path = write(tmp_path, v2_values(frames))
    for fast in (True, False):
        with pytest.raises(mk.FormatError, match="YAML syntax error"):
            mk.read(path, fast=fast)


@pytest.mark.parametrize("mark", ["\u2028", "\u2029", "\u0085", "\r"])
def test_other_line_breaks_never_shift_frame_blocks(tmp_path: Path, mark: str) -> None:
    text = v2_values("      - [ 1, 2 ]\n").replace("numParts: 2\n", f"numParts: 2 # a{mark}b\n")
    text += ("  -\n    type: MultiValueSeq\n    content: Other\n    numParts: 2\n"
             "    frames:\n      - [ 666, 666 ]\n")
    path = write(tmp_path, text)
    try:
        slow = mk.read(path, fast=False)
    except mk.FormatError:
        with pytest.raises(mk.FormatError):
            mk.read(path)
        return
    fast = mk.read(path)
    assert fast.tracks["joints"].data.tolist() == slow.tracks["joints"].data.tolist() == [[1, 2]]


def test_nested_frames_of_kept_components_survive_a_fast_round_trip(tmp_path: Path) -> None:
    device = (
        "  -\n    type: MultiDeviceStateSeq\n    content: DeviceState\n    frame_rate: 100\n"
        "    num_parts: 1\n    components:\n      -\n        type: DeviceStateSeq\n"
        '        content: ForceSensorState\n        name: "RF"\n        frames:\n'
        "          - [ 0, 1, 2, 3, 4, 5, 6 ]\n          - [ 0.01, 1, 2, 3, 4, 5, 7 ]\n"
    )
    path = write(tmp_path, V4_ALL + device)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mk.MotionkitWarning)
        motion = mk.read(path)
        assert motion.meta == mk.read(path, fast=False).meta
    out = tmp_path / "out.seq"
    mk.write(out, motion, version=4)
    assert "          - [ 0.01, 1, 2, 3, 4, 5, 7 ]\n" in out.read_text()


def test_every_duplicate_component_is_kept(tmp_path: Path) -> None:
    text = "type: CompositeSeq\nformatVersion: 2\nframeRate: 10\ncomponents:\n" + "".join(
        f"  -\n    type: MultiValueSeq\n    content: Foo\n    numParts: 1\n"
        f"    frames:\n      - [ {value} ]\n" for value in (1, 2, 3))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        motion = mk.read(write(tmp_path, text))
    assert ["Foo_2" in str(w.message) for w in caught] == [True, False]
    assert "Foo_3" in str(caught[1].message)
    assert {name: t.data.item() for name, t in motion.tracks.items()} == \
        {"Foo": 1, "Foo_2": 2, "Foo_3": 3}


def _bounded(tmp_path: Path, text: str, seconds: float = 10.0, **options: object) -> None:
    """Reading must fail with a FormatError, within a bound on CPU work."""
    path = write(tmp_path, text)
    with cpu_bound(seconds), warnings.catch_warnings(), pytest.raises(mk.FormatError):
        warnings.simplefilter("ignore", mk.MotionkitWarning)
        mk.read(path, **options)


def test_many_parts_many_lines_does_not_build_a_huge_pattern(tmp_path: Path) -> None:
    frames = "      - [ 1 ]\n" * 20000
    _bounded(tmp_path, v2_values(frames, parts=250000))


def test_recursive_and_exponential_aliases_in_kept_components(tmp_path: Path) -> None:
    recursive = V4_ALL + "  -\n    type: Strange\n    extra: &a [ *a ]\n"
    _bounded(tmp_path, recursive)
    laughs = "    l0: &l0 [ x, x ]\n" + "".join(
        f"    l{i}: &l{i} [ *l{i - 1}, *l{i - 1} ]\n" for i in range(1, 40))
    _bounded(tmp_path, V4_ALL + "  -\n    type: Strange\n" + laughs)


def test_aliased_components_count_against_one_budget(tmp_path: Path) -> None:
    frames = "".join(f"[{i}], " for i in range(3000))
    text = ("type: CompositeSeq\nformatVersion: 2\nframeRate: 10\nc: &c { type: MultiValueSeq, "
            f"content: X, numParts: 1, frames: [ {frames} ] }}\ncomponents: [ "
            + ", ".join(["*c"] * 200) + " ]\n")
    _bounded(tmp_path, text)


def test_a_far_time_stamp_cannot_make_millions_of_frames(tmp_path: Path) -> None:
    _bounded(tmp_path, V2_TIMED.replace("[ 0.166666667, 5 ]", "[ 100000, 5 ]"),
             timed="choreonoid")


@pytest.mark.parametrize("name", ["-", "- x", "ZMP", "JointDisplacement", "RelativeZMP",
                                  "LinkPosition", "a: b", "#x", "naïve ✓ 🤖", "x\u2028y"])
def test_any_track_name_and_label_round_trips(tmp_path: Path, name: str) -> None:
    motion = mk.Motion()
    timeline = mk.Timeline.uniform(10, 2)
    motion.add(mk.Track(name, "value", np.ones((2, 2)), timeline, labels=[name, f"- {name}"]))
    motion.add(mk.Track("joints", "pose", np.tile([0, 0, 0, 0, 0, 0, 1.0], (2, 1)), timeline))
    out = tmp_path / "names.seq"
    mk.write(out, motion)
    again = mk.read(out)
    assert set(again.tracks) == {name, "joints"}
    assert again.tracks[name].labels == [name, f"- {name}"]
    assert again.tracks["joints"].kind == "pose"


def test_empty_tracks_are_refused_unless_lossy(tmp_path: Path) -> None:
    motion = mk.Motion()
    motion.add(mk.Track("joints", "value", np.ones((2, 1)), mk.Timeline.uniform(10, 2)))
    motion.add(mk.Track("nothing", "value", np.ones((2, 0)), mk.Timeline.uniform(10, 2)))
    with pytest.raises(mk.ConversionError, match="empty track"):
        mk.write(tmp_path / "e.seq", motion)
    with pytest.warns(mk.MotionkitWarning):
        mk.write(tmp_path / "e.seq", motion, lossy=True)
    assert list(mk.read(tmp_path / "e.seq").tracks) == ["joints"]


def test_stamps_keep_full_precision_whatever_the_digits(tmp_path: Path) -> None:
    motion = mk.Motion()
    stamps = [0.1, 0.1 + 1e-12, 0.3]
    motion.add(mk.Track("joints", "value", np.ones((3, 1)), mk.Timeline.stamped(stamps)))
    mk.write(tmp_path / "s.seq", motion, precision=9)
    assert mk.read(tmp_path / "s.seq").tracks["joints"].times.tolist() == stamps


@pytest.mark.parametrize("options", [{"version": "2"}, {"version": True}, {"version": 2.0},
                                     {"precision": "abc"}, {"precision": 1.5}, {"precision": 0}])
def test_writer_options_are_type_checked(tmp_path: Path, options: dict[str, object]) -> None:
    with pytest.raises(mk.ConversionError, match="must be"):
        mk.write(tmp_path / "o.seq", mk.read(write(tmp_path, V4_ALL)), **options)


@pytest.mark.parametrize("extension", ['{"start": "x"}', '{"start": null}', '{"shape": 5}',
                                       '{"kind": ["x"]}', '{"shape": [3]}', '[1]', "{bad"])
def test_bad_extension_keys_are_format_errors(tmp_path: Path, extension: str) -> None:
    text = v2_values("      - [ 1, 2 ]\n", extra=f"    motionkit: '{extension}'\n")
    with pytest.raises(mk.FormatError, match=r"motionkit|recorded shape"):
        mk.read(write(tmp_path, text))


def test_lenient_where_choreonoid_is(tmp_path: Path) -> None:
    text = v2_values("      - [ 1, 2 ]\n", extra="    numFrames: 2.0\n    partLabels: [ a ]\n")
    with pytest.warns(mk.MotionkitWarning) as caught:
        motion = mk.read(write(tmp_path, text))
    assert motion.tracks["joints"].labels is None
    assert {"numFrames says 2.0", "labels ignored"} <= {
        part for w in caught for part in ("numFrames says 2.0", "labels ignored")
        if part in str(w.message)}
    with pytest.warns(mk.MotionkitWarning, match="read as version 1"):
        mk.read(write(tmp_path, "formatVersion: 0\n" + V4_ALL.replace("format_version: 4\n", "")
                      .replace("CompositeSeq", "BodyMotion")))


@pytest.mark.parametrize("number", ["١٢", "１", "1.5f"])
def test_only_ascii_numbers(tmp_path: Path, number: str) -> None:
    with pytest.raises(mk.FormatError, match="must be a number"):
        mk.read(write(tmp_path, v2_values(f'      - [ "{number}", 2 ]\n')))


def test_sorted_keys_files_past_the_sniff_window_are_recognised(tmp_path: Path) -> None:
    import yaml

    frames = [[float(i), float(i) / 3] for i in range(4000)]
    doc = {"type": "CompositeSeq", "formatVersion": 2, "frameRate": 100, "components": [
        {"type": "MultiValueSeq", "content": "JointDisplacement", "numParts": 2,
         "frames": frames}]}
    path = write(tmp_path, yaml.safe_dump(doc), name="dumped.yaml")
    assert path.stat().st_size > 65536
    assert mk.read(path).tracks["joints"].data.tolist() == frames


def test_writes_keep_the_permissions_of_the_file_they_replace(tmp_path: Path) -> None:
    target = write(tmp_path, "old", name="target.seq")
    os.chmod(target, 0o600)
    mk.write(target, mk.read(write(tmp_path, V4_ALL)))
    assert target.read_text().startswith("type: CompositeSeq")
    assert (target.stat().st_mode & 0o777) == 0o600


def test_resampling_at_the_samples_own_times_changes_nothing() -> None:
    poses = np.tile([0.1, 0.2, 0.3, 0.0, 0.6, 0.0, 0.8000000004], (5, 1))
    motion = mk.Motion()
    motion.add(mk.Track("root", "pose", poses, mk.Timeline.uniform(100, 5)))
    assert resample(motion, 100).tracks["root"].data.tobytes() == poses.tobytes()


def test_a_broken_frame_line_inside_a_kept_component(tmp_path: Path) -> None:
    text = V4_ALL + ("  -\n    type: Unknown\n    frames:\n      - [ 1, 2\n      - [ 3 ]\n")
    with warnings.catch_warnings(), pytest.raises(mk.FormatError, match="YAML syntax error"):
        warnings.simplefilter("ignore", mk.MotionkitWarning)
        mk.read(write(tmp_path, text))

"""Choreonoid .seq on the real corpus files: reading, both parse paths, round trips, digits."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import motionkit as mk
from conftest import corpus_file, use_polars

MOTIONS = ["SR1WalkPattern.yaml", "SR1WalkPattern1.seq", "SR1WalkPattern3.seq"]
FRAMES = {"SR1WalkPattern.yaml": 6701, "SR1WalkPattern1.seq": 6701, "SR1WalkPattern3.seq": 4451}


@pytest.mark.parametrize("name", MOTIONS)
def test_corpus_file_reads_on_both_paths_to_identical_arrays(name: str) -> None:
    path = corpus_file("choreonoid", name)
    fast = mk.read(path)
    slow = mk.read(path, fast=False)
    joints = fast.tracks["joints"]
    assert joints.data.shape == (FRAMES[name], 29)
    assert joints.timeline.is_uniform and joints.timeline.rate == 500
    assert np.array_equal(joints.data, slow.tracks["joints"].data)
    assert joints.times[-1] == pytest.approx((FRAMES[name] - 1) / 500)


def test_first_frame_matches_the_text() -> None:
    motion = mk.read(corpus_file("choreonoid", "SR1WalkPattern1.seq"))
    first = motion.tracks["joints"].data[0]
    assert first[1] == -0.036 and first[9] == -1.57 and first[20] == 0.00349


def test_version_1_and_version_2_files_hold_identical_arrays() -> None:
    v1 = mk.read(corpus_file("choreonoid", "SR1WalkPattern.yaml"))
    v2 = mk.read(corpus_file("choreonoid", "SR1WalkPattern1.seq"))
    assert v1.meta["choreonoid"]["version"] == 1 and v2.meta["choreonoid"]["version"] == 2
    assert np.array_equal(v1.tracks["joints"].data, v2.tracks["joints"].data)


@pytest.mark.parametrize("version", [1, 2, 3, 4])
@pytest.mark.parametrize("name", MOTIONS)
def test_write_read_is_bitwise_exact(tmp_path: Path, name: str, version: int) -> None:
    original = mk.read(corpus_file("choreonoid", name))
    out = tmp_path / "out.seq"
    mk.write(out, original, version=version)
    again = mk.read(out)
    assert again.meta["choreonoid"]["version"] == version
    assert again.tracks["joints"].data.tobytes() == original.tracks["joints"].data.tobytes()
    assert again.tracks["joints"].timeline.same_as(original.tracks["joints"].timeline)


def test_six_digit_output_reproduces_the_sample_frames_byte_for_byte(tmp_path: Path) -> None:
    """SR1WalkPattern1.seq was written with %g; precision=6 gives the same frame lines."""
    source = corpus_file("choreonoid", "SR1WalkPattern1.seq")
    out = tmp_path / "p6.seq"
    mk.write(out, mk.read(source), precision=6)
    frame = re.compile(r"^ +- \[.*$", re.MULTILINE)
    assert frame.findall(out.read_text()) == frame.findall(source.read_text())


def test_nine_digit_output_uses_choreonoids_number_formatting(tmp_path: Path) -> None:
    motion = mk.Motion()
    values = np.array([[1.2e-05, 3.36862997123e-14, 500.0, -0.0, 0.1 + 0.2, -1.0, 123456789012.0]])
    motion.add(mk.Track("joints", "value", values, mk.Timeline.uniform(333.3333333333333, 1)))
    out = tmp_path / "p9.seq"
    mk.write(out, motion, precision=9)
    text = out.read_text()
    assert "      - [ 1.2e-05, 3.36862997e-14, 500, -0, 0.3, -1, 1.23456789e+11 ]\n" in text
    assert "frameRate: 333.333\n" in text  # the top node uses %g, like Choreonoid
    assert "    frameRate: 333.333333\n" in text  # components use %.9g, whatever the precision


def test_default_output_is_the_shortest_exact_text(tmp_path: Path) -> None:
    motion = mk.Motion()
    values = np.array([[0.1 + 0.2, 1e-05, 2.0, -0.0, 1 / 3]])
    motion.add(mk.Track("joints", "value", values, mk.Timeline.uniform(100, 1)))
    out = tmp_path / "lossless.seq"
    mk.write(out, motion)
    assert "- [ 0.30000000000000004, 1e-05, 2, -0, 0.3333333333333333 ]" in out.read_text()
    assert mk.read(out).tracks["joints"].data.tobytes() == values.tobytes()


def test_written_layout_is_choreonoids(tmp_path: Path) -> None:
    out = tmp_path / "v4.seq"
    mk.write(out, mk.read(corpus_file("choreonoid", "SR1WalkPattern3.seq")), version=4)
    raw = out.read_bytes()
    assert b"\r" not in raw and not re.search(rb" \n", raw)
    head = raw.decode().splitlines()[:13]
    assert head == [
        "type: CompositeSeq", "content: BodyMotion", "format_version: 4", "frame_rate: 500",
        "num_frames: 4451", "components:", "  -", "    type: MultiValueSeq",
        "    content: JointDisplacement", "    frame_rate: 500", "    num_frames: 4451",
        "    num_parts: 29", "    frames:",
    ]
    assert raw.decode().splitlines()[13].startswith("      - [ -7.779e-05, -0.378613, ")


@pytest.mark.parametrize("name", MOTIONS)
def test_polars_and_loadtxt_number_paths_agree_bitwise(
        name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    path = corpus_file("choreonoid", name)
    use_polars(monkeypatch, True)
    with_polars = mk.read(path).tracks["joints"].data
    use_polars(monkeypatch, False)
    with_numpy = mk.read(path).tracks["joints"].data
    assert with_polars.tobytes() == with_numpy.tobytes()

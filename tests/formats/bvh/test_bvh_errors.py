"""Broken and hostile BVH files: one clear line each, with file:line:column, and bounded
work before anything large is allocated."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from bvh_text import basic_bvh

import motionkit as mk

GOOD = basic_bvh("  OFFSET 0 0 0\n  CHANNELS 6 Xposition Yposition Zposition Zrotation "
                 "Xrotation Yrotation", "1 2 3 4 5 6 7 8 9\n1 2 3 4 5 6 7 8 9")


def _error(tmp_path: Path, text: str) -> str:
    path = tmp_path / "bad.bvh"
    path.write_text(text)
    with pytest.raises(mk.FormatError) as caught:
        mk.read(path)
    message = str(caught.value)
    assert "\n" not in message and message.startswith(str(path))
    return message[len(str(path)):]


@pytest.mark.parametrize(("change", "expected"), [
    (lambda t: t.replace("CHANNELS 3 Zrotation Xrotation Yrotation", "CHANNELS 3 Zrotation Xrotation"),
     r"^:10:5: CHANNELS 3: channel 3 is 'End', not one of Xposition … Zrotation"),
    (lambda t: t.replace("MOTION\n", ""), r"^:16:1: expected 'MOTION' or 'ROOT', found 'Frames:'"),
    (lambda t: t.replace("1 2 3 4 5 6 7 8 9\n1 2 3 4 5 6 7 8 9\n", "1 2 3 4 5 6 7 8 9\n"),
     r"^:17:1: Frames: 2 but the file has 1 rows"),
    (lambda t: t.replace("1 2 3 4 5 6 7 8 9\n1 2", "1 2 3 4 5 6 7 8 9\n1 x"),
     r"^:20:3: not a number: 'x'"),
    (lambda t: t.replace("1 2 3 4 5 6 7 8 9\n1 2 3", "1 2 3 4 5 6 7 8 9\n1 2"),
     r"^:20:1: a row of 8 numbers; each row has 9"),
    (lambda t: t.replace("Yrotation\n  JOINT", "Yscale\n  JOINT"),
     r"^:5:64: CHANNELS 6: channel 6 is 'Yscale'"),
    (lambda t: t.replace("OFFSET 0 -10 0", "OFFSET 0 ten 0"), r"^:8:14: OFFSET value must be a number"),
    (lambda t: t.replace("Frame Time: 0.5", "Frame Time: 0"), r"^:18:13: frame time must be a number of at"),
    (lambda t: t.replace("}\nMOTION", "}\nROOT Other {\nMOTION"), r"^:16:1: a second ROOT"),
    (lambda t: t.replace("JOINT Leg", "JOINT Hips"), r"^:6:3: joint name 'Hips' repeats"),
    (lambda t: t.replace("Zrotation Xrotation Yrotation\n    End", "Zrotation Zrotation Yrotation\n    End"),
     r"^:9:26: joint 'Leg' has two Zrotation channels"),
    (lambda t: t[:60], r"^:5:23: file ends where a channel name should be"),
    (lambda t: "HIERARCH" + t[9:], r"^:1:1: expected 'HIERARCHY'"),
], ids=["channel count", "missing MOTION", "fewer rows", "not a number", "short row",
        "unknown channel", "bad offset", "zero frame time", "second root", "repeated name",
        "repeated axis", "truncated header", "no HIERARCHY"])
def test_broken_files_say_what_and_where(tmp_path: Path, change: object, expected: str) -> None:
    assert callable(change)
    message = _error(tmp_path, change(GOOD))
    assert re.search(expected, message), message


def test_extra_rows_are_ignored_with_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "long.bvh"
    path.write_text(GOOD + "1 2 3 4 5 6 7 8 9\n")
    with pytest.warns(mk.MotionkitWarning, match="9 numbers after the 2 frames"):
        motion = mk.read(path)
    assert isinstance(motion, mk.Motion) and motion.frames == 2


def test_hostile_sizes_are_refused_before_allocating(tmp_path: Path) -> None:
    path = tmp_path / "huge.bvh"
    path.write_text(GOOD.replace("Frames: 2", "Frames: 999999999999"))
    with pytest.raises(mk.FormatError, match=r":17:1: Frames: 999999999999 but the file has 2 rows"):
        mk.read(path)
    deep = "HIERARCHY\n" + "ROOT a0 {\nOFFSET 0 0 0\nCHANNELS 0\n" + "".join(
        f"JOINT a{k} {{\nOFFSET 0 0 0\nCHANNELS 0\n" for k in range(1, 5000))
    path.write_text(deep)
    with pytest.raises(mk.FormatError, match="nesting deeper than 1000"):
        mk.read(path)
    empty = "HIERARCHY\nROOT a {\nOFFSET 0 0 0\nCHANNELS 0\n}\nMOTION\nFrames: 999999999999\n" \
        "Frame Time: 1\n\n"
    path.write_text(empty)
    with pytest.raises(mk.FormatError, match=r":7:1: Frames: 999999999999 but the file has 3 lines at most"):
        mk.read(path)

"""Writing files: atomic, and nothing left behind when a write fails; bounded reads."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

import motionkit as mk
from motionkit._io import atomic_write, read_bytes
from motionkit.errors import FormatError


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


def test_a_bounded_read_takes_only_a_regular_file_within_its_limit(tmp_path: Path) -> None:
    (tmp_path / "small").write_bytes(b"12345")
    assert read_bytes(tmp_path / "small", 5) == b"12345"
    with pytest.raises(FormatError, match="larger than 4 bytes"):
        read_bytes(tmp_path / "small", 4)
    os.mkfifo(tmp_path / "pipe")  # no writer: a blocking open would wait for ever
    (tmp_path / "zero").symlink_to("/dev/zero")  # a stat size of 0, and no end
    for name, kind in (("pipe", "a FIFO"), ("zero", "a character device"), (".", "a folder")):
        with pytest.raises(FormatError, match=f"is {kind}, not a regular file"):
            read_bytes(tmp_path / name, 1 << 20)
    with pytest.raises(FormatError, match="no such file"):
        read_bytes(tmp_path / "gone", 1)


def test_every_read_takes_only_a_regular_file(tmp_path: Path) -> None:
    """Without a limit too (the BVH, .seq, URDF, .skel, CSV and pickle readers): a FIFO
    with no writer is refused at once, not waited on, and /dev/zero is not read for ever."""
    os.mkfifo(tmp_path / "walk.bvh")
    (tmp_path / "zero.seq").symlink_to("/dev/zero")
    for name, kind in (("walk.bvh", "a FIFO"), ("zero.seq", "a character device")):
        with pytest.raises(FormatError, match=f"is {kind}, not a regular file"):
            read_bytes(tmp_path / name)
        with pytest.raises(FormatError, match=f"is {kind}, not a regular file"):
            mk.read(tmp_path / name)

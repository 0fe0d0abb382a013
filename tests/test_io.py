"""Writing files: atomic, and nothing left behind when a write fails."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

import motionkit as mk
from motionkit._io import atomic_write


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


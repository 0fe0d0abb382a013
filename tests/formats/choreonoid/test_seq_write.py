"""Writing .seq: what it refuses, non-finite spellings, version 1 and stamps."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import motionkit as mk
from seqfiles import V4_ALL


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


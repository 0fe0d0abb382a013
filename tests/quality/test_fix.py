"""``--fix``: the lift stands the lowest shape point on the ground in every preset, and a
spike refill rewrites only the spiky frames."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

import motionkit as mk
from conftest import corpus_file
from motionkit.quality import check
from motionkit.quality.fix import fix
from quality.clips import clip
from test_cli import run_cli


def _shifted(motion: mk.Motion, frame: int | None, axis: int, by: float) -> mk.Motion:
    """``motion`` with its root moved ``by`` m along ``axis`` on ``frame`` (every frame
    when None)."""
    root = np.asarray(motion.tracks["root"].data, dtype=np.float64).copy()
    root[slice(None) if frame is None else frame, axis] += by
    tracks = dict(motion.tracks)
    tracks["root"] = motion.tracks["root"].with_data(root)
    return mk.Motion(tracks, motion.skeleton, motion.terrain, dict(motion.meta))


@pytest.mark.parametrize("preset", ["default", "protomotions"])
@pytest.mark.parametrize("by", [-0.04, 0.03])
def test_the_lift_stands_the_lowest_shape_point_on_the_ground(preset: str, by: float) -> None:
    motion, skeleton = clip("g1_walk")
    moved = _shifted(motion, None, 2, by)
    fixed = fix(moved, skeleton, preset=preset, fixes=("lift",))
    lowest = check(fixed, skeleton).result("below_ground")
    assert lowest.constants["points"] == "lowest shape points"
    assert abs(lowest.value) < 1e-3, (preset, lowest.value)
    (line,) = fixed.meta["quality_fixes"]  # type: ignore[misc]
    assert line.startswith("lift:") and "lowest shape point" in line and "z = 0" in line


def test_the_protomotions_fix_written_stands_on_the_floor(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = corpus_file("containers", "characters", "g1.xml")
    out = tmp_path / "fixed.pkl"
    code, text, _ = run_cli(["check", str(corpus_file("mimickit", "g1_walk.pkl")), "--model",
                             str(model), "--preset", "protomotions", "--fix", str(out)], capsys)
    assert code == 0, text
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        written = mk.read(out, character=model)
        skeleton = mk.read(model)
    assert isinstance(written, mk.Motion) and isinstance(skeleton, mk.Skeleton)
    assert abs(check(written, skeleton).result("below_ground").value) < 1e-3


@pytest.mark.parametrize("frame", [0, 1, 60, -1])
def test_a_one_frame_spike_refills_only_that_frame(frame: int) -> None:
    motion, skeleton = clip("g1_walk")
    frames = motion.tracks["root"].frames
    at = frame % frames
    spiky = _shifted(motion, at, 0, 20.0 / 120)
    assert not check(spiky, skeleton).result("body_speed").passed
    fixed = fix(spiky, skeleton, fixes=("spikes",))
    (line,) = fixed.meta["quality_fixes"]  # type: ignore[misc]
    assert f"[{at}]" in line
    for name, track in spiky.tracks.items():
        before = np.asarray(track.data, dtype=np.float64).reshape(frames, -1)
        after = np.asarray(fixed.tracks[name].data, dtype=np.float64).reshape(frames, -1)
        changed = np.flatnonzero(np.abs(after - before).max(axis=1) > 0)
        assert set(changed.tolist()) <= {at}, (name, changed)
    assert check(fixed, skeleton).result("body_speed").passed


def test_spike_frames_are_those_between_two_jumps() -> None:
    from motionkit.quality.fix import spike_frames

    def frames(*jumps: int, pairs: int = 6) -> list[int]:
        mask = np.zeros(pairs, dtype=bool)
        mask[list(jumps)] = True
        return np.flatnonzero(spike_frames(mask)).tolist()

    assert frames(2, 3) == [3]  # one frame out of line
    assert frames(0) == [0] and frames(5) == [6]  # one-sided jumps at the ends
    assert frames(0, 1) == [1] and frames(4, 5) == [5]
    assert frames(2, 3, 4) == [3, 4]
    assert frames(3) == [] and frames() == []  # a step: no one frame is out of line

"""Fixes: the lift stands the lowest shape point on the ground in every preset; a spike
refill (a run of frames up to ``SPIKE_TIME``) rewrites only the spiky frames and leaves a
step alone."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

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


def test_spike_runs_are_closed_by_a_jump_back_to_a_consistent_frame() -> None:
    from motionkit.quality.fix import spike_runs

    def runs(*jumps: int, pairs: int = 12, longest: int = 4,
             good: tuple[int, ...] = ()) -> tuple[list[tuple[int, int]], list[int]]:
        """The runs and steps when every frame pair bridges (``good`` empty) or only the
        frames in ``good`` are consistent with the frames before a run."""
        mask = np.zeros(pairs, dtype=bool)
        mask[list(jumps)] = True
        return spike_runs(mask, longest, lambda a, b: not good or b in good)

    assert runs(2, 3) == ([(3, 4)], [])  # one frame out of line
    assert runs(2, 5) == ([(3, 6)], [])  # three frames with one offset
    assert runs(2, 3, 4, 5) == ([(3, 4), (5, 6)], [])  # the nearest consistent frame closes
    assert runs(2, 3, 4, 5, good=(6,)) == ([(3, 6)], [])  # frames 4, 5 are not consistent
    assert runs(2, 7) == ([], [2, 7])  # longer than longest: two steps
    assert runs(2, 6) == ([(3, 7)], [])  # exactly longest
    assert runs(2, 5, good=(9,)) == ([], [2, 5])  # the frames after do not bridge: steps
    assert runs(0) == ([(0, 1)], []) and runs(11) == ([(12, 13)], [])  # one-sided ends
    assert runs(0, 1) == ([(1, 2)], []) and runs(10, 11) == ([(11, 12)], [])
    assert runs(0, 1, good=(99,)) == ([], [0, 1])  # frame 1 between jumps, not bridged
    assert runs(3) == ([], [3]) and runs() == ([], [])  # a step: no frame is out of line


SPIKE_SETTINGS = settings(max_examples=25, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])


def _planted(motion: mk.Motion, start: int, stop: int, axis: int, by: float) -> mk.Motion:
    """``motion`` with its root moved ``by`` m along ``axis`` on frames [start, stop)."""
    root = np.asarray(motion.tracks["root"].data, dtype=np.float64).copy()
    root[start:stop, axis] += by
    tracks = dict(motion.tracks)
    tracks["root"] = motion.tracks["root"].with_data(root)
    return mk.Motion(tracks, motion.skeleton, motion.terrain, dict(motion.meta))


def _changed_frames(before: mk.Motion, after: mk.Motion) -> set[int]:
    frames = before.frames
    out: set[int] = set()
    for name, track in before.tracks.items():
        a = np.asarray(track.data, dtype=np.float64).reshape(frames, -1)
        b = np.asarray(after.tracks[name].data, dtype=np.float64).reshape(frames, -1)
        out |= set(np.flatnonzero(np.abs(b - a).max(axis=1) > 0).tolist())
    return out


@SPIKE_SETTINGS
@given(data=st.data(), preset=st.sampled_from(["default", "protomotions"]),
       axis=st.sampled_from([0, 1]), size=st.floats(0.2, 1.0), sign=st.sampled_from([-1, 1]))
def test_a_planted_spike_of_up_to_the_longest_run_is_refilled_there_alone(
        data: st.DataObject, preset: str, axis: int, size: float, sign: int) -> None:
    from motionkit.quality.fix import SPIKE_TIME, apply_fixes

    motion, skeleton = clip("g1_walk")  # 125 frames at 120 fps: runs up to 12 frames
    longest = int(SPIKE_TIME * 120)
    frames = data.draw(st.integers(1, longest), label="frames")
    start = data.draw(st.integers(1, motion.frames - frames - 1), label="start")
    spiky = _planted(motion, start, start + frames, axis, sign * size)
    assert not check(spiky, skeleton, preset=preset).result("body_speed").passed
    fixed = apply_fixes(spiky, skeleton, preset=preset, fixes=("spikes",))
    again = check(fixed.motion, skeleton, preset=preset)
    assert again.result("body_speed").passed and again.result("joint_speed").passed
    assert _changed_frames(spiky, fixed.motion) == set(range(start, start + frames))
    (line,) = fixed.motion.meta["quality_fixes"]  # type: ignore[misc]
    assert line.startswith("spikes:") and f"at most {longest} frame(s)" in line
    assert not fixed.left


@SPIKE_SETTINGS
@given(data=st.data(), preset=st.sampled_from(["default", "protomotions"]),
       axis=st.sampled_from([0, 1]), size=st.floats(0.2, 1.0), sign=st.sampled_from([-1, 1]))
def test_a_step_is_never_fixed(data: st.DataObject, preset: str, axis: int, size: float,
                               sign: int) -> None:
    from motionkit.quality.fix import apply_fixes

    motion, skeleton = clip("g1_walk")
    # a step after the first frame or before the last one is a one-sided jump at an end,
    # which the fix takes for a one-frame spike there (nothing tells them apart)
    start = data.draw(st.integers(2, motion.frames - 2), label="start")
    stepped = _planted(motion, start, motion.frames, axis, sign * size)
    assert not check(stepped, skeleton, preset=preset).result("body_speed").passed
    fixed = apply_fixes(stepped, skeleton, preset=preset, fixes=("spikes",))
    assert _changed_frames(stepped, fixed.motion) == set()
    assert "quality_fixes" not in fixed.motion.meta and not fixed.fixes
    (line,) = fixed.left
    assert f"after frames [{start - 1}]" in line and "a step" in line


def test_a_clip_faster_than_the_thresholds_throughout_is_not_refilled() -> None:
    from motionkit.quality.fix import apply_fixes

    motion, skeleton = clip("g1_walk")
    fixed = apply_fixes(motion, skeleton, fixes=("spikes",), body_speed=1.0)
    (line,) = fixed.left
    assert "frame pairs jump" in line and "not spiky" in line and not fixed.fixes
    assert _changed_frames(motion, fixed.motion) == set()


@pytest.mark.parametrize("frames", [2, 5])
def test_a_joint_spike_of_several_frames_is_refilled_from_the_joint_values(frames: int) -> None:
    from motionkit.quality.fix import apply_fixes

    motion, skeleton = clip("g1_walk")
    values = np.asarray(motion.tracks["joints"].data, dtype=np.float64).copy()
    values[50:50 + frames, 3] += 0.8  # one knee flicks for a few frames
    tracks = {name: track for name, track in motion.tracks.items() if name != "joint_rotations"}
    tracks["joints"] = motion.tracks["joints"].with_data(values)
    spiky = mk.Motion(tracks, motion.skeleton, motion.terrain, dict(motion.meta))
    assert not check(spiky, skeleton).result("joint_speed").passed
    fixed = apply_fixes(spiky, skeleton, fixes=("spikes",))
    assert _changed_frames(spiky, fixed.motion) == set(range(50, 50 + frames))
    again = check(fixed.motion, skeleton)
    assert again.result("joint_speed").passed and again.result("body_speed").passed

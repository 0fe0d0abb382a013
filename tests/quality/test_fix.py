"""Fixes: the lift stands the lowest shape point on the ground in every preset; a spike
refill (a run of frames up to ``SPIKE_TIME``) rewrites only the spiky frames and leaves a
step alone."""

from __future__ import annotations

import importlib
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


def _spiked(motion: mk.Motion, *edits: tuple[int, int, int, float]) -> mk.Motion:
    """``motion`` with each ``(start, stop, axis, by)`` root edit of :func:`_planted`."""
    for start, stop, axis, by in edits:
        motion = _planted(motion, start, stop, axis, by)
    return motion


@pytest.mark.parametrize("edits, refilled, stepped", [
    # two steps the same way 5 frames apart: the motion never comes back
    ([(40, None, 0, 0.15), (45, None, 0, 0.15)], set(), [39, 44]),
    # a step, then a one-frame spike: only the spike frame is refilled
    ([(40, None, 0, 0.15), (46, 47, 1, 0.5)], {46}, [39]),
    # a spike that decays over two frames: both refilled, or the copy still jumps
    ([(40, 41, 1, 0.5), (41, 42, 1, 0.2)], {40, 41}, []),
    ([(40, 41, 1, 0.6), (41, 42, 1, 0.25)], {40, 41}, []),
    # two spikes with one clean frame between: two runs, the clean frame kept
    ([(40, 41, 0, 0.4), (42, 43, 0, -0.4)], {40, 42}, []),
])
def test_a_run_closes_only_where_the_motion_comes_back(
        edits: list[tuple[int, int | None, int, float]], refilled: set[int],
        stepped: list[int]) -> None:
    from motionkit.quality.fix import apply_fixes

    motion, skeleton = clip("g1_walk")
    planted = _spiked(motion, *((a, motion.frames if b is None else b, axis, by)
                                for a, b, axis, by in edits))
    fixed = apply_fixes(planted, skeleton, fixes=("spikes",))
    assert _changed_frames(planted, fixed.motion) == refilled, (fixed.fixes, fixed.left)
    if stepped:
        (line,) = fixed.left
        assert f"after frames {stepped}" in line and "a step" in line
    else:
        assert not fixed.left
        again = check(fixed.motion, skeleton)
        assert again.result("body_speed").passed and again.result("joint_speed").passed


@SPIKE_SETTINGS
@given(data=st.data(), preset=st.sampled_from(["default", "protomotions"]))
def test_random_spikes_and_steps_refill_exactly_the_spike_frames(
        data: st.DataObject, preset: str) -> None:
    from motionkit.quality.fix import apply_fixes

    motion, skeleton = clip("g1_walk")
    edits: list[tuple[int, int, int, float]] = []
    spiked: set[int] = set()
    at = data.draw(st.integers(2, 12), label="first")
    for _ in range(data.draw(st.integers(1, 4), label="count")):
        by = data.draw(st.floats(0.2, 1.0), label="size") * data.draw(
            st.sampled_from([-1, 1]), label="sign")
        # steps go +x, spikes either way in y: a spike back by a step's size after it would
        # make the frames between a spike too (nothing tells the two readings apart)
        if data.draw(st.booleans(), label="step"):
            edits.append((at, motion.frames, 0, abs(by)))
            at += 3
        else:
            frames = data.draw(st.integers(1, 6), label="frames")
            edits.append((at, at + frames, 1, by))
            spiked |= set(range(at, at + frames))
            at += frames + 3
        at += data.draw(st.integers(0, 10), label="gap")
        if at > motion.frames - 10:
            break
    planted = _spiked(motion, *edits)
    fixed = apply_fixes(planted, skeleton, preset=preset, fixes=("spikes",))
    # a refilled frame is always a planted spike frame; every other frame is bit-equal
    assert _changed_frames(planted, fixed.motion) == spiked, (edits, fixed.fixes, fixed.left)


def test_the_spike_search_runs_one_check_and_one_fk_whatever_the_jumps(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import motionkit.quality.fix as fixing

    checking = importlib.import_module("motionkit.quality.check")  # the module, not check()

    motion, skeleton = clip("g1_walk")
    planted = _spiked(motion, *((start, start + 2, 1, 0.3) for start in range(5, 115, 9)),
                      (60, motion.frames, 0, 0.3), (90, motion.frames, 0, 0.3))
    calls = {"check": 0, "fk": 0}

    def counted(name: str, function):  # type: ignore[no-untyped-def]
        def call(*args, **kwargs):  # type: ignore[no-untyped-def]
            calls[name] += 1
            return function(*args, **kwargs)
        return call

    monkeypatch.setattr(fixing, "check", counted("check", fixing.check))
    monkeypatch.setattr(fixing, "link_poses", counted("fk", fixing.link_poses))
    monkeypatch.setattr(checking, "link_poses", counted("fk", checking.link_poses))
    fixed = fixing.apply_fixes(planted, skeleton, fixes=("spikes",))
    assert len(fixed.fixes) == 1 and len(fixed.left) == 1  # 13 spikes refilled, 2 steps left
    assert calls == {"check": 1, "fk": 2}, calls


def test_frames_that_are_not_numbers_are_refused_by_name() -> None:
    from motionkit.errors import ConversionError
    from motionkit.quality.fix import apply_fixes

    motion, skeleton = clip("g1_walk")
    broken = _spiked(motion, (60, 90, 0, np.nan), (100, 101, 1, np.inf))
    for fixes in (("spikes",), ("lift",), ("spikes", "limits", "lift")):
        with pytest.raises(ConversionError, match=r"frames \[60\.\.89, 100\] are not numbers"):
            apply_fixes(broken, skeleton, fixes=fixes)


def test_a_motion_without_frames_is_one_clear_error() -> None:
    from motionkit.errors import ConversionError
    from motionkit.quality.fix import apply_fixes

    motion, skeleton = clip("g1_walk")
    tracks = {name: track.with_data(np.asarray(track.data)[:0],
                                    mk.Timeline.uniform(track.timeline.rate or 120.0, 0))
              for name, track in motion.tracks.items()}
    empty = mk.Motion(tracks, motion.skeleton, motion.terrain, dict(motion.meta))
    for run in (lambda: check(empty, skeleton), lambda: apply_fixes(empty, skeleton)):
        with pytest.raises(ConversionError, match="the motion has no frames to check"):
            run()


@pytest.mark.parametrize("value, kept", [
    ("hand-lifted", ["hand-lifted"]), (("a", "b"), ["a", "b"]), (["a"], ["a"]), (None, [])])
def test_the_fixes_listed_before_are_kept(value: object, kept: list[str]) -> None:
    from motionkit.quality.fix import apply_fixes

    motion, skeleton = clip("g1_walk")
    motion = _shifted(motion, None, 2, 0.05)
    if value is not None:
        motion.meta["quality_fixes"] = value
    fixed = apply_fixes(motion, skeleton, fixes=("lift",))
    listed = fixed.motion.meta["quality_fixes"]
    assert isinstance(listed, list) and listed[:-1] == kept and listed[-1].startswith("lift:")


@pytest.mark.parametrize("value", [3, {"a": 1}, ["a", 2]])
def test_a_fixes_list_that_is_not_texts_is_refused_by_name(value: object) -> None:
    from motionkit.errors import ConversionError
    from motionkit.quality.fix import apply_fixes

    motion, skeleton = clip("g1_walk")
    motion.meta["quality_fixes"] = value
    with pytest.raises(ConversionError, match=f"metadata quality_fixes is a {type(value).__name__}"):
        apply_fixes(motion, skeleton, fixes=("lift",))


@pytest.mark.parametrize("frames", [3, 4, 5])
def test_a_spike_in_a_short_clip_is_not_called_fast_throughout(frames: int) -> None:
    from motionkit.quality.fix import apply_fixes

    motion, skeleton = clip("g1_walk")
    short = mk.Motion({name: track.with_data(np.asarray(track.data)[:frames],
                                             mk.Timeline.uniform(120.0, frames))
                       for name, track in motion.tracks.items()},
                      motion.skeleton, motion.terrain, dict(motion.meta))
    spiky = _planted(short, 1, 2, 0, 0.5)
    fixed = apply_fixes(spiky, skeleton, fixes=("spikes",))
    assert not any("throughout" in line for line in fixed.left), fixed.left
    assert _changed_frames(spiky, fixed.motion) == {1}, (fixed.fixes, fixed.left)

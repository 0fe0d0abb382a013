"""Many tracks on one clock: the spec's checkable numbers on the corpus JointState bags
(closed-form values, so no oracle is needed), gaps, hold's no-newer-sample rule, and a
property test of hold and linear against their definitions."""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import motionkit as mk
from conftest import corpus_file
from motionkit.errors import ConversionError, MotionkitWarning
from motionkit.ops import action_from_state, pieces, resample_track, sync, with_action

T0 = 1_700_000_000  # s: header stamp of the first /joint_states message


def q(j: int, t: float) -> float:
    """Joint j's position at t s after T0 (the corpus generator's formula)."""
    return 0.1 * (j + 1) * math.sin(math.pi * t + 0.3 * j)


def closed_form(times: np.ndarray) -> np.ndarray:
    return np.array([[q(j, float(t)) for j in range(7)] for t in times])


BAGS = ["joint_states_ros1.bag", "joint_states_ros2"]
ADDRESS = ":/joint_states,/tf:world->base_link,/cmd"


def _bag(name: str) -> Path:
    return corpus_file("episodes", "bags", name)


@pytest.mark.parametrize("name", BAGS)
def test_grid_starts_at_the_latest_first_stamp_and_ends_within_every_track(name: str) -> None:
    motion = sync(mk.read(f"{_bag(name)}{ADDRESS}"), 30)
    timeline = motion.tracks["/joint_states"].timeline
    assert motion.meta["sync"]["start_ns"] == T0 * 10**9 + 5_000_000  # the first /cmd log time
    assert timeline.is_uniform and timeline.rate == 30
    # t_end = the last /tf stamp, T0 + 59/30 s: k = 0 … ⌊(59/30 − 0.005)·30⌋ = 58
    assert timeline.count == 59
    assert all(track.timeline.same_as(timeline) for track in motion.tracks.values())
    assert motion.meta["sync"]["methods"]["/cmd"] == "hold"  # a header-less command
    assert motion.meta["sync"]["methods"]["/joint_states"] == "linear"
    # frame 30 (1.005 s) falls where k = 100 has no velocity: k = 99 (15 ms before, exactly
    # the 1.5-period tolerance) and k = 101 (5 ms after) are used, weight 3/4 on k = 101
    raw = mk.read(f"{_bag(name)}:/joint_states").tracks["joints.velocity"].data
    np.testing.assert_allclose(motion.tracks["/joint_states.velocity"].data[30],
                               raw[99] / 4 + raw[101] * 3 / 4, rtol=0, atol=1e-12)


@pytest.mark.parametrize("name", BAGS)
def test_linear_joint_states_on_a_30_hz_grid_from_t0(name: str) -> None:
    source = mk.read(f"{_bag(name)}:/joint_states")
    motion = sync(source, 30, start=float(T0))
    joints = motion.tracks["joints"]
    raw = source.tracks["joints"].data
    # t = 1/30 s lies between k = 3 (0.03 s) and k = 4 (0.04 s), weight 1/3 on k = 4
    np.testing.assert_allclose(joints.data[1], raw[3] * (2 / 3) + raw[4] / 3, rtol=0,
                               atol=1e-15)
    times = np.arange(joints.frames) / 30
    error = np.abs(joints.data - closed_form(times))
    bound = 0.01**2 / 8 * 0.7 * math.pi**2  # h²/8 · max|q̈|, joint 7
    assert bound == pytest.approx(8.6e-5, abs=1e-6)
    assert error.max() <= bound
    assert error[:, 6].max() > error[:, 0].max()  # the bound is joint 7's


@pytest.mark.parametrize("name", BAGS)
def test_hold_on_cmd_takes_the_last_message_logged_before(name: str) -> None:
    motion = sync(mk.read(f"{_bag(name)}{ADDRESS}"), 30, start=T0 + 1 / 30)
    cmd = motion.tracks["/cmd"]
    assert cmd.times[2] == pytest.approx(T0 + 0.1, abs=1e-6)
    # at 0.1 s: the message logged at T0 + 0.085 s (k = 4), whose values are q_j(0.105)
    np.testing.assert_allclose(cmd.data[2], closed_form(np.array([0.105]))[0], rtol=0,
                               atol=1e-15)


@pytest.mark.parametrize("name", BAGS)
def test_the_reversed_message_maps_by_name(name: str) -> None:
    source = mk.read(f"{_bag(name)}:/joint_states")
    np.testing.assert_allclose(source.tracks["joints"].data[50],
                               closed_form(np.array([0.5]))[0], rtol=0, atol=1e-15)
    motion = sync(source, 100, start=float(T0))  # the grid on the messages: exact samples
    np.testing.assert_array_equal(motion.tracks["joints"].data[50],
                                  source.tracks["joints"].data[50])


@pytest.mark.parametrize("name", BAGS)
def test_empty_velocity_is_bridged_by_its_neighbours(name: str) -> None:
    source = mk.read(f"{_bag(name)}:/joint_states")
    velocity = source.tracks["joints.velocity"].data
    assert np.isnan(velocity[100]).all() and np.isnan(velocity[150]).all()
    motion = sync(source, 100, start=float(T0))
    synced = motion.tracks["joints.velocity"].data
    np.testing.assert_allclose(synced[100], (velocity[99] + velocity[101]) / 2, rtol=0,
                               atol=1e-15)
    np.testing.assert_array_equal(motion.tracks["joints.effort"].data[100],
                                  source.tracks["joints.effort"].data[100])
    assert np.isfinite(synced).all()


def _track(name: str, times: list[float], values: list[float], **attrs: object) -> mk.Track:
    return mk.Track(name, "value", np.array(values, dtype=np.float64).reshape(-1, 1),
                    mk.Timeline.stamped(times), attrs=dict(attrs))


def test_a_gap_longer_than_the_tolerance_is_refused_naming_topic_and_time() -> None:
    motion = mk.Motion()
    times = [0.0, 0.1, 0.2, 0.3, 0.8, 0.9, 1.0]  # a 0.5 s gap in a 10 Hz stream
    motion.add(_track("/cmd", times, list(range(7)), interpolation="hold"))
    motion.add(_track("dense", [i / 100 for i in range(101)], [0.0] * 101))
    with pytest.raises(ConversionError, match=r"track '/cmd': .*0\.15 s of grid time "
                                              r"0\.500000000 s"):
        sync(motion, 10)
    with pytest.warns(MotionkitWarning, match="dropped 3 of 11 frames"):
        dropped = sync(motion, 10, on_gap="drop")
    np.testing.assert_allclose(dropped.tracks["/cmd"].times,
                               [0.0, 0.1, 0.2, 0.3, 0.4, 0.8, 0.9, 1.0])
    assert not dropped.tracks["dense"].timeline.is_uniform
    loose = sync(motion, 10, tolerance=0.5)
    assert loose.tracks["/cmd"].frames == 11
    assert "interpolation" not in loose.tracks["/cmd"].attrs  # used, not kept
    zero = sync(motion, 10, tolerance=0.5, zero=True).tracks["/cmd"].timeline
    assert zero.is_uniform and zero.start == 0.0



@settings(max_examples=60, deadline=None)
@given(st.lists(st.booleans(), min_size=3, max_size=40).filter(lambda k: k[0] and k[-1]),
       st.sampled_from([10.0, 50.0, 200.0]), st.booleans(), st.booleans())
def test_pieces_are_the_runs_between_gaps_each_uniform_from_its_first_frame(
        kept: list[bool], fps: float, zero: bool, stamped_ns: bool) -> None:
    """A stream sampled exactly on the grid (whole ns: 1e9/fps is one) where ``kept``
    (missing elsewhere) synced with on_gap="drop" and cut: the pieces are the runs of kept
    frames, in order, their values the dropped sync's, their starts the grid's times."""
    start = T0 if stamped_ns else 2.5
    grid = [k / fps for k, keep in enumerate(kept) if keep]
    motion = mk.Motion()
    if stamped_ns:
        stamps = np.array([start * 10**9 + round(t * 1e9) for t in grid], dtype=np.int64)
        timeline = mk.Timeline.from_nanoseconds(stamps)
    else:
        timeline = mk.Timeline.stamped([start + t for t in grid])
    motion.add(mk.Track("a", "value", np.arange(len(grid), dtype=float)[:, None] * 2, timeline))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dropped = sync(motion, fps, on_gap="drop", tolerance=0.4 / fps, zero=zero,
                       method="nearest")
    cut = pieces(dropped)
    runs = [len(run) for run in "".join("1" if k else "0" for k in kept).split("0") if run]
    assert [piece.tracks["a"].frames for piece in cut] == runs
    np.testing.assert_array_equal(np.concatenate([p.tracks["a"].data for p in cut]),
                                  dropped.tracks["a"].data)
    first = 0
    for number, piece in enumerate(cut):
        timeline = piece.tracks["a"].timeline
        assert timeline.is_uniform and timeline.rate == fps
        assert timeline.start == pytest.approx(dropped.tracks["a"].times[first], abs=1e-6)
        facts = piece.meta["sync"]
        assert (facts["piece"], facts["pieces"]) == (number, len(runs))
        assert facts["start"] == pytest.approx(start + grid[first], abs=1e-6)
        if stamped_ns:
            assert facts["start_ns"] == stamps[first]
        first += runs[number]


def test_only_a_synchronised_motion_is_cut() -> None:
    motion = mk.Motion()
    motion.add(_track("a", [0.0, 0.1, 0.2], [0, 1, 2]))
    with pytest.raises(ConversionError, match=r"ops\.sync"):
        pieces(motion)
    assert len(pieces(sync(motion, 10))) == 1

def test_hold_never_uses_a_newer_sample_and_linear_needs_both_sides() -> None:
    motion = mk.Motion()
    motion.add(_track("a", [0.0, 0.25, 0.5, 0.75, 1.0], [0, 1, 2, 3, 4]))
    motion.add(_track("b", [0.0, 1.0], [0, 10]))
    held = sync(motion, 10, methods={"a": "hold"}, tolerance={"b": 1.0})
    assert held.tracks["a"].data[:, 0].tolist() == [0, 0, 0, 1, 1, 2, 2, 2, 3, 3, 4]
    np.testing.assert_allclose(held.tracks["b"].data[:, 0], np.arange(11))
    with pytest.raises(ConversionError, match=r"'b'.*0\.4 s of grid time 0\.100000000 s"):
        sync(motion, 10, tolerance={"b": 0.4})  # 0.9 s to b's next sample
    with pytest.raises(ConversionError, match="methods name no track: c"):
        sync(motion, 10, methods={"c": "hold"})
    with pytest.raises(ConversionError, match="method must be one of"):
        sync(motion, 10, methods={"a": "cubic"})


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 10_000), min_size=2, max_size=40, unique=True),
       st.integers(1, 200), st.sampled_from(["hold", "linear"]))
def test_hold_and_linear_match_their_definitions(stamps: list[int], fps: int,
                                                 method: str) -> None:
    times = np.sort(np.array(stamps)) / 1000.0
    values = np.cos(times * 7.0)
    motion = mk.Motion()
    motion.add(mk.Track("x", "value", values, mk.Timeline.stamped(times)))
    out = sync(motion, fps, methods={"x": method}, tolerance=math.inf)
    relative = times - times[0]  # as sync sees them: after the earliest sample
    grid = np.arange(out.tracks["x"].frames) / fps
    assert grid[-1] <= relative[-1] + 1e-9 and relative[-1] - grid[-1] < 1 / fps
    np.testing.assert_allclose(out.tracks["x"].times, times[0] + grid, rtol=0, atol=1e-12)
    milliseconds = np.sort(np.array(stamps)) - min(stamps)
    for k, (t, got) in enumerate(zip(grid, out.tracks["x"].data[:, 0], strict=True)):
        # at or before grid point k/fps, compared exactly (in floats 0.504 - 0.204 > 3/10)
        before = np.flatnonzero(milliseconds * fps <= k * 1000)[-1]
        if method == "hold" or milliseconds[before] * fps == k * 1000 or before == times.size - 1:
            assert got == values[before]  # (the last grid point may pass the end by 1e-16)
        else:
            w = (t - relative[before]) / (relative[before + 1] - relative[before])
            assert got == pytest.approx(values[before] * (1 - w) + values[before + 1] * w,
                                        abs=1e-12)


@pytest.mark.parametrize("name", BAGS)
def test_actions_from_the_joint_states_as_next_state_or_delta(name: str) -> None:
    motion = sync(mk.read(f"{_bag(name)}{ADDRESS}"), 30)
    state = motion.tracks["/joint_states"]
    following = action_from_state(state, "next")
    delta = action_from_state(state, "delta", name="action.delta")
    np.testing.assert_array_equal(following.data[:-1], state.data[1:])
    np.testing.assert_array_equal(following.data[-1], state.data[-1])
    np.testing.assert_array_equal(delta.data, following.data - state.data)
    assert not delta.data[-1].any()
    assert following.labels == state.labels and following.timeline is state.timeline
    assert delta.attrs == {"derived_from": "/joint_states", "action": "delta"}
    with pytest.raises(ConversionError, match="one of next, delta"):
        action_from_state(state, "previous")
    with pytest.raises(ConversionError, match="not the pose track"):
        action_from_state(motion.tracks["world->base_link"], "next")


def test_joints_named_in_some_messages_only_are_sampled_from_their_own_messages() -> None:
    times = np.arange(101) / 100  # an arm at 100 Hz, a gripper on the same topic at 10 Hz
    data = np.column_stack([times * 2.0, np.where(np.arange(101) % 10 == 0, times, np.nan)])
    motion = mk.Motion()
    motion.add(mk.Track("joints", "value", data, mk.Timeline.stamped(times),
                        labels=["arm", "gripper"]))
    linear = sync(motion, 50)
    grid = np.arange(51) / 50
    np.testing.assert_allclose(linear.tracks["joints"].data, np.column_stack([grid * 2, grid]),
                               rtol=0, atol=1e-12)
    held = sync(motion, 50, methods={"joints": "hold"}).tracks["joints"].data
    np.testing.assert_allclose(held[:, 1], np.floor(grid * 10 + 1e-9) / 10, rtol=0, atol=1e-12)
    assert linear.meta["sync"]["tolerance"]["joints"] == pytest.approx(0.15)  # the gripper's
    with pytest.raises(ConversionError, match="column 'gripper'"):
        sync(motion, 50, tolerance=0.02)


@pytest.mark.parametrize("name", BAGS)
@pytest.mark.parametrize("fps", [10, 25, 50])
def test_hold_on_cmd_takes_the_message_logged_exactly_on_the_grid_time(name: str,
                                                                      fps: int) -> None:
    # /cmd is logged every 20 ms from T0 + 5 ms, the grid's start: at 10, 25 and 50 fps
    # every grid time at a multiple of 20 ms is a /cmd log time, and hold takes that message
    source = mk.read(f"{_bag(name)}{ADDRESS}")
    raw = source.tracks["/cmd"]
    motion = sync(source, fps)
    assert motion.meta["sync"]["start_ns"] == int(raw.timeline.stamps_ns[0])
    offsets = np.arange(motion.tracks["/cmd"].frames) * 10**9 // fps  # exact ns after start
    want = (offsets // 20_000_000).astype(int)  # the last message at or before
    np.testing.assert_array_equal(motion.tracks["/cmd"].data, raw.data[want])


@settings(max_examples=40, deadline=None)
@given(st.sampled_from([10, 25, 30, 50]), st.integers(0, 19_999_999), st.integers(0, 10**10))
def test_hold_takes_a_sample_stamped_exactly_on_the_grid(fps: int, offset: int,
                                                         epoch: int) -> None:
    # a 100 Hz state and a 50 Hz command from +offset ns, on a bag-like clock: the grid
    # starts on a command, so every 20 ms of grid time is a command's own stamp
    t0 = 1_700_000_000 * 10**9 + epoch
    state = t0 + np.arange(300) * 10_000_000
    cmd = t0 + offset + np.arange(150) * 20_000_000
    motion = mk.Motion()
    motion.add(mk.Track("a", "value", np.arange(300.0)[:, None],
                        mk.Timeline.from_nanoseconds(state)))
    motion.add(mk.Track("cmd", "value", np.arange(150.0)[:, None],
                        mk.Timeline.from_nanoseconds(cmd), attrs={"interpolation": "hold"}))
    held = sync(motion, fps).tracks["cmd"].data[:, 0]
    # the last command at or before t_k, in exact integers: k·1e9/fps ≥ j·20e6
    np.testing.assert_array_equal(held, (np.arange(held.size) * 10**9 // fps) // 20_000_000)
    resampled = resample_track(motion.tracks["cmd"], fps, "hold").data[:, 0]
    assert resampled.size == (149 * 20 * fps) // 1000 + 1  # the command's 2.98 s
    np.testing.assert_array_equal(resampled,
                                  (np.arange(resampled.size) * 10**9 // fps) // 20_000_000)


def test_a_track_without_samples_is_one_clear_error() -> None:
    """An empty track (a TUM file of its header only) has no time to start the clock at."""
    empty = mk.Motion()
    empty.add(mk.Track("a", "value", np.zeros((3, 2)), mk.Timeline.uniform(10.0, 3)))
    empty.add(mk.Track("b", "value", np.zeros((0, 2)), mk.Timeline.uniform(10.0, 0)))
    with pytest.raises(ConversionError, match="'b' has no samples"):
        mk.ops.sync(empty, 10.0)


@pytest.mark.parametrize("name", BAGS)
def test_start_and_end_choose_the_grid_on_the_bags_clock_or_after_the_common_start(
        name: str) -> None:
    motion = mk.read(f"{_bag(name)}{ADDRESS}")
    common = T0 + 0.005  # the latest first sample (the first /cmd log time)
    relative = sync(motion, 30, start="+0.5", end="+1.5").tracks["/joint_states"].timeline
    assert relative.count == 31 and relative.start == common + 0.5
    absolute = sync(motion, 30, start=T0 + 0.51, end=T0 + 1.51, tolerance=0.03)
    assert absolute.tracks["/joint_states"].timeline.count == 31
    np.testing.assert_allclose(absolute.tracks["/joint_states"].data,
                               closed_form(0.51 + np.arange(31) / 30), rtol=0, atol=9e-5)
    for bad in ("0.5", "+x", "+-1", "+inf"):
        with pytest.raises(ConversionError, match="start must be seconds on the tracks' clock"):
            sync(motion, 30, start=bad)
    with pytest.raises(ConversionError, match="share no time span"):
        sync(motion, 30, start="+1", end="+0.5")


@pytest.mark.parametrize("name", BAGS)
def test_one_method_for_every_track_and_one_per_track(name: str) -> None:
    motion = mk.read(f"{_bag(name)}{ADDRESS}")
    held = sync(motion, 30, method="hold", methods={"/cmd": "nearest"})
    assert held.meta["sync"]["methods"] == {
        "/joint_states": "hold", "/joint_states.velocity": "hold",
        "/joint_states.effort": "hold", "world->base_link": "hold", "/cmd": "nearest"}
    # frame 3 is T0 + 0.105 s: hold takes /joint_states k = 10 (T0 + 0.1 s)
    raw = mk.read(f"{_bag(name)}:/joint_states").tracks["joints"].data
    np.testing.assert_array_equal(held.tracks["/joint_states"].data[3], raw[10])
    with pytest.raises(ConversionError, match="tolerances name no track: /nope"):
        sync(motion, 30, tolerance={"/nope": 1.0})
    with pytest.raises(ConversionError, match="methods name no track: /nope"):
        sync(motion, 30, methods={"/nope": "hold"})


def test_with_action_adds_the_derived_track_and_refuses_to_replace_one() -> None:
    motion = mk.Motion()
    motion.add(_track("joints", [0.0, 0.1, 0.2], [1.0, 2.0, 4.0]))
    out = with_action(motion, "delta", "joints")
    np.testing.assert_array_equal(out.tracks["action"].data[:, 0], [1.0, 2.0, 0.0])
    assert "action" not in motion.tracks  # the input is left as it was
    with pytest.raises(ConversionError, match="has a track 'action' already"):
        with_action(out, "next", "joints")
    with pytest.raises(ConversionError, match="no state track 'arm'"):
        with_action(motion, "next", "arm")

"""``convert ADDRESS TARGET --fps N``: a bag's topics put on one clock (ops.sync) before
writing; refusals in one line."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import motionkit as mk
from conftest import corpus_file
from motionkit.ops import action_from_state, pieces, sync
from test_cli import run_cli

ADDRESS = ":/joint_states,/tf:world->base_link,/cmd"


def test_several_topics_on_one_clock_into_a_motion_file(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = f"{corpus_file('episodes', 'bags', 'joint_states_ros1.bag')}{ADDRESS}"
    target = tmp_path / "run.seq"
    code, out, err = run_cli(["convert", source, str(target), "--fps", "30"], capsys)
    assert code == 0, err
    assert out.strip() == f"wrote {target} (59 frames)"
    expected = sync(mk.read(source), 30)
    written = mk.read(target)
    for name in ("/joint_states", "/cmd", "world->base_link"):
        track = written.tracks[name]
        assert track.timeline.rate == 30 and track.frames == 59
        np.testing.assert_allclose(track.data, expected.tracks[name].data, rtol=0, atol=1e-12)


def test_a_synchronised_joint_state_topic_back_into_a_bag(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = f"{corpus_file('episodes', 'bags', 'joint_states_ros2')}:/joint_states"
    target = tmp_path / "joints50.bag"
    code, _, err = run_cli(["convert", source, str(target), "--fps", "50", "-O",
                            "message=JointState"], capsys)  # meta "sync" describes, not lost
    assert code == 0, err
    again = mk.read(f"{target}:/joint_states").tracks["joints"]
    expected = sync(mk.read(source), 50).tracks["joints"]
    assert again.frames == expected.frames == 100
    np.testing.assert_array_equal(again.data, expected.data)
    stamps = again.timeline.stamps_ns
    assert stamps is not None
    # a uniform timeline's seconds at 1.7e9 s resolve to about 0.24 µs
    np.testing.assert_allclose(stamps - stamps[0], np.arange(100) * 20_000_000, rtol=0,
                               atol=500)


def test_fps_with_rate_is_refused_in_one_line(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    source = f"{corpus_file('episodes', 'bags', 'joint_states_ros1.bag')}{ADDRESS}"
    code, _, err = run_cli(["convert", source, str(tmp_path / "x.seq"), "--fps", "30",
                            "--rate", "10"], capsys)
    assert code == 2 and "--fps and --rate" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "x.seq").exists()


def test_gaps_fail_or_drop_and_the_tolerance_is_asked(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = f"{corpus_file('episodes', 'bags', 'joint_states_ros1.bag')}:/joint_states,/cmd"
    target = tmp_path / "x.seq"
    code, _, err = run_cli(["convert", source, str(target), "--fps", "30", "--tolerance",
                            "0.012"], capsys)  # /cmd is held up to 13.3 ms old, velocity bridges 20 ms
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "no sample within the tolerance 0.012 s of grid time" in err and not target.exists()
    code, _, err = run_cli(["convert", source, str(target), "--fps", "30", "--tolerance",
                              "0.012", "--on-gap", "drop"], capsys)
    assert code == 0, err
    kept = mk.read(target).tracks["/cmd"]
    assert 0 < kept.frames < 59 and not kept.timeline.is_uniform
    code, _, err = run_cli(["convert", source, str(tmp_path / "y.seq"), "--on-gap", "drop"],
                           capsys)
    assert code == 2 and "belong to --fps" in err


def test_a_split_at_the_gaps_writes_an_episode_per_stretch(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = f"{corpus_file('episodes', 'bags', 'joint_states_ros1.bag')}:/joint_states,/cmd"
    target = tmp_path / "ds"
    code, out, err = run_cli(["convert", source, str(target), "--to", "lerobot", "--fps", "30",
                              "--tolerance", "0.012", "--on-gap", "split", "-O", "task=reach",
                              "-O", "state=/joint_states", "--action", "next"], capsys)
    assert code == 0, err
    with pytest.warns(mk.MotionkitWarning, match="dropped"):
        expected = pieces(sync(mk.read(source), 30, tolerance=0.012, on_gap="drop"))
    assert f"into {len(expected)} episodes" in out and len(expected) > 2
    for number, piece in enumerate(expected):
        episode = mk.read(f"{target}:episode={number}")
        state = episode.tracks["joints"]
        assert state.timeline.is_uniform and state.frames == piece.tracks["/joint_states"].frames
        np.testing.assert_allclose(state.data, piece.tracks["/joint_states"].data, rtol=1e-6)
        assert episode.tracks["joints"].timeline.start == pytest.approx(
            piece.tracks["/joint_states"].timeline.start, abs=1e-6)
        # the action never steps over a gap: the last frame of a stretch holds its own state
        np.testing.assert_allclose(episode.tracks["action"].data[-1], state.data[-1], rtol=1e-6)
    code, _, err = run_cli(["convert", source, str(tmp_path / "x.seq"), "--fps", "30",
                            "--tolerance", "0.012", "--on-gap", "split"], capsys)
    assert code == 2 and "--on-gap split" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "x.seq").exists()
    code, out, err = run_cli(["convert", source, str(tmp_path / "whole"), "--to", "lerobot",
                              "--fps", "30", "--on-gap", "split", "-O", "task=reach",
                              "-O", "state=/joint_states"], capsys)
    assert code == 0, err
    assert "no gap to split at: one episode (60 frame(s))" in out

def test_the_sync_options_reach_ops_sync(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    """--start/--end, --sync-method and --tolerance (for all or per track) give what
    ops.sync gives with the same arguments."""
    source = f"{corpus_file('episodes', 'bags', 'joint_states_ros1.bag')}{ADDRESS}"
    target = tmp_path / "run.seq"
    code, out, err = run_cli(["convert", source, str(target), "--fps", "30", "--start", "+0.5",
                              "--end", "+1.5", "--sync-method", "hold", "--sync-method",
                              "/cmd=nearest", "--tolerance", "/cmd=0.05"], capsys)
    assert code == 0, err
    assert "(31 frames)" in out
    expected = sync(mk.read(source), 30, start="+0.5", end="+1.5", method="hold",
                    methods={"/cmd": "nearest"}, tolerance={"/cmd": 0.05})
    written = mk.read(target)
    for name in ("/joint_states", "/cmd", "world->base_link"):
        np.testing.assert_allclose(written.tracks[name].data, expected.tracks[name].data,
                                   rtol=0, atol=1e-12)
    assert not np.array_equal(expected.tracks["/cmd"].data,
                              sync(mk.read(source), 30, start="+0.5", end="+1.5",
                                   method="hold").tracks["/cmd"].data)  # nearest ≠ hold


@pytest.mark.parametrize(("args", "message"), [
    (["--start", "soon"], "'soon' is not a time"),
    (["--sync-method", "/cmd=cubic"], "method must be one of"),
    (["--sync-method", "/nope=hold"], "methods name no track: /nope"),
    (["--tolerance", "0.1", "--tolerance", "/cmd=0.2"], "one for all tracks or one per"),
    (["--tolerance", "/cmd=wide"], "'wide' is not a number of seconds"),
    (["--action", "later"], "an action is one of next, delta"),
    (["--action", "next"], "no state track 'joints'"),
    (["--action", "next:/joint_states", "-O", "action=/cmd"], "--action and -O action="),
])
def test_sync_options_refused_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                          args: list[str], message: str) -> None:
    source = f"{corpus_file('episodes', 'bags', 'joint_states_ros1.bag')}{ADDRESS}"
    target = tmp_path / "out"
    code, _, err = run_cli(["convert", source, str(target), "--to", "lerobot", "--fps", "30",
                            "-O", "task=t", *args], capsys)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1, err
    assert not target.exists()


@pytest.mark.parametrize("how", ["next", "delta"])
def test_an_action_derived_from_the_state_goes_into_the_dataset(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], how: str) -> None:
    source = f"{corpus_file('episodes', 'bags', 'joint_states_ros2')}:/joint_states"
    target = tmp_path / "out"
    code, _, err = run_cli(["convert", source, str(target), "--to", "lerobot", "--fps", "30",
                            "-O", "task=reach", "--action", how], capsys)
    assert code == 0, err
    state = sync(mk.read(source), 30).tracks["joints"].data
    following = np.concatenate([state[1:], state[-1:]])
    expected = following if how == "next" else following - state
    episode = mk.read(target)
    np.testing.assert_array_equal(episode.tracks["action"].data, expected.astype(np.float32))
    assert episode.tracks["action"].labels == episode.tracks["joints"].labels
    code, _, err = run_cli(["convert", f"{corpus_file('episodes', 'bags', 'joint_states_ros2')}"
                            f"{ADDRESS}", str(tmp_path / "two"), "--to", "lerobot", "--fps",
                            "30", "-O", "task=reach", "-O", "state=/joint_states",
                            "--action", how], capsys)  # the state option names the track
    assert code == 0, err
    two = mk.read(tmp_path / "two")
    derived = action_from_state(sync(mk.read(f"{corpus_file('episodes', 'bags', 'joint_states_ros2')}"
                                             f"{ADDRESS}"), 30).tracks["/joint_states"], how)
    np.testing.assert_array_equal(two.tracks["action"].data, derived.data.astype(np.float32))

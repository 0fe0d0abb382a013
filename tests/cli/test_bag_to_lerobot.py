"""The issue's command: a bag's topics on one clock into a LeRobot dataset
(``convert run.mcap:/joint_states,/tf:world->base_link,/cmd out/ --to lerobot --fps 30``),
read back frame for frame: the same values as the synchronised motion (float32), the
same joint names, and the same start on the bag's clock (kept in ``meta/episodes``)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

import motionkit as mk
from conftest import corpus_file
from motionkit.ops import sync
from test_cli import run_cli

ADDRESS = ":/joint_states,/tf:world->base_link,/cmd"


@pytest.mark.parametrize("bag", ["joint_states_ros1.bag", "joint_states_ros2"])
def test_bag_topics_on_one_clock_into_a_lerobot_dataset(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], bag: str) -> None:
    source = f"{corpus_file('episodes', 'bags', bag)}{ADDRESS}"
    target = tmp_path / "dataset"
    code, out, err = run_cli(["convert", source, str(target), "--to", "lerobot", "--fps", "30",
                              "-O", "task=move the arm", "-O", "state=/joint_states",
                              "-O", "action=/cmd"], capsys)
    assert code == 0, err
    assert "(59 frames)" in out
    expected = sync(mk.read(source), 30)
    episode = mk.read(target)
    joints = episode.tracks["joints"]
    assert joints.labels == expected.tracks["/joint_states"].labels
    assert joints.timeline.is_uniform and joints.timeline.rate == 30
    assert joints.frames == 59
    # the grid's start on the bag's clock (T0 + 5 ms), not lerobot's per-episode 0
    assert joints.timeline.start == expected.tracks["/joint_states"].timeline.start \
        == 1_700_000_000.005
    for ours, theirs in (("joints", "/joint_states"), ("action", "/cmd")):
        np.testing.assert_array_equal(episode.tracks[ours].data,
                                      expected.tracks[theirs].data.astype(np.float32))
    table = pq.read_table(target / "data/chunk-000/file-000.parquet")
    np.testing.assert_array_equal(table.column("timestamp").to_numpy(),
                                  (np.arange(59) / 30).astype(np.float32))  # lerobot's k/fps


def test_the_issues_command_needs_no_lossy_and_every_track_comes_back(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Without --lossy nothing is refused: the topics' facts, the interpolation hint and
    the sync's record describe how the frames were made; the start is kept; the features
    are the topics (``/`` dropped) with the joint names; the target may be ``out/`` and an
    existing dataset there is replaced."""
    source = f"{corpus_file('episodes', 'bags', 'joint_states_ros2')}{ADDRESS}"
    target = tmp_path / "out"
    for done in ("wrote", "replaced"):
        code, out, err = run_cli(["convert", source, f"{target}/", "--to", "lerobot", "--fps",
                                  "30", "-O", "task=move the arm"], capsys)
        assert code == 0, err
        assert out.startswith(done) and "(59 frames)" in out
    expected = sync(mk.read(source), 30)
    episode = mk.read(target)
    info = json.loads((target / "meta/info.json").read_text())
    assert info["fps"] == 30 and info["total_frames"] == 59
    for name, track in expected.tracks.items():
        feature = name.lstrip("/")
        back = episode.tracks[feature]
        assert back.timeline.same_as(track.timeline)
        np.testing.assert_array_equal(back.data, track.data.astype(np.float32))
        if track.kind == "value":
            assert info["features"][feature]["names"] == track.labels == back.labels
    assert episode.tracks["world->base_link"].kind == "pose"
    assert episode.meta["task"] == "move the arm"

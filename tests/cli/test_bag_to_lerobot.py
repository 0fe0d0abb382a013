"""The issue's command: a bag's topics on one clock into a LeRobot dataset
(``convert run.mcap:/joint_states,/tf:world->base_link,/cmd out/ --to lerobot --fps 30``),
read back frame for frame. It needs the LeRobot writer (another branch of issue 26): until
both are merged it skips, saying so."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import motionkit as mk
from conftest import corpus_file
from motionkit.formats import registry
from motionkit.ops import sync
from test_cli import run_cli

ADDRESS = ":/joint_states,/tf:world->base_link,/cmd"


@pytest.mark.parametrize("bag", ["joint_states_ros1.bag", "joint_states_ros2"])
def test_bag_topics_on_one_clock_into_a_lerobot_dataset(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], bag: str) -> None:
    if "lerobot" not in {fmt.name for fmt in registry.formats()}:
        pytest.skip("the LeRobot format is not merged here yet")
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
    assert joints.timeline.start == 0.0 and joints.frames == 59
    for ours, theirs in (("joints", "/joint_states"), ("action", "/cmd")):
        np.testing.assert_array_equal(episode.tracks[ours].data,
                                      expected.tracks[theirs].data.astype(np.float32))

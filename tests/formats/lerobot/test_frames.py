"""``Frames``: what lerobot's ``LeRobotDataset(...)[i]`` returns, with and without
``delta_timestamps``, equal to the stored getitem.json oracles (dtype, shape, value: float32
exact); the offset rule; a bag-made dataset's pads fall exactly past its episode's end."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from conftest import corpus_file
from motionkit.errors import ConversionError
from motionkit.formats.lerobot.frames import Frames, delta_indices
from test_cli import run_cli

DATASETS = ["arm7_tiny", "humanoid29_tiny"]
DTYPES = {"torch.float32": np.float32, "torch.bool": np.bool_, "torch.int64": np.int64}


def _same(ours: object, theirs: dict[str, object]) -> None:
    if "python_type" in theirs:
        assert ours == theirs["value"]
        return
    assert isinstance(ours, np.ndarray)
    assert ours.dtype == DTYPES[str(theirs["torch_dtype"])]
    assert list(ours.shape) == theirs["shape"]
    np.testing.assert_array_equal(ours, np.asarray(theirs["value"], dtype=ours.dtype))


@pytest.mark.parametrize("name", DATASETS)
def test_items_equal_lerobots_getitem(name: str) -> None:
    oracle = json.loads(corpus_file("episodes", "lerobot", f"{name}.getitem.json").read_text())
    root = corpus_file("episodes", "lerobot", name)
    plain = Frames(root)
    assert len(plain) == oracle["len"]
    padded = Frames(root, delta_timestamps=oracle["delta_timestamps"])
    for frames, items in ((plain, oracle["items"]), (padded, oracle["items_with_delta_timestamps"])):
        for index, expected in items.items():
            item = frames[int(index)]
            assert item.keys() == expected.keys()
            for key, value in expected.items():
                _same(item[key], value)


def test_offsets_must_lie_on_the_frame_grid() -> None:
    assert delta_indices({"a": [-1 / 30, 0, 2 / 30 + 5e-5 / 30]}, 30)["a"].tolist() == [-1, 0, 2]
    with pytest.raises(ConversionError, match=r"delta_timestamps\['a'\]: 0.01 s is not a multiple"):
        delta_indices({"a": [0.0, 0.01]}, 30)
    with pytest.raises(ConversionError, match="name no feature: nope"):
        Frames(corpus_file("episodes", "lerobot", "arm7_tiny"), delta_timestamps={"nope": [0]})


def test_pads_of_a_bag_made_dataset_fall_past_the_episode_end(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:

    bag = corpus_file("episodes", "bags", "joint_states_ros2")
    code, _, err = run_cli(["convert", f"{bag}:/joint_states", str(tmp_path / "ds"), "--to",
                            "lerobot", "--fps", "30", "-O", "task=t", "--action", "next"], capsys)
    assert code == 0, err
    frames = Frames(tmp_path / "ds", delta_timestamps={"action": [0, 1 / 30, 2 / 30]})
    last = len(frames) - 1
    for i in range(len(frames)):
        item = frames[i]
        assert np.asarray(item["action_is_pad"]).tolist() == [False, i + 1 > last, i + 2 > last]
        assert np.asarray(item["timestamp"]) == np.float32(i / 30)
    final = np.asarray(frames[last]["action"])
    np.testing.assert_array_equal(final[1], final[0])

"""A dataset episode as an address every command takes (``DATASET:episode=N``): ``plot``
of its joint tracks (and a bag topic's), ``view --model`` of it, and ``eval`` of its pose
feature (``-E root=FEATURE``) against the bag it was made from."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import motionkit as mk
from conftest import corpus_file, require_peer
from motionkit.errors import FormatError
from motionkit.formats.lerobot import dataset as lerobot
from test_cli import run_cli

ARM = corpus_file("episodes", "lerobot", "arm7_tiny")
HUMANOID = corpus_file("episodes", "lerobot", "humanoid29_tiny")
BAG = corpus_file("episodes", "bags", "joint_states_ros1.bag")


def test_an_address_names_the_episode() -> None:
    second = mk.read(f"{ARM}:episode=1")
    assert second.frames == 47 and second.meta["task"] == "place the cube in the bin"
    assert mk.read(f"{ARM}:episode=1", episode=1).frames == 47
    with pytest.raises(FormatError, match="names episode 1 but episode=0 was asked"):
        mk.read(f"{ARM}:episode=1", episode=0)
    with pytest.raises(FormatError, match="no episode 7"):
        mk.read(f"{ARM}:episode=7")


def test_plot_draws_an_episodes_and_a_bags_joint_tracks(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    require_peer("matplotlib")
    pictures = []
    for source, joints in ((f"{ARM}:episode=0", "joint1,gripper"),
                           (f"{ARM}:episode=1", "joint1,gripper"),
                           (f"{BAG}:/joint_states", "panda_joint1")):
        out = tmp_path / f"{len(pictures)}.png"
        code, _, err = run_cli(["plot", source, "--joints", joints, "-o", str(out)], capsys)
        assert code == 0, err
        pictures.append(out.read_bytes())
    assert all(p.startswith(b"\x89PNG") for p in pictures)
    assert pictures[0] != pictures[1]  # the address chose the episode
    code, _, err = run_cli(["plot", f"{ARM}:episode=1", "--joints", "nope", "-o",
                            str(tmp_path / "x.png")], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1


def test_view_of_an_episode_through_a_model(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    model = corpus_file("containers", "characters", "g1.xml")
    pages = []
    for episode in (0, 1):
        page = tmp_path / f"{episode}.html"
        code, _, err = run_cli(["view", f"{HUMANOID}:episode={episode}", "--model", str(model),
                                  "--html", str(page)], capsys)
        assert code == 0, err
        pages.append(page.read_text())
    assert pages[0] != pages[1] and "<html" in pages[0].lower()


def test_eval_of_the_pose_feature_against_the_bag_it_came_from(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The dataset keeps the bag's clock (motionkit/start_time), so its frames pair with
    the bag's transforms by time: the error is float32 rounding only."""
    dataset = tmp_path / "out"
    code, _, err = run_cli(["convert", f"{BAG}:/joint_states,/tf:world->base_link,/cmd",
                            str(dataset), "--to", "lerobot", "--fps", "30", "-O", "task=t"],
                           capsys)
    assert code == 0, err
    code, out, err = run_cli(["eval", "ape", f"{BAG}:/tf:world->base_link",
                              f"{dataset}:episode=0", "-E", "root=world->base_link",
                              "--match", "interpolate", "--json"], capsys)
    assert code == 0, err
    result = json.loads(out)
    assert result["pairs"] == 58 and result["stats"]["max"] < 1e-6
    with pytest.raises(FormatError, match=r"root='cmd' names no pose feature .*world->base_link"):
        lerobot.read(dataset, root="cmd")
    episode = lerobot.read(dataset, root="world->base_link")
    assert next(iter(episode.tracks)) == "root" and "world->base_link" not in episode.tracks

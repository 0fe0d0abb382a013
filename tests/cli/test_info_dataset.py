"""``info`` of a LeRobot dataset lists its episodes and features (text and --json, from
the metadata, checked against the files), and ``info`` passes --character, -O and --model
on (an unnamed BeyondMimic file; an episode's link poses)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import motionkit as mk
from conftest import corpus_file
from motionkit.formats.lerobot import dataset as lerobot
from test_cli import run_cli

ARM = ("episodes", "lerobot", "arm7_tiny")


def test_info_lists_every_episode_and_feature(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(["info", str(corpus_file(*ARM))], capsys)
    assert code == 0, err
    assert "episode 0: 50 frames, 1.63333 s, task 'pick the red cube'" in out
    assert "episode 1: 47 frames, 1.53333 s, task 'place the cube in the bin'" in out
    assert ("feature observation.state: float32 [7]: joint1, joint2, joint3, joint4, joint5, "
            "joint6, gripper") in out
    assert "feature next.done: bool [1]" in out
    assert "warning" not in err  # it lists the episodes: no warning that it read one


def test_info_json_has_the_same_episodes_and_features(
        capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(["info", "--json", str(corpus_file(*ARM))], capsys)
    assert code == 0, err
    found = json.loads(out)["dataset"]
    motions = lerobot.read_episodes(corpus_file(*ARM))
    assert found["fps"] == 30
    assert [(e["index"], e["length"], e["tasks"]) for e in found["episodes"]] == \
        [(n, m.frames, [m.meta["task"]]) for n, m in enumerate(motions)]
    assert [e["duration"] for e in found["episodes"]] == [m.duration for m in motions]
    info = json.loads((corpus_file(*ARM) / "meta/info.json").read_text())
    assert [f["name"] for f in found["features"]] == list(info["features"])
    for feature in found["features"]:
        spec = info["features"][feature["name"]]
        assert (feature["dtype"], feature["shape"], feature["names"]) == \
            (spec["dtype"], spec["shape"], spec["names"])


def test_info_gives_the_reader_a_character_and_options(
        capsys: pytest.CaptureFixture[str]) -> None:
    npz = corpus_file("containers", "isaaclab", "g1_walk_bm_mujoco_order.npz")
    character = corpus_file("containers", "characters", "g1_bm_no_mesh_box_feet.xml")
    code, _, err = run_cli(["info", str(npz)], capsys)
    assert code == 2 and "order=mujoco" in err  # ambiguous without them
    code, out, err = run_cli(["info", str(npz), "--character", str(character), "-O",
                              "order=mujoco"], capsys)
    assert code == 0, err
    expected = mk.read(npz, character=character, order="mujoco")
    for name, track in expected.tracks.items():
        assert f"track {name}: {track.kind} {'x'.join(map(str, track.data.shape))}" in out


def test_info_with_a_model_adds_the_episodes_link_poses(
        capsys: pytest.CaptureFixture[str]) -> None:
    dataset = corpus_file("episodes", "lerobot", "humanoid29_tiny")
    model = corpus_file("containers", "characters", "g1.xml")
    code, out, err = run_cli(["info", "--json", str(dataset), "-R", "episode=1", "--model",
                              str(model)], capsys)
    assert code == 0, err
    links = json.loads(out)["tracks"]["links"]
    assert links["shape"][:2] == [60, 31] and links["kind"] == "pose"
    from motionkit.kinematics.motion import link_motion, model_skeleton

    episode = lerobot.read(dataset, episode=1)
    skeleton = model_skeleton(mk.read(model), model)
    poses = link_motion(skeleton, episode).tracks["links"].data
    assert np.isclose(links["max"], poses.max()) and np.isclose(links["min"], poses.min())

"""BeyondMimic / mjlab .npz: the G1 order table, the 30 → 50 fps pipeline against the
corpus oracles in both orders, unnamed files refused without robot and order."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation

import motionkit as mk
from conftest import corpus_file
from motionkit.formats.containers.beyondmimic import orders
from motionkit.formats.shared.mjcf.character import load_character


def _robot() -> Path:
    return corpus_file("containers", "characters", "g1_bm_no_mesh_box_feet.xml")


def _table() -> dict[str, list[object]]:
    return dict(json.loads(corpus_file("containers", "isaaclab", "g1_walk_bm_orders.json")
                           .read_text()))


def _oracle(order: str) -> Path:
    return corpus_file("containers", "isaaclab", f"g1_walk_bm_{order}_order.npz")


def test_the_g1_order_table() -> None:
    char = load_character(_robot())
    table = _table()
    for order in ("mujoco", "isaac"):
        bodies, joints = orders(char, order)
        assert bodies == table[f"{order}_body_order"]
        assert joints == table[f"{order}_joint_order"]
    mujoco, isaac = orders(char, "mujoco")[1], orders(char, "isaac")[1]
    index = [mujoco.index(name) for name in isaac]
    assert index == [0, 6, 12, 1, 7, 13, 2, 8, 14, 3, 9, 15, 22, 4, 10, 16, 23, 5, 11, 17, 24,
                     18, 25, 19, 26, 20, 27, 21, 28]
    assert index == table["mujoco_to_isaac_joint_index"]


@pytest.mark.parametrize("order", ["mujoco", "isaac"])
def test_csv_to_npz_pipeline_matches_the_oracle(tmp_path: Path, order: str) -> None:
    csv = corpus_file("containers", "isaaclab", "g1_walk_lafan_layout.csv")
    motion = mk.ops.resample(mk.read(csv, format="g1csv-lafan", character=_robot()), 50.0)
    assert motion.frames == 99
    out = tmp_path / "walk.npz"
    mk.write(out, motion, format="beyondmimic", character=_robot(), order=order)
    got, want = np.load(out), np.load(_oracle(order))
    assert got["fps"].shape == (1,) and int(got["fps"][0]) == 50
    for key in ("joint_pos", "body_pos_w", "body_quat_w"):
        assert got[key].shape == want[key].shape
        assert np.abs(got[key].astype(np.float64) - want[key]).max() < 1e-6, key
    names = got["body_names"].tolist()
    assert names == _table()[f"{order}_body_order"]


def test_unnamed_files_need_robot_and_order() -> None:
    with pytest.raises(mk.FormatError, match="ambiguous"):
        mk.read(_oracle("isaac"), format="beyondmimic")
    with pytest.raises(mk.FormatError, match="ambiguous"):
        mk.read(_oracle("isaac"), format="beyondmimic", character=_robot())
    with pytest.raises(mk.FormatError, match="isaac order fits"):
        mk.read(_oracle("isaac"), format="beyondmimic", character=_robot(), order="mujoco")
    motion = mk.read(_oracle("isaac"), format="beyondmimic", character=_robot(), order="isaac")
    assert motion.tracks["links"].labels == _table()["isaac_body_order"]
    assert any("assumed" in line for line in mk.formats.registry.by_name("beyondmimic")
               .describe(motion))


def test_orders_agree_after_reading(tmp_path: Path) -> None:
    mujoco = mk.read(_oracle("mujoco"), character=_robot(), order="mujoco")
    isaac = mk.read(_oracle("isaac"), character=_robot(), order="isaac")
    for name in _table()["isaac_body_order"]:
        a = mujoco.tracks["links"].data[:, mujoco.tracks["links"].labels.index(name)]
        b = isaac.tracks["links"].data[:, isaac.tracks["links"].labels.index(name)]
        assert np.abs(a - b).max() < 1e-6
    out = tmp_path / "named.npz"
    mk.write(out, isaac, format="beyondmimic", character=_robot(), order="isaac")
    again = mk.read(out)  # names stored: no robot needed
    assert again.meta["beyondmimic"]["names"] == "stored"
    assert again.tracks["joints"].labels == _table()["isaac_joint_order"]
    assert np.array_equal(np.load(out)["joint_vel"], np.load(_oracle("isaac"))["joint_vel"])


@settings(max_examples=25, deadline=None)
@given(frames=st.integers(1, 6), seed=st.integers(0, 2**31))
def test_round_trip(tmp_path_factory: pytest.TempPathFactory, frames: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    timeline = mk.Timeline.uniform(50.0, frames)
    rot = Rotation.random(frames * 2, random_state=seed).as_quat().reshape(frames, 2, 4)
    links = np.concatenate([rng.normal(size=(frames, 2, 3)), rot], axis=-1)
    motion = mk.Motion()
    motion.add(mk.Track("root", "pose", links[:, 0], timeline))
    motion.add(mk.Track("joints", "value", rng.normal(size=(frames, 1)), timeline, ["knee"]))
    motion.add(mk.Track("links", "pose", links, timeline, ["pelvis", "shin"]))
    out = tmp_path_factory.mktemp("bm") / "m.npz"
    mk.write(out, motion, format="beyondmimic")
    again = mk.read(out)
    assert again.tracks["links"].labels == ["pelvis", "shin"]
    assert np.allclose(again.tracks["joints"].data, motion.tracks["joints"].data, atol=1e-6)
    assert (1 - np.abs((again.tracks["links"].data[..., 3:] * rot).sum(-1))).max() < 1e-6

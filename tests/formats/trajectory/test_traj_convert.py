"""Conversions between trajectory files and the other formats, with no silent loss."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

import motionkit as mk
from conftest import corpus_file
from motionkit.errors import ConversionError, MotionkitWarning
from motionkit.model import Motion, Timeline, Track


def _two_links() -> Motion:
    timeline = Timeline.uniform(100.0, 5)
    links = np.zeros((5, 2, 7))
    links[..., 6] = 1.0
    links[:, 0, 2] = 0.8
    links[:, 1, 0] = np.arange(5) * 0.1
    motion = Motion()
    motion.add(Track("links", "pose", links, timeline, labels=["WAIST", "CHEST"]))
    return motion


def test_seq_links_to_traj_part_zero_or_named_link(tmp_path: Path) -> None:
    seq = tmp_path / "walk.seq"
    mk.write(seq, _two_links())
    with pytest.raises(ConversionError, match=r"pose of link CHEST \(only the first link, WAIST,"):
        mk.convert(seq, tmp_path / "a.traj")
    with pytest.warns(MotionkitWarning, match="the pose of link CHEST"):
        mk.convert(seq, tmp_path / "a.traj", lossy=True)
    waist = mk.read(tmp_path / "a.traj").tracks["root"]
    np.testing.assert_allclose(waist.data[:, 2], 0.8)
    np.testing.assert_allclose(waist.times, np.arange(5) / 100.0)
    mk.convert(seq, tmp_path / "b.traj", link="CHEST")
    chest = mk.read(tmp_path / "b.traj").tracks["root"]
    np.testing.assert_allclose(chest.data[:, 0], np.arange(5) * 0.1)
    with pytest.raises(ConversionError, match="no link named 'HEAD'"):
        mk.convert(seq, tmp_path / "c.traj", link="HEAD")


def test_seq_joints_only_is_refused(tmp_path: Path) -> None:
    seq = corpus_file("choreonoid", "SR1WalkPattern1.seq")
    with pytest.raises(ConversionError, match=r"root pose.*joints"):
        mk.convert(seq, tmp_path / "x.traj")


def test_traj_to_seq_single_link_and_back(tmp_path: Path) -> None:
    source = corpus_file("trajectopy", "KITTI_ORB.traj")
    mk.convert(source, tmp_path / "k.seq")
    seq = mk.read(tmp_path / "k.seq")
    original = mk.read(source).tracks["root"]
    np.testing.assert_allclose(seq.tracks["root"].data, original.data, atol=1e-12)
    mk.convert(tmp_path / "k.seq", tmp_path / "k.traj")
    again = mk.read(tmp_path / "k.traj")
    np.testing.assert_allclose(again.tracks["root"].data, original.data, atol=1e-12)
    assert again.meta["name"] == "KITTI ORB"


def test_parc_root_to_tum(tmp_path: Path) -> None:
    source = corpus_file("parc", "ms", "sfu.pkl")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MotionkitWarning)
        motion = mk.read(source)
    others = sorted(set(motion.tracks) - {"root"})
    if others:
        with pytest.raises(ConversionError, match=others[0]):
            mk.write(tmp_path / "p.tum", motion)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MotionkitWarning)
        mk.write(tmp_path / "p.tum", motion, lossy=True, precision=12)
    tum = mk.read(tmp_path / "p.tum").tracks["root"]
    root = motion.tracks["root"]
    np.testing.assert_allclose(tum.data[:, :3], root.data[:, :3], atol=1e-11)
    np.testing.assert_allclose(tum.times, root.times, atol=1e-11)


def test_bag_topic_to_traj_and_tum(tmp_path: Path) -> None:
    bag = corpus_file("evo", "ROS_example.bag")
    mk.convert(f"{bag}:S-PTAM", tmp_path / "s.traj")
    traj = mk.read(tmp_path / "s.traj")
    assert traj.meta["name"] == "S-PTAM" and traj.frames == 5439
    mk.convert(f"{bag}:S-PTAM", tmp_path / "s.tum")
    first = (tmp_path / "s.tum").read_text().split(" ", 1)[0]
    assert len(first.split(".")[1]) == 9  # exact nanoseconds from the bag
    with pytest.raises(ConversionError, match=r"root pose.*BAG:/ORB-SLAM"):
        mk.convert(bag, tmp_path / "all.traj")  # three topics: name one

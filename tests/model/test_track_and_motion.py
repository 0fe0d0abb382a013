"""Tracks check their shapes; a motion's tracks, stored and viewed."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import motionkit as mk


def test_track_checks_shapes_and_labels() -> None:
    timeline = mk.Timeline.uniform(10, 2)
    with pytest.raises(ValueError, match="needs 7"):
        mk.Track("root", "pose", np.zeros((2, 6)), timeline)
    with pytest.raises(ValueError, match="frames"):
        mk.Track("joints", "value", np.zeros((3, 2)), timeline)
    with pytest.raises(ValueError, match="labels"):
        mk.Track("joints", "value", np.zeros((2, 2)), timeline, labels=["a"])
    with pytest.raises(ValueError, match="increasing"):
        mk.Timeline.stamped([0, 1, 1])



def _links_motion() -> mk.Motion:
    timeline = mk.Timeline.uniform(10, 3)
    poses = np.zeros((3, 2, 7))
    poses[..., 6] = 1.0
    poses[:, 1, 0] = [1.0, 2.0, 3.0]
    motion = mk.Motion()
    motion.add(mk.Track("links", "pose", poses, timeline, labels=["WAIST", "FOOT"]))
    return motion


def test_root_is_a_view_of_link_zero_found_but_not_stored() -> None:
    motion = _links_motion()
    assert "root" in motion.tracks and motion.tracks.is_view("root")
    assert list(motion.tracks) == ["links"] and len(motion.tracks) == 1
    root = motion.tracks["root"]
    assert np.shares_memory(root.data, motion.tracks["links"].data)
    assert motion.root_pose() is not None and list(motion.tracks.views()) == ["root"]
    with pytest.raises(KeyError):
        del motion.tracks["root"]  # nothing stored under that name


def test_a_stored_root_wins_over_the_view() -> None:
    motion = _links_motion()
    own = mk.Track("root", "pose", np.tile([9.0, 0, 0, 0, 0, 0, 1], (3, 1)), mk.Timeline.uniform(10, 3))
    motion.add(own)
    assert motion.tracks["root"] is own and not motion.tracks.is_view("root")
    assert motion.tracks.views() == {}


def test_with_root_link_picks_a_link_by_name() -> None:
    motion = _links_motion()
    foot = motion.with_root_link("FOOT")
    assert list(foot.tracks) == ["root"]
    np.testing.assert_array_equal(foot.tracks["root"].data[:, 0], [1.0, 2.0, 3.0])
    with pytest.raises(mk.ConversionError, match=r"no link named 'HAND'.*WAIST, FOOT"):
        motion.with_root_link("HAND")


def test_a_view_is_never_written_twice(tmp_path: Path) -> None:
    mk.write(tmp_path / "links.seq", _links_motion())
    text = (tmp_path / "links.seq").read_text()
    assert text.count("type: MultiSE3Seq") == 1
    again = mk.read(tmp_path / "links.seq")
    assert list(again.tracks) == ["links"] and again.tracks.is_view("root")


def test_a_view_cannot_be_popped_but_a_default_is_given() -> None:
    motion = _links_motion()
    assert motion.tracks.pop("root", None) is None
    with pytest.raises(KeyError):
        motion.tracks.pop("root")
    assert motion.tracks.pop("links") is not None and "root" not in motion.tracks

"""What gives a MotionLib's joints their meaning: a Character, a Skeleton or a model file."""

from __future__ import annotations

from pathlib import Path

import pytest

import motionkit as mk
from conftest import corpus_file
from motionkit.formats.shared.mjcf.character import load_character
from motionkit.motionlib.library import as_character


def test_a_model_file_gives_the_character_the_formats_read() -> None:
    path = corpus_file("parc", "character", "humanoid.xml")
    ours, theirs = as_character(path), load_character(path)
    assert ours.body_names == theirs.body_names and ours.kinds == theirs.kinds
    assert (ours.local_pos == theirs.local_pos).all() and (ours.axes == theirs.axes).all()


def test_a_model_that_is_no_character_is_an_error_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "two.xml"
    path.write_text('<mujoco><worldbody><body name="a"><freejoint/><geom size="1"/>'
                    '<body name="b"><joint name="j1" axis="1 0 0"/><joint name="j2" axis="0 1 0"/>'
                    '<geom size="1"/></body></body></worldbody></mujoco>')
    with pytest.raises(mk.FormatError) as refused:
        as_character(path)
    assert refused.value.path == str(path)

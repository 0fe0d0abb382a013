"""The registry's ``accepts`` parses an MJCF file once for the read that follows it, and
never hands a tree to a second reader or over a changed file."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from motionkit.formats.parc import character
from motionkit.formats.shared.mjcf import parse

MODEL = ('<mujoco><worldbody><body name="{name}"><freejoint/><geom size="0.1"/>'
         '<body name="arm"><joint axis="1 0 0"/><geom size="0.05"/></body>'
         "</body></worldbody></mujoco>")


@pytest.fixture
def loads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    seen: list[str] = []
    real = parse._load

    def counted(source: str) -> object:
        seen.append(str(source))
        return real(source)

    monkeypatch.setattr(parse, "_load", counted)
    return seen


def test_accepts_then_read_parses_once(tmp_path: Path, loads: list[str]) -> None:
    path = tmp_path / "c.xml"
    path.write_text(MODEL.format(name="torso"))
    assert character.accepts(str(path))
    skeleton = character.read(str(path))
    assert len(loads) == 1 and skeleton.bodies[0].name == "torso"
    character.read(str(path))  # the kept tree went to the first read only
    assert len(loads) == 2


def test_a_changed_file_is_parsed_again(tmp_path: Path, loads: list[str]) -> None:
    path = tmp_path / "c.xml"
    path.write_text(MODEL.format(name="torso"))
    assert character.accepts(str(path))
    path.write_text(MODEL.format(name="pelvis_changed"))
    assert character.read(str(path)).bodies[0].name == "pelvis_changed"
    assert len(loads) == 2


def test_shapes_are_made_once_per_parse(tmp_path: Path) -> None:
    path = tmp_path / "c.xml"
    path.write_text(MODEL.format(name="torso"))
    tree = parse.parse_tree(str(path))
    geom, attrs, frame = tree.bodies[1].found.geoms[0]
    assert tree.shape(geom, attrs, frame) is tree.shape(geom, attrs, frame)


def test_a_character_file_is_parsed_once_while_it_and_its_includes_stay_unchanged(
        tmp_path: Path, loads: list[str]) -> None:
    """Each clip of a dataset names the same character file: parsed once (each caller gets
    its own copy), parsed again after an edit of the file or of a file it includes."""
    from motionkit.formats.shared.mjcf.character import load_character

    part = tmp_path / "arm.xml"
    part.write_text('<mujoco><body name="arm"><joint axis="1 0 0"/><geom size="0.05"/>'
                    "</body></mujoco>")
    path = tmp_path / "c.xml"
    path.write_text('<mujoco><worldbody><body name="torso"><freejoint/><geom size="0.1"/>'
                    '<include file="arm.xml"/></body></worldbody></mujoco>')
    first = load_character(str(path))
    second = load_character(str(path))
    assert second is not first and len(loads) == 1  # each caller its own copy
    assert second.body_names == first.body_names and np.array_equal(second.axes, first.axes)
    first.local_pos[0, 0] = 7.0  # a caller's change reaches no other caller
    assert load_character(str(path)).local_pos[0, 0] != 7.0
    part.write_text(part.read_text().replace('axis="1 0 0"', 'axis="0 1 0"'))
    os.utime(part, ns=(0, 10**18))  # a new modification time, however coarse the clock
    again = load_character(str(path))
    assert again is not first and len(loads) == 2
    assert not np.array_equal(again.axes, first.axes)
    path.write_text(path.read_text().replace("torso", "pelvis"))
    os.utime(path, ns=(0, 2 * 10**18))
    assert load_character(str(path)).body_names[0] == "pelvis" and len(loads) == 3

"""The registry's ``accepts`` parses an MJCF file once for the read that follows it, and
never hands a tree to a second reader or over a changed file."""

from __future__ import annotations

from pathlib import Path

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

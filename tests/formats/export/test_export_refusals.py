"""What no model file can hold is refused before anything is written, lossy or not: names
with control characters or line breaks, zero joint axes, names used twice; and what a
target has no place for (limits, simulation switches, world settings) is named."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import motionkit as mk
from conftest import corpus_file
from motionkit.formats.urdf.write import _comment
from motionkit.model.skeleton import World

TARGETS = (".urdf", ".xml", ".body")


def _sr1() -> mk.Skeleton:
    skeleton = mk.read(corpus_file("choreonoid", "SR1.body"))
    assert isinstance(skeleton, mk.Skeleton)
    skeleton.devices.clear()  # devices are a loss of their own for URDF/MJCF
    return skeleton


@pytest.mark.parametrize("target", TARGETS)
def test_a_name_with_a_line_break_is_refused_even_lossy(tmp_path: Path, target: str) -> None:
    skeleton = _sr1()
    skeleton.joints[3].name = "WAIST_P\nname: pwned #"
    with pytest.raises(mk.ConversionError, match="control characters or line breaks"):
        mk.write(tmp_path / f"x{target}", skeleton, lossy=True)
    assert not (tmp_path / f"x{target}").exists()


@pytest.mark.parametrize("target", TARGETS)
def test_a_zero_joint_axis_is_refused(tmp_path: Path, target: str) -> None:
    skeleton = _sr1()
    joint = next(j for j in skeleton.joints if j.type == "revolute")
    joint.axes = np.zeros_like(joint.axes)
    with pytest.raises(mk.ConversionError, match="zero axis"):
        mk.write(tmp_path / f"x{target}", skeleton, lossy=True)


@pytest.mark.parametrize("target", TARGETS)
def test_names_used_twice_are_refused_even_lossy(tmp_path: Path, target: str) -> None:
    skeleton = _sr1()
    skeleton.bodies[5].name = skeleton.bodies[4].name
    with pytest.raises(mk.ConversionError, match="unique names"):
        mk.write(tmp_path / f"x{target}", skeleton, lossy=True)


def test_xml_comments_never_hold_a_double_hyphen() -> None:
    for text in ("x---y", "a--", "--", "-", "a - -"):
        comment = _comment(text)
        assert "--" not in comment and not comment.endswith("-"), comment


@pytest.mark.parametrize(("target", "named"), [
    (".urdf", "acceleration limits"), (".xml", "velocity limits"), (".body", "acceleration limits")])
def test_limits_a_target_cannot_hold_are_named(tmp_path: Path, target: str, named: str) -> None:
    skeleton = _sr1()
    dof = next(j for j in skeleton.joints if j.type == "revolute").dofs[0]
    dof.acceleration_lower, dof.acceleration_upper = -3.0, 3.0
    dof.velocity_lower, dof.velocity_upper = -2.0, 2.0
    with pytest.raises(mk.ConversionError, match=re.escape(named)):
        mk.write(tmp_path / f"x{target}", skeleton)


@pytest.mark.parametrize("target", (".urdf", ".body"))
def test_world_settings_and_simulation_switches_are_named(tmp_path: Path, target: str) -> None:
    skeleton = _sr1()
    skeleton.mobile = False
    world = World([skeleton], gravity=np.array([0.0, -9.81, 0.0]))
    with pytest.raises(mk.ConversionError, match=r"immobility.*|gravity") as refused:
        mk.write(tmp_path / f"x{target}", world)
    assert "immobility" in str(refused.value) and "the world's gravity" in str(refused.value)

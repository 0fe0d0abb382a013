"""The .body reader against what Choreonoid's own compiled loader made of each oracle file.

``choreonoid/oracle/choreonoid_loader_output.jsonl`` holds, per file, Choreonoid's result:
its error (with line and column) or every link's name, parent, joint type / id / name,
axis, offset, initial value, the three limit pairs, mass properties, rotor inertia,
shapes per role, devices, and link poses after FK at one posture. The reader must agree
on every file, except the cases listed in ``DELIBERATE`` (NOTES.md says why).
"""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import motionkit as mk
from conftest import corpus_file, corpus_root
from motionkit.formats.choreonoid import body
from motionkit.kinematics import forward

ORACLE = corpus_root() / "choreonoid" / "oracle"

#: Files where motionkit differs on purpose: file → what motionkit does instead (checked by
#: test_deliberate_differences_do_what_notes_say, not against the oracle).
DELIBERATE = {
    "com_string.body": "keeps the model with a warning (centerOfMass ignored, as before 2020)",
    "cycle.body": "refuses a cycle of parents (Choreonoid drops those links silently)",
    "emptyrot.body": "refuses an empty rotation/translation (Choreonoid reads stale memory)",
    "ctrack_noaxis.body": "reads it; the oracle's error names line 7 of a 6-line file",
}
#: Errors whose position differs: motionkit points at the offending value itself.
POSITION_DIFFERS = {"dupanchor.body": (5, 4), "v21.body": (2, 16)}
#: Links whose FK differs: Choreonoid moves a prismatic joint by q·a with a non-unit a,
#: motionkit's FK by q along the unit axis.
FK_DIFFERS = {("merge.body", "C"), ("merge2.body", "C")}


def _oracle() -> dict[str, dict[str, Any]]:
    path = corpus_file("choreonoid", "oracle", "choreonoid_loader_output.jsonl")
    out: dict[str, dict[str, Any]] = {}
    for line in path.read_text().splitlines():  # a later line for a file wins
        record = json.loads(line)
        out[record["file"]] = record
    return out


def _names() -> list[str]:
    """The oracle's files (a placeholder without the corpus, so the test fails or skips
    through corpus_file rather than collecting nothing)."""
    path = ORACLE / "choreonoid_loader_output.jsonl"
    if not path.exists():
        return ["(corpus missing)"]
    names = {json.loads(line)["file"] for line in path.read_text().splitlines()}
    return sorted(names - set(DELIBERATE))


def _value(v: float | str) -> float:
    return float(v)  # "inf", "-inf" and "nan" as Choreonoid printed them


def _read(name: str) -> mk.Skeleton:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mk.MotionkitWarning)
        return body.read(ORACLE / name)


@pytest.mark.parametrize("name", _names())
def test_reader_agrees_with_choreonoid(name: str) -> None:
    expected = _oracle()[name]
    if not expected["ok"]:
        with pytest.raises(mk.FormatError) as info:
            _read(name)
        where = re.search(r"at line (\d+), column (\d+)", expected["msg"])
        if where:
            position = POSITION_DIFFERS.get(name, (int(where[1]), int(where[2])))
            assert (info.value.line, info.value.column) == position
        return
    skeleton = _read(name)
    links = expected["links"]
    assert [b.name for b in skeleton.bodies] == [link["name"] for link in links]
    for b, link in zip(skeleton.bodies, links, strict=True):
        extra = b.attrs["choreonoid"]
        parent = skeleton.bodies[b.parent].name if b.parent >= 0 else None
        assert parent == link["parent"], b.name
        assert extra["joint_type"] == link["jtype"], b.name
        assert extra["joint_id"] == link["jid"], b.name
        assert b.joint.name == link["jname"]
        np.testing.assert_allclose(extra["joint_axis"], link["a"], atol=1e-12)
        offset = b.joint.parent_to_joint
        np.testing.assert_allclose(offset[:3, 3], [_value(v) for v in link["b"]], atol=1e-12)
        np.testing.assert_allclose(offset[:3, :3], link["Rb"], atol=1e-12)
        assert extra["initial_position"] == pytest.approx(link["q0"], abs=1e-12)
        if b.joint.dofs:
            dof = b.joint.dofs[0]
            got = [dof.lower, dof.upper, dof.velocity_lower, dof.velocity_upper,
                   dof.force_lower, dof.force_upper]
            want = [_value(link[k]) for k in ("qlo", "qhi", "dqlo", "dqhi", "ulo", "uhi")]
            np.testing.assert_allclose(got, want, rtol=1e-12)
        assert b.inertia.mass == pytest.approx(link["m"])
        np.testing.assert_allclose(b.inertia.com, link["c"], atol=1e-12)
        np.testing.assert_allclose(b.inertia.moment, link["I"], atol=1e-12)
        assert extra["rotor_inertia"] == pytest.approx(link["Jm2"])
        for role, key in (("visual", "vis"), ("collision", "col")):
            shapes = sorted(s.attrs["choreonoid_geometry"] for s in b.shapes if s.role == role)
            assert shapes == sorted(s["prim"].lower() for s in link[key]), (b.name, role)
    devices = [(d.kind, d.name, skeleton.bodies[d.body].name) for d in skeleton.devices]
    assert devices == [(d["type"], d["name"], d["link"]) for d in expected["devices"]]
    for device, want in zip(skeleton.devices, expected["devices"], strict=True):
        np.testing.assert_allclose(device.transform[:3, 3], want["p"], atol=1e-12)
        np.testing.assert_allclose(device.transform[:3, :3], want["R"], atol=1e-12)
    _check_fk(name, skeleton, expected["fk"])


def _check_fk(name: str, skeleton: mk.Skeleton, fk: list[dict[str, Any]]) -> None:
    """Choreonoid's link poses at its posture q equal motionkit's FK at the same q."""
    q = np.zeros(skeleton.dof_count)
    for b, state in zip(skeleton.bodies, fk, strict=True):
        if b.joint.type in ("revolute", "prismatic"):
            q[b.joint.dof_offset] = state["q"]
    poses = forward(skeleton, q)
    for b, pose, state in zip(skeleton.bodies, poses, fk, strict=True):
        want = [_value(v) for v in state["p"]]
        if not np.isfinite(want).all():  # an "inf" translation: Choreonoid's pose is inf too
            continue
        if (name, b.name) in FK_DIFFERS or any(
                (name, skeleton.bodies[i].name) in FK_DIFFERS for i in _ancestors(skeleton, b)):
            continue
        np.testing.assert_allclose(pose[:3], want, atol=1e-9, err_msg=b.name)
        np.testing.assert_allclose(Rotation.from_quat(pose[3:]).as_matrix(), state["R"],
                                   atol=1e-9, err_msg=b.name)


def _ancestors(skeleton: mk.Skeleton, b: mk.Body) -> list[int]:
    out = []
    index = b.parent
    while index >= 0:
        out.append(index)
        index = skeleton.bodies[index].parent
    return out


def test_every_oracle_file_is_checked() -> None:
    _oracle()
    on_disk = {p.name for p in Path(ORACLE).glob("*.body")}
    assert on_disk == set(_names()) | set(DELIBERATE)


def test_deliberate_differences_do_what_notes_say() -> None:
    _oracle()
    with pytest.warns(mk.MotionkitWarning, match="centerOfMass is not a listing"):
        kept = body.read(ORACLE / "com_string.body")
    assert kept.bodies[0].inertia.com.tolist() == [0, 0, 0]
    with pytest.raises(mk.FormatError, match="cycle of parents") as info:
        body.read(ORACLE / "cycle.body")
    assert info.value.line == 6
    with pytest.raises(mk.FormatError, match="empty translation"):
        body.read(ORACLE / "emptyrot.body")
    track = body.read(ORACLE / "ctrack_noaxis.body")
    assert [b.name for b in track.bodies] == ["BASE", "T0", "T1", "T2"]
    assert [b.attrs["choreonoid"]["joint_type"] for b in track.bodies[1:]] == [
        "free", "revolute", "revolute"]
    assert track.joints[2].axes.tolist() == [[0, 0, 1]]  # no jointAxis: Z
    assert track.joints[2].parent_to_joint[:3, 3].tolist() == [1, 0, 0]

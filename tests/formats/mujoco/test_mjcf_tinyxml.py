"""MJCF that is not well-formed XML but that MuJoCo's parser (tinyxml2) reads: motionkit
reads it as MuJoCo does (same bodies, names, poses and masses), with one warning, and
never expands an entity."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import motionkit as mk
from conftest import python_lines, require_peer
from motionkit.formats.shared import xml
from motionkit.kinematics import forward, poses_to_matrices

_MODEL = (b'<worldbody><body name="%s" pos="0 0 1" euler="10 20 30">'
          b'<joint name="%s" type="hinge" axis="0 1 0"/>'
          b'<geom type="box" size="0.1 0.2 0.3" mass="2"/>'
          b'<body name="tip" pos="0.5 0 0"><geom type="sphere" size="0.1" density="500"/>'
          b"</body></body></worldbody></mujoco>\n")

CASES = {
    "xml declaration after leading whitespace": (
        b"\n  <?xml version='1.0' encoding='utf-8'?>\n<mujoco model='m'>", b"arm", b"hinge"),
    "declared utf-16, written utf-8": (
        b"<?xml version='1.0' encoding='UTF-16'?>\n<mujoco model='m'>", b"arm", b"hinge"),
    "declared an unknown encoding": (
        b"<?xml version='1.0' encoding='no-such-codec'?>\n<mujoco model='m'>", b"arm", b"hinge"),
    "-- inside a comment and --->": (
        b"<mujoco model='m'>\n<!-- ---- legs -- and arms --->\n", b"arm", b"hinge"),
    "latin-1 bytes in a comment": (
        b"<mujoco model='m'><!-- r\xe9glage caf\xe9 -->\n", b"arm", b"hinge"),
    "& and < in attribute values": (
        b"<mujoco model='a & b < c'>", b"arm & leg", b"j&k <1>"),
    "an undefined entity kept as text": (
        b"<mujoco model='m'>", b"arm&foo;", b"&#65;&lt;hinge"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_what_tinyxml2_accepts_reads_as_mujoco_reads_it(name: str, tmp_path: Path) -> None:
    mujoco: Any = require_peer("mujoco")
    head, body, joint = CASES[name]
    path = tmp_path / "model.xml"
    path.write_bytes(head + _MODEL % (body, joint))
    model = mujoco.MjModel.from_xml_path(str(path))
    with pytest.warns(mk.MotionkitWarning, match="tinyxml2"):
        skeleton = mk.read(path, format="mjcf")
    assert isinstance(skeleton, mk.Skeleton)
    names = [mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_BODY, i) for i in range(1, model.nbody)]
    assert [b.name for b in skeleton.bodies] == names
    assert [j.name for j in skeleton.joints][-2] == \
        mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_JOINT, 0)
    data = mujoco.MjData(model)
    mujoco.mj_kinematics(model, data)
    poses = poses_to_matrices(forward(skeleton, np.zeros(skeleton.dof_count)))
    assert np.abs(poses[:, :3, 3] - data.xpos[1:]).max() <= 1e-12
    assert np.abs(poses[:, :3, :3] - data.xmat[1:].reshape(-1, 3, 3)).max() <= 1e-12
    assert [b.inertia.mass for b in skeleton.bodies] == pytest.approx(model.body_mass[1:],
                                                                      rel=1e-12)


def test_a_well_formed_file_is_not_touched() -> None:
    data = b"<?xml version='1.0'?>\n<mujoco model='a &amp; b'><!-- fine --><x a='&lt;'/></mujoco>"
    out, encoding, notes = xml.tolerate(data)
    assert out == data.replace(b"fine", b"    ")  # comment bodies are always blanked
    assert encoding == "utf-8" and notes == []


def test_entities_of_a_dtd_stay_refused(tmp_path: Path) -> None:
    path = tmp_path / "e.xml"
    path.write_bytes(b'<?xml version="1.0"?><!DOCTYPE m [<!ENTITY a "aaaa">]>'
                     b"<mujoco><worldbody><body name='&a; & b'/></worldbody></mujoco>")
    with pytest.raises(mk.FormatError, match="refused"):
        mk.read(path, format="mjcf")


def test_repairs_keep_every_line_and_grow_at_most_fivefold() -> None:
    data = b"  <?xml version='1.0'?>\n<m a='&&&<'>\n&&&\n<!-- -- -->\n</m>\n"
    out, _, notes = xml.tolerate(data)
    assert out.count(b"\n") == data.count(b"\n") and len(out) <= 5 * len(data)
    assert len(notes) == 3
    assert b"&amp;&amp;&amp;&lt;" in out and b"\n&amp;&amp;&amp;\n" in out


def test_a_long_tag_is_scanned_in_one_pass() -> None:
    # a mesh's vertex attribute of megabytes: one regex scan, not a Python loop per byte
    data = b"<mujoco><mesh vertex='" + b"0.125 " * 1_000_000 + b"'/></mujoco>"
    with python_lines(1_000):
        out, _, _ = xml.tolerate(data)
    assert out == data


def test_misplaced_declarations_and_long_comments_cost_no_loop_per_byte() -> None:
    data = (b"<mujoco>" + b"\n<?xml a?>" * 1_000 + b"<!--" + b"x" * 100_000 + b"-->" +
            b"<?xml " + b" " * 100_000 + b"?></mujoco>")
    with python_lines(100_000):  # a few lines per declaration, none per blanked byte
        out, _, notes = xml.tolerate(data)
    assert len(out) == len(data) and out.count(b"\n") == 1_000
    assert notes == ["line 2: an XML declaration not at the start of the file",
                     "1,000 more XML declarations not at the start"]


@given(st.text(alphabet="ab <&;", max_size=30), st.text(alphabet="ab &;\n", max_size=30))
@settings(max_examples=200, deadline=None)
def test_stray_ampersands_and_brackets_stay_literal_text(value: str, text: str) -> None:
    # no '&' here can start a predefined entity or a character reference: tinyxml2 keeps
    # every character, and so does the repaired document
    data = f"<m a=\"{value}\">{text}<!-- {value} --></m>".encode()
    out, encoding, _ = xml.tolerate(data)
    root = xml.parse(out, "p.xml") if encoding else None
    assert root is not None and root.attrib["a"] == value
    assert root.text == (text if text.strip(" \t\n\r") else "")
    assert out.count(b"\n") == data.count(b"\n")


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be", "utf-32",
                                      "utf-32-le", "utf-32-be"])
def test_utf16_and_utf32_are_refused_as_mujoco_refuses_them(encoding: str,
                                                            tmp_path: Path) -> None:
    mujoco: Any = require_peer("mujoco")
    text = (f'<?xml version="1.0" encoding="{encoding[:6]}"?>\n<mujoco model="a &amp; b">'
            + (_MODEL % (b"arm", b"hinge")).decode())
    data = text.encode(encoding)
    path = tmp_path / "wide.xml"
    path.write_bytes(data)
    with pytest.raises(ValueError):
        mujoco.MjModel.from_xml_path(str(path))
    with pytest.raises(mk.FormatError, match=rf"wide\.xml:1: {encoding[:6].upper()} text.*"
                                             "save it as UTF-8"):
        mk.read(path, format="mjcf")
    assert xml.tolerate(data) == (data, None, [])  # never garbled by the byte scans

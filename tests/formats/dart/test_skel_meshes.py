"""``.skel`` bodies whose inertia is derived from large COLLADA meshes, shaped like the kima
meshes of DartEnv (FBX exporter: one vertex per line, ~5,000 vertices, ~30,000 normals, one
``<p>`` of 60,000 indices, ``<unit meter="0.01">``, node matrices scaled by 0.001).

Reading them took 1.7 s per megabyte of mesh: the XML tree added every line of character
data to a growing string (quadratic). The text is now kept in chunks and joined once.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from xml.etree import ElementTree

import numpy as np
import pytest

import motionkit as mk
from conftest import require_peer
from motionkit.formats.shared import xml
from motionkit.model.skeleton import World

_DAE = """<?xml version="1.0" encoding="utf-8"?>
<COLLADA xmlns="http://www.collada.org/2005/11/COLLADASchema" version="1.4.1">
<asset><unit meter="0.010000" name="centimeter"></unit><up_axis>Y_UP</up_axis></asset>
<library_geometries><geometry id="g-lib"><mesh>
<source id="g-POSITION"><float_array id="g-POSITION-array" count="{nv3}">
{vertices}
</float_array><technique_common><accessor source="#g-POSITION-array" count="{nv}" stride="3">
<param name="X" type="float"/><param name="Y" type="float"/><param name="Z" type="float"/>
</accessor></technique_common></source>
<source id="g-Normal0"><float_array id="g-Normal0-array" count="{nn3}">
{normals}
</float_array><technique_common><accessor source="#g-Normal0-array" count="{nn}" stride="3">
<param name="X" type="float"/><param name="Y" type="float"/><param name="Z" type="float"/>
</accessor></technique_common></source>
<vertices id="g-VERTEX"><input semantic="POSITION" source="#g-POSITION"/></vertices>
<triangles count="{tris}"><input semantic="VERTEX" offset="0" source="#g-VERTEX"/>
<input semantic="NORMAL" offset="1" source="#g-Normal0"/><p> {indices}</p></triangles>
</mesh></geometry></library_geometries>
<library_visual_scenes><visual_scene id="s"><node id="a"><matrix>1 0 0 0 0 1 0 0 0 0 1 0 0 0 0 1
</matrix><node id="b"><matrix>0 0 0.001 -0.085471 0 0.001 0 -0.072205 -0.001 0 0 0.133856 0 0 0
1</matrix><instance_geometry url="#g-lib"/></node></node></visual_scene></library_visual_scenes>
<scene><instance_visual_scene url="#s"/></scene>
</COLLADA>
"""

_SKEL = ("<skel version='1.0'><world name='w'><skeleton name='human'><body name='pelvis'>"
         "<inertia><mass>11.3316</mass><offset>0 0.01 0</offset></inertia><visualization_shape>"
         "<transformation>0 0.07 0 0 0 0</transformation><geometry><mesh><file_name>{}"
         "</file_name><scale>1.4 1.4 1.4</scale></mesh></geometry></visualization_shape>"
         "<collision_shape><geometry><box><size>0.175 0.1855 0.35</size></box></geometry>"
         "</collision_shape></body><joint name='j' type='free'><parent>world</parent>"
         "<child>pelvis</child></joint></skeleton></world></skel>")


def kima_like_mesh(vertices: int = 5124, triangles: int = 10235, normals: int = 30706,
                   seed: int = 0) -> str:
    """A COLLADA text laid out like the kima meshes (about 1.35 MB at the defaults)."""
    rng = np.random.default_rng(seed)
    points = rng.uniform(0.0, 150.0, (vertices, 3))
    directions = rng.uniform(-1.0, 1.0, (normals, 3))
    corners = triangles * 3
    index = np.stack([rng.integers(0, vertices, corners), np.arange(corners) % normals], 1)
    return _DAE.format(nv=vertices, nv3=vertices * 3, nn=normals, nn3=normals * 3,
                       tris=triangles, vertices=_lines(points), normals=_lines(directions),
                       indices=" ".join(map(str, index.ravel())))


def _lines(rows: np.ndarray) -> str:
    return "\n".join(" ".join(f"{value:f}" for value in row) for row in rows)


def _kima_skel(folder: Path) -> Path:
    (folder / "pelvis.dae").write_text(kima_like_mesh())
    path = folder / "kima.skel"
    path.write_text(_SKEL.format("pelvis.dae"))
    return path


def _ours(path: Path) -> World:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mk.MotionkitWarning)
        world = mk.read(path)
    assert isinstance(world, World)
    return world


def test_a_kima_like_mesh_body_derives_dartpys_moment(tmp_path: Path) -> None:
    path = _kima_skel(tmp_path)
    ours = _ours(path).skeletons[0].bodies[0].inertia.moment
    dart = require_peer("dartpy")
    world = dart.utils.SkelParser.readWorld(str(path))  # type: ignore[attr-defined]
    theirs = world.getSkeleton(0).getBodyNode(0).getInertia().getMoment()
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-18)


def test_long_text_arrives_in_few_chunks_and_is_joined_exactly() -> None:
    """750 KB of numbers on 25,000 lines reaches the tree in buffer-sized chunks (expat
    reports each line apart otherwise) and reads back equal to ElementTree's text."""
    text = kima_like_mesh(vertices=25_000, triangles=10, normals=10)
    data = text.encode()
    calls = 0
    chars = xml._TreeBuilder.chars

    def counted(self: xml._TreeBuilder, text: str) -> None:
        nonlocal calls
        calls += 1
        chars(self, text)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(xml._TreeBuilder, "chars", counted)
        root = xml.parse(data, "mesh.dae")
    array = next(n for n in _all(root) if n.attrib.get("id") == "g-POSITION-array")
    length = sum(len(chunk) for chunk in array.content[0][1:])
    assert length > 700_000
    assert len(array.content[0]) - 1 <= length // 8192 + 2  # chunks, not lines
    assert calls < 1_000  # 25,100 (a call per line) before
    theirs = next(e for e in ElementTree.fromstring(data).iter()
                  if e.get("id") == "g-POSITION-array")
    assert array.text == theirs.text
    assert len(array.content[0]) == 2  # joined once, kept joined
    assert array.text is array.text


def test_character_data_is_kept_in_chunks_until_read() -> None:
    node = xml.Node("a", {}, 1, 1)
    for chunk in ("1 ", "2 ", "3"):
        node.add("text", chunk)
    assert node.content == [["text", "1 ", "2 ", "3"]]  # no string grown chunk by chunk
    assert node.text == "1 2 3"
    assert node.content == [["text", "1 2 3"]]


def test_text_split_by_comments_cdata_and_elements_is_read_as_before() -> None:
    """What tinyxml2's GetText gives DART, unchanged by the chunked text."""
    cases = {b"<a>\n 2\n<!--c-->3</a>": "\n 2\n", b"<a><!--c-->\n  <!--d-->7 8</a>": "7 8",
             b"<a>  <![CDATA[5]]>6</a>": "5", b"<a>1&amp;2<b/>3</a>": "1&2",
             b"<a><![CDATA[x]]><![CDATA[y]]></a>": "x"}
    for data, expected in cases.items():
        assert xml.parse(data, "t.xml").text == expected, data


def _all(node: xml.Node) -> list[xml.Node]:
    out, stack = [], [node]
    while stack:
        item = stack.pop()
        out.append(item)
        stack.extend(item.children)
    return out

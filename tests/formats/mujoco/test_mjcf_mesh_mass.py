"""Body masses from MJCF mesh geoms equal MuJoCo's (every mesh ``inertia`` rule, OBJ and
binary STL written here, scaled and turned geoms), and a mesh that cannot be read is left
out with a warning, never silently."""

from __future__ import annotations

import struct
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import motionkit as mk
from conftest import require_peer
from motionkit.formats.shared.mjcf import mesh as mesh_module

# Two separate boxes: a closed mesh whose convex hull is not the mesh (the rules differ).
_CORNERS = [(x, y, z) for x in (0, 1) for y in (0, 1) for z in (0, 1)]
_FACES = [(0, 1, 3), (0, 3, 2), (4, 6, 7), (4, 7, 5), (0, 4, 5), (0, 5, 1), (2, 3, 7),
          (2, 7, 6), (0, 2, 6), (0, 6, 4), (1, 5, 7), (1, 7, 3)]


def _mesh() -> tuple[np.ndarray, list[tuple[int, int, int]]]:
    small = np.array(_CORNERS, float) * [1.0, 0.5, 0.2]
    vertices = np.vstack([small, small + np.array([2.0, 0.1, 0.0])])
    return vertices, _FACES + [(a + 8, b + 8, c + 8) for a, b, c in _FACES]


def _write_obj(path: Path) -> None:
    vertices, faces = _mesh()
    lines = [f"v {x!r} {y!r} {z!r}" for x, y, z in vertices.tolist()]
    lines += [f"f {a + 1} {b + 1} {c + 1}" for a, b, c in faces]
    path.write_text("\n".join(lines) + "\n")


def _write_stl(path: Path) -> None:
    vertices, faces = _mesh()
    records = [struct.pack("<3f", 0, 0, 0) + b"".join(struct.pack("<3f", *vertices[i])
               for i in face) + b"\0\0" for face in faces]
    path.write_bytes(b"\0" * 80 + struct.pack("<I", len(faces)) + b"".join(records))


def _model(tmp_path: Path, mesh: str, rule: str, scale: str, geom: str) -> Path:
    rule_text = f' inertia="{rule}"' if rule else ""
    path = tmp_path / "model.xml"
    path.write_text(
        f'<mujoco><asset><mesh name="m" file="{mesh}" scale="{scale}"{rule_text}/></asset>'
        '<worldbody><body name="b" pos="0 0 1"><freejoint/>'
        f'<geom type="mesh" mesh="m" pos="0.1 0.2 0.3" euler="10 20 30" {geom}/>'
        '<geom type="box" size="0.1 0.2 0.3" pos="1 0 0"/></body></worldbody></mujoco>')
    return path


@pytest.mark.parametrize("mesh", ["part.obj", "part.stl"])
@pytest.mark.parametrize("rule", ["", "legacy", "exact", "convex", "shell"])
@pytest.mark.parametrize("scale, geom", [
    ("1 1 1", ""), ("2 0.5 3", 'density="300"'), ("-1 1 1", 'mass="7"'),
    ('1 1 1" refpos="0.5 0.1 0" refquat="0.9 0.1 0.3 0.2', "")])
def test_mesh_masses_equal_mujoco(mesh: str, rule: str, scale: str, geom: str,
                                  tmp_path: Path) -> None:
    mujoco: Any = require_peer("mujoco")
    (_write_obj if mesh.endswith(".obj") else _write_stl)(tmp_path / mesh)
    path = _model(tmp_path, mesh, rule, scale, geom)
    model = mujoco.MjModel.from_xml_path(str(path))
    with warnings.catch_warnings():
        warnings.simplefilter("error", mk.MotionkitWarning)
        skeleton = mk.read(path, format="mjcf")
    assert isinstance(skeleton, mk.Skeleton)
    inertia = skeleton.bodies[0].inertia
    assert inertia.mass == pytest.approx(model.body_mass[1], rel=1e-9)
    assert np.allclose(inertia.com, model.body_ipos[1], rtol=0, atol=1e-9)
    turn = np.zeros(9)
    mujoco.mju_quat2Mat(turn, model.body_iquat[1])
    moment = turn.reshape(3, 3) @ np.diag(model.body_inertia[1]) @ turn.reshape(3, 3).T
    # a turned mesh's convex hull differs from MuJoCo's in the last float32 digits (1e-9)
    closeness = 1e-8 if rule == "convex" and "refquat" in scale else 1e-9
    assert np.abs(inertia.moment - moment).max() <= closeness * np.abs(moment).max()
    assert "inertia" not in skeleton.bodies[0].attrs


@pytest.mark.parametrize("mesh, write, reason", [
    ("gone.stl", None, "cannot be read"),
    ("part.dae", lambda p: p.write_text("<COLLADA/>"), "not read by motionkit"),
    ("ascii.stl", lambda p: p.write_text("solid x\nendsolid x\n"), "binary STL")])
def test_a_mesh_that_cannot_be_read_is_left_out_with_a_warning(
        mesh: str, write: Any, reason: str, tmp_path: Path) -> None:
    if write is not None:
        write(tmp_path / mesh)
    path = _model(tmp_path, mesh, "", "1 1 1", "")
    with pytest.warns(mk.MotionkitWarning, match=f"mesh 'm' .*{reason}.*leave it out"):
        skeleton = mk.read(path, format="mjcf")
    assert isinstance(skeleton, mk.Skeleton)
    body = skeleton.bodies[0]
    assert body.attrs["inertia"] == "from geoms (mesh geoms not counted)"
    assert body.inertia.mass == pytest.approx(1000 * 0.2 * 0.4 * 0.6)  # the box alone



def _assets(tmp_path: Path, files: list[str], scales: list[str]) -> Path:
    """A model of one body per mesh asset, each naming its file with its scale."""
    assets = "".join(f'<mesh name="m{k}" file="{name}" scale="{scale}"/>'
                     for k, (name, scale) in enumerate(zip(files, scales, strict=True)))
    bodies = "".join(f'<body name="b{k}"><geom type="mesh" mesh="m{k}"/></body>'
                     for k in range(len(files)))
    path = tmp_path / "many.xml"
    path.write_text(f'<mujoco><asset>{assets}</asset><worldbody><body name="root">'
                    f'<freejoint/><geom size="0.1"/>{bodies}</body></worldbody></mujoco>')
    return path


def _counting(monkeypatch: pytest.MonkeyPatch, name: str) -> list[int]:
    """Count the calls of a function of the mesh module."""
    calls: list[int] = []
    original = getattr(mesh_module, name)

    def counted(*args: Any) -> Any:
        calls.append(1)
        return original(*args)

    monkeypatch.setattr(mesh_module, name, counted)
    return calls


def test_many_assets_on_one_file_read_and_compute_it_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _write_stl(tmp_path / "part.stl")
    reads = _counting(monkeypatch, "read_mesh")
    computed = _counting(monkeypatch, "mass_properties")
    path = _assets(tmp_path, ["part.stl"] * 400, ["1 1 1"] * 200 + ["2 2 2"] * 200)
    skeleton = mk.read(path, format="mjcf")
    assert isinstance(skeleton, mk.Skeleton)
    assert (len(reads), len(computed)) == (1, 2)  # one file; two placements of it
    masses = [body.inertia.mass for body in skeleton.bodies[1:]]
    assert masses[:200] == [masses[0]] * 200 and masses[200:] == [masses[200]] * 200
    assert masses[200] == pytest.approx(8 * masses[0], rel=1e-12)


@pytest.mark.parametrize("limit, value, reason", [
    ("MAX_MODEL_MESH_TRIANGLES", 50, "exceed 50 triangles"),
    ("MAX_MODEL_MESH_BYTES", 1 << 20, "exceed 1 MiB")])
def test_a_model_s_meshes_stop_at_its_budget_with_one_warning(
        limit: str, value: int, reason: str, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    # 24 triangles each, placed four ways: two fit 50 triangles; or four files of
    # 0.4 MB (an OBJ padded with a comment): two fit 1 MiB
    monkeypatch.setattr(mesh_module, limit, value)
    _write_obj(tmp_path / "part.obj")
    files = ["part.obj"] * 4
    if limit == "MAX_MODEL_MESH_BYTES":
        padded = (tmp_path / "part.obj").read_bytes() + b"#" * 400_000 + b"\n"
        files = [f"p{k}.obj" for k in range(4)]
        for name in files:
            (tmp_path / name).write_bytes(padded)
    path = _assets(tmp_path, files, [f"{k + 1} 1 1" for k in range(4)])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        skeleton = mk.read(path, format="mjcf")
    assert [reason in str(w.message) and "every later one" in str(w.message)
            for w in caught] == [True]
    assert isinstance(skeleton, mk.Skeleton)
    assert [b.name for b in skeleton.bodies if "inertia" in b.attrs] == ["b2", "b3"]
    assert [b.inertia.mass > 0 for b in skeleton.bodies[1:]] == [True, True, False, False]


def test_an_obj_beyond_the_triangle_cap_is_left_out(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mesh_module, "MAX_MESH_TRIANGLES", 23)  # the mesh has 24
    _write_obj(tmp_path / "part.obj")
    with pytest.warns(mk.MotionkitWarning, match="more than 1,000,000 vertices or 23 "
                                                 "triangles.*leave it out"):
        skeleton = mk.read(_assets(tmp_path, ["part.obj"], ["1 1 1"]), format="mjcf")
    assert isinstance(skeleton, mk.Skeleton) and skeleton.bodies[1].inertia.mass == 0


@pytest.mark.parametrize("rule", mesh_module.RULES)
def test_masses_summed_in_blocks_equal_one_sum(rule: str,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    vertices, faces = _mesh()
    triangles = np.array(faces, dtype=np.int64)
    whole = mesh_module.mass_properties(vertices, triangles, rule)
    monkeypatch.setattr(mesh_module, "_BLOCK", 5)
    blocks = mesh_module.mass_properties(vertices, triangles, rule)
    assert blocks.volume == pytest.approx(whole.volume, rel=1e-14)
    assert np.allclose(blocks.com, whole.com, rtol=0, atol=1e-14)
    assert np.allclose(blocks.inertia, whole.inertia, rtol=1e-14, atol=1e-16)


def test_an_obj_is_read_a_line_at_a_time() -> None:
    """The OBJ reader's peak memory stays a small multiple of the file (the vertices as
    float32, then float64), not a list of every line (7.6× the file before)."""
    import tracemalloc

    from motionkit.formats.shared.mjcf import mesh

    data = b"v 1 2 3\n" * 400_000 + b"f 1 2 3\n" * 1_000
    tracemalloc.start()
    try:
        mesh._obj(data)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 5 * len(data)

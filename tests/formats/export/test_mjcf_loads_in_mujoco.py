"""Every MJCF the writer makes from a corpus model loads in MuJoCo and steps (issue 25):
nothing MuJoCo refuses is written (zero geom sizes, ranges of zero width), and what was
changed to get there is a named loss."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np
import pytest

import motionkit as mk
from conftest import corpus_names, corpus_root, require_peer
from motionkit.model.skeleton import Body, Dof, Joint, Shape, Skeleton

mujoco = require_peer("mujoco")

#: Every model format motionkit reads (MJCF as ``.xml``), anywhere in the corpus.
SUFFIXES = (".body", ".urdf", ".skel", ".xml")


def _models() -> list[str]:
    """Corpus models motionkit reads, with bodies (the rule files broken on purpose are
    refused by their reader, and left out), relative to the corpus root."""
    root = corpus_root()
    found = []
    for path in sorted(p for p in root.rglob("*") if p.suffix in SUFFIXES and p.is_file()):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                obj = mk.read(path)
        except mk.MotionkitError:
            continue
        skeletons = obj.skeletons if isinstance(obj, mk.World) else [obj]
        if not isinstance(obj, mk.Motion) and any(s.bodies for s in skeletons):
            found.append(path.relative_to(root).as_posix())
    return found


MODELS = corpus_names(_models())


def _load_and_step(path: Path) -> None:
    model = mujoco.MjModel.from_xml_path(str(path))
    data = mujoco.MjData(model)
    mujoco.mj_step(model, data)
    assert np.all(np.isfinite(data.qpos))


@pytest.mark.corpus
@pytest.mark.filterwarnings("ignore::motionkit.errors.MotionkitWarning")  # lossy writes
@pytest.mark.parametrize("relative", MODELS)
def test_every_corpus_model_written_as_mjcf_loads_and_steps(relative: str, tmp_path: Path) -> None:
    from conftest import corpus_file

    source = corpus_file(*relative.split("/"))
    obj = mk.read(source)
    assert isinstance(obj, (mk.Skeleton, mk.World))
    parts: list[mk.Skeleton | mk.World] = [obj]
    if isinstance(obj, mk.World):  # each skeleton alone too (a world may repeat names)
        parts += [s for s in obj.skeletons if s.bodies]
    written, refused = 0, []
    for number, part in enumerate(parts):
        target = tmp_path / f"model{number}.xml"
        try:
            mk.write(target, part, format="mjcf", lossy=True)
        except mk.ConversionError as exc:  # the refusals even lossy keeps, never a bad file
            assert re.search("non-finite|needs unique names", str(exc)), exc
            assert not target.exists()
            refused.append(str(exc))
            continue
        _load_and_step(target)
        written += 1
    assert written or all("non-finite" in text for text in refused), refused


def test_mujoco_warnings_leave_no_log_in_the_working_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # where MuJoCo writes MUJOCO_LOG.TXT by default
    model = mujoco.MjModel.from_xml_string(
        '<mujoco><worldbody><body><joint type="slide"/><geom size="0.1"/></body>'
        "</worldbody></mujoco>")
    data = mujoco.MjData(model)
    data.qvel[:] = np.nan  # a warning: unstable simulation
    mujoco.mj_step(model, data)
    assert data.warning[mujoco.mjtWarning.mjWARN_BADQVEL].number == 1
    assert list(tmp_path.iterdir()) == []


def test_the_corpus_models_are_found(corpus: Path) -> None:
    assert len(MODELS) >= 80  # .body, .skel and MJCF files today: a reader that stops reading shows


def _plate() -> Skeleton:
    """A flat plate: a box of zero thickness, as Choreonoid's floor models have."""
    plate = Shape("box", {"size": np.array([2.0, 2.0, 0.0])}, np.eye(4), "collision")
    ball = Shape("sphere", {"radius": 0.0}, np.eye(4), "visual")
    return Skeleton("plate", [Body("floor", Joint("floor", "free"), shapes=[plate, ball])])


def test_a_zero_thickness_box_is_written_thin_and_named(tmp_path: Path) -> None:
    with pytest.raises(mk.ConversionError, match=r"zero box sizes .*'floor'.*zero sphere sizes"):
        mk.write(tmp_path / "plate.xml", _plate())
    assert not (tmp_path / "plate.xml").exists()
    with pytest.warns(mk.MotionkitWarning, match="zero box sizes"):
        mk.write(tmp_path / "plate.xml", _plate(), lossy=True)
    _load_and_step(tmp_path / "plate.xml")
    model = mujoco.MjModel.from_xml_path(str(tmp_path / "plate.xml"))
    np.testing.assert_array_equal(model.geom_size[0], [1.0, 1.0, 1e-6])


@pytest.mark.parametrize("kind, params", [
    ("box", {"size": np.array([np.nan, 1.0, 1.0])}),
    ("box", {"size": np.array([-0.2, 1.0, 1.0])}),
    ("ellipsoid", {"size": np.array([1.0, np.inf, 1.0])}),
    ("sphere", {"radius": -0.1}),
    ("capsule", {"radius": 0.1, "height": np.nan}),
    ("multi_sphere", {"spheres": [(0.1, np.zeros(3)), (-0.1, np.ones(3))]})])
def test_nan_infinite_and_negative_sizes_are_refused_even_lossy(
        kind: str, params: dict[str, object], tmp_path: Path) -> None:
    skeleton = Skeleton("s", [Body("floor", Joint("floor", "free"),
                                   shapes=[Shape(kind, params, np.eye(4), "collision")])])
    for lossy in (False, True):
        with pytest.raises(mk.ConversionError,
                           match=rf"NaN, infinite or negative on 'floor' \({kind}\)"):
            mk.write(tmp_path / "s.xml", skeleton, lossy=lossy)
        assert not (tmp_path / "s.xml").exists()


def test_a_negative_zero_size_is_a_zero(tmp_path: Path) -> None:
    plate = Shape("box", {"size": np.array([2.0, 2.0, -0.0])}, np.eye(4), "collision")
    skeleton = Skeleton("s", [Body("floor", Joint("floor", "free"), shapes=[plate])])
    with pytest.warns(mk.MotionkitWarning, match="zero box sizes"):
        mk.write(tmp_path / "s.xml", skeleton, lossy=True)
    model = mujoco.MjModel.from_xml_path(str(tmp_path / "s.xml"))
    np.testing.assert_array_equal(model.geom_size[0], [1.0, 1.0, 1e-6])


_PLANE_BODY = """format: ChoreonoidBody
formatVersion: 1.0
name: plane
links:
  - name: PLANE
    jointType: fixed
    elements:
      Shape:
        geometry: { type: Box, size: [ 10, 10, 0 ] }
"""


def test_a_choreonoid_floor_plate_loads_in_mujoco(tmp_path: Path) -> None:
    """The shape of Choreonoid's ``plane.body`` (a box 0 thick), read and written lossy."""
    (tmp_path / "plane.body").write_text(_PLANE_BODY)
    with pytest.warns(mk.MotionkitWarning, match="zero box sizes .* on 'PLANE'"):
        mk.convert(tmp_path / "plane.body", tmp_path / "plane.xml", lossy=True)
    _load_and_step(tmp_path / "plane.xml")


_URDF = """<?xml version="1.0"?>
<robot name="arm">
  <link name="base"><inertial><mass value="1"/>
    <inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="tip"><inertial><mass value="1"/>
    <inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><geometry><sphere radius="0.1"/></geometry></collision></link>
  <joint name="bend" type="revolute"><parent link="base"/><child link="tip"/>
    <axis xyz="0 0 1"/><limit effort="3" velocity="2"/></joint>
</robot>
"""


def test_a_urdf_revolute_without_lower_and_upper_is_written_unlimited(tmp_path: Path) -> None:
    """urdfdom reads 0 and 0; MuJoCo refuses a range of zero width and its own URDF import
    makes such a joint unlimited: so does the writer, naming it."""
    source = tmp_path / "arm.urdf"
    source.write_text(_URDF)
    skeleton = mk.read(source)
    assert isinstance(skeleton, Skeleton)
    with pytest.raises(mk.ConversionError, match=r"ranges of zero width .* on 'bend'"):
        mk.write(tmp_path / "arm.xml", skeleton)
    with pytest.warns(mk.MotionkitWarning, match="ranges of zero width"):
        mk.write(tmp_path / "arm.xml", skeleton, lossy=True)
    assert 'range="0 0"' not in (tmp_path / "arm.xml").read_text()
    _load_and_step(tmp_path / "arm.xml")
    ours = mujoco.MjModel.from_xml_path(str(tmp_path / "arm.xml"))
    theirs = mujoco.MjModel.from_xml_path(str(source))  # MuJoCo's own URDF compiler
    bend = mujoco.mj_name2id(ours, mujoco.mjtObj.mjOBJ_JOINT, "bend")
    assert ours.jnt_limited[bend] == theirs.jnt_limited[0] == 0


def test_a_real_range_is_still_written(tmp_path: Path) -> None:
    joint = Joint("bend", "revolute", axes=[[0.0, 0.0, 1.0]])
    joint.dofs = [Dof("bend", lower=-0.5, upper=0.5)]
    sphere = Shape("sphere", {"radius": 0.1}, np.eye(4), "collision")
    skeleton = Skeleton("arm", [Body("base", Joint("base", "weld")),
                                Body("tip", joint, 0, shapes=[sphere])])
    skeleton.bodies[1].inertia.mass = 1.0
    skeleton.bodies[1].inertia.moment = np.eye(3) * 0.01
    mk.write(tmp_path / "arm.xml", skeleton)
    model = mujoco.MjModel.from_xml_path(str(tmp_path / "arm.xml"))
    assert model.jnt_limited[0] == 1
    np.testing.assert_array_equal(model.jnt_range[0], [-0.5, 0.5])

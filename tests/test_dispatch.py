"""Registry dispatch where extensions are shared: ``for_reading`` picks the format by
content (.pkl, .xml, .yaml/.yml, .txt, .csv), ``for_writing`` picks the extension's
default writer, every writer's file dispatches back to it, and content no format claims
is a FormatError naming the file."""

from __future__ import annotations

import pickle
import shutil
import warnings
from pathlib import Path

import numpy as np
import pytest
import yaml

import motionkit as mk
from conftest import corpus_file
from motionkit.formats import registry

# ----------------------------------------------------------------------- small files
#: A character inside the PARC subset: one top body with a free joint, hinges on the axes.
PARC_CHARACTER = """<mujoco model="tiny">
  <worldbody>
    <body name="pelvis" pos="0 0 1">
      <freejoint name="root"/>
      <geom type="sphere" size="0.1"/>
      <body name="thigh" pos="0 0 -0.1">
        <joint name="hip" type="hinge" axis="1 0 0"/>
        <geom type="capsule" fromto="0 0 0 0 0 -0.3" size="0.05"/>
      </body>
    </body>
  </worldbody>
</mujoco>
"""
#: MuJoCo models outside the subset, which a character reading would change.
GENERAL_MJCF = {
    "fixed base": PARC_CHARACTER.replace('<freejoint name="root"/>', ""),
    "two top bodies": """<mujoco><worldbody>
  <body name="a"><freejoint/><geom size="0.1"/></body>
  <body name="b" pos="1 0 0"><freejoint/><geom size="0.1"/></body>
</worldbody></mujoco>
""",
}
MOTION_LIST = "motions:\n  - file: walk.pkl\n    weight: 2.0\n  - file: run.pkl\n    weight: 1.0\n"
TUM_ROWS = "0.0 0 0 0 0 0 0 1\n0.1 1 0 0 0 0 0 1\n"
EUROC_ROWS = ("1403715524907143168,0.5,1.9,0.9,1.0,0.0,0.0,0.0\n"
              "1403715524912143104,0.6,1.9,0.9,1.0,0.0,0.0,0.0\n")


def _gmr_pickle() -> bytes:
    """A GMR motion as its scripts save it (a dict of arrays, protocol 4)."""
    frames = 4
    return pickle.dumps({"fps": 30, "root_pos": np.zeros((frames, 3)),
                         "root_rot": np.tile([0.0, 0.0, 0.0, 1.0], (frames, 1)),
                         "dof_pos": np.zeros((frames, 2)), "local_body_pos": None,
                         "link_body_list": None}, protocol=4)


def _file(folder: Path, name: str, content: str | bytes | Path) -> Path:
    path = folder / name
    if isinstance(content, Path):
        shutil.copyfile(content, path)
    elif isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    return path


def _read_as(path: Path, expected: str) -> None:
    assert registry.for_reading(path).name == expected, path.name
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mk.MotionkitWarning)
        registry.by_name(expected).read(path)  # and the chosen reader takes it


# ----------------------------------------------------------------------- .pkl
@pytest.mark.corpus
def test_pkl_goes_to_mimickit_gmr_or_parc_by_content(tmp_path: Path) -> None:
    _read_as(corpus_file("mimickit", "g1_walk.pkl"), "mimickit")
    _read_as(corpus_file("mimickit", "humanoid_platform05.pkl"), "mimickit")
    _read_as(corpus_file("parc", "ms", "sfu.pkl"), "parc")  # an MS container
    _read_as(corpus_file("parc", "legacy_v0.1", "TEASER_TERRAIN.pkl"), "parc")  # legacy dict
    _read_as(_file(tmp_path, "gmr.pkl", _gmr_pickle()), "gmr")  # no public GMR file exists
    assert registry.for_writing(tmp_path / "x.pkl").name == "parc"  # the others by name only
    _read_as(_file(tmp_path, "G1.PKL", corpus_file("mimickit", "g1_walk.pkl")), "mimickit")


# ----------------------------------------------------------------------- .xml
@pytest.mark.parametrize("model", list(GENERAL_MJCF))
def test_xml_outside_the_parc_subset_goes_to_the_general_mjcf_reader(tmp_path: Path,
                                                                     model: str) -> None:
    path = _file(tmp_path, "model.xml", GENERAL_MJCF[model])
    _read_as(path, "mjcf")
    read = mk.read(path)
    if model == "two top bodies":
        assert isinstance(read, mk.World) and len(read.skeletons) == 2
    else:
        assert isinstance(read, mk.Skeleton) and read.bodies[0].joint.type == "weld"


def test_xml_inside_the_parc_subset_is_a_parc_character(tmp_path: Path) -> None:
    path = _file(tmp_path, "tiny.xml", PARC_CHARACTER)
    _read_as(path, "parc-character")
    assert registry.for_writing(path).name == "mjcf"  # the character reader writes nothing


@pytest.mark.corpus
def test_parcs_own_humanoid_is_a_parc_character() -> None:
    _read_as(corpus_file("parc", "character", "humanoid.xml"), "parc-character")


# ----------------------------------------------------------------------- .yaml / .yml
@pytest.mark.corpus
@pytest.mark.parametrize("suffix", [".yaml", ".yml"])
def test_yaml_goes_to_seq_or_motionlist_by_content(tmp_path: Path, suffix: str) -> None:
    _read_as(_file(tmp_path, "walk" + suffix, corpus_file("choreonoid", "SR1WalkPattern.yaml")),
             "seq")
    _read_as(_file(tmp_path, "locomotion" + suffix,
                   corpus_file("mimickit", "dataset_humanoid_locomotion.yaml")), "motionlist")
    _read_as(_file(tmp_path, "list" + suffix, MOTION_LIST), "motionlist")
    _read_as(_file(tmp_path, "sorted" + suffix, _sorted_seq(tmp_path)), "seq")
    assert registry.for_writing(tmp_path / ("x" + suffix)).name == "seq"


def _sorted_seq(folder: Path) -> str:
    """A .seq re-saved by a YAML tool that sorts keys: its top-level ``type`` comes after
    the long ``components`` list, beyond the bytes a sniff sees."""
    motion = mk.Motion(meta={"name": "m"})
    motion.add(mk.Track("joints", "value", np.random.default_rng(0).normal(size=(3000, 3)),
                        mk.Timeline.uniform(100.0, 3000)))
    mk.write(folder / "plain.seq", motion)
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    text = yaml.dump(yaml.load((folder / "plain.seq").read_text(), Loader=loader), Dumper=dumper,
                     sort_keys=True)
    assert text.startswith("components:") and text.index("\ntype:") > registry.SNIFF_BYTES
    return text


# ----------------------------------------------------------------------- .txt / .csv
@pytest.mark.corpus
def test_txt_goes_to_traj_tum_or_kitti_by_content(tmp_path: Path) -> None:
    _read_as(corpus_file("evo", "fr2_desk_ORB.txt"), "tum")  # eight numbers a row
    _read_as(corpus_file("evo", "freiburg1_xyz-rgbdslam.txt"), "tum")  # after a comment
    _read_as(corpus_file("evo", "KITTI_00_gt.txt"), "kitti")  # twelve
    # trajectopy's header wins over its eight-number rows
    _read_as(_file(tmp_path, "gt.txt", corpus_file("trajectopy", "KITTI_gt.traj")), "traj")
    assert registry.for_writing(tmp_path / "x.txt").name == "traj"


@pytest.mark.corpus
def test_csv_goes_to_traj_or_euroc_by_content(tmp_path: Path) -> None:
    _read_as(corpus_file("evo", "V102_groundtruth.csv"), "euroc")  # '#timestamp' header
    _read_as(_file(tmp_path, "bare.csv", EUROC_ROWS), "euroc")  # nanosecond stamps, no header
    _read_as(_file(tmp_path, "gt.csv", corpus_file("trajectopy", "KITTI_gt.traj")), "traj")
    assert registry.for_writing(tmp_path / "x.csv").name == "traj"


# ----------------------------------------------------------------------- written files
def _pose_motion(writer: str) -> mk.Motion:
    timeline = mk.Timeline.frame_numbers(4) if writer == "kitti" else mk.Timeline.uniform(10.0, 4)
    root = np.zeros((4, 7))
    root[:, 0] = np.arange(4)
    root[:, 6] = 1.0
    motion = mk.Motion(meta={"name": "m"})
    motion.add(mk.Track("root", "pose", root, timeline))
    if writer == "parc":
        rotations = np.zeros((4, 14, 4))
        rotations[..., 3] = 1.0
        motion.add(mk.Track("joint_rotations", "quaternion", rotations, timeline))
    return motion


WRITTEN = [(".pkl", "parc"), (".pkl", "mimickit"), (".pkl", "gmr"), (".yaml", "seq"),
           (".yml", "seq"), (".txt", "traj"), (".txt", "tum"), (".txt", "kitti"),
           (".csv", "traj"), (".csv", "euroc")]


@pytest.mark.parametrize(("suffix", "writer"), WRITTEN, ids=lambda v: v.lstrip("."))
def test_a_written_file_dispatches_back_to_its_writer(tmp_path: Path, suffix: str,
                                                      writer: str) -> None:
    path = tmp_path / ("out" + suffix)
    mk.write(path, _pose_motion(writer), format=writer)
    _read_as(path, writer)


# ----------------------------------------------------------------------- unclaimed
def _refused(path: Path, names: str) -> mk.FormatError:
    with pytest.raises(mk.FormatError) as caught:
        registry.for_reading(path)
    assert caught.value.path == str(path)
    assert f"content matches none of the formats for {path.suffix!r} ({names})" in \
        caught.value.message
    with pytest.raises(mk.FormatError) as again:  # the same through the front door
        mk.read(path)
    assert again.value.path == str(path)
    return caught.value


#: The formats a .csv is tried as (the G1 dialects only ever by name: never picked).
CSV = "traj, euroc, g1csv, g1csv-lafan, g1csv-kimodo, g1csv-seed"


@pytest.mark.corpus
def test_content_no_format_claims_is_a_format_error_naming_the_file(tmp_path: Path) -> None:
    _refused(corpus_file("evo", "KITTI_00_gt_times.txt"), "traj, tum, kitti")  # one column
    wide = _refused(corpus_file("trajectory", "open_vins", "neighborhood_01.txt"),
                    "traj, tum, kitti")
    assert "format='tum'" in wide.message  # twenty numbers a row: TUM with extras
    g1 = _refused(corpus_file("containers", "isaaclab", "g1_kimodo_walk.csv"), CSV)
    assert "format='g1csv-kimodo'" in g1.message  # 36 numbers a row: the G1 dialects named
    _refused(corpus_file("episodes", "bags", "joint_states_ros2", "metadata.yaml"),
             "seq, motionlist")
    _refused(_file(tmp_path, "notes.yml", "title: notes\ncatalog:\n  motions: [a.pkl]\n"),
             "seq, motionlist")  # a nested 'motions:' is not a motion list
    _refused(_file(tmp_path, "robot.xml", '<?xml version="1.0"?>\n<robot name="r">'
                                          '<link name="base"/></robot>\n'), "parc-character, mjcf")
    _refused(_file(tmp_path, "numbers.pkl", pickle.dumps([1, 2, 3], protocol=4)),
             "mimickit, gmr, parc")
    _refused(_file(tmp_path, "empty.csv", b""), CSV)


def test_an_extension_of_one_format_decides_in_any_case(tmp_path: Path) -> None:
    tum_rows = _file(tmp_path, "POSES.KITTI", TUM_ROWS)  # content alone would say tum
    assert registry.for_reading(tum_rows).name == "kitti"
    assert registry.for_reading(tmp_path / "absent.Seq").name == "seq"  # not even opened


def test_without_a_known_extension_the_content_decides(tmp_path: Path) -> None:
    assert registry.for_reading(_file(tmp_path, "trajectory", TUM_ROWS)).name == "tum"
    assert registry.for_reading(_file(tmp_path, "list.txt.bak", MOTION_LIST)).name == "motionlist"
    unknown = _file(tmp_path, "hello.dat", "hello\n")
    with pytest.raises(mk.FormatError, match=r"unknown file type '\.dat'") as caught:
        registry.for_reading(unknown)
    assert caught.value.path == str(unknown)

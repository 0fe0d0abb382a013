"""Choreonoid .seq features beyond the corpus: every version, layout and number spelling."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

import motionkit as mk
from seqfiles import V1_SE3, V2_TIMED, V4_ALL, v2_values


def load(tmp_path: Path, text: str, name: str = "m.seq", **options: object) -> mk.Motion:
    path = tmp_path / name
    path.write_text(text)
    return mk.read(path, **options)


def test_v4_links_joints_and_root_relative_zmp(tmp_path: Path) -> None:
    motion = load(tmp_path, V4_ALL)
    links = motion.tracks["links"]
    assert links.kind == "pose" and links.data.shape == (3, 2, 7)
    # w-first in the file, x,y,z,w inside
    assert links.data[0, 0].tolist() == [0, 0, 0.7, 0, 0, 0, 1]
    assert links.data[0, 1].tolist() == [0, 0.1, 0.5, 1, 0, 0, 0]
    assert motion.tracks["joints"].data[2].tolist() == [0.02, -0.49]
    assert motion.tracks["zmp"].attrs == {"root_relative": True}
    assert motion.root_pose() is not None
    assert np.array_equal(motion.root_pose().data, links.data[:, 0])  # type: ignore[union-attr]


@pytest.mark.parametrize("fast", [True, False])
def test_v1_aliases_purpose_format_and_w_last_quaternions(tmp_path: Path, fast: bool) -> None:
    motion = load(tmp_path, V1_SE3, fast=fast)
    root = motion.tracks["root"]
    assert root.data[0].tolist() == [1, 2, 3, 0, 0, 0.7071067811865476, 0.7071067811865476]
    assert motion.tracks["zmp"].attrs["root_relative"] is True


def test_w_last_quaternions_are_accepted_in_any_version(tmp_path: Path) -> None:
    text = V4_ALL.replace("XYZQWQXQYQZ", "XYZQXQYQZQW")
    assert load(tmp_path, text).tracks["links"].data[0, 0].tolist() == [0, 0, 0.7, 1, 0, 0, 0]


def test_rpy_layout_is_rz_ry_rx(tmp_path: Path) -> None:
    from scipy.spatial.transform import Rotation

    text = (
        "type: CompositeSeq\nformatVersion: 2\nframeRate: 10\ncomponents:\n  -\n"
        "    type: MultiSE3Seq\n    content: LinkPosition\n    numParts: 1\n"
        "    SE3Format: XYZRPY\n    frames:\n      - [ [ 1, 2, 3, 0.1, 0.2, 0.3 ] ]\n"
    )
    pose = load(tmp_path, text).tracks["root"].data[0]
    expected = Rotation.from_euler("ZYX", [0.3, 0.2, 0.1]).as_quat()
    assert np.allclose(pose[3:], expected, atol=1e-15) or np.allclose(pose[3:], -expected)


def test_top_level_keys_are_inherited_and_snake_case_wins(tmp_path: Path) -> None:
    text = (
        "type: CompositeSeq\nformat_version: 4\nframe_rate: 200\ncomponents:\n"
        "  -\n    type: MultiValueSeq\n    content: JointDisplacement\n    num_parts: 1\n"
        "    frames:\n      - [ 1 ]\n"
        "  -\n    type: MultiValueSeq\n    content: Effort\n    frameRate: 50\n"  # camel loses
        "    num_parts: 1\n    frames:\n      - [ 1 ]\n"
        "  -\n    type: MultiValueSeq\n    content: Other\n    frame_rate: 25\n"
        "    num_parts: 1\n    frames:\n      - [ 1 ]\n"
    )
    motion = load(tmp_path, text)
    assert motion.tracks["joints"].timeline.rate == 200
    assert motion.tracks["Effort"].timeline.rate == 200  # Choreonoid's per-spelling quirk
    assert motion.tracks["Other"].timeline.rate == 25


@pytest.mark.parametrize("content", ["MultiJointDisplacementSeq", "JointDisplacement"])
def test_v3_content_names(tmp_path: Path, content: str) -> None:
    text = v2_values("      - [ 1, 2 ]\n").replace("JointDisplacement", content)
    assert "joints" in load(tmp_path, text.replace("formatVersion: 2", "formatVersion: 3")).tracks


@pytest.mark.parametrize("fast", [True, False])
def test_numbers_as_choreonoid_reads_them(tmp_path: Path, fast: bool) -> None:
    frames = '      - [ 1e-05, -7.779e-005, nan, inf, 017, "500" ]\n' if not fast else \
        "      - [ 1e-05, -7.779e-005, nan, inf, 017, -0 ]\n"
    values = load(tmp_path, v2_values(frames, parts=6), fast=fast).tracks["joints"].data[0]
    assert values[0] == 1e-05 and values[1] == -7.779e-05
    assert np.isnan(values[2]) and values[3] == np.inf and values[4] == 17
    assert values[5] == (500 if not fast else 0)


def test_yaml_spellings_hex_and_quotes_go_through_the_full_parser(tmp_path: Path) -> None:
    frames = "      - [ .inf, -.inf, .nan, 0x1p3, '2.5' ]\n"
    values = load(tmp_path, v2_values(frames, parts=5)).tracks["joints"].data[0]
    assert values[0] == np.inf and values[1] == -np.inf and np.isnan(values[2])
    assert values[3] == 8 and values[4] == 2.5


@pytest.mark.parametrize(
    "frames",
    [
        "      - [ 1, 2 ]  # a comment\n      - [ 3, 4 ]\n",
        "      - [ 1,\n          2 ]\n      - [ 3, 4 ]\n",
        "      -\n        - 1\n        - 2\n      -\n        - 3\n        - 4\n",
        "      - [1,2]\n      - [3,4]\n",
        "      # comment line\n      - [ 1, 2 ]\n      - [ 3, 4 ]\n",
    ],
)
def test_non_canonical_layouts_give_the_same_arrays(tmp_path: Path, frames: str) -> None:
    data = load(tmp_path, v2_values(frames)).tracks["joints"].data
    assert data.tolist() == [[1, 2], [3, 4]]


def test_json_style_file(tmp_path: Path) -> None:
    text = ('{"type": "CompositeSeq", "formatVersion": 2, "frameRate": 10, "components": '
            '[{"type": "MultiValueSeq", "content": "JointDisplacement", "numParts": 2, '
            '"frames": [[1, 2], [3, 4]]}]}')
    assert load(tmp_path, text).tracks["joints"].data.tolist() == [[1, 2], [3, 4]]


def test_crlf_and_bom(tmp_path: Path) -> None:
    path = tmp_path / "dos.seq"
    path.write_bytes(b"\xef\xbb\xbf" + v2_values("      - [ 1, 2 ]\n").replace("\n", "\r\n").encode())
    assert mk.read(path).tracks["joints"].data.tolist() == [[1, 2]]


def test_time_stamps_are_kept(tmp_path: Path) -> None:
    joints = load(tmp_path, V2_TIMED).tracks["joints"]
    assert not joints.timeline.is_uniform
    assert joints.times.tolist() == [0, 0.0333333333, 0.0666666667, 0.1, 0.133333333, 0.166666667]
    assert joints.data.ravel().tolist() == [0, 1, 2, 3, 4, 5]
    assert joints.timeline.rate == 30


def test_choreonoid_import_rule_truncates_holds_and_overwrites(tmp_path: Path) -> None:
    """The spec's 30 Hz example: frames receive samples [1, 1, 2, 4, 4, 5]."""
    joints = load(tmp_path, V2_TIMED, timed="choreonoid").tracks["joints"]
    assert joints.timeline.is_uniform and joints.timeline.rate == 30
    assert joints.data.ravel().tolist() == [1, 1, 2, 4, 4, 5]


def test_custom_contents_become_named_tracks(tmp_path: Path) -> None:
    text = v2_values("      - [ 1, 2 ]\n").replace("JointDisplacement", "JointEffort")
    motion = load(tmp_path, text)
    assert list(motion.tracks) == ["JointEffort"]


def test_unknown_component_types_are_kept_verbatim(tmp_path: Path) -> None:
    device = (
        "  -\n    type: MultiDeviceStateSeq\n    content: DeviceState\n    frameRate: 100\n"
        "    numParts: 1\n    components:\n      -\n        type: DeviceStateSeq\n"
        '        content: ForceSensorState\n        name: "RF sensor"\n'
        "        hasFrameTime: true\n        frames:\n          - [ 0, 1, 2, 3 ]\n"
    )
    path = tmp_path / "dev.seq"
    path.write_text(v2_values("      - [ 1, 2 ]\n") + device)
    with pytest.warns(mk.MotionkitWarning, match="MultiDeviceStateSeq"):
        motion = mk.read(path)
    opaque = motion.meta["choreonoid"]["opaque"]
    assert opaque[0]["components"][0]["name"] == "RF sensor"
    out = tmp_path / "dev2.seq"
    mk.write(out, motion)
    assert '        name: "RF sensor"\n' in out.read_text()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        again = mk.read(out)
    assert again.meta["choreonoid"]["opaque"] == opaque


def test_num_frames_mismatch_warns(tmp_path: Path) -> None:
    text = v2_values("      - [ 1, 2 ]\n", extra="    numFrames: 5\n")
    with pytest.warns(mk.MotionkitWarning, match="numFrames says 5"):
        load(tmp_path, text)


def test_sniffing_tells_a_motion_yaml(tmp_path: Path) -> None:
    from motionkit.formats import registry

    path = tmp_path / "walk.yaml"
    path.write_text(V4_ALL)
    assert registry.for_reading(path).name == "seq"

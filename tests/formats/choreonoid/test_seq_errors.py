"""Every broken input of the spec's error table gives a FormatError at the right line."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

import motionkit as mk
from seqfiles import V2_TIMED, V4_ALL, v2_values

HEAD = "type: CompositeSeq\nformatVersion: 2\nframeRate: 100\ncomponents:\n  -\n"
COMPONENT = "    type: MultiValueSeq\n    content: JointDisplacement\n    numParts: 2\n"

CASES = {
    "yaml syntax": ("type: CompositeSeq\ncomponents: [\n  - a: b\n", 3, "YAML syntax error"),
    "not a mapping": ("- 1\n- 2\n", 1, "must be a mapping"),
    "missing type": ("formatVersion: 2\ncomponents: []\n", 1, 'key "type" is missing'),
    "missing components": ("type: CompositeSeq\n", 1, 'key "components" is missing'),
    "components not a list": ("type: CompositeSeq\ncomponents: 3\n", 2, "must be a list"),
    "version 5": ("type: CompositeSeq\nformatVersion: 5\ncomponents: []\n", 2,
                  "format version 5 is not supported"),
    "not a body motion": ("type: PoseSeq\ncomponents: []\n", 1, "not a body motion"),
    "no frame rate": ("type: CompositeSeq\nformatVersion: 2\ncomponents:\n  -\n" + COMPONENT +
                      "    frames:\n      - [ 1, 2 ]\n", 5, 'key "frame_rate"'),
    "bad frame rate": (HEAD.replace("100", "fast") + COMPONENT + "    frames:\n      - [ 1, 2 ]\n",
                       3, "frame rate must be a number"),
    "parts missing": (HEAD + "    type: MultiValueSeq\n    frames:\n      - [ 1 ]\n", 6,
                      'key "num_parts"'),
    "parts zero": (HEAD + COMPONENT.replace("numParts: 2", "numParts: 0") +
                   "    frames:\n      - [ 1 ]\n", 8, "invalid number of parts"),
    "parts not integer": (HEAD + COMPONENT.replace("numParts: 2", "numParts: 2.5") +
                          "    frames:\n      - [ 1, 2 ]\n", 8, "must be an integer"),
    "frames missing": (HEAD + COMPONENT, 6, 'key "frames" is missing'),
    "frames empty": (HEAD + COMPONENT + "    frames: []\n", 9, "no frame data"),
    "frame too short": (v2_values("      - [ 1, 2 ]\n      - [ 1 ]\n"), 12, "has 1 values where 2"),
    "frame not a list": (v2_values("      - [ 1, 2 ]\n      - 7\n"), 12, "a frame must be a list"),
    "non-numeric": (v2_values("      - [ 1, 2 ]\n      - [ 1, abc ]\n"), 12, '"abc"'),
    "underscore number": (v2_values("      - [ 1_0, 2 ]\n"), 11, '"1_0"'),
    "list for a number": (v2_values("      - [ 1, [ 2 ] ]\n"), 11, "must be a single value"),
    "se3 entry too short": (V4_ALL.replace("[ 0, 0.1, 0.5, 0, 1, 0, 0 ] ]\n      - [ [ 0.001",
                                           "[ 0, 0.1, 0.5, 0, 1, 0 ] ]\n      - [ [ 0.001", 1),
                            15, "has 6 numbers where 7"),
    "se3 format missing": (V4_ALL.replace("    SE3Format: XYZQWQXQYQZ\n", ""), 8,
                           'key "SE3Format"'),
    "se3 format unknown": (V4_ALL.replace("XYZQWQXQYQZ", "XYZABC"), 13,
                           'SE3 format "XYZABC" is not supported'),
    "vector3 too long": (V4_ALL.replace("[ 0.03, 0, -0.7 ]", "[ 0.03, 0, -0.7, 1 ]", 1), 35,
                         "has 4 values where 3"),
    "hasFrameTime in v1": (HEAD.replace("formatVersion: 2\n", "") + COMPONENT +
                           "    hasFrameTime: true\n    frames:\n      - [ 0, 1, 2 ]\n", 8,
                           "not available in format version 1"),
    "hasFrameTime not boolean": (V2_TIMED.replace("hasFrameTime: true", "hasFrameTime: maybe"),
                                 5, "must be a boolean"),
    "stamps go back": (V2_TIMED.replace("[ 0.1, 3 ]", "[ 0.01, 3 ]"), 15, "does not come after"),
    "duplicate key": (HEAD + COMPONENT + "    numParts: 3\n    frames:\n      - [ 1, 2 ]\n", 9,
                      'duplicate key "numParts"'),
}


@pytest.mark.parametrize("fast", [True, False])
@pytest.mark.parametrize("case", sorted(CASES))
def test_broken_file_gives_format_error_with_line(tmp_path: Path, case: str, fast: bool) -> None:
    text, line, message = CASES[case]
    path = tmp_path / "bad.seq"
    path.write_text(text)
    with warnings.catch_warnings(), pytest.raises(mk.FormatError) as caught:
        warnings.simplefilter("ignore", mk.MotionkitWarning)  # v1 files with a v2 top type
        mk.read(path, fast=fast)
    error = caught.value
    assert message in error.message
    assert error.path == str(path)
    assert error.line == line, str(error)
    assert error.column is not None or case == "not a body motion"


def test_binary_and_non_utf8_input(tmp_path: Path) -> None:
    path = tmp_path / "bin.seq"
    path.write_bytes(b"\x00\x01\x02")
    with pytest.raises(mk.FormatError, match="binary"):
        mk.read(path)
    path.write_bytes(b"type: CompositeSeq\ncontent: \xff\xfe\n")
    with pytest.raises(mk.FormatError, match="UTF-8") as caught:
        mk.read(path)
    assert caught.value.line == 2


def test_alias_bomb_is_refused(tmp_path: Path) -> None:
    text = (HEAD + COMPONENT.replace("numParts: 2", "numParts: 1") +
            "    x: &a [ [ 1 ], [ 1 ], [ 1 ], [ 1 ], [ 1 ], [ 1 ], [ 1 ], [ 1 ] ]\n"
            "    frames: [ *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a ]\n")
    path = tmp_path / "bomb.seq"
    path.write_text(text)
    with pytest.raises(mk.FormatError):
        mk.read(path)

"""Small hand-written .seq documents used by several test modules."""

V4_ALL = """\
type: CompositeSeq
content: BodyMotion
format_version: 4
frame_rate: 500
num_frames: 3
components:
  -
    type: MultiSE3Seq
    content: LinkPosition
    frame_rate: 500
    num_frames: 3
    num_parts: 2
    SE3Format: XYZQWQXQYQZ
    frames:
      - [ [ 0, 0, 0.7, 1, 0, 0, 0 ], [ 0, 0.1, 0.5, 0, 1, 0, 0 ] ]
      - [ [ 0.001, 0, 0.7, 1, 0, 0, 0 ], [ 0, 0.1, 0.5, 0, 1, 0, 0 ] ]
      - [ [ 0.002, 0, 0.7, 1, 0, 0, 0 ], [ 0, 0.1, 0.5, 0, 1, 0, 0 ] ]
  -
    type: MultiValueSeq
    content: JointDisplacement
    frame_rate: 500
    num_frames: 3
    num_parts: 2
    frames:
      - [ 0, -0.5 ]
      - [ 0.01, -0.5 ]
      - [ 0.02, -0.49 ]
  -
    type: Vector3Seq
    content: ZMP
    frame_rate: 500
    num_frames: 3
    is_root_relative: true
    frames:
      - [ 0.03, 0, -0.7 ]
      - [ 0.03, 0, -0.7 ]
      - [ 0.03, 0, -0.7 ]
"""

V2_TIMED = """\
type: CompositeSeq
content: BodyMotion
formatVersion: 2
frameRate: 30
hasFrameTime: true
components:
  -
    type: MultiValueSeq
    content: JointDisplacement
    numParts: 1
    frames:
      - [ 0, 0 ]
      - [ 0.0333333333, 1 ]
      - [ 0.0666666667, 2 ]
      - [ 0.1, 3 ]
      - [ 0.133333333, 4 ]
      - [ 0.166666667, 5 ]
"""

V1_SE3 = """\
# Body motion data set format version 1.0 defined by cnoid-Robotics

type: BodyMotion
components:
  -
    type: MultiSe3Seq
    purpose: LinkPosition
    frameRate: 100
    numParts: 1
    format: XYZQXQYQZQW
    frames:
      - [ [ 1, 2, 3, 0, 0, 0.7071067811865476, 0.7071067811865476 ] ]
      - [ [ 1, 2, 4, 0, 0, 0, 1 ] ]
  -
    type: Vector3Seq
    content: RelativeZMP
    frameRate: 100
    frames:
      - [ 0.1, 0, 0 ]
      - [ 0.2, 0, 0 ]
"""


def v2_values(frames: str, parts: int = 2, extra: str = "") -> str:
    """A v2 document with one JointDisplacement component and the given frame lines."""
    return (
        "type: CompositeSeq\ncontent: BodyMotion\nformatVersion: 2\nframeRate: 100\n"
        f"components:\n  -\n    type: MultiValueSeq\n    content: JointDisplacement\n"
        f"    numParts: {parts}\n{extra}    frames:\n{frames}"
    )

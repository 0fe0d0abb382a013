"""A two-joint BVH file to vary one part at a time (shared by the BVH tests)."""

BASIC = """HIERARCHY
ROOT Hips
{{
{root}
  JOINT Leg
  {{
    OFFSET 0 -10 0
    CHANNELS 3 Zrotation Xrotation Yrotation
    End Site
    {{
      OFFSET 0 -20 0
    }}
  }}
}}
MOTION
Frames: 2
Frame Time: 0.5
{rows}
"""
ROOT_CHANNELS = ("  OFFSET 1 2 3\n  CHANNELS 6 Xposition Yposition Zposition Zrotation "
                 "Xrotation Yrotation")


def basic_bvh(root: str = ROOT_CHANNELS,
              rows: str = "10 20 30 0 0 0 90 0 0\n10 20 30 90 0 0 0 0 0") -> str:
    """The file's text with the root's lines and the motion rows given."""
    return BASIC.format(root=root, rows=rows)

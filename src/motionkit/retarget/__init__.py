"""Retargeting: a source motion (a human's BVH, a PARC or MimicKit character, a robot's) onto
any robot motionkit reads, by GMR's inverse kinematics (``Options(like_gmr=True)`` for GMR's
exact numbers) or with its reported defects fixed (the default).

    from motionkit import retarget
    body_map = retarget.read_map("bvh_to_g1.json")               # GMR's ik_config
    result = retarget.retarget(mk.read("walk.bvh"), mk.read("g1.xml"), body_map)
    mk.write("walk_g1.pkl", result.motion, format="gmr")
"""

from .maps import BodyMap, Task, read_map, same_names
from .plan import Plan
from .run import Options, Retargeted, retarget
from .source import read_frame_fix, read_rename

__all__ = ["BodyMap", "Options", "Plan", "Retargeted", "Task", "read_frame_fix", "read_map",
           "read_rename", "retarget", "same_names"]

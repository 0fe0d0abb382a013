"""Trajectory evaluation: match an estimate with ground truth, align it, measure its error.

>>> import motionkit as mk
>>> from motionkit import evaluation as ev
>>> result = ev.ape(mk.read("gt.tum"), mk.read("est.tum"), align="se3")  # doctest: +SKIP
>>> result.stats["rmse"]                                                  # doctest: +SKIP

Numbers follow evo 1.38 (association, Umeyama, APE/RPE, statistics), rpg (position + yaw
alignment), trajectopy (interpolated matching) and the KITTI devkit (segment drift).
"""

from __future__ import annotations

from ._poses import Poses, as_poses, from_matrices, read_poses
from .align import Alignment, align, umeyama
from .associate import Association, associate
from .kitti import kitti_odometry
from .metrics import ape, estimate_offset, pair_indices, rpe
from .result import Result, load, statistics

__all__ = [
    "Alignment",
    "Association",
    "Poses",
    "Result",
    "align",
    "ape",
    "as_poses",
    "associate",
    "estimate_offset",
    "from_matrices",
    "kitti_odometry",
    "load",
    "pair_indices",
    "read_poses",
    "rpe",
    "statistics",
    "umeyama",
]

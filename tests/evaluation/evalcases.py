"""Corpus pairs of the evaluation tests, read by motionkit and by evo, and how to compare numbers."""

from __future__ import annotations

import copy
import functools
import warnings
from dataclasses import dataclass
from typing import Any

from conftest import corpus_file, require_peer
from motionkit import evaluation as ev


@dataclass(frozen=True)
class Case:
    ref: str
    est: str
    kind: str  # kitti | tum | bag
    meters: float  # the meter delta of the RPE rows (spec §7.2: 1 m for the short TUM sequences)
    ref_topic: str = ""
    est_topic: str = ""


CASES = {
    "KITTI_00": Case("KITTI_00_gt.txt", "KITTI_00_ORB.txt", "kitti", 100.0),
    "fr2_desk": Case("fr2_desk_groundtruth.txt", "fr2_desk_ORB.txt", "tum", 1.0),
    "fr1_xyz": Case("freiburg1_xyz-groundtruth.txt", "freiburg1_xyz-rgbdslam.txt", "tum", 1.0),
    "bag_ORB": Case("ROS_example.bag", "ROS_example.bag", "bag", 100.0, "groundtruth", "ORB-SLAM"),
}


def close(actual: float, expected: float, tol: float = 1e-9) -> bool:
    """Equal to ``tol`` relative, or absolute where the value is below 1 (the spec's rule)."""
    return abs(actual - expected) <= tol * max(1.0, abs(expected))


def assert_stats(actual: dict[str, float], expected: dict[str, Any], tol: float = 1e-9) -> None:
    for key, value in expected.items():
        assert close(actual[key], float(value), tol), (key, actual[key], float(value))


@functools.cache
def ours(name: str) -> tuple[ev.Poses, ev.Poses]:
    """The pair as motionkit reads it (KITTI with the sequence's times.txt for both)."""
    case = CASES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if case.kind == "kitti":
            times = corpus_file("evo", "KITTI_00_gt_times.txt")
            return (ev.read_poses(corpus_file("evo", case.ref), times=times),
                    ev.read_poses(corpus_file("evo", case.est), times=times))
        if case.kind == "bag":
            path = corpus_file("evo", case.ref)
            return (ev.read_poses(path, topic=case.ref_topic), ev.read_poses(path, topic=case.est_topic))
        return ev.read_poses(corpus_file("evo", case.ref)), ev.read_poses(corpus_file("evo", case.est))


@functools.cache
def _evo_inputs(name: str) -> tuple[Any, Any]:
    require_peer("evo")
    from evo.tools import file_interface

    case = CASES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if case.kind == "kitti":
            return (file_interface.read_kitti_poses_file(str(corpus_file("evo", case.ref))),
                    file_interface.read_kitti_poses_file(str(corpus_file("evo", case.est))))
        if case.kind == "bag":
            from rosbags.rosbag1 import Reader

            with Reader(corpus_file("evo", case.ref)) as reader:
                return (file_interface.read_bag_trajectory(reader, case.ref_topic),
                        file_interface.read_bag_trajectory(reader, case.est_topic))
        return (file_interface.read_tum_trajectory_file(str(corpus_file("evo", case.ref))),
                file_interface.read_tum_trajectory_file(str(corpus_file("evo", case.est))))


def evo(name: str, metric: str, relation: str, align: str = "none", delta: float = 1,
        unit: str = "frames", all_pairs: bool = False) -> tuple[dict[str, float], int]:
    """evo's statistics and pair count, computed by evo itself from the files (as evo_ape/evo_rpe)."""
    from evo.core import metrics, sync

    ref, est = (copy.deepcopy(t) for t in _evo_inputs(name))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if CASES[name].kind != "kitti":
            ref, est = sync.associate_trajectories(ref, est, max_diff=0.01)
        if align != "none":
            est.align(ref, correct_scale=align == "sim3")
        rel = {"translation": metrics.PoseRelation.translation_part,
               "rotation_angle": metrics.PoseRelation.rotation_angle_deg,
               "rotation": metrics.PoseRelation.rotation_part,
               "full": metrics.PoseRelation.full_transformation,
               "point_distance": metrics.PoseRelation.point_distance}[relation]
        if metric == "ape":
            m: Any = metrics.APE(rel)
        else:
            evo_unit = {"frames": metrics.Unit.frames, "m": metrics.Unit.meters,
                        "deg": metrics.Unit.degrees, "rad": metrics.Unit.radians}[unit]
            m = metrics.RPE(rel, delta, evo_unit, all_pairs=all_pairs)
        m.process_data((ref, est))
    return {k: float(v) for k, v in m.get_all_statistics().items()}, int(m.error.size)

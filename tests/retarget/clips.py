"""Motions the retargeting tests build from the corpus: GMR's G1 output as a robot motion,
and frame slices of a clip."""

from __future__ import annotations

import warnings

import numpy as np

import motionkit as mk
from conftest import corpus_file
from motionkit.model.skeleton import Skeleton


def gmr_g1_motion() -> tuple[mk.Motion, Skeleton, np.lib.npyio.NpzFile]:
    """GMR's corrected-case output as a G1 motion (root and joints), the G1, GMR's file."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the model's floor geom belongs to no body
        robot = mk.read(corpus_file("retarget", "g1_mocap_29dof_nomesh.xml"))
    assert isinstance(robot, Skeleton)
    gmr = np.load(corpus_file("retarget", "freebvh_corrected_gmr.npz"))
    timeline = mk.Timeline.uniform(30.0, len(gmr["dof_pos"]))
    source = mk.Motion()
    source.skeleton = robot
    source.add(mk.Track("root", "pose", np.concatenate([gmr["root_pos"], gmr["root_rot"]], 1),
                        timeline))
    source.add(mk.Track("joints", "value", gmr["dof_pos"], timeline,
                        labels=[str(n) for n in gmr["dof_names"]]))
    return source, robot, gmr


def gmr_targets(case: str) -> list[dict[str, np.ndarray]]:
    """Per frame, the target poses GMR fed its solver in a corpus case (``corrected`` or
    ``raw``), by human body name."""
    from motionkit.retarget.maps import _matrix_wxyz

    human = np.load(corpus_file("retarget", f"freebvh_{case}_human.npz"))
    out = []
    for frame in range(len(human["target_pos"])):
        targets = {}
        for k, name in enumerate(human["human_bodies"]):
            pose = np.eye(4)
            pose[:3, :3] = _matrix_wxyz(human["target_quat_wxyz"][frame, k])
            pose[:3, 3] = human["target_pos"][frame, k]
            targets[str(name)] = pose
        out.append(targets)
    return out


def frames(motion: mk.Motion, start: int, stop: int | None = None) -> mk.Motion:
    """The motion's frames ``start:stop``, on a uniform timeline from 0."""
    out = mk.Motion(meta=dict(motion.meta))
    out.skeleton = motion.skeleton
    for name in list(motion.tracks):
        if motion.tracks.is_stored(name):
            track = motion.tracks[name]
            data = track.data[start:stop]
            out.add(mk.Track(track.name, track.kind, data,
                             mk.Timeline.uniform(track.timeline.rate or 30.0, len(data)),
                             labels=track.labels))
    return out

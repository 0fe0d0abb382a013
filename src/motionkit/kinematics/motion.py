"""Link poses of a motion: match its joint columns to a skeleton, then run FK."""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np
from numpy.typing import NDArray

from ..errors import ConversionError
from ..model.motion import Motion
from ..model.skeleton import Skeleton
from ..model.track import Track

Array = NDArray[np.float64]


def coordinates(skeleton: Skeleton, motion: Motion) -> tuple[Array, Array | None]:
    """The skeleton's coordinates ``(frames, dof_count)`` and root pose (or None) of a motion.

    Joint columns are matched, in this order: by label (coordinate or joint names), by
    Choreonoid joint ID (``joint.attrs["joint_id"]``, column = ID), or by position when the
    column count equals the skeleton's coordinates (or those after a free root joint). The
    root pose comes from the ``root`` track, else part 0 of ``links``.
    """
    root_track = motion.root_pose()
    root = None if root_track is None else np.asarray(root_track.data, dtype=float)
    joints = motion.tracks.get("joints")
    frames = joints.frames if joints is not None else (root_track.frames if root_track else 0)
    q = np.zeros((frames, skeleton.dof_count))
    if joints is None:
        if root is None:
            raise ConversionError("the motion has neither joint values nor a root pose")
        return q, root
    data = np.asarray(joints.data, dtype=float).reshape(frames, -1)
    columns = data.shape[1]
    names = skeleton.dof_names
    free_root = bool(skeleton.bodies) and skeleton.bodies[0].joint.type == "free"
    if joints.labels:
        lookup = {name: i for i, name in enumerate(names)}
        lookup.update({j.name: j.dof_offset for j in skeleton.joints if j.dof_count == 1})
        missing = [label for label in joints.labels if label not in lookup]
        if missing:
            raise ConversionError(f"joint columns {missing[:5]} are not coordinates of skeleton "
                                  f"{skeleton.name!r}")
        for column, label in enumerate(joints.labels):
            q[:, lookup[label]] = data[:, column]
        return q, root
    by_id = skeleton.joint_id_columns()
    if by_id:
        if columns > max(by_id) + 1 or any(c not in by_id for c in range(columns)):
            raise ConversionError(f"the motion has {columns} joint columns but skeleton "
                                  f"{skeleton.name!r} has joint IDs {min(by_id)}..{max(by_id)}"
                                  f" ({len(by_id)} joints)")
        for column in range(columns):
            q[:, by_id[column]] = data[:, column]
        return q, root
    if columns == skeleton.dof_count:
        return data.copy(), root
    if free_root and columns == skeleton.dof_count - 6:
        q[:, 6:] = data
        return q, root
    raise ConversionError(f"the motion has {columns} joint columns; skeleton {skeleton.name!r} "
                          f"has {skeleton.dof_count} coordinates and no joint IDs or labels to "
                          "match them by")


def link_poses(skeleton: Skeleton, motion: Motion, chunk: int | None = None,
               progress: Callable[[range], Iterable[int]] | None = None) -> Track:
    """A ``links`` pose track ``(frames, bodies, 7)`` (labels = body names) for a motion.

    With ``chunk``, FK runs on that many frames at a time (bounded working memory);
    ``progress`` wraps the iteration over chunk starts (e.g. a progress bar).
    """
    from . import forward

    q, root = coordinates(skeleton, motion)
    frames = len(q)
    step = chunk or max(frames, 1)
    poses = np.empty((frames, len(skeleton.bodies), 7))
    starts = range(0, frames, step)
    for start in progress(starts) if progress is not None else starts:
        stop = min(start + step, frames)
        poses[start:stop] = forward(skeleton, q[start:stop],
                                    None if root is None else root[start:stop])
    main = motion.tracks.get("joints") or motion.root_pose()
    assert main is not None
    return Track("links", "pose", poses, main.timeline, labels=[b.name for b in skeleton.bodies])

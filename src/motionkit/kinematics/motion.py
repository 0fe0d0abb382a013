"""Link poses of a motion: match its joint columns to a skeleton, then run FK."""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np
from numpy.typing import NDArray

from ..errors import ConversionError, FormatError, choices, warn
from ..model.character import Character
from ..model.motion import Motion
from ..model.skeleton import Skeleton, World
from ..model.track import Track

Array = NDArray[np.float64]


def coordinates(skeleton: Skeleton, motion: Motion) -> tuple[Array, Array | None]:
    """The skeleton's coordinates ``(frames, dof_count)`` and root pose (or None) of a motion.

    Joint values come from ``joints``, else from ``joint_rotations`` where the skeleton is a
    character whose DOFs they map to (PARC, MimicKit). Joint columns are matched, in this
    order: by label (coordinate or joint names), by
    Choreonoid joint ID (``joint.attrs["joint_id"]``, column = ID), or by position when the
    column count equals the skeleton's coordinates (or those after a free root joint). The
    root pose comes from the ``root`` track, else part 0 of ``links``.
    """
    root_track = motion.root_pose()
    root = None if root_track is None else np.asarray(root_track.data, dtype=float)
    joints = motion.tracks.get("joints") or joints_from_rotations(skeleton, motion)
    frames = joints.frames if joints is not None else (root_track.frames if root_track else 0)
    q = np.zeros((frames, skeleton.dof_count))
    free_root = bool(skeleton.bodies) and skeleton.bodies[0].joint.type == "free"
    if joints is None:
        if root is None:
            raise ConversionError("the motion has neither joint values nor a root pose")
        if skeleton.dof_count > (6 if free_root else 0):
            warn(f"the motion has no joint values: link poses of {skeleton.name!r} are computed "
                 "with every joint at 0")
        return q, root
    data = np.asarray(joints.data, dtype=float).reshape(frames, -1)
    columns = data.shape[1]
    names = skeleton.dof_names
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


def joints_from_rotations(skeleton: Skeleton, motion: Motion) -> Track | None:
    """A ``joints`` track derived from ``joint_rotations`` through the skeleton as a PARC
    character, or None when the motion has none or the skeleton is no such character."""
    rotations = motion.tracks.get("joint_rotations")
    if rotations is None:
        return None
    try:
        character = Character.from_skeleton(skeleton)
        dofs = character.quats_to_dofs(rotations.data)
    except ConversionError:
        return None
    return Track("joints", "value", dofs, rotations.timeline, labels=list(character.dof_names))


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
        forward(skeleton, q[start:stop], None if root is None else root[start:stop],
                out=poses[start:stop])
    main = motion.tracks.get("joints") or motion.root_pose()
    assert main is not None
    return Track("links", "pose", poses, main.timeline, labels=[b.name for b in skeleton.bodies])


def link_motion(skeleton: Skeleton, motion: Motion, body: str | None = None, *,
                chunk: int | None = None,
                progress: Callable[[range], Iterable[int]] | None = None) -> Motion:
    """The link-pose motion of ``motion`` through ``skeleton`` (forward kinematics).

    Without ``body``: every link's pose as ``links`` (labels = body names), the joint
    values it came from (``joints``, when the motion has them) and the skeleton. With
    ``body``: that body's pose as the ``root`` track only (one trajectory). ``chunk`` and
    ``progress`` as for :func:`link_poses`.
    """
    links = link_poses(skeleton, motion, chunk, progress)
    result = Motion(meta={"name": motion.meta.get("name") or skeleton.name})
    if body is not None:
        try:
            index = skeleton.body_index(body)
        except KeyError:
            names = choices(body, (b.name for b in skeleton.bodies), "bodies")
            raise ConversionError(f"skeleton {skeleton.name!r} has no body {body!r} "
                                  f"({names})") from None
        result.add(Track("root", "pose", links.data[:, index], links.timeline))
        return result
    result.skeleton = skeleton
    result.add(links)
    if "joints" in motion.tracks:
        result.add(motion.tracks["joints"])
    return result


def model_skeleton(model: object, path: object, name: str | None = None) -> Skeleton:
    """The skeleton of a read model file: a Skeleton as is; from a World the one called
    ``name``, else the one with bodies (the one with most coordinates, with a warning,
    when several have bodies)."""
    where = str(path)
    if isinstance(model, Skeleton):
        return model
    if isinstance(model, World):
        candidates = [s for s in model.skeletons if s.bodies]
        if name is not None:
            candidates = [s for s in model.skeletons if s.name == name]
        if not candidates:
            raise FormatError("no skeleton " + (repr(name) if name else "with bodies"), where)
        if len(candidates) > 1 and name is None:
            best = max(candidates, key=lambda s: s.dof_count)
            warn(f"{where} has {len(candidates)} skeletons; using {best.name!r} "
                 "(choose with --skeleton)")
            return best
        return candidates[0]
    raise FormatError("is not a model (no skeleton)", where)

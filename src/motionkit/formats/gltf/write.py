"""Writing motions as animated glTF 2.0: one motion (``write``, through the registry) or
several side by side in one scene (:func:`write_scene`)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from importlib import metadata
from pathlib import Path

import numpy as np

from ..._io import atomic_write
from ...errors import ConversionError
from ...kinematics.motion import joints_from_rotations
from ...model import Motion
from .. import registry
from ..loss import Holds, tracks
from ._build import build, missing_meshes
from ._container import pack_glb, pack_gltf

#: Link poses as body nodes; the root pose, joint values and joint rotations that make them
#: are kept exactly (float64, in buffer views ``extras`` names), as are the timeline, labels,
#: plain attributes, metadata and a terrain (also drawn as a mesh). Not held: integer
#: nanosecond stamps.
HOLDS = Holds(tracks=tracks(links="pose", root="pose", joints="value", joint_rotations="quaternion"),
              ns_stamps=False, one_timeline=True, position_only=False,
              root_required=False, namespace="gltf")


def holds(skin: bool = False, spacing: float | None = None) -> Holds:
    """:data:`HOLDS`, once the options are known to be good."""
    if not isinstance(skin, bool):
        raise ConversionError(f"skin must be true or false, not {skin!r}")
    if spacing is not None and (isinstance(spacing, bool) or not isinstance(spacing, int | float)
                                or not 0 <= spacing < 1e6):
        raise ConversionError(f"spacing must be metres from 0 up, not {spacing!r}")
    return HOLDS


#: Farthest a pose may lie from the origin (m): node translations are float32, whose steps
#: there are 61 µm (at UTM coordinates, 0.25 m).
FAR = 1000.0


def losses(obj: Motion, **_: object) -> list[str]:
    """Poses too far from the origin for float32 nodes, a skeleton with no values to pose it
    (its poses would be made up, every joint at 0), and mesh files the model names that are
    not there (their bodies get sticks instead)."""
    lost = _far(obj)
    skeleton = obj.skeleton
    if skeleton is None:
        return lost
    if "links" not in obj.tracks and "joints" not in obj.tracks \
            and joints_from_rotations(skeleton, obj) is None \
            and any(body.joint.dof_count for body in skeleton.bodies if body.parent >= 0):
        return [*lost, f"the skeleton {skeleton.name!r} (no joint values or link poses to pose it)"]
    missing = missing_meshes(skeleton)
    if not missing:
        return lost
    more = ", …" if len(missing) > 3 else ""
    return [*lost, f"{len(missing)} mesh file(s) that cannot be read ({'; '.join(missing[:3])}"
            f"{more}; their bodies are drawn as sticks)"]


def _far(obj: Motion) -> list[str]:
    """The pose tracks' positions beyond :data:`FAR` of the origin, named with the float32
    step they would be rounded to there."""
    found = [float(np.nanmax(np.abs(np.asarray(obj.tracks[name].data)[..., :3])))
             for name in ("root", "links") if name in obj.tracks
             and np.asarray(obj.tracks[name].data).size]
    farthest = max(found, default=0.0)
    if not farthest > FAR:
        return []
    step = float(np.spacing(np.float32(farthest)))
    return [f"positions as far as {farthest:.0f} m from the origin (float32 nodes round them "
            f"to {step:.2g} m steps; move the motion near the origin first)"]


def _generator() -> str:
    try:
        return f"motionkit {metadata.version('motionkit')}"
    except metadata.PackageNotFoundError:
        return "motionkit"


def _write(path: str | os.PathLike[str], motions: Sequence[tuple[str, Motion]], skin: bool,
           spacing: float | None, binary: bool) -> None:
    gltf, blob = build(motions, spacing, skin, _generator())
    data = pack_glb(gltf, blob) if binary else pack_gltf(gltf, blob)
    with atomic_write(path) as handle:
        handle.write(data)


def write_motion(path: str | os.PathLike[str], obj: Motion, skin: bool, spacing: float | None,
                 binary: bool) -> None:
    """Write one motion as GLB (``binary``) or ``.gltf``: ``skin=True`` adds a skin of its
    bodies (Blender then builds an armature); ``spacing`` matters for several motions only
    (:func:`write_scene`)."""
    name = str(obj.meta.get("name") or Path(path).stem)
    _write(path, [(name, obj)], skin, spacing, binary)


def write_scene(path: str | os.PathLike[str], motions: Sequence[Motion] | Mapping[str, Motion], *,
                lossy: bool = False, skin: bool = False, spacing: float | None = None,
                format: str | None = None) -> list[Motion]:
    """Write several motions into one glTF scene, side by side ``spacing`` metres apart along
    y (default: the widest motion's width plus 1 m), in one animation. Each motion goes
    through the loss rule as a single write would; ``motions`` may map names to motions
    (else each motion's ``meta["name"]``). Returns what was written of each."""
    named = list(motions.items()) if isinstance(motions, Mapping) else \
        [(str(m.meta.get("name") or f"motion {i + 1}"), m) for i, m in enumerate(motions)]
    if not named:
        raise ConversionError("no motions to write")
    writer = registry.by_name(format) if format else registry.for_writing(path)
    if writer.module not in ("gltf.binary", "gltf.text"):
        raise ConversionError(f"several motions in one file are written to glTF only, not {writer.name}")
    options: dict[str, object] = {"skin": skin, "spacing": spacing}
    settled = []
    for name, motion in named:
        if not isinstance(motion, Motion):
            raise ConversionError(f"{name}: a {type(motion).__name__}, not a motion")
        settled.append((name, writer.settle(motion, lossy, options=options)))
    holds(skin, spacing)
    _write(path, settled, skin, spacing, writer.module == "gltf.binary")
    return [m for _, m in settled]

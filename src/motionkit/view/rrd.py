"""A scene as a rerun recording (``.rrd``, the ``rerun`` extra): link transforms on rerun's
``time`` timeline, the model's shapes as static meshes on their links, and the root paths.

Entities: ``/motionkit/<motion>/<link>`` carries the link's world pose per shown frame
(``Transform3D``: translation in metres, quaternion in rerun's own order, x y z w — the
same as motionkit's); ``…/<link>/shape<k>`` a static mesh at its offset on the link;
``/motionkit/<motion>/sticks`` each link joined to its parent per frame (as the viewer draws);
``/motionkit/<motion>/path`` the root path; ``/motionkit/errors/<name>`` evaluation errors
given with the scene (``view --rrd --ape``: each file's APE against the first). ``/`` is
declared right-handed, Z up.
rerun-sdk is imported only here.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .._io import atomic_write
from ..errors import MotionkitError
from ..model.geometry import PALETTE, STICK_ALONE, STICK_WITH_SHAPES, light
from .scene import Actor, Scene

#: The recording's application id (what rerun's viewer groups recordings by).
APPLICATION = "motionkit"
#: The timeline the link poses are on (seconds from each motion's first frame).
TIMELINE = "time"


def _rerun() -> ModuleType:
    try:
        import rerun
    except ImportError:
        raise MotionkitError("view --rrd needs rerun-sdk: pip install 'motionkit[rerun]'") from None
    return rerun


def _entity(rr: ModuleType, *parts: str) -> str:
    """``/motionkit/…`` from names as files give them (escaped for rerun's paths)."""
    return "/motionkit/" + "/".join(rr.escape_entity_path_part(part) for part in parts)


def _actor(rr: ModuleType, rec: Any, actor: Actor, name: str,
           colour: tuple[int, int, int]) -> None:
    times = rr.TimeColumn(TIMELINE, duration=np.asarray(actor.times, dtype=np.float64))
    xyzw = actor.wxyz[..., [1, 2, 3, 0]]
    for link, label in enumerate(actor.labels):
        rec.send_columns(_entity(rr, name, label), indexes=[times],
                         columns=rr.Transform3D.columns(translation=actor.positions[:, link],
                                                        quaternion=xyzw[:, link]))
    for number, shape in enumerate(actor.shapes):
        offsets = shape.offsets if shape.offsets is not None else \
            np.tile([0.0, 0, 0, 0, 0, 0, 1], (len(shape.links), 1))
        for k, link in enumerate(shape.links):
            rec.log(_entity(rr, name, actor.labels[int(link)], f"shape{number}_{k}"),
                    rr.Mesh3D(vertex_positions=shape.vertices, triangle_indices=shape.faces,
                              albedo_factor=[*(shape.color or light(colour)), 255]),
                    rr.Transform3D(translation=offsets[k, :3], quaternion=offsets[k, 3:7]),
                    static=True)
    child = np.flatnonzero(actor.parents >= 0)
    if child.size:  # the sticks, each link to its parent, per frame
        segments = np.stack([actor.positions[:, actor.parents[child]], actor.positions[:, child]],
                            axis=2).reshape(-1, 2, 3)
        width = STICK_WITH_SHAPES if actor.shapes else STICK_ALONE
        strips = rr.LineStrips3D.columns(strips=segments, radii=np.full(len(segments), width / 2),
                                         colors=np.tile([*colour, 255], (len(segments), 1)))
        rec.send_columns(_entity(rr, name, "sticks"), indexes=[times],
                         columns=strips.partition([child.size] * len(actor.times)))
    if len(actor.path) > 1:
        rec.log(_entity(rr, name, "path"), rr.LineStrips3D([actor.path], colors=[colour]), static=True)


def write_rrd(scene: Scene, path: str | os.PathLike[str],
              errors: Mapping[str, tuple[NDArray[np.float64], NDArray[np.float64]]] | None = None,
              ) -> Path:
    """Write ``scene`` as a rerun recording at ``path`` (replaced whole, never half-written);
    ``errors`` maps names to (seconds on the scene's clock, values): evaluation errors, as
    ``Scalars`` at ``/motionkit/errors/<name>`` on the same timeline."""
    rr = _rerun()
    rec = rr.RecordingStream(APPLICATION)
    stream = rec.binary_stream()
    rec.log("/", rr.ViewCoordinates.RIGHT_HAND_Z_UP, static=True)
    names: set[str] = set()
    for index, actor in enumerate(scene.actors):
        name = actor.name if actor.name not in names else f"{actor.name} ({index + 1})"
        names.add(name)
        _actor(rr, rec, actor, name, PALETTE[index % len(PALETTE)])
    for label, (seconds, values) in (errors or {}).items():
        rec.send_columns(_entity(rr, "errors", label),
                         indexes=[rr.TimeColumn(TIMELINE, duration=np.asarray(seconds, dtype=float))],
                         columns=rr.Scalars.columns(scalars=np.asarray(values, dtype=float)))
    data = stream.read(flush=True)
    with atomic_write(path) as handle:
        handle.write(bytes(data or b""))
    return Path(path)

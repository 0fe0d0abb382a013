"""The offline page (``--html``): the scene as typed arrays in one zlib block, played by our
own small WebGL2 script (:mod:`._player`); viser stays for the live view only.

Per actor the page holds its link poses per shown frame, once (x y z qw qx qy qz, Float32);
sticks, link axes and shape instances are placed from them in the browser, so nothing is sent
twice and the SR1 walk's 6,701 frames make a page of about 2.3 MB written in a fraction of a
second. The page loads nothing: no network, no other file. File text (names, the note) is
HTML-escaped in the title and banner and reaches the script only inside a JSON block whose
``<``, ``>`` and ``&`` are escaped; a Content-Security-Policy lets only the player's own
script (by hash) run.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import zlib
from collections.abc import Callable
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from .._io import atomic_write
from ..model import geometry
from . import _style
from ._player import PLAYER_JS
from .scene import Actor, Scene, ShapeView

#: Told what was just done, for a progress bar.
Progress = Callable[[str], None]

_KINDS = {np.dtype(np.float32): "f", np.dtype(np.float64): "d", np.dtype(np.uint32): "u",
          np.dtype(np.int32): "i"}


class Blob:
    """Typed arrays laid end to end (each on an 8-byte boundary); each is named in the scene
    JSON by ``[kind, byte offset, count]``."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []
        self.size = 0

    def add(self, array: NDArray[np.generic]) -> list[object]:
        data = np.ascontiguousarray(array)
        ref: list[object] = [_KINDS[data.dtype], self.size, int(data.size)]
        raw = data.tobytes()
        pad = (-len(raw)) % 8
        self.parts.append(raw + b"\0" * pad)
        self.size += len(raw) + pad
        return ref

    def packed(self, level: int = 6) -> str:
        """The arrays, zlib-compressed (the browser's ``DecompressionStream("deflate")``), base64."""
        packer = zlib.compressobj(level)
        chunks = [packer.compress(part) for part in self.parts] + [packer.flush()]
        return base64.b64encode(b"".join(chunks)).decode("ascii")


def vertex_normals(vertices: NDArray[np.float32], faces: NDArray[np.uint32]) -> NDArray[np.float32]:
    """Smooth normals (area-weighted face normals summed at each vertex), as the live view's
    renderer computes them."""
    v = vertices.astype(np.float64)
    tri = v[faces.astype(np.intp)]
    face = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
    normals = np.zeros_like(v)
    for corner in range(3):
        np.add.at(normals, faces[:, corner].astype(np.intp), face)
    length = np.linalg.norm(normals, axis=1, keepdims=True)
    return (normals / np.where(length > 0, length, 1.0)).astype(np.float32)


def _geometry(blob: Blob, vertices: NDArray[np.float32], faces: NDArray[np.uint32]) -> dict[str, object]:
    return {"vertices": blob.add(vertices.astype(np.float32)),
            "normals": blob.add(vertex_normals(vertices, faces)),
            "faces": blob.add(faces.astype(np.uint32))}


def _rgb(colour: tuple[int, int, int]) -> list[float]:
    return [round(c / 255, 4) for c in colour]


def _shape(blob: Blob, geometries: list[dict[str, object]], shape: ShapeView,
           colour: tuple[int, int, int]) -> dict[str, object]:
    offsets = shape.offsets if shape.offsets is not None else np.tile([0.0, 0, 0, 0, 0, 0, 1],
                                                                       (len(shape.links), 1))
    geometries.append(_geometry(blob, shape.vertices, shape.faces))
    return {"geometry": len(geometries) - 1, "links": [int(i) for i in shape.links],
            "offsets": blob.add(np.asarray(offsets, dtype=np.float32)[:, [0, 1, 2, 6, 3, 4, 5]]),
            "color": _rgb(shape.color or geometry.light(colour))}


def _segments(points: NDArray[np.float32]) -> NDArray[np.float32]:
    """A polyline as line-segment pairs."""
    return np.stack([points[:-1], points[1:]], axis=1).astype(np.float32).reshape(-1)


def _actor(blob: Blob, geometries: list[dict[str, object]], scene: Scene, index: int) -> dict[str, object]:
    actor: Actor = scene.actors[index]
    colour = geometry.PALETTE[index % len(geometry.PALETTE)]
    poses = np.concatenate([actor.positions, actor.wxyz], axis=2).astype(np.float32)
    frame_of = np.clip(np.searchsorted(actor.times, scene.times, side="right") - 1,
                       0, len(actor.times) - 1).astype(np.int32)
    along = _style.frames_along(actor)
    return {
        "name": actor.name, "kind": actor.kind, "color": _rgb(colour), "links": actor.links,
        "parents": [int(p) for p in actor.parents], "poses": blob.add(poses),
        "frame_of": blob.add(frame_of), "size": _style.frame_size(actor),
        "stick": geometry.STICK_WITH_SHAPES if actor.shapes else geometry.STICK_ALONE,
        "path": blob.add(_segments(actor.path)) if len(actor.path) > 1 else None,
        "along": blob.add(poses[along, 0]) if len(along) else None,
        "shapes": [_shape(blob, geometries, shape, colour) for shape in actor.shapes],
    }


def _grid() -> NDArray[np.float32]:
    """The live view's ground grid: 10 m × 10 m on z = 0, 0.5 m cells, as line segments."""
    ticks = np.arange(-5.0, 5.0 + 1e-9, 0.5)
    lines = [[[t, -5, 0], [t, 5, 0]] for t in ticks] + [[[-5, t, 0], [5, t, 0]] for t in ticks]
    return np.asarray(lines, dtype=np.float32).reshape(-1)


def scene_data(scene: Scene, progress: Progress | None = None) -> tuple[dict[str, object], Blob]:
    """The scene description (JSON-ready) and its arrays."""
    blob, geometries = Blob(), list[dict[str, object]]()
    actors = []
    for index in range(len(scene.actors)):
        actors.append(_actor(blob, geometries, scene, index))
        if progress is not None:
            progress(f"page: {scene.actors[index].name}")
    terrain = None
    if scene.terrain is not None:
        geometries.append(_geometry(blob, scene.terrain.vertices, scene.terrain.faces))
        terrain = {"geometry": len(geometries) - 1, "color": _rgb(geometry.TERRAIN_COLOUR)}
    position, target = _style.camera(scene)
    meta: dict[str, object] = {
        "times": blob.add(np.asarray(scene.times, dtype=np.float64)), "actors": actors,
        "geometries": geometries, "terrain": terrain,
        "grid": None if terrain else {"lines": blob.add(_grid()), "color": _rgb((200, 200, 200))},
        "camera": {"position": position.tolist(), "target": target.tolist()},
        "start_playing": _style.START_PLAYING, "speeds": list(_style.SPEEDS)}
    return meta, blob


def _json_in_script(value: object) -> str:
    """JSON that cannot end its ``<script>`` block or open markup."""
    text = json.dumps(value, separators=(",", ":"), allow_nan=False)
    return text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")


_STYLE = """
html, body { margin: 0; height: 100%; overflow: hidden; font: 13px sans-serif; background: #fff; }
#mk-canvas { position: fixed; left: 0; top: 0; width: 100%; height: calc(100% - 48px);
  display: block; touch-action: none; }
#mk-controls { position: fixed; left: 0; right: 0; bottom: 0; height: 48px; display: flex;
  align-items: center; gap: 10px; padding: 0 12px; box-sizing: border-box;
  background: #f4f4f5; border-top: 1px solid #ddd; }
#mk-play { width: 40px; height: 30px; font-size: 14px; cursor: pointer; }
#mk-step { flex: 1; }
#mk-clock { min-width: 15em; font-variant-numeric: tabular-nums; }
#motionkit-banner { position: fixed; right: 8px; top: 8px; z-index: 10; background:
  rgba(255,255,255,.85); padding: 4px 8px; border-radius: 4px; max-width: 45%;
  pointer-events: none; font-size: 12px; }
#mk-status { position: fixed; left: 8px; top: 8px; color: #a00; }
"""


def page_html(scene: Scene, progress: Progress | None = None) -> str:
    """The whole self-contained page."""
    meta, blob = scene_data(scene, progress)
    data = blob.packed()
    if progress is not None:
        progress("page: compressed")
    digest = base64.b64encode(hashlib.sha256(PLAYER_JS.encode("utf-8")).digest()).decode("ascii")
    policy = (f"default-src 'none'; script-src 'sha256-{digest}'; style-src 'unsafe-inline'; "
              "img-src 'none'; connect-src 'none'; base-uri 'none'; form-action 'none'")
    banner = html.escape(scene.title) + (" — " + html.escape(scene.note) if scene.note else "")
    speeds = "".join(f'<option value="{s}"{" selected" if s == "1" else ""}>{s}×</option>'
                     for s in _style.SPEEDS)
    return "".join([
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{policy}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{html.escape(scene.title)}</title><style>{_STYLE}</style></head><body>",
        '<canvas id="mk-canvas"></canvas><div id="mk-status">loading…</div>',
        f'<div id="motionkit-banner">motionkit view: {banner}</div>',
        '<div id="mk-controls"><button id="mk-play" type="button" aria-label="play/pause">▶</button>',
        '<input id="mk-step" type="range" min="0" max="1" step="1" value="0" aria-label="step">',
        f'<select id="mk-speed" aria-label="speed">{speeds}</select><span id="mk-clock"></span></div>',
        f'<script type="application/json" id="motionkit-scene">{_json_in_script(meta)}</script>',
        f'<script type="application/octet-stream" id="motionkit-data">{data}</script>',
        f"<script>{PLAYER_JS}</script></body></html>\n"])


def write_page(scene: Scene, path: str | Path, progress: Progress | None = None) -> Path:
    """Write the offline page of ``scene`` to ``path`` (atomically: never a half-written page)."""
    text = page_html(scene, progress)
    target = Path(path)
    with atomic_write(target, "wb") as handle:
        handle.write(text.encode("utf-8"))
    if progress is not None:
        progress("page: written")
    return target

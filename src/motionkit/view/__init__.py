"""A 3D view of motions in the browser (viser, the ``view`` extra).

:func:`build_scene` turns files into plain arrays (link poses per shown frame, paths, a terrain
mesh); :func:`view` shows them live on 127.0.0.1 or writes one self-contained HTML page.
viser itself is imported only when a page or server is made.
"""

from __future__ import annotations

import os
import sys
import types
from pathlib import Path

from .render import LiveView, write_html
from .scene import MAX_LINK_POSES, Actor, ModelSource, Scene, Source, TerrainMesh, build_scene


def view(*sources: Source, model: ModelSource | None = None,
         html: str | os.PathLike[str] | None = None, host: str = "127.0.0.1", port: int = 8080,
         max_link_poses: int = MAX_LINK_POSES) -> Scene | LiveView:
    """Show motions in the browser: with ``html``, write the page and return the
    :class:`Scene`; otherwise start a live view on ``host:port`` and return it (``.url``,
    ``.stop()``)."""
    scene = build_scene(*sources, model=model, max_link_poses=max_link_poses)
    if html is not None:
        write_html(scene, Path(html))
        return scene
    return LiveView(scene, host, port)


__all__ = ["MAX_LINK_POSES", "Actor", "LiveView", "Scene", "TerrainMesh", "build_scene", "view",
           "write_html"]


class _Callable(types.ModuleType):
    """Lets ``motionkit.view(...)`` call :func:`view` while ``motionkit.view`` stays the package."""

    def __call__(self, *sources: Source, **options: object) -> object:
        return view(*sources, **options)  # type: ignore[arg-type]


sys.modules[__name__].__class__ = _Callable

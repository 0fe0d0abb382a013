"""The live view in viser (one node set per actor, updated per step); the offline page is
:mod:`.page`, our own player, which draws the same scene alike (:mod:`._style`)."""

from __future__ import annotations

import contextlib
import html
import io
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..errors import MotionkitError
from ..model import geometry
from ..model.geometry import PALETTE, STICK_ALONE, STICK_WITH_SHAPES, light
from . import _origin, _style
from ._style import SPEEDS
from .page import Progress, write_page
from .scene import Scene

if TYPE_CHECKING:
    import viser


def _require_viser() -> None:
    try:
        import viser  # noqa: F401
    except ImportError:
        raise MotionkitError("the viewer needs viser: pip install 'motionkit[view]'") from None


def start_server(host: str = "127.0.0.1", port: int = 8080) -> viser.ViserServer:
    """A viser server on ``host:port`` (loopback unless told otherwise), quiet."""
    _require_viser()
    import viser

    if port == 0:
        port = free_port(host)
    _origin.install()  # only the viewer's own pages may talk to it
    with contextlib.redirect_stdout(io.StringIO()):  # viser prints its own banner; we say the URL
        return viser.ViserServer(host=host, port=port, verbose=False)


def stop_server(server: viser.ViserServer) -> None:
    """Stop ``server`` without its farewell line on stdout."""
    with contextlib.redirect_stdout(io.StringIO()):
        server.stop()


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


def populate(server: viser.ViserServer, scene: Scene) -> Callable[[int], None]:
    """Add the scene's nodes (Z up, terrain, paths, sticks and link frames) and return the
    function that moves every actor to scene step ``step``."""
    server.scene.set_up_direction("+z")
    _aim_camera(server, scene)
    if scene.terrain is not None:
        server.scene.add_mesh_simple("/terrain", scene.terrain.vertices, scene.terrain.faces,
                                     color=geometry.TERRAIN_COLOUR, flat_shading=False, side="double")
    else:
        server.scene.add_grid("/ground", width=10, height=10, plane="xy", cell_size=0.5)
    updates: list[Callable[[int], None]] = []
    for index, actor in enumerate(scene.actors):
        colour = PALETTE[index % len(PALETTE)]
        prefix = f"/actor{index}"
        if len(actor.path) > 1:
            segments = np.stack([actor.path[:-1], actor.path[1:]], axis=1)
            server.scene.add_line_segments(f"{prefix}/path", segments, colour, thickness=_style.PATH_PIXELS,
                                           thickness_units="screen")
        size = _style.frame_size(actor)
        along = _style.frames_along(actor)
        if len(along):  # a trajectory's frames along its path
            server.scene.add_batched_axes(f"{prefix}/frames", batched_wxyzs=actor.wxyz[along, 0],
                                          batched_positions=actor.positions[along, 0],
                                          axes_length=size / 2, axes_radius=size / 30)
        axes = server.scene.add_batched_axes(f"{prefix}/links", batched_wxyzs=actor.wxyz[0],
                                             batched_positions=actor.positions[0],
                                             axes_length=size, axes_radius=size / 12)
        sticks = None
        if np.any(actor.parents >= 0):
            sticks = server.scene.add_line_segments(f"{prefix}/sticks", actor.sticks(0), colour,
                                                    thickness=STICK_WITH_SHAPES if actor.shapes
                                                    else STICK_ALONE)
        shapes = [server.scene.add_batched_meshes_simple(
            f"{prefix}/shape{number}", shape.vertices, shape.faces, batched_wxyzs=shape.wxyz[0],
            batched_positions=shape.positions[0], batched_colors=shape.color or light(colour),
            side="double", lod="off") for number, shape in enumerate(actor.shapes)]
        updates.append(_mover(server, scene, index, axes, sticks, shapes))

    def show(step: int) -> None:
        for update in updates:
            update(step)

    return show


def _aim_camera(server: viser.ViserServer, scene: Scene) -> None:
    """Start where the offline page starts (:func:`._style.camera`)."""
    position, target = _style.camera(scene)
    server.initial_camera.look_at = target
    server.initial_camera.position = position


def _mover(server: viser.ViserServer, scene: Scene, index: int, axes: viser.BatchedAxesHandle,
           sticks: viser.LineSegmentsHandle | None,
           shapes: list[viser.BatchedMeshHandle]) -> Callable[[int], None]:
    actor = scene.actors[index]
    last = [-1]

    def update(step: int) -> None:
        frame = scene.frame_of(index, step)
        if frame == last[0]:
            return
        last[0] = frame
        with server.atomic():
            axes.batched_positions = actor.positions[frame]
            axes.batched_wxyzs = actor.wxyz[frame]
            if sticks is not None:
                sticks.points = actor.sticks(frame)
            for handle, shape in zip(shapes, actor.shapes, strict=True):
                handle.batched_positions = shape.positions[frame]
                handle.batched_wxyzs = shape.wxyz[frame]

    return update


def write_html(scene: Scene, path: str | Path, progress: Progress | None = None) -> Path:
    """One self-contained page that plays the scene offline (our own player, :mod:`.page`:
    play/pause, step slider, speed, orbit camera), with a banner naming the inputs and what
    was subsampled. ``progress`` is told each stage done."""
    return write_page(scene, path, progress)


class LiveView:
    """A live viewer: the server, the scene, the step shown, and play/pause/speed controls."""

    def __init__(self, scene: Scene, host: str = "127.0.0.1", port: int = 8080) -> None:
        self.scene = scene
        self.server = start_server(host, port)
        self.host, self.port = host, int(self.server.get_port())
        self._show = populate(self.server, scene)
        self._show(0)
        gui = self.server.gui
        if scene.note:
            gui.add_markdown(_markdown_escape(scene.note))
        last = max(len(scene.times) - 1, 0)
        self.slider = gui.add_slider("step", min=0, max=max(last, 1), step=1, initial_value=0)
        self.playing = gui.add_checkbox("play", initial_value=_style.START_PLAYING)
        self.speed = gui.add_dropdown("speed", SPEEDS, initial_value="1")
        self.clock = gui.add_markdown(self._clock_text(0))
        self.slider.on_update(lambda _event: self.show(int(self.slider.value)))
        self._stop = threading.Event()
        self._player = threading.Thread(target=self._play, daemon=True)
        self._player.start()

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/"

    def _clock_text(self, step: int) -> str:
        return f"t = {float(self.scene.times[step]):.3f} s (step {step + 1} of {len(self.scene.times)})"

    def show(self, step: int) -> None:
        """Move every actor to scene step ``step``."""
        step = int(np.clip(step, 0, len(self.scene.times) - 1))
        self._show(step)
        self.clock.content = self._clock_text(step)

    def _play(self) -> None:
        started, origin = time.monotonic(), 0.0
        was_playing = False
        while not self._stop.wait(1 / 30):
            if not self.playing.value:
                was_playing = False
                continue
            times = self.scene.times
            if not was_playing:
                started, origin, was_playing = time.monotonic(), float(times[int(self.slider.value)]), True
            now = origin + (time.monotonic() - started) * float(self.speed.value)
            if now > times[-1]:
                started, origin, now = time.monotonic(), float(times[0]), float(times[0])
            step = int(np.clip(np.searchsorted(times, now, side="right") - 1, 0, len(times) - 1))
            if step != int(self.slider.value):
                self.slider.value = step  # type: ignore[misc]  # viser types the setter on a subclass

    def wait(self) -> None:
        """Block until interrupted (Ctrl+C) or stopped."""
        while not self._stop.wait(0.5):
            pass

    def stop(self) -> None:
        """Stop playing and close the server."""
        self._stop.set()
        stop_server(self.server)


def _markdown_escape(text: str) -> str:
    """Untrusted text shown as markdown: HTML escaped, markdown punctuation neutralised."""
    escaped = html.escape(text)
    return "".join("\\" + c if c in "\\`*_{}[]()#+!|<>" else c for c in escaped)

"""The scene in viser: one node set per actor, updated per step, live or recorded to HTML."""

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

from .._io import atomic_write
from ..errors import MotionkitError
from . import _origin
from .scene import Actor, Scene

if TYPE_CHECKING:
    import viser

#: Distinct colours per actor (RGB 0-255).
PALETTE = ((31, 119, 180), (255, 127, 14), (44, 160, 44), (214, 39, 40), (148, 103, 189),
           (140, 86, 75), (227, 119, 194), (127, 127, 127))

#: Frames drawn along a trajectory's path.
FRAMES_ALONG = 40

#: Speeds the live view offers.
SPEEDS = ("0.25", "0.5", "1", "2", "4")


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
                                     color=(170, 160, 140), flat_shading=False, side="double")
    else:
        server.scene.add_grid("/ground", width=10, height=10, plane="xy", cell_size=0.5)
    updates: list[Callable[[int], None]] = []
    for index, actor in enumerate(scene.actors):
        colour = PALETTE[index % len(PALETTE)]
        prefix = f"/actor{index}"
        if len(actor.path) > 1:
            segments = np.stack([actor.path[:-1], actor.path[1:]], axis=1)
            server.scene.add_line_segments(f"{prefix}/path", segments, colour, thickness=2.0,
                                           thickness_units="screen")
        size = 0.05 if actor.kind == "skeleton" else _frame_size(actor)
        if actor.kind == "trajectory" and len(actor.frames) > 1:  # its frames along the path
            along = np.unique(np.linspace(0, len(actor.frames) - 1, FRAMES_ALONG).astype(int))
            server.scene.add_batched_axes(f"{prefix}/frames", batched_wxyzs=actor.wxyz[along, 0],
                                          batched_positions=actor.positions[along, 0],
                                          axes_length=size / 2, axes_radius=size / 30)
        axes = server.scene.add_batched_axes(f"{prefix}/links", batched_wxyzs=actor.wxyz[0],
                                             batched_positions=actor.positions[0],
                                             axes_length=size, axes_radius=size / 12)
        sticks = None
        if np.any(actor.parents >= 0):
            sticks = server.scene.add_line_segments(f"{prefix}/sticks", actor.sticks(0), colour,
                                                    thickness=0.008 if actor.shapes else 0.02)
        shapes = [server.scene.add_batched_meshes_simple(
            f"{prefix}/shape{number}", shape.vertices, shape.faces, batched_wxyzs=shape.wxyz[0],
            batched_positions=shape.positions[0], batched_colors=shape.color or _light(colour),
            side="double", lod="off") for number, shape in enumerate(actor.shapes)]
        updates.append(_mover(server, scene, index, axes, sticks, shapes))

    def show(step: int) -> None:
        for update in updates:
            update(step)

    return show


def _aim_camera(server: viser.ViserServer, scene: Scene) -> None:
    """Start looking at the first actor's first frame from the side and above, far enough to
    see every path."""
    first = scene.actors[0].positions[0].astype(float)
    points = np.concatenate([first] + [a.path.astype(float) for a in scene.actors])
    span = float(np.max(np.ptp(points, axis=0))) if len(points) else 1.0
    distance = float(np.clip(1.2 * span + 2.0, 2.5, 60.0))
    target = np.concatenate([a.path.astype(float) for a in scene.actors]).mean(axis=0) \
        if span > 0.5 else first.mean(axis=0)
    direction = np.array([0.55, -0.75, 0.45])
    server.initial_camera.look_at = target
    server.initial_camera.position = target + distance * direction / np.linalg.norm(direction)


def _frame_size(actor: Actor) -> float:
    """Axes length for a trajectory: a twentieth of its extent, at least 5 cm."""
    span = float(np.max(np.ptp(actor.path, axis=0))) if len(actor.path) > 1 else 1.0
    return max(0.05, span / 20)


def _light(colour: tuple[int, int, int]) -> tuple[int, int, int]:
    """A paler shade of an actor's colour, for its shapes."""
    r, g, b = (int(c + (255 - c) * 0.45) for c in colour)
    return r, g, b


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


def write_html(scene: Scene, path: str | Path) -> Path:
    """One self-contained page that plays the scene offline (viser's player: play/pause, time
    slider, speed), with a banner naming the inputs and what was subsampled."""
    server = start_server("127.0.0.1", 0)
    try:
        show = populate(server, scene)
        show(0)
        recorder = server.get_scene_serializer()
        for step in range(1, len(scene.times)):
            recorder.insert_sleep(max(0.0, float(scene.times[step] - scene.times[step - 1])))
            show(step)
        page = recorder.as_html()
    finally:
        stop_server(server)
    target = Path(path)
    with atomic_write(target, "w") as handle:  # never a half-written page
        handle.write(_with_banner(page, scene))
    return target


def _with_banner(page: str, scene: Scene) -> str:
    """The page with a small escaped banner (file names are untrusted text) and title."""
    text = html.escape(scene.title)
    if scene.note:
        text += " — " + html.escape(scene.note)
    banner = ('<div id="motionkit-banner" style="position:fixed;right:8px;top:8px;z-index:1000;'
              'font:12px sans-serif;background:rgba(255,255,255,.85);padding:4px 8px;'
              f'border-radius:4px;max-width:45%;pointer-events:none">motionkit view: {text}</div>')
    page = page.replace("<title>Viser</title>", f"<title>{html.escape(scene.title)}</title>", 1)
    return page.replace("</body>", banner + "</body>", 1)


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
        self.playing = gui.add_checkbox("play", initial_value=False)
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

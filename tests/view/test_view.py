"""The viewer: its scene holds exactly mk.kinematics' link poses, the exported page embeds the
same numbers, untrusted names are escaped, and the live server runs on 127.0.0.1 only."""

from __future__ import annotations

import os
import select
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import numpy as np
import pytest
from viewdata import decode

import motionkit as mk
from conftest import corpus_file, require_peer
from motionkit import Motion, Timeline, Track
from motionkit.view import LiveView, build_scene, write_html
from motionkit.view.render import free_port

require_peer("viser")  # in the test extra: a missing one fails under CI


@pytest.fixture(scope="module")
def walk() -> tuple[Path, Path]:
    return corpus_file("choreonoid", "SR1.body"), corpus_file("choreonoid", "SR1WalkPattern1.seq")


@pytest.fixture(scope="module")
def parc() -> tuple[Path, Path]:
    return (corpus_file("parc", "character", "humanoid.xml"),
            corpus_file("parc", "ms", "dec2024_teaser_717_1_modified_opt.pkl"))


def _expected(model: Path, motion: Path) -> np.ndarray:
    links = mk.kinematics.link_motion(mk.read(model), mk.read(motion)).tracks["links"].data
    return np.asarray(links)


def test_sr1_walk_scene_holds_the_fk_link_poses(walk: tuple[Path, Path]) -> None:
    model, motion = walk
    scene = build_scene(motion, model=model)
    expected = _expected(model, motion)
    actor = scene.actors[0]
    assert actor.positions.shape == (6701, 30, 3) and scene.note == ""
    for frame in (0, 1, 2500, 6700):
        np.testing.assert_array_equal(actor.positions[frame], expected[frame, :, :3].astype(np.float32))
        np.testing.assert_array_equal(actor.wxyz[frame], expected[frame][:, [6, 3, 4, 5]].astype(np.float32))
    skeleton = mk.read(model)
    assert actor.parents.tolist() == [b.parent for b in skeleton.bodies]
    sticks = actor.sticks(100)
    assert sticks.shape == (29, 2, 3)
    np.testing.assert_array_equal(sticks[0], actor.positions[100, [0, 1]])


def test_parc_scene_with_terrain(parc: tuple[Path, Path]) -> None:
    model, motion = parc
    scene = build_scene(motion, model=model)
    expected = _expected(model, motion)
    for frame in (0, 70, len(expected) - 1):
        np.testing.assert_array_equal(scene.actors[0].positions[frame],
                                      expected[frame, :, :3].astype(np.float32))
    terrain = mk.read(motion).terrain
    mesh = scene.terrain
    assert mesh is not None and len(mesh.vertices) == terrain.heights.size
    i, j = 3, 5
    vertex = mesh.vertices[i * terrain.shape[1] + j]
    x, y = terrain.origin[0] + i * terrain.dx, terrain.origin[1] + j * terrain.dy
    np.testing.assert_allclose(vertex, [x, y, terrain.heights[i, j]], rtol=1e-6)
    assert mesh.faces.max() < len(mesh.vertices) and len(mesh.faces) == 2 * 17 * 14


def test_html_embeds_the_same_link_poses(tmp_path: Path, parc: tuple[Path, Path]) -> None:
    model, motion = parc
    scene = build_scene(motion, model=model)
    page = write_html(scene, tmp_path / "parc.html")
    data = decode(page)
    poses = data.poses(0)
    actor = scene.actors[0]
    assert poses.shape == (len(actor.frames), actor.links, 7)
    for frame in (0, 1, 70, len(actor.frames) - 1):
        np.testing.assert_array_equal(poses[frame, :, :3], actor.positions[frame])
        np.testing.assert_array_equal(poses[frame, :, 3:], actor.wxyz[frame])
    np.testing.assert_array_equal(data.array(data.meta["times"]), scene.times)
    frame_of = data.array(data.meta["actors"][0]["frame_of"])
    assert frame_of.tolist() == [scene.frame_of(0, step) for step in range(len(scene.times))]
    assert data.meta["actors"][0]["parents"] == actor.parents.tolist()
    terrain = data.meta["geometries"][data.meta["terrain"]["geometry"]]
    np.testing.assert_array_equal(data.array(terrain["vertices"]).reshape(-1, 3),
                                  scene.terrain.vertices)  # type: ignore[union-attr]
    assert data.meta["start_playing"] is False  # as the live view starts
    text = page.read_text(encoding="utf-8")
    assert "<title>dec2024_teaser_717_1_modified_opt.pkl</title>" in text


def test_sr1_walk_page_is_at_most_5_mb(tmp_path: Path, walk: tuple[Path, Path]) -> None:
    """Every one of the walk's 6,701 frames, under 5 MB (it was 8.8 MB through viser's
    recording): a regression in the page's size fails here, not in a bench."""
    model, motion = walk
    scene = build_scene(motion, model=model)
    assert len(scene.actors[0].frames) == 6701 and scene.note == ""
    page = write_html(scene, tmp_path / "walk.html")
    assert page.stat().st_size <= 5_000_000
    data = decode(page)
    np.testing.assert_array_equal(data.poses(0)[6700, :, :3], scene.actors[0].positions[6700])


def test_sr1_walk_page_size_and_subsampling_note(tmp_path: Path, walk: tuple[Path, Path]) -> None:
    model, motion = walk
    scene = build_scene(motion, model=model, max_link_poses=30 * 1000)
    assert "subsampled" in scene.note and len(scene.actors[0].frames) <= 1001
    assert scene.actors[0].frames[-1] == 6700
    expected = _expected(model, motion)
    shown = scene.actors[0].frames[10]
    np.testing.assert_array_equal(scene.actors[0].positions[10], expected[shown, :, :3].astype(np.float32))
    page = write_html(scene, tmp_path / "walk.html")
    assert "subsampled" in page.read_text(encoding="utf-8")
    np.testing.assert_array_equal(decode(page).poses(0)[10, :, :3], scene.actors[0].positions[10])


def test_names_from_files_cannot_inject_script(tmp_path: Path) -> None:
    evil = "<script>alert('x')</script><img src=x onerror=alert(1)>"
    pose = np.tile([0.0, 0, 0, 0, 0, 0, 1], (5, 1))
    motion = Motion({"root": Track("root", "pose", pose, Timeline.uniform(10.0, 5))}, meta={"name": evil})
    page = write_html(build_scene(motion), tmp_path / "evil.html").read_text(encoding="utf-8")
    assert evil not in page and "alert('x')</script>" not in page
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in page
    assert decode(tmp_path / "evil.html").meta["actors"][0]["name"] == evil  # as JSON text only


def test_trajectories_side_by_side() -> None:
    ref, est = corpus_file("evo", "fr2_desk_groundtruth.txt"), corpus_file("evo", "fr2_desk_ORB.txt")
    with pytest.warns(mk.MotionkitWarning):
        scene = build_scene(ref, est)
    assert [a.kind for a in scene.actors] == ["trajectory", "trajectory"]
    data = mk.read(est).tracks["root"].data
    np.testing.assert_array_equal(scene.actors[1].positions[:, 0], data[:, :3].astype(np.float32))
    late = len(scene.times) - 1
    assert scene.frame_of(1, late) == len(scene.actors[1].times) - 1


def test_joints_without_a_model_is_an_error(walk: tuple[Path, Path]) -> None:
    with pytest.raises(mk.MotionkitError, match="--model"):
        build_scene(walk[1])


def test_live_view_on_loopback(parc: tuple[Path, Path]) -> None:
    live = LiveView(build_scene(parc[1], model=parc[0]), port=0)
    try:
        assert live.url.startswith("http://127.0.0.1:")
        page = urllib.request.urlopen(live.url, timeout=10).read()
        assert b"<html" in page.lower()
        live.show(50)
        assert "step 51 of" in live.clock.content
    finally:
        live.stop()


def _wait_for(url: str, seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while True:
        try:
            urllib.request.urlopen(url, timeout=2).read()
            return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def test_cli_serves_on_127_0_0_1_and_stops_by_pid(parc: tuple[Path, Path]) -> None:
    port = free_port()
    process = subprocess.Popen([sys.executable, "-m", "motionkit", "view", str(parc[1]), "--model",
                                str(parc[0]), "--port", str(port)],
                               stderr=subprocess.PIPE, stdout=subprocess.DEVNULL)
    said = b""
    try:
        assert process.stderr is not None
        deadline = time.monotonic() + 60  # the URL is printed once the scene is up
        # Raw reads of the pipe: a buffered line reader can hold the URL where select does not
        # see it (a progress bar's lines arrive in the same chunk).
        while b"open http" not in said and time.monotonic() < deadline:
            if select.select([process.stderr], [], [], 1.0)[0]:
                said += os.read(process.stderr.fileno(), 65536)
        _wait_for(f"http://127.0.0.1:{port}/")
        listening = subprocess.run(["ss", "-ltnH", f"sport = :{port}"], capture_output=True, text=True)
        if listening.returncode == 0:
            addresses = {line.split()[3] for line in listening.stdout.splitlines() if line.strip()}
            assert addresses == {f"127.0.0.1:{port}"}
    finally:
        os.kill(process.pid, signal.SIGINT)
        said += process.communicate(timeout=20)[1]
    assert f"open http://127.0.0.1:{port}/" in said.decode(errors="replace")
    with pytest.raises(OSError), socket.create_connection(("127.0.0.1", port), timeout=2):
        pass


def test_cli_html(tmp_path: Path, parc: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    from motionkit.cli import main

    out = tmp_path / "v.html"
    with pytest.raises(SystemExit) as done:
        main(["view", str(parc[1]), "--model", str(parc[0]), "--html", str(out)])
    assert done.value.code == 0 and out.stat().st_size > 100_000
    captured = capsys.readouterr()
    assert captured.out == "" and f"wrote {out}" in captured.err


def test_model_shapes_ride_on_their_links(parc: tuple[Path, Path], tmp_path: Path) -> None:
    from motionkit.spatial.quaternion import rotate

    model, motion = parc
    scene = build_scene(motion, model=model)
    shapes = scene.actors[0].shapes
    skeleton = mk.read(model)
    assert sum(len(s.links) for s in shapes) == sum(len(b.shapes) for b in skeleton.bodies)
    expected = _expected(model, motion)
    head = skeleton.body_index("head")
    (sphere,) = [s for s in shapes if head in s.links]
    offset = skeleton.bodies[head].shapes[0].transform[:3, 3]
    for frame in (0, 90):
        pose = expected[frame, head]
        np.testing.assert_allclose(sphere.positions[frame, list(sphere.links).index(head)],
                                   pose[:3] + rotate(pose[3:], offset), atol=1e-6)
    radius = skeleton.bodies[head].shapes[0].params["radius"]
    np.testing.assert_allclose(np.linalg.norm(sphere.vertices, axis=1), radius, rtol=1e-5)
    data = decode(write_html(scene, tmp_path / "shapes.html"))
    entry = data.meta["actors"][0]["shapes"][shapes.index(sphere)]
    assert entry["links"] == sphere.links.tolist()
    offset = data.array(entry["offsets"]).reshape(-1, 7)[list(sphere.links).index(head)]
    link = data.poses(0)[90, head]  # the player places the shape: link pose, then offset
    xyzw = link[[4, 5, 6, 3]].astype(float)
    np.testing.assert_allclose(link[:3] + rotate(xyzw, offset[:3].astype(float)),
                               sphere.positions[90, list(sphere.links).index(head)], atol=1e-5)


def test_a_path_with_nan_and_huge_values_still_makes_a_page(tmp_path: Path) -> None:
    """Non-finite and 1e308 rows are drawn as they are; the camera and the axes are sized
    from the others (the page's JSON has no NaN)."""
    source = tmp_path / "odd.tum"
    source.write_text("1 0 0 0 0 0 0 1\n2 nan 0 0 0 0 0 1\n3 1 1 0 0 0 0 1\n"
                      "4 1e308 0 0 0 0 0 1\n")
    page = write_html(build_scene(str(source)), tmp_path / "odd.html")
    assert Path(page).stat().st_size > 0
    assert "NaN" not in Path(page).read_text()

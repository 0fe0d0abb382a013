"""The viewer in a real headless Chromium (Debian's ``chromium``, driven by playwright's Python
package pointed at it; playwright never downloads a browser here). The page and the live server
show a non-blank scene, both start paused, and moving the time slider changes the picture; the
page's own player plays by itself and shades the terrain.

Without Chromium (or playwright) these tests skip; ``MOTIONKIT_REQUIRE_BROWSER=1`` (set by
``.ci/run``) turns the skip into a failure.
"""

from __future__ import annotations

import io
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from conftest import corpus_file, require_peer
from motionkit.view import LiveView, build_scene, write_html

require_peer("viser")  # in the test extra: a missing one fails under CI

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--use-angle=swiftshader", "--enable-unsafe-swiftshader"]


def _chromium() -> str | None:
    for candidate in (os.environ.get("MOTIONKIT_CHROMIUM", ""), "/usr/bin/chromium",
                      shutil.which("chromium") or "", shutil.which("chromium-browser") or ""):
        if candidate and Path(candidate).is_file():
            return candidate
    return None


def _missing(reason: str) -> None:
    if os.environ.get("MOTIONKIT_REQUIRE_BROWSER", "") not in ("", "0"):
        pytest.fail(f"{reason} (MOTIONKIT_REQUIRE_BROWSER=1)")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    executable = _chromium()
    if executable is None:
        _missing("no Chromium found (apt-get install -y chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("playwright is not installed (pip install playwright)")
    with tempfile.TemporaryDirectory() as profile, sync_playwright() as driver:
        context = driver.chromium.launch_persistent_context(
            profile, executable_path=executable, args=FLAGS, headless=True,
            viewport={"width": 800, "height": 560})
        yield context
        context.close()


@pytest.fixture(scope="module")
def parc() -> tuple[Path, Path]:
    return (corpus_file("parc", "character", "humanoid.xml"),
            corpus_file("parc", "ms", "dec2024_teaser_717_1_modified_opt.pkl"))


def _pixels(page: Any) -> np.ndarray:
    from PIL import Image

    return np.asarray(Image.open(io.BytesIO(page.screenshot())).convert("RGB"), dtype=np.int16)


def _settled(page: Any, seconds: float = 1.5) -> np.ndarray:
    time.sleep(seconds)
    return _pixels(page)


def _check(before: np.ndarray, after: np.ndarray) -> None:
    canvas = before[: -60]  # the 3D view, above the bottom controls (both views)
    assert canvas.std() > 5, "the scene is drawn (not a blank page)"
    changed = np.abs(before.astype(int) - after.astype(int)).max(axis=2) > 24
    assert changed.sum() > 200, "moving the time slider moves the scene"


def _open_page(browser: Any, page_file: Path) -> Any:
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(page_file.as_uri())
    page.wait_for_selector("body[data-ready='1']", timeout=60_000)
    assert page.locator("#mk-status").text_content() == "", "the player started"
    assert errors == []
    return page


def _to_end(page: Any) -> None:
    page.locator("#mk-step").focus()
    page.keyboard.press("End")


def test_exported_page_plays_in_chromium(browser: Any, parc: tuple[Path, Path], tmp_path: Path) -> None:
    scene = build_scene(parc[1], model=parc[0])
    page = _open_page(browser, write_html(scene, tmp_path / "parc.html"))
    step = lambda: int(page.evaluate("motionkitView.step()"))  # noqa: E731
    assert page.evaluate("motionkitView.playing()") is False and step() == 0  # starts paused
    start, head = _settled(page), page.evaluate("motionkitView.pose(0, 0)")
    _to_end(page)
    end = _settled(page)
    assert step() == len(scene.times) - 1
    assert page.locator("#mk-clock").text_content().endswith(f"(step {step() + 1} of {len(scene.times)})")
    moved = np.asarray(page.evaluate("motionkitView.pose(0, 0)")) - np.asarray(head)
    assert np.linalg.norm(moved[:3]) > 0.1, "the root's transform changes along the timeline"
    _check(start, end)
    page.locator("#mk-step").focus()
    page.keyboard.press("Home")
    page.locator("#mk-play").click()  # plays by itself
    time.sleep(1.5)
    assert step() > 0 and page.evaluate("motionkitView.playing()") is True
    page.close()


def test_exported_terrain_is_shaded(browser: Any, parc: tuple[Path, Path], tmp_path: Path) -> None:
    """The PARC terrain is drawn lit in its own colour (it was white on white), not as the
    background: many canvas pixels are the terrain's warm grey, at several shades."""
    page = _open_page(browser, write_html(build_scene(parc[1], model=parc[0]), tmp_path / "t.html"))
    canvas = _settled(page, 1.0)[:-60].reshape(-1, 3)
    r, g, b = canvas[:, 0], canvas[:, 1], canvas[:, 2]
    terrain = (r < 235) & (r > b + 8) & (g > b)  # (170, 160, 140) lit: warm, never white
    assert terrain.mean() > 0.05
    assert len(np.unique(r[terrain] // 8)) >= 4, "shaded: the light varies over the slopes"
    page.close()


def test_live_server_in_chromium(browser: Any, parc: tuple[Path, Path]) -> None:
    live = LiveView(build_scene(parc[1], model=parc[0]), port=0)
    try:
        page = browser.new_page()
        page.goto(live.url)
        page.wait_for_selector("canvas", timeout=60_000)
        slider = page.locator("[role=slider]").first
        slider.wait_for(timeout=60_000)
        start = _settled(page, 2.0)
        assert live.playing.value is False and live.slider.value == 0  # starts paused, as the page
        slider.focus()
        page.keyboard.press("End")
        end = _settled(page, 2.0)
        assert live.slider.value == len(live.scene.times) - 1
        _check(start, end)
        page.close()
    finally:
        live.stop()


def test_missing_browser_skips_or_fails_when_required(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MOTIONKIT_REQUIRE_BROWSER", raising=False)
    with pytest.raises(pytest.skip.Exception):
        _missing("no Chromium")
    monkeypatch.setenv("MOTIONKIT_REQUIRE_BROWSER", "1")
    with pytest.raises(pytest.fail.Exception, match="MOTIONKIT_REQUIRE_BROWSER=1"):
        _missing("no Chromium")

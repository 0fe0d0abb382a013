"""The viewer in a real headless Chromium (Debian's ``chromium``, driven by playwright's Python
package pointed at it; playwright never downloads a browser here). The page and the live server
show a non-blank scene, and moving the time slider changes the picture.

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
    canvas = before[: -60]  # the 3D view, above the bottom controls
    assert canvas.std() > 5, "the scene is drawn (not a blank page)"
    changed = np.abs(before.astype(int) - after.astype(int)).max(axis=2) > 24
    assert changed.sum() > 200, "moving the time slider moves the scene"


def test_exported_page_plays_in_chromium(browser: Any, parc: tuple[Path, Path], tmp_path: Path) -> None:
    page_file = write_html(build_scene(parc[1], model=parc[0]), tmp_path / "parc.html")
    page = browser.new_page()
    page.goto(page_file.as_uri())
    page.wait_for_selector("canvas", timeout=60_000)
    slider = page.locator("[role=slider]").first
    slider.wait_for(state="attached", timeout=60_000)  # the player's thumb shows on hover only
    value = lambda: float(slider.get_attribute("aria-valuenow") or 0)  # noqa: E731
    for _ in range(3):  # the player starts playing: pause it (the first button toggles)
        before = value()
        time.sleep(0.6)
        if value() == before:
            break
        page.locator("button").first.click()
    track = page.locator(".mantine-Slider-root").first.bounding_box()
    assert track is not None
    middle = track["y"] + track["height"] / 2
    page.mouse.click(track["x"] + 0.02 * track["width"], middle)
    start = _settled(page)
    early = value()
    page.mouse.click(track["x"] + 0.98 * track["width"], middle)
    end = _settled(page)
    assert value() > early + 1.0
    _check(start, end)
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

"""The front door: the registry, option checks, convert, and a light import."""

from __future__ import annotations

from pathlib import Path

import pytest

import motionkit as mk
from motionkit.formats import registry
from seqfiles import V4_ALL


def test_registry_by_extension_name_and_content(tmp_path: Path) -> None:
    assert registry.for_reading("x.seq").name == "seq"
    assert registry.for_reading("x", "SEQ").name == "seq"
    assert registry.for_writing("x.yaml").name == "seq"
    assert registry.by_name("yaml").name == "seq"
    unknown = tmp_path / "x.weird"
    unknown.write_text("hello")
    with pytest.raises(mk.FormatError, match="unknown file type"):
        mk.read(unknown)
    with pytest.raises(mk.MotionkitError, match="unknown format"):
        registry.by_name("nope")


def test_options_are_checked(tmp_path: Path) -> None:
    path = tmp_path / "in.seq"
    path.write_text(V4_ALL)
    with pytest.raises(mk.MotionkitError, match="does not take option"):
        mk.read(path, colour="red")
    with pytest.raises(mk.MotionkitError, match="does not take option"):
        mk.convert(path, tmp_path / "out.seq", colour="red")


def test_convert_routes_options_and_resamples(tmp_path: Path) -> None:
    path = tmp_path / "in.seq"
    path.write_text(V4_ALL)
    out = tmp_path / "out.seq"
    mk.convert(path, out, version=4, precision=9, rate=1000, fast=False)
    motion = mk.read(out)
    assert motion.meta["choreonoid"]["version"] == 4
    assert motion.tracks["joints"].frames == 5 and motion.tracks["joints"].timeline.rate == 1000


def test_import_is_light() -> None:
    import subprocess
    import sys

    heavy = ("scipy", "yaml", "click", "polars", "rosbags", "pyproj")
    code = f"import sys, motionkit; print(sorted(m for m in {heavy!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"

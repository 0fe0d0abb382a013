"""Blender itself imports the BVH files we write (issue 25): Debian's ``blender`` in
background mode reads a robot's and a character's motion with its own importer, and its
bones' world head positions equal our forward kinematics at every frame.

Blender stores bones in float32, so the bound is float32's (1e-6 relative to the size of
the scene). Without Blender these tests skip; ``MOTIONKIT_REQUIRE_BLENDER=1`` (set by
``.ci/run``, which installs Debian's package) turns the skip into a failure.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from test_bvh_channels import assert_blender_rule

import motionkit as mk
from conftest import corpus_file

pytestmark = pytest.mark.filterwarnings("ignore:Importing PyGLM:PendingDeprecationWarning")

SCRIPT = Path(__file__).with_name("blender_heads.py")
FRAMES = 60  # spread over the motion: enough to see a gait move


def _missing(reason: str) -> None:
    if os.environ.get("MOTIONKIT_REQUIRE_BLENDER", "") not in ("", "0"):
        pytest.fail(f"{reason} (MOTIONKIT_REQUIRE_BLENDER=1)")
    pytest.skip(reason)


def _blender() -> str:
    found = os.environ.get("MOTIONKIT_BLENDER") or shutil.which("blender")
    if not found:
        _missing("no blender found (apt-get install -y blender)")
    assert found is not None
    return found


def _sample_frames(path: Path, count: int) -> np.ndarray:
    """Keep ``count`` frames spread over the written file (Blender keys every bone of every
    frame, slow for a long walk); the indices of the frames kept."""
    head, rows = path.read_text().split("Frame Time:")
    lines = rows.split("\n")
    frames = int(re.search(r"Frames: (\d+)", head).group(1))  # type: ignore[union-attr]
    kept = np.unique(np.linspace(0, frames - 1, min(frames, count)).round().astype(int))
    path.write_text(head.replace(f"Frames: {frames}", f"Frames: {len(kept)}") + "Frame Time:"
                    + lines[0] + "\n" + "\n".join(lines[1 + k] for k in kept) + "\n")
    return kept


def _blender_heads(path: Path, frames: int, tmp_path: Path) -> dict[str, np.ndarray]:
    out = tmp_path / "heads.json"
    done = subprocess.run([_blender(), "-b", "--factory-startup", "--python-exit-code", "1",
                           "--python", str(SCRIPT), "--", str(path), str(out), str(frames)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0 and out.exists(), done.stdout[-2000:] + done.stderr[-2000:]
    found = json.loads(out.read_text())
    return {name: np.array(rows) for name, rows in found["heads"].items()}


def _compare(path: Path, skeleton: mk.Skeleton, motion: mk.Motion, tmp_path: Path) -> None:
    """Blender's bone heads (centimetres, its Z up) against our FK (metres, Z up): the
    default BVH is centimetres with Y up, which Blender's default axes turn to Z up."""
    assert_blender_rule(path.read_text())
    frames = _sample_frames(path, FRAMES)
    heads = _blender_heads(path, len(frames), tmp_path)
    links = mk.kinematics.link_motion(skeleton, motion).tracks["links"].data[frames, :, :3]
    index = {re.sub(r"[\s{}]", "_", body.name): k for k, body in enumerate(skeleton.bodies)}
    names = [name for name in heads if not name.endswith("__joint")]
    assert set(names) == set(index)  # every body is a bone
    got = np.stack([heads[name] for name in names], axis=1) * 0.01
    expected = links[:, [index[name] for name in names]]
    assert got.shape == expected.shape
    scale = max(float(np.abs(expected).max()), 1.0)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-6 * scale)
    # the motion moves the bones: a frozen import would not pass by luck
    assert np.ptp(got, axis=0).max() > 0.01


@pytest.mark.corpus
def test_blender_reads_a_robot_walk(tmp_path: Path) -> None:
    _blender()
    model = corpus_file("choreonoid", "SR1.body")
    walk = corpus_file("choreonoid", "SR1WalkPattern1.seq")
    mk.convert(walk, tmp_path / "walk.bvh", model=model)
    skeleton = mk.read(model)
    assert isinstance(skeleton, mk.Skeleton)
    _compare(tmp_path / "walk.bvh", skeleton, mk.api.read_motion(walk), tmp_path)


@pytest.mark.corpus
def test_blender_reads_a_character_motion(tmp_path: Path) -> None:
    _blender()
    character = corpus_file("parc", "character", "humanoid.xml")
    source = corpus_file("parc", "ms", "sfu.pkl")
    with pytest.warns(mk.MotionkitWarning):
        mk.convert(source, tmp_path / "sfu.bvh", character=character, lossy=True)
    motion = mk.api.read_motion(source, character=character)
    assert motion.skeleton is not None
    _compare(tmp_path / "sfu.bvh", motion.skeleton, motion, tmp_path)


def test_missing_blender_skips_or_fails_when_required(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MOTIONKIT_REQUIRE_BLENDER", raising=False)
    with pytest.raises(pytest.skip.Exception):
        _missing("no blender")
    monkeypatch.setenv("MOTIONKIT_REQUIRE_BLENDER", "1")
    with pytest.raises(pytest.fail.Exception, match="MOTIONKIT_REQUIRE_BLENDER=1"):
        _missing("no blender")

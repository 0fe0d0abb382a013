"""The outside checkers of the glTF files we write: the Khronos validator and three.js's
GLTFLoader in Node (npm packages pinned in ``oracles/package-lock.json``), and Blender.

The npm packages are installed with ``npm ci`` into a cache folder outside the source tree
(``$MOTIONKIT_NODE_CACHE``, default ``~/.cache/motionkit``), one folder per version of the
lock and scripts, so a second run costs nothing. Without Node (or when the install fails,
e.g. offline) the tests skip; ``MOTIONKIT_REQUIRE_NODE=1`` (set by ``.ci/run``) turns the
skip into a failure. Blender: ``MOTIONKIT_REQUIRE_BLENDER``, as for the BVH tests.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pytest

ORACLES = Path(__file__).with_name("oracles")
FILES = ("package.json", "package-lock.json", "validate.mjs", "three_poses.mjs")
BLENDER_SCRIPT = Path(__file__).with_name("blender_poses.py")


def missing(reason: str, variable: str) -> None:
    """Skip for want of an outside tool, or fail where ``variable`` says it is required."""
    if os.environ.get(variable, "") not in ("", "0"):
        pytest.fail(f"{reason} ({variable}=1)")
    pytest.skip(reason)


def node_folder() -> Path:
    """The folder with the npm packages and scripts installed (installing them once)."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        missing("no node/npm found (apt-get install -y nodejs npm)", "MOTIONKIT_REQUIRE_NODE")
    digest = hashlib.sha256(b"".join((ORACLES / name).read_bytes() for name in FILES)).hexdigest()[:16]
    cache = Path(os.environ.get("MOTIONKIT_NODE_CACHE") or Path.home() / ".cache" / "motionkit")
    folder = cache / f"gltf-oracles-{digest}"
    if (folder / "node_modules" / ".installed").exists():
        return folder
    cache.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="gltf-oracles-", dir=cache))
    for name in FILES:
        shutil.copy(ORACLES / name, work / name)
    try:
        done = subprocess.run([str(npm), "ci", "--no-audit", "--no-fund", "--ignore-scripts"],
                              cwd=work, capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired:
        done = None
    if done is None or done.returncode != 0:
        shutil.rmtree(work, ignore_errors=True)
        output = "" if done is None else done.stderr[-500:]
        missing(f"npm ci of the glTF oracles failed: {output}", "MOTIONKIT_REQUIRE_NODE")
    (work / "node_modules" / ".installed").touch()
    try:
        work.rename(folder)
    except OSError:  # another run installed it meanwhile
        shutil.rmtree(work, ignore_errors=True)
    return folder


def validate(*paths: Path) -> list[dict[str, object]]:
    """The validator's report (counts and messages) of each file."""
    folder = node_folder()
    done = subprocess.run(["node", str(folder / "validate.mjs"), *map(str, paths)],
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return [json.loads(line) for line in done.stdout.splitlines()]


def three_poses(path: Path, times: list[float]) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """three.js world positions ``(T, 3)`` and quaternions ``(T, 4)`` of every node (glTF Y
    up) at ``times``, every clip played once and reset before each sample."""
    folder = node_folder()
    done = subprocess.run(["node", str(folder / "three_poses.mjs"), str(path), json.dumps(times)],
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    nodes = json.loads(done.stdout)["nodes"]
    return {int(k): (np.array(v["position"]), np.array(v["quaternion"])) for k, v in nodes.items()}


def blender_poses(path: Path, fps: int, times: list[float], tmp_path: Path) -> dict[str, np.ndarray]:
    """Blender's world matrices ``(T, 4, 4)`` (its Z up) of every imported object at ``times``."""
    blender = os.environ.get("MOTIONKIT_BLENDER") or shutil.which("blender")
    if not blender:
        missing("no blender found (apt-get install -y blender)", "MOTIONKIT_REQUIRE_BLENDER")
    assert blender is not None
    out = tmp_path / "blender.json"
    numpy_dir = str(Path(np.__file__).resolve().parents[1])  # Debian's Blender has no numpy
    done = subprocess.run([blender, "-b", "--factory-startup", "--python-exit-code", "1",
                           "--python", str(BLENDER_SCRIPT), "--", str(path), str(out), str(fps),
                           json.dumps(times), numpy_dir], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0 and out.exists(), done.stdout[-2000:] + done.stderr[-2000:]
    return {name: np.array(rows) for name, rows in json.loads(out.read_text()).items()}


def y_up(points: np.ndarray) -> np.ndarray:
    """motionkit's Z-up points in glTF's Y up: (x, y, z) -> (x, z, -y)."""
    return np.stack([points[..., 0], points[..., 2], -points[..., 1]], axis=-1)

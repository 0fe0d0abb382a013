"""A ``.skel`` written from a character steps in DART without collision errors (issue 25):
DART's default detector (FCL) has no capsules, so the writer names Bullet for a world
with capsule or multi-sphere collision shapes and no detector of its own."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import motionkit as mk
from conftest import corpus_file, require_peer
from motionkit.model.skeleton import Body, Inertia, Joint, Shape, Skeleton, World

require_peer("dartpy")

#: Load a world with dartpy, report its detector through dartpy's API, step it 10 times.
_STEP = """
import json, sys
import dartpy as dart
world = dart.utils.SkelParser.readWorld(sys.argv[1])
detector = world.getConstraintSolver().getCollisionDetector().getType()
for _ in range(10):
    world.step()
print(json.dumps({"detector": detector, "time": world.getTime()}))
"""


def _step_in_dart(path: Path) -> tuple[dict[str, object], str]:
    """dartpy's report (stdout) and everything it printed to stderr, from a child process
    (DART prints from C++, past Python's streams)."""
    done = subprocess.run([sys.executable, "-c", _STEP, str(path)], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    report: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return report, done.stderr


@pytest.mark.corpus
def test_a_character_steps_in_dart_without_collision_errors(tmp_path: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mk.MotionkitWarning)
        character = mk.read(corpus_file("parc", "character", "humanoid.xml"))
    assert isinstance(character, Skeleton)
    assert any(s.kind == "capsule" and s.role == "collision" for b in character.bodies for s in b.shapes)
    path = tmp_path / "humanoid.skel"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mk.MotionkitWarning)
        mk.write(path, character, lossy=True)
    report, printed = _step_in_dart(path)
    assert report["detector"] == "bullet"
    assert report["time"] == pytest.approx(10 * 0.001)
    assert printed == ""  # FCL would print an error for each capsule
    back = mk.read(path)
    assert isinstance(back, World) and back.collision_detector == "bullet"


def _bodies(kind: str, params: dict[str, object]) -> Skeleton:
    shape = Shape(kind, params, np.eye(4), "collision")
    return Skeleton("s", [Body("b", Joint("b", "free"), inertia=Inertia(1.0, np.zeros(3), np.eye(3) * 0.01),
                               shapes=[shape])])


def test_multi_spheres_also_get_bullet(tmp_path: Path) -> None:
    skeleton = _bodies("multi_sphere", {"spheres": [(0.1, np.zeros(3)), (0.05, np.array([0, 0, 0.2]))]})
    mk.write(tmp_path / "m.skel", skeleton)
    report, printed = _step_in_dart(tmp_path / "m.skel")
    assert report["detector"] == "bullet" and printed == ""


def test_a_detector_is_named_only_when_needed_and_a_worlds_own_is_kept(tmp_path: Path) -> None:
    mk.write(tmp_path / "box.skel", _bodies("box", {"size": np.array([0.1, 0.2, 0.3])}))
    back = mk.read(tmp_path / "box.skel")
    assert isinstance(back, World) and back.collision_detector is None  # DART's default
    report, printed = _step_in_dart(tmp_path / "box.skel")
    assert report["detector"] == "fcl" and printed == ""
    world = World([_bodies("capsule", {"radius": 0.1, "height": 0.3})],
                  gravity=np.array([0.0, 0.0, -9.81]), collision_detector="ode")
    mk.write(tmp_path / "ode.skel", world)
    back = mk.read(tmp_path / "ode.skel")
    assert isinstance(back, World) and back.collision_detector == "ode"

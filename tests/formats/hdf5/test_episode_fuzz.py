"""Mutated episode files (the corpus robomimic and Isaac Lab HDF5 files, and a LeRobot
dataset's data and episodes Parquet files): only motionkit's error family escapes, and
nothing crashes, hangs or runs away with memory. The reads run in a child process (the
HDF5 and Parquet libraries are C++: a crash there must fail this test, not end pytest)."""

from __future__ import annotations

import importlib
import json
import random
import resource
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import _require, corpus_file

for _module in ("h5py", "pyarrow"):  # in the test extra: CI fails where one is missing
    if _require():
        importlib.import_module(_module)
    else:
        pytest.importorskip(_module)

MUTATIONS = 100  # per seed file
#: The child's address space: the interpreter, NumPy, pyarrow and h5py, and the reads.
ADDRESS_SPACE = 3 << 30

CHILD = r"""
import json, sys, warnings
warnings.simplefilter("ignore")
import motionkit as mk
escapes, counts = [], {}
for path, options in json.loads(sys.argv[1]):
    try:
        mk.read(path, **options)
        outcome = "ok"
    except mk.MotionkitError:
        outcome = "motionkit"
    except BaseException as exc:
        outcome = "escape"
        escapes.append([path, type(exc).__name__, str(exc)[:200]])
    counts[outcome] = counts.get(outcome, 0) + 1
print(json.dumps({"escapes": escapes, "counts": counts}))
"""


def _mutate(data: bytes, rng: random.Random) -> bytes:
    out = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        at = rng.randrange(len(out))
        choice = rng.random()
        if choice < 0.5:
            out[at] = rng.randrange(256)
        elif choice < 0.8:
            out[at:at + rng.randint(1, 64)] = bytes(rng.randint(1, 64))
        else:
            del out[at:]
    return bytes(out)


def _limits() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


@pytest.mark.corpus
def test_mutated_episode_files_raise_only_motionkit_errors(tmp_path: Path) -> None:
    rng = random.Random(26)
    cases: list[tuple[str, dict[str, object]]] = []
    for name in ("robomimic_tiny.hdf5", "isaaclab_tiny.hdf5"):
        data = corpus_file("episodes", "hdf5", name).read_bytes()
        for index in range(MUTATIONS):
            path = tmp_path / f"{index}_{name}"
            path.write_bytes(_mutate(data, rng))
            cases.append((str(path), {"demo": 0}))
    source = corpus_file("episodes", "lerobot", "arm7_tiny")
    for part in ("data/chunk-000/file-000.parquet", "meta/episodes/chunk-000/file-000.parquet",
                 "meta/info.json"):
        data = (source / part).read_bytes()
        for index in range(MUTATIONS):
            root = tmp_path / f"ds_{part.replace('/', '_')}_{index}"
            shutil.copytree(source, root)
            (root / part).write_bytes(_mutate(data, rng))
            cases.append((str(root), {"episode": 1}))
    done = subprocess.run([sys.executable, "-c", CHILD, json.dumps(cases)], capture_output=True,
                          text=True, timeout=600, preexec_fn=_limits)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["escapes"] == [], report["escapes"][:5]
    assert sum(report["counts"].values()) == len(cases)
    assert report["counts"].get("motionkit", 0) > len(cases) // 4  # the mutations did break files

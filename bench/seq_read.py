"""Benchmark: reading Choreonoid .seq files, motionkit vs PyYAML's C loader, in one run.

Reads the corpus motions (when MOTIONKIT_CORPUS or ../shared/corpus is there) and a
generated ~50 MB file, prints MB/s for both readers, the ratio, and motionkit's peak
memory relative to (file size + resulting arrays). Goal: >= 30x PyYAML's CSafeLoader,
peak memory < 3x (arrays + file).

    .venv/bin/python bench/seq_read.py [--quick]   (--quick: PyYAML on the corpus files only)
"""

from __future__ import annotations

import os
import platform
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np
import yaml

import motionkit as mk

REPO = Path(__file__).resolve().parents[1]
CORPUS = Path(os.environ.get("MOTIONKIT_CORPUS", REPO.parent / "shared" / "corpus")) / "choreonoid"


def generated(folder: Path, megabytes: float = 50.0) -> Path:
    """A v4 file with a 30-link LinkPosition and a 30-joint component, 9 digits, ~50 MB."""
    frames = int(megabytes * 1e6 / 3350)
    rng = np.random.default_rng(0)
    timeline = mk.Timeline.uniform(1000, frames)
    links = rng.normal(size=(frames, 30, 7))
    links[..., 3:] /= np.linalg.norm(links[..., 3:], axis=-1, keepdims=True)
    motion = mk.Motion()
    motion.add(mk.Track("links", "pose", links, timeline))
    motion.add(mk.Track("joints", "value", rng.normal(size=(frames, 30)), timeline))
    path = folder / "generated.seq"
    mk.write(path, motion, version=4, precision=9)
    return path


def best_of(function, repeats: int) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def measure(path: Path, with_yaml: bool) -> None:
    size = path.stat().st_size
    small = size < 10e6
    ours = best_of(lambda: mk.read(path), 7 if small else 3)
    tracemalloc.start()
    motion = mk.read(path)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    arrays = sum(t.data.nbytes for t in motion.tracks.values())
    line = f"{path.name:28s} {size / 1e6:7.2f} MB  motionkit {size / 1e6 / ours:7.1f} MB/s"
    if with_yaml:
        data = path.read_bytes()
        theirs = best_of(lambda: yaml.load(data, Loader=yaml.CSafeLoader), 3 if small else 1)
        line += f"  PyYAML-C {size / 1e6 / theirs:5.2f} MB/s  ratio {theirs / ours:6.1f}x"
    line += f"  peak {peak / (arrays + size):4.2f}x (arrays+file)"
    print(line, flush=True)


def main() -> None:
    quick = "--quick" in sys.argv
    print(f"seq_read: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"Python {platform.python_version()}, numpy {np.__version__}, PyYAML {yaml.__version__}")
    files = sorted(CORPUS.glob("*.seq")) + sorted(CORPUS.glob("*.yaml")) if CORPUS.is_dir() else []
    for path in files:
        measure(path, with_yaml=True)
    with tempfile.TemporaryDirectory() as folder:
        measure(generated(Path(folder)), with_yaml=not quick)


if __name__ == "__main__":
    main()

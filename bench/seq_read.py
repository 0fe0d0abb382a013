"""Choreonoid .seq read speed: motionkit vs PyYAML's C loader (CSafeLoader).

The corpus motions (MOTIONKIT_CORPUS or ../shared/corpus) and a generated ~50 MB file.
Each reader runs in a fresh subprocess per file, in turns for ``--rounds`` rounds.
motionkit's worker imports motionkit, then times its first read (which pays for the lazy
set-up: the .seq module and PyYAML are imported on first use) and its warm reads; the
PyYAML worker imports yaml, then times ``yaml.load(bytes, Loader=yaml.CSafeLoader)`` (a
parse to Python objects, no model). CPU time of each, best over the rounds. The package's
modules are byte-compiled first (an installed package has its .pyc files; this
environment may set PYTHONDONTWRITEBYTECODE, which would charge compiling to the first
read). motionkit's peak traced memory is given relative to (file + arrays).

    .venv/bin/python bench/seq_read.py [--rounds 3] [--quick]   (--quick: no 50 MB file)
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

from _report import Report, Timing, interleaved, span

REPO = Path(__file__).resolve().parents[1]
CORPUS = Path(os.environ.get("MOTIONKIT_CORPUS", REPO.parent / "shared" / "corpus")) / "choreonoid"


def generated(folder: Path, megabytes: float = 50.0) -> Path:
    """A v4 file with a 30-link LinkPosition and a 30-joint component, 9 digits, ~50 MB."""
    import numpy as np

    import motionkit as mk

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


def worker(tool: str, path: str, repeat: int) -> dict[str, float]:
    """First read and warm reads (CPU s) of one tool, and motionkit's traced peak."""
    if tool == "motionkit":
        import motionkit as mk

        def read() -> object:
            return mk.read(path)
    else:
        import yaml

        data = Path(path).read_bytes()

        def read() -> object:
            return yaml.load(data, Loader=yaml.CSafeLoader)
    times = []
    for _ in range(1 + repeat):
        start = time.process_time()
        read()
        times.append(time.process_time() - start)
    warm = times[1:] or times
    found = {"first": times[0], "warm": min(warm), "median": statistics.median(warm)}
    if tool == "motionkit":
        tracemalloc.start()
        motion = read()
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        arrays = sum(t.data.nbytes for t in motion.tracks.values())  # type: ignore[attr-defined]
        found["peak_ratio"] = peak / (arrays + Path(path).stat().st_size)
    return found


def _run(tool: str, path: Path, repeat: int, extra: list[dict[str, float]]) -> Timing:
    done = subprocess.run([sys.executable, __file__, "--worker", tool, str(path), str(repeat)],
                          capture_output=True, text=True, check=True)
    found = json.loads(done.stdout.strip().splitlines()[-1])
    extra.append(found)
    return Timing(found["warm"], float("nan"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--worker", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker[0], args.worker[1], int(args.worker[2]))))
        return
    compileall.compile_dir(REPO / "src" / "motionkit", quiet=1)
    import yaml

    report = Report("seq_read", "Choreonoid .seq read: motionkit vs PyYAML's C loader")
    report.peer("PyYAML", f"PyYAML {yaml.__version__}, yaml.load(bytes, Loader=CSafeLoader), "
                "parse only")
    with tempfile.TemporaryDirectory() as folder:
        files = sorted(CORPUS.glob("*.seq")) + sorted(CORPUS.glob("*.yaml")) \
            if CORPUS.is_dir() else []
        if not args.quick:
            files.append(generated(Path(folder)))
        measure(report, files, args.rounds)
    report.finish()


def measure(report: Report, files: list[Path], rounds: int) -> None:
    rows, first, steady = [], [], []
    for path in files:
        small = path.stat().st_size < 10e6
        ours: list[dict[str, float]] = []
        peer: list[dict[str, float]] = []
        mine, theirs_repeat = (5, 2) if small else (2, 0)
        interleaved({"motionkit": lambda path=path, ours=ours, n=mine:
                     _run("motionkit", path, n, ours),
                     "PyYAML": lambda path=path, peer=peer, n=theirs_repeat:
                     _run("PyYAML", path, n, peer)}, rounds)
        theirs = min(min(run["warm"], run["first"]) for run in peer)
        cold = [theirs / run["first"] for run in ours]
        warm = [theirs / run["median"] for run in ours]
        first += cold
        steady += warm
        rows.append([path.name, f"{path.stat().st_size / 1e6:.2f}",
                     f"{min(run['first'] for run in ours):.4f}",
                     f"{min(run['warm'] for run in ours):.4f}", f"{theirs:.3f}",
                     span(cold, 0, "×"), span(warm, 0, "×"),
                     f"{max(run['peak_ratio'] for run in ours):.2f}×"])
    report.table(["file", "MB", "motionkit first read CPU s", "warm CPU s", "PyYAML-C CPU s",
                  "first read vs PyYAML", "warm (median) vs PyYAML", "peak / (arrays+file)"],
                 rows)
    report.row(".seq first read of a process vs PyYAML CSafeLoader", span(first, 0, "×"),
               "≥ 50×", min(first) >= 50)
    report.row(".seq warm read (medians) vs PyYAML CSafeLoader", span(steady, 0, "×"), "≥ 50×",
               min(steady) >= 50)


if __name__ == "__main__":
    main()

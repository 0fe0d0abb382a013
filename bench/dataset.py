"""Datasets: batch conversion on 1 and 2 Dask workers, MotionLib.load of 1,000 PARC files,
opening a packed library of 16,000 motions.

Run: ``.venv/bin/python bench/dataset.py [files]``. Figures go to the shared report
(``bench/_report.py``): CPU seconds where the work is in this process (best of 3
interleaved rounds), wall seconds for the Dask batch. Everything is generated in a temporary
folder: ``files`` (default 2,000) small motions in TUM, ``.traj`` and ``.seq`` in ten
folders, converted to ``.traj`` by ``motionkit batch convert`` with ``-j 1`` and ``-j 2``
(the whole command: cluster start, conversions, catalog); 1,000 PARC MS files written with
``mk.write`` from the corpus's PARC files (``MOTIONKIT_CORPUS``, default
``../shared/corpus``) and loaded by ``MotionLib.load`` (with a profile of where the time
goes); and a motion list of 16,000 entries packed with ``motionkit pack`` and opened by
``MotionLib.load``.
"""

from __future__ import annotations

import cProfile
import os
import pstats
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from _report import Report, best, interleaved, timed

import motionkit as mk
from motionkit.model import Motion, Timeline, Track
from motionkit.motionlib import MotionLib

REPO = Path(__file__).resolve().parents[1]
CORPUS = Path(os.environ.get("MOTIONKIT_CORPUS", REPO.parent / "shared" / "corpus"))
EXTENSIONS = (".tum", ".traj", ".seq")


def pose_motion(rng: np.random.Generator, frames: int) -> Motion:
    """A root-pose motion at 30 Hz."""
    q = rng.normal(size=(frames, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    motion = Motion()
    motion.add(Track("root", "pose", np.concatenate([rng.normal(size=(frames, 3)), q], 1),
                     Timeline.uniform(30.0, frames)))
    return motion


def timed_batch(source: Path, out: Path, jobs: int) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "motionkit", "batch", "convert", str(source), "--out",
                    str(out), "--to", "traj", "-j", str(jobs), "--force"], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def timed_on_cluster(source: Path, out: Path, jobs: int) -> tuple[float, float]:
    """Seconds to start a local cluster of ``jobs`` workers, and to convert on it."""
    from motionkit.dataset.batch import Job, run_batch
    from motionkit.dataset.engines import dask_client
    from motionkit.dataset.files import expand

    items = expand([str(source)])
    start = time.perf_counter()
    with dask_client(jobs, None) as client:
        ready = time.perf_counter()
        run_batch(Job("convert", out, to_format="traj", force=True), items,
                  scheduler=client.scheduler.address)
        return ready - start, time.perf_counter() - ready


def batch(report: Report, root: Path, files: int) -> None:
    rng = np.random.default_rng(0)
    for index in range(files):
        folder = root / "in" / f"part{index % 10}"
        folder.mkdir(parents=True, exist_ok=True)
        mk.write(folder / f"m{index:05d}{EXTENSIONS[index % 3]}", pose_motion(rng, 100))
    times: dict[int, float] = {}
    work: dict[int, float] = {}
    starts: dict[int, float] = {}
    for jobs in (1, 2, 1, 2):  # interleaved, best of two each
        elapsed = timed_batch(root / "in", root / f"out{jobs}", jobs)
        times[jobs] = min(times.get(jobs, elapsed), elapsed)
        started, converted = timed_on_cluster(root / "in", root / f"out{jobs}", jobs)
        work[jobs] = min(work.get(jobs, converted), converted)
        starts[jobs] = min(starts.get(jobs, started), started)
    report.row(f"batch convert of {files} files (100 frames) to .traj, whole command, wall",
               f"-j 1 {times[1]:.2f} s ({files / times[1]:.0f} files/s), -j 2 {times[2]:.2f} s "
               f"({files / times[2]:.0f} files/s)", "–", None)
    report.row("the same on a running local cluster, wall",
               f"-j 1 {work[1]:.2f} s, -j 2 {work[2]:.2f} s (speedup {work[1] / work[2]:.2f}×; "
               f"cluster started in {starts[1]:.1f} / {starts[2]:.1f} s)", "–", None)


def parc_files(root: Path, count: int) -> Path:
    sources = sorted((CORPUS / "parc" / "ms").glob("*.pkl"))
    if not sources:
        sys.exit(f"no PARC files in {CORPUS / 'parc' / 'ms'} (set MOTIONKIT_CORPUS)")
    motions = [mk.read(p) for p in sources]
    folder = root / "parc"
    folder.mkdir()
    for index in range(count):
        mk.write(folder / f"motion{index:04d}.pkl", motions[index % len(motions)])
    return folder


def load(report: Report, folder: Path) -> None:
    runs = interleaved({"load": lambda: timed(lambda: MotionLib.load(folder))}, 3)
    took = best(runs["load"]).cpu
    lib = MotionLib.load(folder)
    report.row(f"MotionLib.load of {lib.num_motions} PARC files written by mk.write "
               f"({int(lib.frame_counts.sum())} frames)", f"{took:.2f} s", "<= 1 s", took <= 1.0)
    profile = cProfile.Profile()
    profile.enable()
    MotionLib.load(folder)
    profile.disable()
    stats = pstats.Stats(profile)
    total = max(stats.total_tt, 1e-9)  # type: ignore[attr-defined]
    rows = []
    for (file, _, name), (_, _, own, cumulative, _) in stats.stats.items():  # type: ignore[attr-defined]
        rows.append((own, cumulative, f"{Path(file).name}:{name}"))
    report.table(["where MotionLib.load's time goes (profiled)", "own s", "share", "with callees"],
                 [[where, f"{own:.2f}", f"{own / total:.1%}", f"{cumulative:.2f}"]
                  for own, cumulative, where in sorted(rows, reverse=True)[:8]])


def packed(report: Report, root: Path, entries: int) -> None:
    rng = np.random.default_rng(1)
    folder = root / "clips"
    folder.mkdir()
    distinct = 400
    for index in range(distinct):
        frames = int(rng.integers(10, 30))
        rot = rng.normal(size=(frames, 15, 4))
        rot /= np.linalg.norm(rot, axis=-1, keepdims=True)
        timeline = Timeline.uniform(30.0, frames)
        motion = Motion()
        motion.add(Track("root", "pose", np.concatenate([rng.normal(size=(frames, 3)), rot[:, 0]], 1),
                         timeline))
        motion.add(Track("joint_rotations", "quaternion", rot[:, 1:], timeline))
        motion.add(Track("contacts", "value", rng.random((frames, 15)), timeline))
        mk.write(folder / f"clip{index:03d}.pkl", motion)
    listing = root / "list.yaml"
    listing.write_text("motions:\n" + "".join(
        f"  - file: clips/clip{i % distinct:03d}.pkl\n    weight: {1 + i % 7}\n" for i in range(entries)))
    target = root / "lib.mkpack"
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "motionkit", "pack", str(listing), "-o", str(target)],
                   check=True, stdout=subprocess.DEVNULL)
    written = time.perf_counter() - start
    opens = []
    for _ in range(5):
        start = time.perf_counter()
        lib = MotionLib.load(target)
        opens.append(time.perf_counter() - start)
    ids = lib.sample_motions(4096, 0)
    lib.frames_at(ids, lib.sample_time(ids, rng=0))
    start = time.perf_counter()
    cold = subprocess.run([sys.executable, "-c", "import sys, time; t = time.perf_counter(); "
                           "from motionkit.motionlib import MotionLib; "
                           "lib = MotionLib.load(sys.argv[1]); print(time.perf_counter() - t)",
                           str(target)], check=True, capture_output=True, text=True)
    report.row(f"pack of {entries} motions ({int(lib.frame_counts.sum())} frames, "
               f"{target.stat().st_size / 1e6:.0f} MB), wall",
               f"written in {written:.1f} s; opened in {min(opens) * 1e3:.1f} ms (best of 5), "
               f"{float(cold.stdout) * 1e3:.0f} ms in a new process with the import", "–", None)


def main() -> None:
    files = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    report = Report("dataset", "Dask batches, MotionLib.load of PARC files, packs")
    with tempfile.TemporaryDirectory(prefix="mk-bench-") as tmp:
        root = Path(tmp)
        batch(report, root, files)
        load(report, parc_files(root, 1000))
        packed(report, root, 16_000)
    report.note("MotionLib.load: CPU seconds of this process, best of 3 interleaved rounds; "
                "the batch and pack rows are wall seconds (worker processes, a subprocess).")
    report.finish()


if __name__ == "__main__":
    main()

"""Datasets: batch conversion on 1 and 2 Dask workers, MotionLib.load of 1,000 PARC files,
opening a packed library of 16,000 motions.

Run: ``.venv/bin/python bench/dataset.py [files]``. Everything is generated in a temporary
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
    from motionkit.dataset.batch import Job, client_for, run_batch
    from motionkit.dataset.files import expand

    items = expand([str(source)])
    start = time.perf_counter()
    with client_for(jobs, None) as client:
        ready = time.perf_counter()
        run_batch(Job("convert", out, to_format="traj", force=True), items,
                  scheduler=client.scheduler.address)
        return ready - start, time.perf_counter() - ready


def batch(root: Path, files: int) -> None:
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
    print(f"batch convert of {files} files (100 frames each) to .traj, whole command: -j 1 "
          f"{times[1]:.2f} s ({files / times[1]:.0f} files/s), -j 2 {times[2]:.2f} s "
          f"({files / times[2]:.0f} files/s), speedup {times[1] / times[2]:.2f}x")
    print(f"  on a running local cluster (started in {starts[1]:.1f} / {starts[2]:.1f} s): -j 1 "
          f"{work[1]:.2f} s, -j 2 {work[2]:.2f} s, speedup {work[1] / work[2]:.2f}x")


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


def load(folder: Path) -> None:
    runs = []
    for _ in range(2):
        start = time.perf_counter()
        lib = MotionLib.load(folder)
        runs.append(time.perf_counter() - start)
    print(f"MotionLib.load of {lib.num_motions} PARC files ({int(lib.frame_counts.sum())} frames): "
          f"best {min(runs):.2f} s, runs {', '.join(f'{r:.2f}' for r in runs)} s")
    profile = cProfile.Profile()
    profile.enable()
    MotionLib.load(folder)
    profile.disable()
    stats = pstats.Stats(profile)
    total = max(stats.total_tt, 1e-9)  # type: ignore[attr-defined]
    rows = []
    for (file, _, name), (_, _, own, cumulative, _) in stats.stats.items():  # type: ignore[attr-defined]
        rows.append((own, cumulative, f"{Path(file).name}:{name}"))
    print("  where the time goes (profiled; own time, share):")
    for own, cumulative, where in sorted(rows, reverse=True)[:6]:
        print(f"    {where:50s} {own:6.2f} s  {own / total:5.1%}  (with callees {cumulative:.2f} s)")


def packed(root: Path, entries: int) -> None:
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
    print(f"pack of {entries} motions ({int(lib.frame_counts.sum())} frames, "
          f"{target.stat().st_size / 1e6:.0f} MB): written in {written:.1f} s; MotionLib.load opens it "
          f"in {min(opens) * 1e3:.1f} ms (best of 5), {float(cold.stdout) * 1e3:.0f} ms in a new "
          "process with the import")


def load_average() -> str:
    """The machine's 1-minute load average (the VM is shared: read figures against it)."""
    return f"[load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores]"


def main() -> None:
    files = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    with tempfile.TemporaryDirectory(prefix="mk-bench-") as tmp:
        root = Path(tmp)
        print(load_average())
        batch(root, files)
        print(load_average())
        load(parc_files(root, 1000))
        print(load_average())
        packed(root, 16_000)
        print(load_average())


if __name__ == "__main__":
    main()

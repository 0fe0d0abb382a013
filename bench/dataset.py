"""Datasets: batch conversion on the three engines (local processes, Dask, Ray) with 1 and
2 workers, MotionLib.load of 1,000 PARC files, opening a packed library of 16,000 motions.

Run: ``.venv/bin/python bench/dataset.py [files]``. Figures go to the shared report
(``bench/_report.py``): CPU seconds where the work is in this process (best of 3
interleaved rounds), wall seconds for the batches. Everything is generated in a temporary
folder: ``files`` (default 1,000) small files cut from the corpus (``MOTIONKIT_CORPUS``,
default ``../shared/corpus``: BVH, TUM, ``.seq``) in ten folders, each rewritten in its own
format on every engine installed, with its start-up timed apart, and once in this process
with no engine (the overhead per file is the difference); 1,000 PARC MS files written
with ``mk.write`` from the corpus's PARC files and loaded by ``MotionLib.load`` (with a
profile of where the time goes); and a motion list of 16,000 entries packed with
``motionkit pack`` and opened by ``MotionLib.load``.
"""

from __future__ import annotations

import cProfile
import importlib.util
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
from motionkit.dataset.batch import Job
from motionkit.dataset.files import Item
from motionkit.model import Motion, Timeline, Track
from motionkit.motionlib import MotionLib

REPO = Path(__file__).resolve().parents[1]
CORPUS = Path(os.environ.get("MOTIONKIT_CORPUS", REPO.parent / "shared" / "corpus"))
EXTENSIONS = (".tum", ".traj", ".seq")


def corpus_files(root: Path, count: int) -> Path:
    """``count`` small files cut from the corpus (``MOTIONKIT_CORPUS``) in ten folders: the
    two small BVH files as they are, windows of 100 poses of a TUM ground truth, and
    windows of 60 frames of a Choreonoid walk as ``.seq``."""
    bvh = [(CORPUS / "bvh" / name).read_bytes() for name in ("example.bvh", "sinusoidal.bvh")]
    lines = [line for line in (CORPUS / "evo" / "freiburg1_xyz-groundtruth.txt").read_text()
             .splitlines() if not line.startswith("#")]
    walk = mk.read(CORPUS / "choreonoid" / "SR1WalkPattern1.seq")
    joints = walk.tracks["joints"]
    for index in range(count):
        folder = root / "in" / f"part{index % 10}"
        folder.mkdir(parents=True, exist_ok=True)
        kind, window = index % 4, index // 4
        name = folder / f"m{index:05d}"
        if kind < 2:
            name.with_suffix(".bvh").write_bytes(bvh[kind])
        elif kind == 2:
            first = (window * 7) % (len(lines) - 100)
            name.with_suffix(".tum").write_text("\n".join(lines[first:first + 100]) + "\n")
        else:
            first = (window * 11) % (joints.frames - 60)
            motion = Motion()
            motion.add(Track("joints", joints.kind, joints.data[first:first + 60],
                             Timeline.uniform(joints.timeline.rate or 200.0, 60),
                             labels=joints.labels))
            mk.write(name.with_suffix(".seq"), motion)
    return root / "in"


def on_engine(engine: str, items: list[Item], out: Path, jobs: int) -> tuple[float, float]:
    """Seconds to start ``engine`` with ``jobs`` workers (until one task has come back),
    and to convert ``items`` on it (every output redone), wall."""
    from motionkit.dataset import batch
    from motionkit.dataset.engines import open_engine

    job = Job("convert", out, lossy=True, force=True)
    start = time.perf_counter()
    with open_engine(engine, jobs, None) as running:
        running.submit(batch.work_chunk, job, [])  # the workers are up and answer
        list(running.completed())
        ready = time.perf_counter()
        size = batch.chunk_size(len(items), running.slots)
        for first in range(0, len(items), size):
            running.submit(batch.work_chunk, job, items[first:first + size])
        for _, result in running.completed():
            assert isinstance(result, list) and all(o.status != "failed" for o in result)
        return ready - start, time.perf_counter() - ready


def in_process(items: list[Item], out: Path) -> float:
    """Seconds to convert ``items`` here, one after the other, as a worker does them (each
    file in the sandbox child, within the default limits): no engine at all."""
    from motionkit.dataset import batch

    job = Job("convert", out, lossy=True, force=True)
    start = time.perf_counter()
    batch.work_chunk(job, items)
    return time.perf_counter() - start


def engines(report: Report, root: Path, files: int) -> None:
    from motionkit.dataset.files import expand

    items = expand([str(corpus_files(root, files))])
    names = [name for name in ("local", "dask", "ray") if importlib.util.find_spec(
        {"local": "concurrent", "dask": "distributed", "ray": "ray"}[name])]
    serial = min(in_process(items, root / "serial") for _ in range(2))
    starts: dict[tuple[str, int], float] = {}
    work: dict[tuple[str, int], float] = {}
    for _ in range(3):  # interleaved rounds, the best of each
        for jobs in (1, 2):
            for name in names:
                started, converted = on_engine(name, items, root / f"out-{name}-{jobs}", jobs)
                key = (name, jobs)
                starts[key] = min(starts.get(key, started), started)
                work[key] = min(work.get(key, converted), converted)
    fastest = min(work[name, 2] for name in names)
    rows = []
    for name in names:
        overhead = (work[name, 1] - serial) / files * 1e3
        rows.append([name, f"{starts[name, 1]:.2f} / {starts[name, 2]:.2f}",
                     f"{files / work[name, 1]:.0f}", f"{files / work[name, 2]:.0f}",
                     f"{work[name, 1] / work[name, 2]:.2f}×", f"{overhead:.2f}"])
        if name == "local":
            report.row(f"local engine, -j 2, {files} corpus-derived files",
                       f"{files / work[name, 2]:.0f} files/s ({work[name, 2] / fastest:.2f}× the "
                       "best engine's time)", "within 10 % of the best",
                       work[name, 2] <= 1.10 * fastest)
        else:
            report.row(f"{name} engine: overhead per file at -j 1 (beyond the same work done "
                       "in one process)", f"{overhead:.2f} ms", "<= 5 ms", overhead <= 5.0)
    report.table(["engine", "start-up s (-j 1 / -j 2)", "files/s -j 1", "files/s -j 2",
                  "speedup -j 2", "overhead ms/file (-j 1)"], rows)
    report.note(f"Engines: {files} files cut from the corpus (BVH, TUM, .seq; each rewritten "
                f"in its own format), converted with every output redone; wall seconds, best "
                f"of 3 interleaved rounds; start-up is until a first empty task has come back; "
                f"in one process with no engine: {serial:.2f} s ({files / serial:.0f} files/s).")


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
    files = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    report = Report("dataset", "Batches on three engines, MotionLib.load of PARC files, packs")
    with tempfile.TemporaryDirectory(prefix="mk-bench-") as tmp:
        root = Path(tmp)
        engines(report, root, files)
        load(report, parc_files(root, 1000))
        packed(report, root, 16_000)
    report.note("MotionLib.load: CPU seconds of this process, best of 3 interleaved rounds; "
                "the batch and pack rows are wall seconds (worker processes, a subprocess).")
    report.finish()


if __name__ == "__main__":
    main()

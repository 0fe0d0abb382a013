"""MotionLib: sampling frames, loading real PARC files, and the model files PARC-style
training reads beside them.

Run: ``.venv/bin/python bench/motionlib.py [queries]``. CPU seconds of this process, best of
``ROUNDS`` interleaved rounds. Rows:

* ``frames_at``: batched queries on 32 synthetic humanoid clips (300 frames, 14 joints,
  15 contact columns) vs a per-query Python loop; goal >= 1 M frames/s for 4,096 queries.
* ``MotionLib.load`` of a motion list of 1,000 byte copies of the corpus's three PARC MS
  files (``MOTIONKIT_CORPUS``, default ``../shared/corpus``), one of which holds 142 torch
  tensors in its misc data; goal <= 1 s.
* one read of that torch-laden file against the two plain ones (goal: within 2x of the
  slower plain one).
* a ``.skel`` body whose inertia DART derives from a COLLADA mesh laid out like DartEnv's
  kima meshes (1.35 MB, generated: the kima files are not in the corpus), motionkit vs
  dartpy reading the same file; goal <= 1 s.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np
from _report import Report, best, interleaved, timed

import motionkit as mk
from motionkit.formats.parc import ms_read
from motionkit.model import Motion, Timeline, Track
from motionkit.motionlib import MotionLib

REPO = Path(__file__).resolve().parents[1]
CORPUS = Path(os.environ.get("MOTIONKIT_CORPUS", REPO.parent / "shared" / "corpus"))
ROUNDS = 3
TORCH_FILE = "dec2024_teaser_717_1_modified_opt.pkl"


def clip(rng: np.random.Generator, frames: int = 300) -> Motion:
    timeline = Timeline.uniform(30.0, frames)
    rot = rng.normal(size=(frames, 15, 4))
    rot /= np.linalg.norm(rot, axis=-1, keepdims=True)
    root = np.concatenate([np.cumsum(rng.normal(size=(frames, 3)) * 0.01, axis=0), rot[:, 0]], 1)
    motion = Motion(meta={"loop_mode": "WRAP" if rng.random() < 0.5 else "CLAMP"})
    motion.add(Track("root", "pose", root, timeline))
    motion.add(Track("joint_rotations", "quaternion", rot[:, 1:], timeline))
    motion.add(Track("contacts", "value", rng.random((frames, 15)), timeline))
    return motion


def sampling(report: Report, queries: int) -> None:
    rng = np.random.default_rng(0)
    lib = MotionLib([clip(rng) for _ in range(32)], weights=rng.random(32))
    ids = lib.sample_motions(queries, rng)
    times = lib.sample_time(ids, rng=rng) * 1.5  # some queries past the end (CLAMP/WRAP)
    loop_ids, loop_times = ids[:512], times[:512]

    def batched() -> None:
        for _ in range(20):
            lib.frames_at(ids, times)

    def one_by_one() -> None:
        for i, t in zip(loop_ids, loop_times, strict=True):
            lib.frames_at(i[None], t[None])

    runs = interleaved({"batched": lambda: timed(batched), "loop": lambda: timed(one_by_one)},
                       ROUNDS)
    per_batch = best(runs["batched"]).cpu / 20
    per_query = best(runs["loop"]).cpu / loop_ids.size
    rate = queries / per_batch
    report.row(f"frames_at, {queries} queries batched", f"{per_batch * 1e3:.2f} ms = "
               f"{rate / 1e6:.2f} M frames/s", ">= 1 M frames/s", rate >= 1e6)
    report.row("frames_at, one query per call", f"{per_query * 1e6:.1f} µs/query "
               f"({per_query * queries / per_batch:.0f}× slower)", "–", None)


def corpus_list(folder: Path, count: int = 1000) -> Path:
    sources = sorted((CORPUS / "parc" / "ms").glob("*.pkl"))
    if not sources:
        sys.exit(f"no PARC files in {CORPUS / 'parc' / 'ms'} (set MOTIONKIT_CORPUS)")
    lines = ["motions:"]
    for index in range(count):
        target = folder / f"m{index:04d}.pkl"
        shutil.copyfile(sources[index % len(sources)], target)
        lines.append(f"  - file: {target.name}\n    weight: 1")
    listing = folder / "list.yaml"
    listing.write_text("\n".join(lines) + "\n")
    return listing


def loading(report: Report, folder: Path) -> None:
    listing = corpus_list(folder)
    runs = interleaved({"load": lambda: timed(lambda: MotionLib.load(listing))}, ROUNDS)
    took = best(runs["load"]).cpu
    report.row("MotionLib.load, 1,000 copies of the corpus PARC files (one motion list)",
               f"{took:.2f} s", "<= 1 s", took <= 1.0)
    files = {p.name: p for p in sorted((CORPUS / "parc" / "ms").glob("*.pkl"))}
    readers = {name: (lambda p=path: timed(lambda: [ms_read.read(p) for _ in range(20)]))
               for name, path in files.items()}
    reads = {name: best(r).cpu / 20 for name, r in interleaved(readers, ROUNDS).items()}
    plain = max(t for name, t in reads.items() if name != TORCH_FILE)
    torch_laden = reads[TORCH_FILE]
    report.row("one read of the torch-laden PARC file (142 tensors in misc)",
               f"{torch_laden * 1e3:.2f} ms; plain files "
               + ", ".join(f"{t * 1e3:.2f}" for n, t in reads.items() if n != TORCH_FILE) + " ms",
               "within 2× of the plain ones", torch_laden <= 2 * plain)


def skel_with_mesh(report: Report, folder: Path) -> None:
    sys.path.insert(0, str(REPO / "tests" / "formats" / "dart"))
    sys.path.insert(0, str(REPO / "tests"))
    from test_skel_meshes import _kima_skel  # the generator the tests check against dartpy

    path = _kima_skel(folder)
    candidates = {"motionkit": lambda: timed(lambda: mk.read(path))}
    try:
        import dartpy

        report.peer("dartpy", f"{getattr(dartpy, '__version__', '?')} (SkelParser.readWorld)")
        candidates["dartpy"] = lambda: timed(
            lambda: dartpy.utils.SkelParser.readWorld(str(path)))
    except ImportError:
        report.note("dartpy is not installed: no peer row for the .skel file")
    runs = {name: best(r).cpu for name, r in interleaved(candidates, ROUNDS).items()}
    ours = runs["motionkit"]
    report.row(".skel body with a kima-like 1.35 MB COLLADA mesh (derived inertia)",
               f"motionkit {ours * 1e3:.0f} ms" + (f", dartpy {runs['dartpy'] * 1e3:.0f} ms"
                                                   if "dartpy" in runs else ""),
               "<= 1 s", ours <= 1.0)


def main() -> None:
    queries = int(sys.argv[1]) if len(sys.argv) > 1 else 4096
    report = Report("motionlib", "MotionLib sampling and loading, .skel with meshes")
    warnings.simplefilter("ignore", mk.MotionkitWarning)
    with tempfile.TemporaryDirectory(prefix="mk-bench-") as tmp:
        sampling(report, queries)
        loading(report, Path(tmp))
        skel_with_mesh(report, Path(tmp))
    report.note(f"CPU seconds of this process, best of {ROUNDS} interleaved rounds.")
    report.finish()


if __name__ == "__main__":
    main()

"""Safe PARC read vs plain ``pickle.load`` of the same generated 100,000-frame MS file.

Run: ``.venv/bin/python bench/parc_read.py [frames] [rounds]``; its section goes to
bench/RESULTS.md with ``make bench``. Three readers of one file
(31.7 MB at 100,000 frames), all in this process:

* unsafe: what PARC's ``load_ms_file`` does — ``pickle.load`` of the outer dict, then
  ``pickle.loads`` of each blob (arbitrary code possible; run only on the file this
  script just wrote);
* safe decode: motionkit's restricted decode of the same dicts (file memory-mapped,
  container split in place, each blob scanned and unpickled with the allowlist);
* motionkit.read: the safe decode plus checks and the Motion with its tracks and terrain.

The readers run interleaved, one call each per round in an order that rotates every
round, after one warm-up round, so that they meet the same page cache and allocator
state. Per reader it prints the best and median wall time of one call and the median
minor page faults per call (fresh memory from the kernel, the main cost of a cold
allocator), and the speed ratio unsafe time / safe time of the best and of the median
times (the goal is >= 0.8). Whether a call faults depends on where glibc put and freed
the previous call's large blocks, which varies between runs; with
``MALLOC_MMAP_THRESHOLD_=2000000000 MALLOC_TRIM_THRESHOLD_=2000000000`` freed memory stays
in the heap, no call faults and the figures show the work alone.
"""

from __future__ import annotations

import pickle
import resource
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from _report import Report

from motionkit.formats.parc import ms
from motionkit.formats.shared.pickles import safepickle, writepickle


def make_file(path: Path, frames: int) -> None:
    rng = np.random.default_rng(0)
    q = rng.normal(size=(frames, 15, 4)).astype(np.float32)
    q /= np.linalg.norm(q, axis=-1, keepdims=True)
    motion = {"root_pos": rng.normal(size=(frames, 3)).astype(np.float32),
              "root_rot": np.ascontiguousarray(q[:, 0]), "joint_rot": np.ascontiguousarray(q[:, 1:]),
              "body_contacts": rng.random((frames, 15)).astype(np.float32), "fps": 30,
              "loop_mode": "CLAMP"}
    terrain = {"hf": rng.normal(size=(200, 200)).astype(np.float32),
               "hf_maxmin": rng.normal(size=(200, 200, 2)).astype(np.float32),
               "min_point": np.zeros(2, np.float32), "dx": 0.4000000059604645}
    misc = {"path_nodes": rng.normal(size=(50, 3)).astype(np.float32)}
    path.write_bytes(writepickle.dumps({"motion_data": writepickle.dumps(motion),
                                        "terrain_data": writepickle.dumps(terrain),
                                        "misc_data": writepickle.dumps(misc)}))


def unsafe_load(path: Path) -> dict[str, Any]:
    """What PARC's file_io.load_ms_file does (plain pickle, arbitrary code possible)."""
    with open(path, "rb") as handle:
        outer = pickle.load(handle)
    return {key: pickle.loads(blob) for key, blob in outer.items() if blob is not None}


def safe_load(path: Path) -> dict[str, Any]:
    """The same decoding through motionkit's restricted unpickler, as ``ms.read`` does it."""
    allowed = {"misc_data": safepickle.MISC_GLOBALS}
    data = path.read_bytes()
    outer = safepickle.split_container(data, path, ms.MS_KEYS)
    if outer is None:
        raise SystemExit("the generated file is not a plain MS container")
    return {key: safepickle.loads(blob, path, key,
                                  allowed=allowed.get(key, safepickle.NUMPY_GLOBALS))
            for key, blob in outer.items() if blob is not None}


def timed(action: Callable[[], Any]) -> tuple[float, int]:
    """Wall time (s) and minor page faults of one call; its result is freed first."""
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    start = time.perf_counter()
    result = action()
    elapsed = time.perf_counter() - start
    del result
    return elapsed, resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults


def interleaved(readers: dict[str, Callable[[], Any]],
                rounds: int) -> dict[str, list[tuple[float, int]]]:
    """One warm-up round, then ``rounds`` rounds of one call per reader, order rotating."""
    names = list(readers)
    results: dict[str, list[tuple[float, int]]] = {name: [] for name in names}
    for round_index in range(rounds + 1):
        shift = round_index % len(names)
        for name in names[shift:] + names[:shift]:
            sample = timed(readers[name])
            if round_index:
                results[name].append(sample)
    return results


def main() -> None:
    frames = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 15
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "big.pkl"
        make_file(path, frames)
        size = path.stat().st_size / 1e6
        results = interleaved({"plain pickle.load (unsafe)": lambda: unsafe_load(path),
                               "safe decode (same dicts)": lambda: safe_load(path),
                               "motionkit.read -> Motion": lambda: ms.read(path)}, rounds)
        write = min(timed(lambda: ms.encode(ms.read(path)))[0] for _ in range(3))
    report = Report("parc_read", "safe PARC read vs plain pickle.load")
    report.peer("plain pickle", f"CPython {sys.version.split()[0]} pickle.load + pickle.loads "
                "of each blob (PARC's load_ms_file; unsafe)")
    rows, unsafe = [], results["plain pickle.load (unsafe)"]
    unsafe_best = min(t for t, _ in unsafe)
    unsafe_median = statistics.median(t for t, _ in unsafe)
    for name, samples in results.items():
        times = [t for t, _ in samples]
        best, median = min(times), statistics.median(times)
        faults = statistics.median(f for _, f in samples)
        rows.append([name, f"{best * 1e3:.1f} ms", f"{median * 1e3:.1f} ms", f"{faults:.0f}",
                     f"{unsafe_best / best:.2f}× / {unsafe_median / median:.2f}×"])
        if name != "plain pickle.load (unsafe)":
            report.row(f"{name}, {frames:,} frames ({size:.1f} MB), speed vs plain pickle "
                       "(best / median wall)", rows[-1][-1], "≥ 0.8×",
                       unsafe_median / median >= 0.8)
    rows.append(["read + byte-exact encode", f"{write * 1e3:.1f} ms (best of 3)", "", "", ""])
    report.table(["reader", "best", "median", "page faults", "plain pickle / this"], rows)
    report.note(f"{rounds} interleaved rounds after a warm-up round, order rotating; wall "
                "time (the readers are single-threaded and run in this process).")
    report.finish()


if __name__ == "__main__":
    main()

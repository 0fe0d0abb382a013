"""Trajectory read speed and peak memory: motionkit vs trajectopy[fast], evo and bare polars.

A seeded N-row trajectory is written once as a trajectopy ``.traj`` file and as its TUM
twin (same numbers, Unix stamps with 9 decimals). Every reader runs in its own fresh
subprocess (so its peak RSS is its own), in turns for ``--rounds`` rounds; inside, it
imports, reads once cold, then ``--repeat`` warm reads, and reports the warm read with
the least CPU time (CPU of every thread, and wall). ``polars-bare`` is polars' own
``read_csv`` of the same file with its eight Float64 columns given (no model, no exact
nanosecond stamps, no checks): the floor a polars-based reader can reach.
``motionkit-numpy`` is motionkit without polars (the fallback). evo reads once a round.

    python bench/traj_read.py [--rows 1000000] [--repeat 2] [--rounds 3] [--workdir DIR]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _memory import peak_mb
from _report import Report, Timing, best, interleaved, span

READERS = {
    "motionkit-traj": ("traj", "import motionkit as mk", "mk.read(PATH)"),
    "polars-bare": ("traj", "import polars as pl\nS = {f'c{i}': pl.Float64 for i in range(8)}",
                    "pl.read_csv(PATH, has_header=False, comment_prefix='#', schema=S)"),
    "trajectopy[fast]": ("traj", "import trajectopy", "trajectopy.Trajectory.from_file(PATH)"),
    "motionkit-numpy": ("traj", "import motionkit as mk\nimport motionkit._accel as accel\n"
                        "accel.polars_for = lambda size: None", "mk.read(PATH)"),
    "motionkit-tum": ("tum", "import motionkit as mk", "mk.read(PATH)"),
    "evo-tum": ("tum", "from evo.tools import file_interface",
                "file_interface.read_tum_trajectory_file(PATH)"),
}


def generate(folder: Path, rows: int) -> dict[str, Path]:
    """The two input files (made once per row count)."""
    import numpy as np

    paths = {"traj": folder / f"bench_{rows}.traj", "tum": folder / f"bench_{rows}.tum"}
    if all(p.exists() for p in paths.values()):
        return paths
    rng = np.random.default_rng(20261123)
    times = 1.7e9 + np.arange(rows) * 0.01
    quat = rng.normal(size=(rows, 4))
    quat /= np.linalg.norm(quat, axis=1, keepdims=True)
    table = np.column_stack([times, rng.normal(size=(rows, 3)) * 100.0, quat])
    with open(paths["traj"], "w") as handle:
        handle.write("#epsg 0\n#name bench\n#fields t,px,py,pz,qx,qy,qz,qw\n")
        np.savetxt(handle, table, fmt="%.9f", delimiter=",")
    with open(paths["tum"], "w") as handle:
        np.savetxt(handle, table, fmt="%.9f", delimiter=" ")
    return paths


def worker(name: str, path: str, repeat: int) -> None:
    """Inside the subprocess: import, read cold once, then warm; print JSON."""
    import warnings

    warnings.simplefilter("ignore")
    _, setup, call = READERS[name]
    scope: dict[str, object] = {"PATH": path}
    exec(setup, scope)  # the fixed lines above, never file content
    runs = []
    for _ in range(1 + repeat):
        cpu, wall = time.process_time(), time.perf_counter()
        exec(call, scope)
        runs.append((time.process_time() - cpu, time.perf_counter() - wall))
    warm = min(runs[1:] or runs)
    print(json.dumps({"cpu": warm[0], "wall": warm[1], "first_cpu": runs[0][0],
                      "peak_mb": peak_mb()}))


def run(name: str, path: Path, repeat: int) -> Timing:
    done = subprocess.run([sys.executable, __file__, "--worker", name, str(path), str(repeat)],
                          capture_output=True, text=True, check=True)
    found = json.loads(done.stdout.strip().splitlines()[-1])
    return Timing(found["cpu"], found["wall"], found["peak_mb"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=2, help="warm reads per process")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--workdir", type=Path)
    parser.add_argument("--worker", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker[0], args.worker[1], int(args.worker[2]))
        return
    folder = args.workdir or Path(tempfile.gettempdir()) / "motionkit-bench"
    folder.mkdir(parents=True, exist_ok=True)
    paths = generate(folder, args.rows)
    report = Report("traj_read", f"reading a {args.rows:,}-row trajectory "
                    f"({paths['traj'].stat().st_size / 1e6:.0f} MB)")
    import polars
    import trajectopy

    report.peer("trajectopy[fast]", f"trajectopy {trajectopy.__version__} with pyarrow "
                "(its [fast] extra), Trajectory.from_file")
    report.peer("polars-bare", f"polars {polars.__version__} read_csv(path, schema=8 x Float64)")
    report.peer("evo-tum", "evo file_interface.read_tum_trajectory_file (one read a round)")
    candidates = {name: (lambda name=name: run(name, paths[READERS[name][0]],
                                               1 if name == "evo-tum" else args.repeat))
                  for name in READERS}
    runs = interleaved(candidates, args.rounds)
    rows = []
    for name, found in runs.items():
        top = best(found)
        rows.append([name, f"{top.cpu:.3f}", span([r.wall for r in found], 3),
                     f"{args.rows / top.cpu / 1e6:.2f}", f"{max(r.peak_mb for r in found):.0f}"])
    report.table(["reader", "CPU s (best)", "wall s (all rounds)", "M rows per CPU s",
                  "peak MB"], rows)
    goals(report, runs)
    report.finish()


def goals(report: Report, runs: dict[str, list[Timing]]) -> None:
    """The issue's goals for the .traj read, each over all rounds."""
    ours, bare, peer = runs["motionkit-traj"], runs["polars-bare"], runs["trajectopy[fast]"]
    cpu = [o.cpu / b.cpu for o, b in zip(ours, bare, strict=True)]
    report.row(".traj CPU vs bare polars read_csv", span(cpu, unit="×"), "≤ 1.2×",
               max(cpu) <= 1.2)
    wall = [p.wall / o.wall for o, p in zip(ours, peer, strict=True)]
    report.row(".traj wall speed vs trajectopy[fast] (2 cores)", span(wall, unit="×"), "≥ 2×",
               min(wall) >= 2)
    cpu_speed = [p.cpu / o.cpu for o, p in zip(ours, peer, strict=True)]
    report.row(".traj CPU speed vs trajectopy[fast]", span(cpu_speed, unit="×"), "–", None)
    memory = max(o.peak_mb for o in ours) / min(p.peak_mb for p in peer)
    report.row(".traj peak memory vs trajectopy[fast]", f"{memory:.2f}×", "≤ 0.4×",
               memory <= 0.4)
    tum = [e.cpu / o.cpu for o, e in zip(runs["motionkit-tum"], runs["evo-tum"], strict=True)]
    report.row("TUM CPU speed vs evo", span(tum, 1, "×"), "–", None)


if __name__ == "__main__":
    main()

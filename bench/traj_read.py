"""Read speed and peak memory: motionkit vs trajectopy (.traj) and evo (TUM).

Generates a seeded N-row trajectory once as a trajectopy ``.traj`` file and as its TUM
twin (same numbers), then reads each with every available reader, each reader in a fresh
subprocess (so peak RSS is its own), and prints rows/s, peak memory and the ratios. The
readers take turns for ``--rounds`` rounds (evo, slow, runs once), so that load from other
processes on a shared machine falls on all of them alike. Rows/s come from the warm reads
(a process's second read on; best and median over all rounds); a process's first read,
which pays for lazy imports and cold memory, is reported apart, and added to the import
time for the "import + first read" ratio. Readers run once (evo) count that read as warm.
``motionkit-numpy`` is motionkit without the optional polars parser (NumPy only).

    python bench/traj_read.py [--rows 1000000] [--repeat 3] [--rounds 5] [--workdir DIR]
                              [--no-evo]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _memory import peak_mb

READERS = {
    "motionkit-traj": ("traj", "import motionkit as mk", "mk.read(PATH)"),
    "motionkit-numpy": ("traj", "import motionkit as mk\nimport motionkit._accel as accel\n"
                        "accel.polars_for = lambda size: None", "mk.read(PATH)"),
    "trajectopy": ("traj", "import trajectopy",
                   "trajectopy.Trajectory.from_file(PATH)"),
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
    """Run inside the subprocess: import, read ``repeat`` times, print JSON."""
    import warnings

    warnings.simplefilter("ignore")
    _, setup, call = READERS[name]
    scope: dict[str, object] = {"PATH": path}
    start = time.perf_counter()
    exec(setup, scope)  # the fixed import lines above, never file content
    imported = time.perf_counter() - start
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        exec(call, scope)
        times.append(time.perf_counter() - start)
    print(json.dumps({"import": imported, "times": times, "peak_mb": peak_mb()}))


def run(name: str, path: Path, repeat: int) -> dict[str, Any] | None:
    result = subprocess.run([sys.executable, __file__, "--worker", name, str(path), str(repeat)],
                            capture_output=True, text=True, check=False)
    if result.returncode != 0:
        print(f"  {name}: skipped ({result.stderr.strip().splitlines()[-1:]})")
        return None
    return dict(json.loads(result.stdout.strip().splitlines()[-1]))


def summary(runs: list[dict[str, Any]]) -> dict[str, float]:
    """Best and median over the warm reads of all rounds, the highest peak, the fastest
    import, and the median first read of a fresh process."""
    times = [t for found in runs for t in found["times"][1:] or found["times"]]
    return {"best": min(times), "median": statistics.median(times),
            "peak_mb": max(found["peak_mb"] for found in runs),
            "import": min(found["import"] for found in runs),
            "first": statistics.median(found["times"][0] for found in runs)}


def import_time() -> float:
    """Fresh-interpreter ``import motionkit`` time (best of 5)."""
    code = "import time; s=time.perf_counter(); import motionkit; print(time.perf_counter()-s)"
    return min(float(subprocess.run([sys.executable, "-c", code], capture_output=True,
                                    text=True, check=True).stdout) for _ in range(5))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3, help="reads per process")
    parser.add_argument("--rounds", type=int, default=5, help="processes per reader, in turns")
    parser.add_argument("--workdir", type=Path)
    parser.add_argument("--no-evo", action="store_true", help="skip evo (slow at 1 M rows)")
    parser.add_argument("--worker", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker[0], args.worker[1], int(args.worker[2]))
        return
    folder = args.workdir or Path(tempfile.gettempdir()) / "motionkit-bench"
    folder.mkdir(parents=True, exist_ok=True)
    paths = generate(folder, args.rows)
    print(f"rows: {args.rows:,}  files: {paths['traj']} ({paths['traj'].stat().st_size / 1e6:.1f}"
          f" MB), {paths['tum'].name}")
    print(f"import motionkit: {import_time():.3f} s")
    names = [name for name in READERS if not (name == "evo-tum" and args.no_evo)]
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in names}
    for round_ in range(args.rounds):
        for name in names:
            if name == "evo-tum" and round_:
                continue
            found = run(name, paths[READERS[name][0]], 1 if name == "evo-tum" else args.repeat)
            if found is not None:
                runs[name].append(found)
    results = {name: summary(found) for name, found in runs.items() if found}
    for name, result in results.items():
        print(f"  {name:16s} best {result['best']:7.3f} s  median {result['median']:7.3f} s  "
              f"{args.rows / result['best'] / 1e6:6.2f} M rows/s  peak {result['peak_mb']:6.0f} MB"
              f"  import {result['import']:.2f} s  first read {result['first']:.2f} s")
    for ours, peer in (("motionkit-traj", "trajectopy"), ("motionkit-numpy", "trajectopy"),
                       ("motionkit-tum", "evo-tum")):
        if ours in results and peer in results:
            speed = results[peer]["best"] / results[ours]["best"]
            typical = results[peer]["median"] / results[ours]["median"]
            memory = results[ours]["peak_mb"] / results[peer]["peak_mb"]
            cold = ((results[peer]["import"] + results[peer]["first"])
                    / (results[ours]["import"] + results[ours]["first"]))
            print(f"{ours} vs {peer}: {speed:.2f}x rows/s (medians {typical:.2f}x), "
                  f"{memory:.2f}x peak memory; import + first read {cold:.2f}x")


if __name__ == "__main__":
    main()

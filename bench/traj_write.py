"""Write speed: motionkit vs trajectopy (.traj) and evo (TUM), same trajectory, one process.

Reads the generated N-row trajectory of ``traj_read.py`` once (making it if needed), then
writes it with every available writer in turns for ``--rounds`` rounds and prints rows/s
and the ratios (best of all rounds). motionkit writes ``.traj`` at full precision (shortest
round-trip text, Python's formatting) and with ``precision=9`` (fixed-point, written by
polars for big tables), and TUM with 9 decimals.

    python bench/traj_write.py [--rows 1000000] [--rounds 3] [--workdir DIR]
"""

from __future__ import annotations

import argparse
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path

from traj_read import generate


def writers(source: Path, out: Path) -> dict[str, Callable[[], None]]:
    """Each writer as a call that writes the whole trajectory once."""
    import motionkit as mk

    motion = mk.read(source)
    found: dict[str, Callable[[], None]] = {
        "motionkit .traj (full)": lambda: mk.write(out / "mk.traj", motion),
        "motionkit .traj (9 decimals)": lambda: mk.write(out / "mk9.traj", motion, precision=9),
        "motionkit TUM": lambda: mk.write(out / "mk.tum", motion),
    }
    try:
        import trajectopy

        peer = trajectopy.Trajectory.from_file(str(source))
        found["trajectopy .traj"] = lambda: peer.to_file(str(out / "tp.traj"))
    except ImportError:
        print("  trajectopy: not installed")
    try:
        from evo.tools import file_interface

        tum = file_interface.read_tum_trajectory_file(str(source.with_suffix(".tum")))
        found["evo TUM"] = lambda: file_interface.write_tum_trajectory_file(str(out / "evo.tum"),
                                                                           tum)
    except ImportError:
        print("  evo: not installed")
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--workdir", type=Path)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    folder = args.workdir or Path(tempfile.gettempdir()) / "motionkit-bench"
    folder.mkdir(parents=True, exist_ok=True)
    source = generate(folder, args.rows)["traj"]
    out = folder / "written"
    out.mkdir(exist_ok=True)
    calls = writers(source, out)
    best = {name: float("inf") for name in calls}
    for _ in range(args.rounds):
        for name, call in calls.items():
            start = time.perf_counter()
            call()
            best[name] = min(best[name], time.perf_counter() - start)
    print(f"rows: {args.rows:,}")
    for name, seconds in best.items():
        print(f"  {name:30s} {seconds:7.3f} s  {args.rows / seconds / 1e6:6.2f} M rows/s")
    for ours, peer in (("motionkit .traj (full)", "trajectopy .traj"),
                       ("motionkit .traj (9 decimals)", "trajectopy .traj"),
                       ("motionkit TUM", "evo TUM")):
        if ours in best and peer in best:
            print(f"{ours} vs {peer}: {best[peer] / best[ours]:.2f}x rows/s")


if __name__ == "__main__":
    main()

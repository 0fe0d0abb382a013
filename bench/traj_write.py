"""Write speed: motionkit vs trajectopy (.traj) and evo (TUM), same trajectory, one process.

Reads the generated N-row trajectory of ``traj_read.py`` once (making it if needed), then
writes it with every writer in turns for ``--rounds`` rounds (CPU and wall time of each
write; the best by CPU). motionkit writes ``.traj`` at full precision (shortest round-trip
text) and with ``precision=9`` (fixed-point, written by polars for big tables), and TUM.
Figures only: the issue sets no goal for writing.

    python bench/traj_write.py [--rows 1000000] [--rounds 3] [--workdir DIR]
"""

from __future__ import annotations

import argparse
import tempfile
import warnings
from collections.abc import Callable
from pathlib import Path

from _report import Report, Timing, best, interleaved, span, timed
from traj_read import generate


def writers(source: Path, out: Path, report: Report) -> dict[str, Callable[[], Timing]]:
    """Each writer as a timed call that writes the whole trajectory once."""
    import motionkit as mk

    motion = mk.read(source)
    tum_motion = mk.read(source.with_suffix(".tum"))  # what evo writes from, too
    found: dict[str, Callable[[], object]] = {
        "motionkit .traj (full)": lambda: mk.write(out / "mk.traj", motion),
        "motionkit .traj (9 decimals)": lambda: mk.write(out / "mk9.traj", motion, precision=9),
        "motionkit TUM": lambda: mk.write(out / "mk.tum", tum_motion),
    }
    import trajectopy
    from evo.tools import file_interface

    peer = trajectopy.Trajectory.from_file(str(source))
    found["trajectopy .traj"] = lambda: peer.to_file(str(out / "tp.traj"))
    tum = file_interface.read_tum_trajectory_file(str(source.with_suffix(".tum")))
    found["evo TUM"] = lambda: file_interface.write_tum_trajectory_file(str(out / "evo.tum"),
                                                                       tum)
    report.peer("trajectopy", f"trajectopy {trajectopy.__version__} Trajectory.to_file")
    report.peer("evo", "evo file_interface.write_tum_trajectory_file")
    return {name: (lambda call=call: timed(call)) for name, call in found.items()}


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
    report = Report("traj_write", f"writing a {args.rows:,}-row trajectory")
    runs = interleaved(writers(source, out, report), args.rounds)
    report.table(["writer", "CPU s (best)", "wall s (all rounds)", "M rows per CPU s"],
                 [[name, f"{best(found).cpu:.3f}", span([r.wall for r in found], 3),
                   f"{args.rows / best(found).cpu / 1e6:.2f}"] for name, found in runs.items()])
    for ours, peer in (("motionkit .traj (full)", "trajectopy .traj"),
                       ("motionkit .traj (9 decimals)", "trajectopy .traj"),
                       ("motionkit TUM", "evo TUM")):
        ratio = [p.cpu / o.cpu for o, p in zip(runs[ours], runs[peer], strict=True)]
        report.row(f"{ours} CPU speed vs {peer}", span(ratio, unit="×"), "–", None)
    report.finish()


if __name__ == "__main__":
    main()

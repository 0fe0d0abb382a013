"""Viewer and plot speed: the SR1 walk's offline viewer page, and a trajectory plot of 1M poses.

1. ``motionkit view SR1WalkPattern1.seq --model SR1.body --html walk.html`` (6,701 frames,
   30 links, FK included) as a whole process, ``--repeat`` runs: CPU (goal ≤ 3 s), wall, peak
   memory (goal ≤ 300 MB) and the page's size (goal ≤ 5 MB); then the same work in this process,
   split into building the scene (read + FK + shapes) and writing the page.
2. A TUM file of ``--rows`` synthetic poses (a 100 Hz loop) plotted by ``motionkit plot``
   (the 4-panel trajectory figure to PNG; goal ≤ 5 s) and by ``evo_traj tum FILE --save_plot``
   (evo's own plots, Agg backend) on the same file when evo is installed; whole commands.

    python bench/view.py [--rows 1000000] [--repeat 3] [--no-evo]
"""

from __future__ import annotations

import argparse
import itertools
import os
import shutil
import sys
import tempfile
from importlib import metadata
from pathlib import Path

import numpy as np
from _report import Report, Timing, best, interleaved, span, timed, timed_process

REPO = Path(__file__).resolve().parents[1]
CORPUS = Path(os.environ.get("MOTIONKIT_CORPUS", REPO.parent / "shared" / "corpus"))
MODEL, WALK = CORPUS / "choreonoid" / "SR1.body", CORPUS / "choreonoid" / "SR1WalkPattern1.seq"


def viewer_page(report: Report, repeat: int, folder: Path) -> None:
    """The SR1 walk's page: the whole command as a process, then its two parts in this one."""
    if not (MODEL.exists() and WALK.exists()):
        report.note(f"SR1 walk not found under {CORPUS}: the viewer page was not measured.")
        return
    page = folder / "walk.html"
    command = [sys.executable, "-m", "motionkit", "view", str(WALK), "--model", str(MODEL),
               "--html", str(page)]
    runs = [timed_process(command) for _ in range(repeat)]
    work = f"`motionkit view <SR1 walk> --html` (6,701 frames × 30 links), {repeat} runs"
    cpu = best(runs).cpu
    report.row(work + ", CPU", span([r.cpu for r in runs], unit=" s"), "≤ 3 s", cpu <= 3.0)
    report.row(work + ", wall", span([r.wall for r in runs], unit=" s"), "–", None)
    peak = max(r.peak_mb for r in runs)
    report.row(work + ", peak memory", f"{peak:.0f} MB", "≤ 300 MB", peak <= 300)
    size = page.stat().st_size
    report.row("the page's size", f"{size / 1e6:.2f} MB", "≤ 5 MB", size <= 5_000_000)

    from motionkit.view import build_scene, write_html

    scenes = [build_scene(WALK, model=MODEL)]
    parts = interleaved({
        "build the scene (read, FK, shapes)": lambda: timed(
            lambda: scenes.append(build_scene(WALK, model=MODEL))),
        "write the page (pack, zlib, base64)": lambda: timed(
            lambda: write_html(scenes[-1], folder / "again.html")),
    }, rounds=repeat)
    report.table(["in this process", "CPU", "wall"],
                 [[name, span([r.cpu for r in got], unit=" s"), span([r.wall for r in got], unit=" s")]
                  for name, got in parts.items()])


def tum_file(rows: int, path: Path) -> None:
    """A 100 Hz loop with a turning heading, as a TUM file."""
    import motionkit as mk
    from motionkit.spatial.quaternion import from_rpy

    t = np.arange(rows) * 0.01
    xyz = np.column_stack([50 * np.sin(0.01 * t), 30 * np.sin(0.023 * t), 0.001 * t])
    yaw = np.arctan2(np.gradient(xyz[:, 1]), np.gradient(xyz[:, 0]))
    quat = from_rpy(np.column_stack([0.02 * np.sin(t), 0.02 * np.cos(0.7 * t), yaw]))
    track = mk.Track("root", "pose", np.column_stack([xyz, quat]), mk.Timeline.stamped(1.7e9 + t))
    mk.write(path, mk.Motion({"root": track}))


def _cpu_wall(runs: list[Timing]) -> str:
    return f"{span([r.cpu for r in runs], unit=' s')} ({span([r.wall for r in runs], unit=' s')})"


def plots(report: Report, rows: int, repeat: int, folder: Path, evo: bool) -> None:
    """``motionkit plot`` of a TUM file, and evo's plots of the same file."""
    data = folder / "loop.tum"
    tum_file(rows, data)
    env = {"MPLBACKEND": "Agg"}
    candidates = {"motionkit": lambda: timed_process(
        [sys.executable, "-m", "motionkit", "plot", str(data), "-o", str(folder / "mk.png")], env)}
    found = shutil.which("evo_traj", path=str(Path(sys.executable).parent)) or shutil.which("evo_traj")
    if found and evo:
        report.peer("evo", f"evo {metadata.version('evo')}: `evo_traj tum FILE --save_plot evo.png`, "
                           "Agg backend")
        runs_so_far = itertools.count()  # evo asks before overwriting its plots: a new name each run
        candidates["evo"] = lambda: timed_process(
            [found, "tum", str(data), "--save_plot", str(folder / f"evo{next(runs_so_far)}.png")], env)
    elif evo:
        report.note("evo_traj not found: install motionkit[bench] to compare.")
    runs = interleaved(candidates, rounds=repeat)
    ours = best(runs["motionkit"])
    report.row(f"`motionkit plot`, {rows:,} poses, 4 panels to PNG, CPU (wall)",
               _cpu_wall(runs["motionkit"]), "≤ 5 s", ours.cpu <= 5.0)
    if "evo" in runs:
        theirs = best(runs["evo"])
        report.row("`evo_traj tum --save_plot`, same file, CPU (wall)",
                   f"{_cpu_wall(runs['evo'])} → motionkit {theirs.cpu / ours.cpu:.1f}× less CPU", "–", None)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-evo", action="store_true")
    args = parser.parse_args()
    report = Report("view", "the viewer's offline page and a 1M-pose trajectory plot")
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        viewer_page(report, max(3, args.repeat), folder)
        plots(report, args.rows, args.repeat, folder, not args.no_evo)
    report.note("The page is our own WebGL2 player on typed arrays (link poses once per frame, "
                "zlib, base64); through viser's recording it was 8.84 MB in 14.5–15.5 s CPU, "
                "578 MB peak (NOTES.md, Plots and the viewer).")
    report.finish()


if __name__ == "__main__":
    main()

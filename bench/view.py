"""Viewer and plot speed: the SR1 walk's viewer page, and a trajectory plot of 1M poses.

1. Time and size to build the self-contained HTML page of SR1 + SR1WalkPattern1 (6,701 frames,
   30 links, FK included) — goal ≤ 3 s, ≤ 5 MB. Best of ``--repeat`` in this process.
2. A TUM file of ``--rows`` synthetic poses (a 100 Hz loop) plotted by ``motionkit plot``
   (the 4-panel trajectory figure: top view, x/y/z, roll/pitch/yaw, written as PNG) — goal
   ≤ 5 s — and by ``evo_traj tum FILE --save_plot`` (evo's own plots, Agg backend) on the same
   file when evo is installed. Both are whole commands in their own process, reading included.

    python bench/view.py [--rows 1000000] [--repeat 3] [--no-evo]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
CORPUS = Path(os.environ.get("MOTIONKIT_CORPUS", REPO.parent / "shared" / "corpus"))


def viewer_page(repeat: int, folder: Path) -> tuple[float, int] | None:
    """Best time (s) and size (bytes) of the SR1 walk's viewer page, or None without the corpus."""
    from motionkit.view import build_scene, write_html

    model = CORPUS / "choreonoid" / "SR1.body"
    motion = CORPUS / "choreonoid" / "SR1WalkPattern1.seq"
    if not (model.exists() and motion.exists()):
        print(f"SR1 walk not found under {CORPUS}: skipping the viewer page")
        return None
    best = float("inf")
    page = folder / "walk.html"
    for _ in range(repeat):
        start = time.perf_counter()
        write_html(build_scene(motion, model=model), page)
        best = min(best, time.perf_counter() - start)
    return best, page.stat().st_size


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


def timed(command: list[str], cwd: Path) -> float:
    """Wall time of a whole command (its own process)."""
    env = dict(os.environ, MPLBACKEND="Agg")
    start = time.perf_counter()
    subprocess.run(command, cwd=cwd, env=env, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, timeout=900)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-evo", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        page = viewer_page(args.repeat, folder)
        if page is not None:
            print(f"viewer page, SR1 walk (6701 frames x 30 links): {page[0]:.2f} s, "
                  f"{page[1] / 1e6:.2f} MB (goal <= 3 s, <= 5 MB)")
        data = folder / "loop.tum"
        tum_file(args.rows, data)
        motionkit = [sys.executable, "-m", "motionkit", "plot", str(data), "-o", "mk.png"]
        ours = min(timed(motionkit, folder) for _ in range(args.repeat))
        print(f"motionkit plot, {args.rows:,} poses, 4 panels to PNG: {ours:.2f} s "
              f"(whole command, best of {args.repeat}; goal <= 5 s)")
        evo = shutil.which("evo_traj", path=str(Path(sys.executable).parent)) or shutil.which("evo_traj")
        if evo and not args.no_evo:
            theirs = timed([evo, "tum", str(data), "--save_plot", "evo.png"], folder)
            print(f"evo_traj tum --save_plot, same file: {theirs:.2f} s (one run) -> "
                  f"motionkit {theirs / ours:.1f}x faster")
        elif not args.no_evo:
            print("evo_traj not found: install motionkit[bench] to compare")


if __name__ == "__main__":
    main()

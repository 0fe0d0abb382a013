"""LeRobot v3.0 dataset read speed: motionkit vs pyarrow.parquet.read_table on the same files.

A seeded dataset (``--episodes`` episodes of ``--frames`` frames, a 29-joint state and
action in float32, a reward and a done flag) is written once with motionkit's writer.
Every reader runs in its own fresh subprocess, in turns for ``--rounds`` rounds; inside,
it imports, reads once cold, then ``--repeat`` warm reads, and reports the warm read with
the least CPU time. ``pyarrow-read_table`` reads the same Parquet files (every data file,
the episodes table and the tasks table) and ``info.json``, and stops there: no checks, no
NumPy arrays, no motions — the floor a Parquet-based reader can reach.
``motionkit`` is ``read_episodes``: every check of the reader, one Motion per episode.

    python bench/lerobot.py [--episodes 200] [--frames 2000] [--repeat 2] [--rounds 3]
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
    "motionkit": ("from motionkit.formats.lerobot import dataset",
                  "dataset.read_episodes(PATH)"),
    "pyarrow-read_table": (
        "import json, pathlib\nimport pyarrow.parquet as pq",
        "root = pathlib.Path(PATH)\njson.loads((root / 'meta/info.json').read_text())\n"
        "[pq.read_table(f) for f in sorted(root.glob('meta/episodes/*/*.parquet'))]\n"
        "pq.read_table(root / 'meta/tasks.parquet')\n"
        "[pq.read_table(f) for f in sorted(root.glob('data/*/*.parquet'))]"),
}


def generate(folder: Path, episodes: int, frames: int) -> Path:
    """The dataset (made once per size)."""
    target = folder / f"lerobot_{episodes}x{frames}"
    if (target / "meta/info.json").is_file():
        return target
    import numpy as np

    from motionkit.formats.lerobot import dataset
    from motionkit.model import Motion, Timeline, Track

    rng = np.random.default_rng(20261201)
    names = [f"joint_{i}" for i in range(29)]
    motions = []
    for number in range(episodes):
        timeline = Timeline.uniform(50.0, frames)
        state = rng.normal(size=(frames, 29)).astype(np.float32)
        done = np.zeros(frames, dtype=bool)
        done[-1] = True
        motions.append(Motion({
            "joints": Track("joints", "value", state, timeline, names),
            "action": Track("action", "value", np.roll(state, -1, axis=0), timeline, names),
            "next.reward": Track("next.reward", "value", done.astype(np.float32), timeline),
            "next.done": Track("next.done", "value", done, timeline),
        }, meta={"task": f"task {number % 5}"}))
    dataset.write_episodes(target, motions)
    return target


def worker(name: str, path: str, repeat: int) -> None:
    """Inside the subprocess: import, read cold once, then warm; print JSON."""
    import warnings

    warnings.simplefilter("ignore")
    setup, call = READERS[name]
    scope: dict[str, object] = {"PATH": path}
    exec(setup, scope)  # the fixed lines above, never file content
    runs = []
    for _ in range(1 + repeat):
        cpu, wall = time.process_time(), time.perf_counter()
        exec(call, scope)
        runs.append((time.process_time() - cpu, time.perf_counter() - wall))
    warm = min(runs[1:] or runs)
    print(json.dumps({"cpu": warm[0], "wall": warm[1], "peak_mb": peak_mb()}))


def run(name: str, path: Path, repeat: int) -> Timing:
    done = subprocess.run([sys.executable, __file__, "--worker", name, str(path), str(repeat)],
                          capture_output=True, text=True, check=True)
    found = json.loads(done.stdout.strip().splitlines()[-1])
    return Timing(found["cpu"], found["wall"], found["peak_mb"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=200)
    parser.add_argument("--frames", type=int, default=2000)
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
    path = generate(folder, args.episodes, args.frames)
    size = sum(f.stat().st_size for f in path.rglob("*") if f.is_file())
    frames = args.episodes * args.frames
    report = Report("lerobot", f"reading a LeRobot v3.0 dataset ({args.episodes} episodes, "
                    f"{frames:,} frames, {size / 1e6:.0f} MB on disk)")
    import pyarrow

    report.peer("pyarrow-read_table", f"pyarrow {pyarrow.__version__} "
                "pyarrow.parquet.read_table of every Parquet file, json.loads of info.json")
    candidates = {name: (lambda name=name: run(name, path, args.repeat)) for name in READERS}
    runs = interleaved(candidates, args.rounds)
    rows = []
    for name, found in runs.items():
        top = best(found)
        rows.append([name, f"{top.cpu:.3f}", span([r.wall for r in found], 3),
                     f"{frames / top.cpu / 1e6:.2f}", f"{max(r.peak_mb for r in found):.0f}"])
    report.table(["reader", "CPU s (best)", "wall s (all rounds)", "M frames per CPU s",
                  "peak MB"], rows)
    ours, floor = runs["motionkit"], runs["pyarrow-read_table"]
    cpu = [o.cpu / f.cpu for o, f in zip(ours, floor, strict=True)]
    report.row("dataset read CPU vs pyarrow read_table", span(cpu, unit="×"), "≤ 1.5×",
               max(cpu) <= 1.5)
    wall = [o.wall / f.wall for o, f in zip(ours, floor, strict=True)]
    report.row("dataset read wall vs pyarrow read_table", span(wall, unit="×"), "–", None)
    report.finish()


if __name__ == "__main__":
    main()

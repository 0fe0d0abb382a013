"""Trajectory evaluation speed and peak memory: motionkit vs evo (and trajectopy).

APE (SE(3) Umeyama alignment, nearest-stamp matching within 10 ms, translation error) and
RPE (delta 1 frame, translation) on N synthetic poses: a 100 Hz reference loop and an
estimate moved by a fixed SE(3) offset with 1 cm / 0.2° noise and ±2 ms stamp jitter (the
data of the spec's §8, seeded, generated once as .npy files and as TUM files).

In process: every tool in its own subprocess (peak RSS its own, interpreter and both
inputs included; imports and loading the arrays not timed), with OpenBLAS at its default
(2 threads here) and at 1 thread (``OPENBLAS_NUM_THREADS=1``), in turns for ``--rounds``
rounds; CPU (all threads) and wall of the best evaluation. Whole command: ``motionkit eval
ape gt.tum est.tum --align se3`` vs ``evo_ape tum gt.tum est.tum --align`` (reading both
files included), kernel-accounted CPU, wall and peak RSS. trajectopy (no frame RPE) runs
its ATE once, for the record.

    python bench/eval.py [--rows 1000000] [--rounds 3] [--repeat 2] [--no-trajectopy]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _memory import peak_mb
from _report import Report, Timing, best, interleaved, span, timed_process

BIN = Path(sys.executable).parent


def generate(rows: int, folder: Path) -> None:
    """Reference and estimate arrays (times, xyz, quaternion x y z w) as .npy files."""
    import numpy as np
    from scipy.spatial.transform import Rotation

    rng = np.random.default_rng(42)
    t = 1.7e9 + np.arange(rows) * 0.01
    s = np.arange(rows) * 0.01
    pos = np.column_stack([50 * np.sin(0.01 * s), 30 * np.sin(0.023 * s), 0.001 * s])
    heading = np.arctan2(np.gradient(pos[:, 1]), np.gradient(pos[:, 0]))
    rot = Rotation.from_euler("xyz", np.column_stack([0.02 * np.sin(s), 0.02 * np.cos(0.7 * s), heading]))
    offset = Rotation.from_euler("xyz", [0.02, -0.01, 0.3])
    est_pos = offset.apply(pos) + np.array([3.0, -2.0, 0.5]) + rng.normal(0, 0.01, pos.shape)
    noise = Rotation.from_rotvec(rng.normal(0, np.radians(0.2) / np.sqrt(3), (rows, 3)))
    est_rot = offset * rot * noise
    arrays = {"ref": (t, pos, rot.as_quat()),
              "est": (t + rng.uniform(-0.002, 0.002, rows), est_pos, est_rot.as_quat())}
    for key, (times, xyz, quat) in arrays.items():
        for part, array in (("t", times), ("p", xyz), ("q", quat)):
            np.save(folder / f"{key}_{part}.npy", np.ascontiguousarray(array))
        np.savetxt(folder / f"{key}.tum", np.column_stack([times, xyz, quat]), fmt="%.9f")


def load(folder: Path) -> dict[str, Any]:
    """The arrays written by ``generate`` (only these, so a worker's peak memory is its own)."""
    import numpy as np

    return {key: tuple(np.load(folder / f"{key}_{part}.npy") for part in "tpq") for key in ("ref", "est")}


def run_motionkit(d: dict[str, Any]) -> dict[str, float]:
    from motionkit import evaluation as ev

    ref, est = (ev.Poses(*d[k]) for k in ("ref", "est"))
    cpu, start = time.process_time(), time.perf_counter()
    ape = ev.ape(ref, est, align="se3")
    mid_cpu, mid = time.process_time(), time.perf_counter()
    rpe = ev.rpe(ref, est, delta=1)
    return {"ape": mid_cpu - cpu, "ape_wall": mid - start, "rpe": time.process_time() - mid_cpu,
            "ape_rmse": ape.stats["rmse"], "rpe_rmse": rpe.stats["rmse"], "pairs": ape.pairs}


def run_evo(d: dict[str, Any]) -> dict[str, float]:
    import numpy as np
    from evo.core import metrics, sync
    from evo.core.trajectory import PoseTrajectory3D

    def traj(key: str) -> PoseTrajectory3D:
        t, p, q = d[key]
        return PoseTrajectory3D(positions_xyz=p, orientations_quat_wxyz=np.roll(q, 1, axis=1), timestamps=t)

    cpu, start = time.process_time(), time.perf_counter()
    ref, est = sync.associate_trajectories(traj("ref"), traj("est"), max_diff=0.01)
    est.align(ref)
    ape = metrics.APE(metrics.PoseRelation.translation_part)
    ape.process_data((ref, est))
    mid_cpu, mid = time.process_time(), time.perf_counter()
    ref, est = sync.associate_trajectories(traj("ref"), traj("est"), max_diff=0.01)
    rpe = metrics.RPE(metrics.PoseRelation.translation_part, 1, metrics.Unit.frames)
    rpe.process_data((ref, est))
    return {"ape": mid_cpu - cpu, "ape_wall": mid - start, "rpe": time.process_time() - mid_cpu,
            "ape_rmse": ape.get_statistic(metrics.StatisticsType.rmse),
            "rpe_rmse": rpe.get_statistic(metrics.StatisticsType.rmse), "pairs": ape.error.size}


def run_trajectopy(d: dict[str, Any]) -> dict[str, float]:
    import trajectopy as tpy

    def traj(key: str) -> Any:
        t, p, q = d[key]
        return tpy.Trajectory(tpy.Positions(p, epsg=0), tpy.Rotations.from_quat(q), timestamps=t)

    settings = tpy.ProcessingSettings()
    settings.matching.method = tpy.MatchingMethod.NEAREST_TEMPORAL
    cpu, start = time.process_time(), time.perf_counter()
    ate = tpy.ate(traj("est"), traj("ref"), settings)
    return {"ape": time.process_time() - cpu, "ape_wall": time.perf_counter() - start,
            "ape_rmse": ate.pos_dev_rms, "pairs": len(ate.pos_dev_comb)}


TOOLS = {"motionkit": run_motionkit, "evo": run_evo, "trajectopy": run_trajectopy}


def worker(tool: str, folder: str, repeat: int) -> None:
    """Inside the subprocess: load the arrays, evaluate ``repeat`` times, print JSON."""
    import warnings

    warnings.simplefilter("ignore")
    d = load(Path(folder))
    runs = [TOOLS[tool](d) for _ in range(repeat)]
    top = min(runs, key=lambda run: run["ape"])
    print(json.dumps({**top, "rpe": min(run.get("rpe", 0.0) for run in runs),
                      "peak_mb": peak_mb()}))


def in_process(tool: str, folder: Path, repeat: int, threads: int | None,
               rpe: dict[str, list[float]]) -> Timing:
    env = {**os.environ, "OPENBLAS_NUM_THREADS": str(threads)} if threads else None
    done = subprocess.run([sys.executable, __file__, "--worker", tool, str(folder), str(repeat)],
                          capture_output=True, text=True, check=True, env=env)
    found = json.loads(done.stdout.strip().splitlines()[-1])
    rpe.setdefault(f"{tool} {threads}", []).append(found.get("rpe", float("nan")))
    return Timing(found["ape"], found["ape_wall"], found["peak_mb"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=2, help="evaluations per process")
    parser.add_argument("--no-trajectopy", action="store_true")
    parser.add_argument("--workdir", type=Path, help="where the inputs go (default: a temp dir)")
    parser.add_argument("--worker", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker[0], args.worker[1], int(args.worker[2]))
        return
    with tempfile.TemporaryDirectory() as temp:
        folder = (args.workdir or Path(temp)) / f"rows_{args.rows}"
        if not (folder / "est.tum").exists():
            folder.mkdir(parents=True, exist_ok=True)
            generate(args.rows, folder)
        report = Report("eval", f"trajectory evaluation, {args.rows:,} poses")
        import evo

        report.peer("evo", f"evo {evo.__version__}: sync.associate_trajectories (10 ms), "
                    "align (Umeyama SE(3)), APE translation; evo_ape tum … --align")
        report.peer("threads", "OpenBLAS default (2 here) and OPENBLAS_NUM_THREADS=1, both "
                    "measured; motionkit pins BLAS to 1 thread itself (threadpoolctl)")
        measure(report, folder, args)
        report.finish()


def measure(report: Report, folder: Path, args: argparse.Namespace) -> None:
    """In-process APE/RPE at both thread settings, then the whole commands."""
    rpe: dict[str, list[float]] = {}
    candidates: dict[str, Callable[[], Timing]] = {}
    for tool in ("motionkit", "evo"):
        for threads in (None, 1):
            candidates[f"{tool} {threads or 'default'}"] = (
                lambda tool=tool, threads=threads: in_process(tool, folder, args.repeat,
                                                              threads, rpe))
    runs = interleaved(candidates, args.rounds)
    speeds = []
    for setting in ("default", 1):
        ours, peer = runs[f"motionkit {setting}"], runs[f"evo {setting}"]
        ratio = [p.cpu / o.cpu for o, p in zip(ours, peer, strict=True)]
        wall = [p.wall / o.wall for o, p in zip(ours, peer, strict=True)]
        speeds += ratio + wall
        report.row(f"APE in process, BLAS threads {setting}: speed vs evo (CPU; wall)",
                   f"{span(ratio, 0, '×')}; {span(wall, 0, '×')}", "≥ 40×", min(ratio + wall) >= 40)
    report.table(["APE in process", "CPU s (best)", "wall s (all rounds)", "peak MB",
                  "RPE CPU s (best)"],
                 [[name, f"{best(found).cpu:.3f}", span([r.wall for r in found], 3),
                   f"{max(r.peak_mb for r in found):.0f}",
                   f"{min(rpe[name.replace('default', 'None')]):.3f}"]
                  for name, found in runs.items()])
    whole(report, folder, args.rounds)
    if not args.no_trajectopy:
        extra: dict[str, list[float]] = {}
        found = in_process("trajectopy", folder, 1, None, extra)
        report.note(f"trajectopy ATE (nearest matching, its 6-DoF alignment), once: "
                    f"{found.cpu:.2f} s CPU, {found.wall:.2f} s wall, {found.peak_mb:.0f} MB.")


def whole(report: Report, folder: Path, rounds: int) -> None:
    """``motionkit eval ape`` vs ``evo_ape`` on the two TUM files, at both thread settings."""
    gt, est = str(folder / "ref.tum"), str(folder / "est.tum")
    commands = {"motionkit": [str(BIN / "motionkit"), "eval", "ape", gt, est, "--align", "se3"],
                "evo": [str(BIN / "evo_ape"), "tum", gt, est, "--align"]}
    candidates: dict[str, Callable[[], Timing]] = {}
    for tool, command in commands.items():
        for threads in (None, 1):
            env = {"OPENBLAS_NUM_THREADS": str(threads)} if threads else None
            candidates[f"{tool} {threads or 'default'}"] = (
                lambda command=command, env=env: timed_process(command, env))
    runs = interleaved(candidates, rounds)
    for setting in ("default", 1):
        ours, peer = runs[f"motionkit {setting}"], runs[f"evo {setting}"]
        wall = [p.wall / o.wall for o, p in zip(ours, peer, strict=True)]
        cpu = [p.cpu / o.cpu for o, p in zip(ours, peer, strict=True)]
        report.row(f"whole command, BLAS threads {setting}: speed vs evo_ape (wall; CPU)",
                   f"{span(wall, 0, '×')}; {span(cpu, 0, '×')}", "≥ 40×", min(wall + cpu) >= 40)
    peak = max(r.peak_mb for name, found in runs.items() if name.startswith("motionkit")
               for r in found)
    report.row("whole command peak RSS (motionkit eval ape)", f"{peak:.0f} MB", "≤ 300 MB",
               peak <= 300)
    report.table(["whole command", "CPU s (best)", "wall s (all rounds)", "peak MB"],
                 [[name, f"{best(found).cpu:.2f}", span([r.wall for r in found], 2),
                   f"{max(r.peak_mb for r in found):.0f}"] for name, found in runs.items()])


if __name__ == "__main__":
    main()

"""Trajectory evaluation speed and peak memory: motionkit vs evo vs trajectopy.

APE (SE(3) Umeyama alignment, nearest-stamp matching within 10 ms, translation error) and
RPE (delta 1 frame, translation) on N synthetic poses: a 100 Hz reference loop and an
estimate moved by a fixed SE(3) offset with 1 cm / 0.2° noise and ±2 ms stamp jitter (the
data of the spec's §8, seeded, generated once as .npy files). Every tool runs in its own subprocess
(so peak RSS is its own, including the interpreter and both input trajectories), started by
this one script; evaluation time excludes imports and loading the arrays. trajectopy has no
frame-based RPE, so only its ATE is timed (nearest matching, its default 6-DoF alignment).

    python bench/eval.py [--rows 1000000] [--peer-rows N] [--repeat 3] [--no-evo] [--no-trajectopy]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _memory import peak_mb


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


def load(folder: Path) -> dict[str, Any]:
    """The arrays written by ``generate`` (only these, so a worker's peak memory is its own)."""
    import numpy as np

    return {key: tuple(np.load(folder / f"{key}_{part}.npy") for part in "tpq") for key in ("ref", "est")}


def run_motionkit(d: dict[str, Any]) -> dict[str, float]:
    from motionkit import evaluation as ev

    ref, est = (ev.Poses(*d[k]) for k in ("ref", "est"))
    start = time.perf_counter()
    ape = ev.ape(ref, est, align="se3")
    mid = time.perf_counter()
    rpe = ev.rpe(ref, est, delta=1)
    return {"ape": mid - start, "rpe": time.perf_counter() - mid, "ape_rmse": ape.stats["rmse"],
            "rpe_rmse": rpe.stats["rmse"], "pairs": ape.pairs}


def run_evo(d: dict[str, Any]) -> dict[str, float]:
    import numpy as np
    from evo.core import metrics, sync
    from evo.core.trajectory import PoseTrajectory3D

    def traj(key: str) -> PoseTrajectory3D:
        t, p, q = d[key]
        return PoseTrajectory3D(positions_xyz=p, orientations_quat_wxyz=np.roll(q, 1, axis=1), timestamps=t)

    start = time.perf_counter()
    ref, est = sync.associate_trajectories(traj("ref"), traj("est"), max_diff=0.01)
    est.align(ref)
    ape = metrics.APE(metrics.PoseRelation.translation_part)
    ape.process_data((ref, est))
    mid = time.perf_counter()
    ref, est = sync.associate_trajectories(traj("ref"), traj("est"), max_diff=0.01)
    rpe = metrics.RPE(metrics.PoseRelation.translation_part, 1, metrics.Unit.frames)
    rpe.process_data((ref, est))
    return {"ape": mid - start, "rpe": time.perf_counter() - mid,
            "ape_rmse": ape.get_statistic(metrics.StatisticsType.rmse),
            "rpe_rmse": rpe.get_statistic(metrics.StatisticsType.rmse), "pairs": ape.error.size}


def run_trajectopy(d: dict[str, Any]) -> dict[str, float]:
    import trajectopy as tpy

    def traj(key: str) -> Any:
        t, p, q = d[key]
        return tpy.Trajectory(tpy.Positions(p, epsg=0), tpy.Rotations.from_quat(q), timestamps=t)

    settings = tpy.ProcessingSettings()
    settings.matching.method = tpy.MatchingMethod.NEAREST_TEMPORAL
    start = time.perf_counter()
    ate = tpy.ate(traj("est"), traj("ref"), settings)
    return {"ape": time.perf_counter() - start, "ape_rmse": ate.pos_dev_rms, "pairs": len(ate.pos_dev_comb)}


TOOLS = {"motionkit": run_motionkit, "evo": run_evo, "trajectopy": run_trajectopy}


def worker(tool: str, folder: str, repeat: int) -> None:
    """Inside the subprocess: load the arrays, evaluate ``repeat`` times, print JSON."""
    import warnings

    warnings.simplefilter("ignore")
    d = load(Path(folder))
    runs = [TOOLS[tool](d) for _ in range(repeat)]
    best = {k: min(r[k] for r in runs) if k in ("ape", "rpe") else runs[0][k] for k in runs[0]}
    print(json.dumps({**best, "peak_mb": peak_mb()}))


def measure(tool: str, rows: int, repeat: int, workdir: Path) -> dict[str, float] | None:
    folder = workdir / f"rows_{rows}"
    if not folder.is_dir():
        folder.mkdir(parents=True)
        subprocess.run([sys.executable, __file__, "--generate", str(rows), str(folder)], check=True)
    done = subprocess.run([sys.executable, __file__, "--worker", tool, str(folder), str(repeat)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        print(f"{tool}: failed: {done.stderr.strip().splitlines()[-1:]}")
        return None
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--peer-rows", type=int, help="rows for evo and trajectopy (default --rows)")
    parser.add_argument("--repeat", type=int, default=3, help="evaluations per motionkit process")
    parser.add_argument("--no-evo", action="store_true")
    parser.add_argument("--no-trajectopy", action="store_true")
    parser.add_argument("--workdir", type=Path, help="where the input arrays go (default: a temp dir)")
    parser.add_argument("--worker", nargs=3, help=argparse.SUPPRESS)
    parser.add_argument("--generate", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker[0], args.worker[1], int(args.worker[2]))
        return
    if args.generate:
        generate(int(args.generate[0]), Path(args.generate[1]))
        return
    with tempfile.TemporaryDirectory() as temp:
        report(args, args.workdir or Path(temp))


def report(args: argparse.Namespace, workdir: Path) -> None:
    """Measure every tool and print the table and the ratios."""
    peer_rows = args.peer_rows or args.rows
    results = {"motionkit": measure("motionkit", args.rows, args.repeat, workdir)}
    if peer_rows != args.rows:
        results["motionkit@peer"] = measure("motionkit", peer_rows, args.repeat, workdir)
    for tool in ("evo", "trajectopy"):
        if not getattr(args, f"no_{tool}"):
            results[tool] = measure(tool, peer_rows, 1, workdir)
    print(f"{'tool':<16}{'rows':>10}{'APE s':>10}{'RPE s':>10}{'peak MB':>10}  APE rmse / RPE rmse")
    for tool, r in results.items():
        if r is None:
            continue
        rows = args.rows if tool == "motionkit" else peer_rows
        rpe = f"{r['rpe']:10.3f}" if "rpe" in r else f"{'-':>10}"
        print(f"{tool:<16}{rows:>10}{r['ape']:10.3f}{rpe}{r['peak_mb']:10.0f}  {r['ape_rmse']:.9g} / "
              f"{r.get('rpe_rmse', float('nan')):.9g}")
    base = results.get("motionkit@peer") or results["motionkit"]
    for tool in ("evo", "trajectopy"):
        peer = results.get(tool)
        if peer and base:
            rpe = f", RPE {peer['rpe'] / base['rpe']:.1f}x" if "rpe" in peer else ""
            print(f"motionkit vs {tool} at {peer_rows} rows: APE {peer['ape'] / base['ape']:.1f}x "
                  f"faster{rpe}, memory {base['peak_mb'] / peer['peak_mb']:.2f}x")


if __name__ == "__main__":
    main()

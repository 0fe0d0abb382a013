"""Forward kinematics: motionkit (compiled kernel and NumPy path) vs dartpy, Pinocchio and
MuJoCo, on Choreonoid's SR1 robot and on the largest corpus .skel.

Every figure is CPU time of this process (best of ``--rounds`` interleaved rounds), as
frames per second. motionkit: ``kinematics.forward`` on all frames at once, ``threads=1``
(the compiled kernel, then the NumPy path with ``_engine.poses(compiled=False)``); its
peak memory is what tracemalloc sees (every NumPy allocation) over the output's size.
Peers are called per frame from Python, as a user would (and keep nothing: copying their
poses out per frame would cost them more than the FK): dartpy ``setPositions`` and every
body's ``getWorldTransform``; Pinocchio ``forwardKinematics(model, data, q)``; MuJoCo
``qpos[:] = q`` and ``mj_kinematics``. Their models are motionkit's own exports of the same
skeleton (URDF for dartpy on SR1 and for Pinocchio, with a free-flyer root where the root
joint is free; MJCF for MuJoCo), so every tool computes the same bodies. The bare C loop
figure (1.73 M frames/s on SR1) was measured on this machine for issue 23 and is cited.

    python bench/fk.py [--frames 10000] [--big 1000000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import glob
import os
import tempfile
import tracemalloc
import warnings
from collections.abc import Callable

import numpy as np
from _report import Report, Timing, best, interleaved, timed

import motionkit as mk
from motionkit.kinematics import _compiled, _engine, forward
from motionkit.spatial import quaternion

CORPUS = os.environ.get("MOTIONKIT_CORPUS", os.path.join(os.path.dirname(__file__), "..", "..",
                                                         "shared", "corpus"))
BARE_C = 1.73e6  # frames/s of a bare C FK loop on SR1, measured here (issue 23)


def quiet_read(path: str) -> object:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return mk.read(path)


def largest_skel() -> tuple[str, int, mk.Skeleton]:
    best_one: tuple[str, int, mk.Skeleton] | None = None
    for path in sorted(glob.glob(os.path.join(CORPUS, "dart", "skel", "**", "*.skel"),
                             recursive=True)):
        try:
            world = quiet_read(path)
        except mk.MotionkitError:
            continue
        assert isinstance(world, mk.World)
        for index, skeleton in enumerate(world.skeletons):
            key = (len(skeleton.bodies), skeleton.dof_count)
            if best_one is None or key > (len(best_one[2].bodies), best_one[2].dof_count):
                best_one = (path, index, skeleton)
    assert best_one is not None, f"no .skel under {CORPUS}"
    return best_one


def random_q(skeleton: mk.Skeleton, frames: int) -> np.ndarray:
    lo = np.where(np.isfinite(skeleton.lower), skeleton.lower, -1.0)
    hi = np.where(np.isfinite(skeleton.upper), skeleton.upper, 1.0)
    return np.random.default_rng(0).uniform(lo, hi, size=(frames, skeleton.dof_count))


def free_root(skeleton: mk.Skeleton) -> bool:
    return bool(skeleton.bodies) and skeleton.bodies[0].joint.type == "free"


def peer_q(skeleton: mk.Skeleton, q: np.ndarray, w_first: bool) -> np.ndarray:
    """Our coordinates as a peer's: a free root as position + quaternion (xyzw or wxyz)."""
    if not free_root(skeleton):
        return q
    quat = quaternion.normalize(np.c_[q[:, :3] * 0.5, np.ones(len(q))])  # any rotation will do
    if w_first:
        quat = quat[:, [3, 0, 1, 2]]
    joined: np.ndarray = np.c_[q[:, 3:6], quat, q[:, 6:]]
    return joined


def exports(skeleton: mk.Skeleton, folder: str) -> tuple[str, str]:
    urdf, mjcf = os.path.join(folder, "model.urdf"), os.path.join(folder, "model.xml")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mk.write(urdf, skeleton, lossy=True)
        mk.write(mjcf, skeleton, format="mjcf", lossy=True)
    return urdf, mjcf


def peers(skeleton: mk.Skeleton, q: np.ndarray, skel: tuple[str, int] | None, folder: str,
          report: Report) -> dict[str, Callable[[], Timing]]:
    """One per-frame loop per installed peer."""
    urdf, mjcf = exports(skeleton, folder)
    runs: dict[str, Callable[[], Timing]] = {}
    try:
        import dartpy as dart

        if skel is not None:
            dskel = dart.utils.SkelParser.readWorld(os.path.abspath(skel[0])).getSkeleton(skel[1])
            dq = q
        else:
            loader = dart.utils.DartLoader()
            dskel = loader.parseSkeleton(urdf)
            dq = peer_q(skeleton, q, w_first=False) if dskel.getNumDofs() != q.shape[1] else q
            if dskel.getNumDofs() != dq.shape[1]:
                dq = np.random.default_rng(1).uniform(-1, 1, (len(q), dskel.getNumDofs()))
        nodes = [dskel.getBodyNode(i) for i in range(dskel.getNumBodyNodes())]

        def dart_loop() -> None:
            for frame in dq:
                dskel.setPositions(frame)
                for node in nodes:
                    node.getWorldTransform()

        runs["dartpy"] = lambda: timed(dart_loop)
        source = "the .skel" if skel else "the URDF export"
        report.peer(f"dartpy ({'.skel' if skel else 'SR1'})",
                    f"dartpy {dart.__version__}, {source}, {dskel.getNumBodyNodes()} bodies, "
                    f"{dskel.getNumDofs()} dofs, one thread")
    except ImportError:
        report.note("dartpy not installed")
    label = ".skel" if skel else "SR1"
    runs.update(pinocchio_run(skeleton, q, urdf, report, label))
    runs.update(mujoco_run(skeleton, q, mjcf, report, label))
    return runs


def pinocchio_run(skeleton: mk.Skeleton, q: np.ndarray, urdf: str,
                  report: Report, label: str) -> dict[str, Callable[[], Timing]]:
    try:
        import pinocchio as pin
    except ImportError:
        report.note("Pinocchio not installed")
        return {}
    root = pin.JointModelFreeFlyer() if free_root(skeleton) else None
    model = pin.buildModelFromUrdf(urdf, root) if root is not None else pin.buildModelFromUrdf(urdf)
    data = model.createData()
    pq = np.ascontiguousarray(peer_q(skeleton, q, w_first=False))
    if pq.shape[1] != model.nq:  # the URDF spells some joints as chains of its own joints
        report.note(f"Pinocchio ({label}): nq {model.nq} != our {skeleton.dof_count} coordinates (the URDF "
                    "export spells non-URDF joints as chains): random values of its own nq")
        pq = pin.neutral(model) + np.random.default_rng(1).uniform(-1, 1, (len(q), model.nq))
    rows = list(pq)

    def loop() -> None:
        for frame in rows:
            pin.forwardKinematics(model, data, frame)

    report.peer(f"Pinocchio ({label})", f"pin {pin.__version__}, buildModelFromUrdf(motionkit's URDF"
                f"{', JointModelFreeFlyer()' if root is not None else ''}): nq {model.nq}, "
                f"{model.njoints} joints; forwardKinematics(model, data, q) per frame; one thread")
    return {"Pinocchio": lambda: timed(loop)}


def mujoco_run(skeleton: mk.Skeleton, q: np.ndarray, mjcf: str,
               report: Report, label: str) -> dict[str, Callable[[], Timing]]:
    try:
        import mujoco
    except ImportError:
        report.note("MuJoCo not installed")
        return {}
    model = mujoco.MjModel.from_xml_path(mjcf)
    data = mujoco.MjData(model)
    mq = peer_q(skeleton, q, w_first=True)
    if mq.shape[1] != model.nq:
        report.note(f"MuJoCo ({label}): nq {model.nq} != our {skeleton.dof_count} coordinates: random values "
                    "of its own nq")
        mq = np.random.default_rng(1).uniform(-1, 1, (len(q), model.nq))
    rows = list(mq)

    def loop() -> None:
        for frame in rows:
            data.qpos[:] = frame
            mujoco.mj_kinematics(model, data)

    report.peer(f"MuJoCo ({label})", f"mujoco {mujoco.__version__}, MjModel.from_xml_path(motionkit's MJCF): "
                f"nq {model.nq}, nbody {model.nbody}; qpos[:] = q, mj_kinematics per frame; one thread")
    return {"MuJoCo": lambda: timed(loop)}


def traced_peak(func: Callable[[], np.ndarray]) -> tuple[float, int]:
    """Peak traced bytes of one call over its output's bytes, and the output's bytes."""
    tracemalloc.start()
    try:
        out = func()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return peak / out.nbytes, out.nbytes


def model_section(name: str, skeleton: mk.Skeleton, skel: tuple[str, int] | None,
                  args: argparse.Namespace, report: Report) -> None:
    q = random_q(skeleton, args.frames)
    forward(skeleton, q[:10])
    with tempfile.TemporaryDirectory() as folder:
        out = np.zeros((args.frames, len(skeleton.bodies), 7))
        runs = {"motionkit (compiled)": lambda: timed(lambda: forward(skeleton, q, threads=1)),
                "motionkit (compiled, reused out=)": lambda: timed(
                    lambda: forward(skeleton, q, threads=1, out=out)),
                "motionkit (NumPy path)": lambda: timed(
                    lambda: _engine.poses(skeleton, q, threads=1, compiled=False))}
        runs.update(peers(skeleton, q, skel, folder, report))
        results = interleaved(runs, args.rounds)
    rate = {peer: args.frames / best(timings).cpu for peer, timings in results.items()}
    report.table([f"{name}: {args.frames:,} frames", "frames/s (CPU)", "motionkit compiled runs ×"],
                 [[peer, f"{value:,.0f}", f"{rate['motionkit (compiled)'] / value:.2f}"]
                  for peer, value in rate.items()])
    ours = rate["motionkit (compiled)"]
    reused = rate["motionkit (compiled, reused out=)"]
    work = f"{name} FK {args.frames:,} frames"
    if "dartpy" in rate:
        report.row(f"{work} vs dartpy", f"{ours / rate['dartpy']:.0f}×", "≥ 200×",
                   ours / rate["dartpy"] >= 200)
    if "Pinocchio" in rate:
        report.row(f"{work} vs Pinocchio", f"{ours / rate['Pinocchio']:.2f}× (into a reused "
                   f"out=: {reused / rate['Pinocchio']:.2f}×)", "≥ 1.5×",
                   ours / rate["Pinocchio"] >= 1.5)
    if "MuJoCo" in rate:
        report.row(f"{work} vs MuJoCo mj_kinematics", f"{ours / rate['MuJoCo']:.2f}×", "–", None)
    if name == "SR1":
        big_section(skeleton, ours, reused, args, report)


def big_section(skeleton: mk.Skeleton, small_rate: float, small_reused: float,
                args: argparse.Namespace, report: Report) -> None:
    q = random_q(skeleton, args.big)
    report.row(f"SR1 FK {args.frames:,} frames vs bare C loop", f"{small_rate / BARE_C:.0%}; "
               f"into a reused out=: {small_reused / BARE_C:.0%} ({small_rate:,.0f}; "
               f"{small_reused:,.0f} vs {BARE_C:,.0f} frames/s, cited)", "≥ 70%",
               small_rate >= 0.7 * BARE_C)
    out = np.empty((args.big, len(skeleton.bodies), 7))
    out.fill(0.0)  # its pages are in: what a reused buffer costs
    runs = {"compiled": lambda: timed(lambda: forward(skeleton, q, threads=1)),
            "reused out": lambda: timed(lambda: forward(skeleton, q, threads=1, out=out))}
    results = interleaved(runs, args.rounds)
    big_rate = args.big / best(results["compiled"]).cpu
    reused = args.big / best(results["reused out"]).cpu
    report.row(f"SR1 FK {args.big:,} vs {args.frames:,} frames (compiled, CPU)",
               f"{big_rate:,.0f} vs {small_rate:,.0f} frames/s ({big_rate / small_rate:.2f}); "
               f"into a reused out=: {reused:,.0f} vs {small_reused:,.0f} "
               f"({reused / small_reused:.2f})", "same (≥ 0.9)", big_rate >= 0.9 * small_rate)
    threads = _engine.thread_count(args.big, None)
    auto = best([timed(lambda: forward(skeleton, q)) for _ in range(args.rounds)])
    report.row(f"SR1 FK {args.big:,} frames, threads=None ({threads})",
               f"{args.big / auto.wall:,.0f} frames/s wall, {args.big / auto.cpu:,.0f} CPU", "–", None)
    ratio, nbytes = traced_peak(lambda: forward(skeleton, q, threads=1))
    report.row(f"SR1 FK {args.big:,} frames peak memory (compiled)",
               f"{ratio:.3f}× the output ({nbytes / 1e9:.2f} GB)", "≤ 1.3×", ratio <= 1.3)
    ratio, _ = traced_peak(lambda: _engine.poses(skeleton, q, threads=1, compiled=False))
    report.row(f"SR1 FK {args.big:,} frames peak memory (NumPy path)",
               f"{ratio:.3f}× the output", "≤ 1.3×", ratio <= 1.3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--frames", type=int, default=10_000)
    parser.add_argument("--big", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    report = Report("fk", "forward kinematics")
    report.peer("motionkit", f"kinematics.forward, threads=1 unless stated; compiled kernel "
                f"{'built' if _compiled.KERNEL is not None else 'NOT built'}; NumPy path chunk "
                f"{_engine.CHUNK} frames; automatic threads: one per {_engine.FRAMES_PER_THREAD:,} "
                f"frames up to {_engine.available_cpus()} CPUs")
    sr1 = quiet_read(os.path.join(CORPUS, "choreonoid", "SR1.body"))
    assert isinstance(sr1, mk.Skeleton)
    report.note(f"SR1: {len(sr1.bodies)} bodies, {sr1.dof_count} coordinates (free root + revolute)")
    model_section("SR1", sr1, None, args, report)
    path, index, skeleton = largest_skel()
    report.note(f"largest .skel: {os.path.relpath(path, CORPUS)} #{index} {skeleton.name!r}: "
                f"{len(skeleton.bodies)} bodies, {skeleton.dof_count} coordinates")
    model_section("largest .skel", skeleton, (path, index), args, report)
    report.finish()


if __name__ == "__main__":
    main()

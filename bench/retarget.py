"""Retargeting speed: the corpus clip (``test_freebvh.bvh``, 69 frames, corrected case) onto
Unitree G1 in GMR mode, against GMR's own speed, and a batch of clips stepped together.

* **one clip**: ``retarget.retarget(..., options=Options(like_gmr=True))`` end to end (source
  FK, targets, both IK stages per frame, output motion), frames/s in CPU time, best of
  ``--rounds`` interleaved rounds; the IK loop alone on the same targets beside it.
  GMR (YanjieZe/GMR @ 4f9e8b7, mink 1.3.0 + DAQP on MuJoCo) is git-only and not installable
  here: its 90 frames/s (~4.2 solver steps per frame, one thread, this machine) is cited from
  ``shared/specs/retargeting.md`` §6. If ``mink`` and ``daqp`` are importable they would run as
  a live peer; they are not dependencies of motionkit.
* **batch**: ``--clips`` slices of the clip (``--length`` frames each, starting at frames
  0…18 in turn), every clip's frames in order, by ``ik.solve_stage_many`` (the compiled
  kernel clip after clip where it is built; else NumPy, all clips that have not stopped
  stepped together); frames/s per core (CPU time of this one-threaded loop).
* the IK alone and the batch again on NumPy's path (the kernel switched off), for scale.

    python bench/retarget.py [--rounds 3] [--clips 100] [--length 50]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import warnings
from types import ModuleType

import numpy as np
from _report import Report, Timing, best, interleaved, timed

import motionkit as mk
from motionkit import retarget
from motionkit.retarget import _ik, ik
from motionkit.retarget.robot import Robot
from motionkit.retarget.source import GMR_HUMAN_HEIGHT, size_ratio, source_frames, targets

CORPUS = os.environ.get("MOTIONKIT_CORPUS", os.path.join(os.path.dirname(__file__), "..", "..",
                                                         "shared", "corpus"))
GMR_FPS = 90.0  # spec §6, measured on this machine while preparing the spec (cited)


def inputs() -> tuple[mk.Motion, mk.Skeleton, retarget.BodyMap, dict, dict]:
    folder = os.path.join(CORPUS, "retarget")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the model's floor geom belongs to no body
        robot = mk.read(os.path.join(folder, "g1_mocap_29dof_nomesh.xml"))
        source = mk.read(os.path.join(CORPUS, "bvh", "test_freebvh.bvh"))
    assert isinstance(robot, mk.Skeleton) and isinstance(source, mk.Motion)
    return (source, robot, retarget.read_map(os.path.join(folder, "bvh_to_g1.json")),
            retarget.read_rename(os.path.join(folder, "freebvh_lafan1_names.json")),
            retarget.read_frame_fix(os.path.join(folder, "freebvh_orientation_correction.json")))


def frame_targets(source: mk.Motion, body_map: retarget.BodyMap, rename: dict,
                  fix: dict) -> list[dict[str, np.ndarray]]:
    """The clip's target poses per frame, as GMR mode makes them."""
    assert source.skeleton is not None
    names, poses = targets(source_frames(source.skeleton, source, rename), body_map,
                           size_ratio(body_map, GMR_HUMAN_HEIGHT, like_gmr=True), fix)
    return [dict(zip(names, frame, strict=True)) for frame in poses]


def ik_loop(robot: Robot, body_map: retarget.BodyMap, frames: list[dict]) -> int:
    """The IK alone, one clip: GMR's loop on precomputed targets; its solver steps."""
    state, steps = robot.rest.copy(), 0
    for by_name in frames:
        for tasks in body_map.stages:
            state, count = ik.solve_stage(robot, state, ik.goals(robot, tasks, by_name))
            steps += count
    return steps


def batch_loop(robot: Robot, body_map: retarget.BodyMap, clips: list[list[dict]]) -> int:
    """Every clip from the model's default pose, frame by frame, the clips together."""
    states, steps = [robot.rest.copy() for _ in clips], 0
    for frame in range(len(clips[0])):
        for tasks in body_map.stages:
            solved = ik.solve_stage_many(robot, states, [ik.goals(robot, tasks, clip[frame])
                                                         for clip in clips])
            states = [state for state, _ in solved]
            steps += sum(count for _, count in solved)
    return steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--clips", type=int, default=100)
    parser.add_argument("--length", type=int, default=50)
    args = parser.parse_args()
    report = Report("retarget", "retargeting (GMR's IK) onto G1")
    source, skeleton, body_map, rename, fix = inputs()
    robot = Robot.of(skeleton)
    frames = frame_targets(source, body_map, rename, fix)
    options = retarget.Options(like_gmr=True)
    compiled = _ik.KERNEL is not None
    report.peer("motionkit", "retarget.retarget(options=Options(like_gmr=True)); IK stages by "
                + ("the compiled kernel (_ik_kernel.c)" if compiled else
                   "NumPy (the compiled kernel is not built)")
                + ", one thread; batch: ik.solve_stage_many")
    report.peer("GMR", f"YanjieZe/GMR @ 4f9e8b7 (mink 1.3.0, DAQP, MuJoCo): {GMR_FPS:.0f} "
                "frames/s, ~4.2 steps/frame, cited (spec §6; git-only, not installable here)")
    live = all(importlib.util.find_spec(name) is not None for name in ("mink", "daqp"))
    report.note("mink and daqp " + ("are importable, but GMR's loop is not wired as a live peer "
                                    "yet" if live else "are not installed: GMR is cited, not run"))
    steps: dict[str, int] = {}

    def one_clip() -> Timing:
        return timed(lambda: retarget.retarget(source, skeleton, body_map, rename=rename,
                                               fix=fix, options=options))

    def ik_only() -> Timing:
        return timed(lambda: steps.__setitem__("ik", ik_loop(robot, body_map, frames)))

    def ik_numpy() -> Timing:
        kernel, _ik.KERNEL = _ik.KERNEL, None
        try:
            return timed(lambda: steps.__setitem__("numpy", ik_loop(robot, body_map, frames)))
        finally:
            _ik.KERNEL = kernel

    runs = interleaved({"retarget": one_clip, "ik": ik_only, "numpy": ik_numpy}, args.rounds)
    whole = len(frames) / best(runs["retarget"]).cpu
    report.row(f"one clip ({len(frames)} frames) onto G1, like_gmr, end to end",
               f"{whole:,.0f} frames/s = {whole / GMR_FPS:.1f}× GMR's {GMR_FPS:.0f} (cited)",
               "≥ 10× GMR", whole >= 10 * GMR_FPS)
    for name, label in (("ik", "the IK alone on the same targets"),
                        ("numpy", "the IK alone, NumPy's path (kernel off)")):
        alone = len(frames) / best(runs[name]).cpu
        report.row(label, f"{alone:,.0f} frames/s = {alone / GMR_FPS:.1f}× GMR, {steps[name]} "
                   f"steps, {best(runs[name]).cpu / steps[name] * 1e3:.3f} ms/step",
                   "≥ 10× GMR" if name == "ik" else "–",
                   alone >= 10 * GMR_FPS if name == "ik" else None)
    batch_section(robot, body_map, frames, args, report)
    report.finish()


def batch_section(robot: Robot, body_map: retarget.BodyMap, frames: list[dict],
                  args: argparse.Namespace, report: Report) -> None:
    spread = len(frames) - args.length + 1
    assert spread >= 1, f"--length at most {len(frames)}"
    clips = [frames[k % min(spread, 19):][:args.length] for k in range(args.clips)]
    steps: dict[str, int] = {}

    def batch(name: str, kernel: ModuleType | None) -> Timing:
        kept, _ik.KERNEL = _ik.KERNEL, kernel
        try:
            return timed(lambda: steps.__setitem__(name, batch_loop(robot, body_map, clips)))
        finally:
            _ik.KERNEL = kept

    runs = interleaved({"batch": lambda: batch("batch", _ik.KERNEL),
                        "numpy": lambda: batch("numpy", None)}, args.rounds)
    total = args.clips * args.length
    for name, label in (("batch", "by ik.solve_stage_many"),
                        ("numpy", "NumPy's path (kernel off), stepped together")):
        rate = total / best(runs[name]).cpu
        report.row(f"{args.clips} clips × {args.length} frames, {label}",
                   f"{rate:,.0f} frames/s per core ({steps[name]} clip-steps, "
                   f"{best(runs[name]).cpu:.2f} s CPU)",
                   "≥ 1,000 frames/s per core" if name == "batch" else "–",
                   rate >= 1000 if name == "batch" else None)


if __name__ == "__main__":
    main()

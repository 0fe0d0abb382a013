"""Benchmark: forward kinematics of 10,000 frames, motionkit vs dartpy, in one process.

Uses the largest corpus skeleton (most bodies, then most coordinates). dartpy's side is
the usual loop: ``setPositions`` and read every body's world transform. Prints frames per
second for both and the ratio. Run: ``.venv/bin/python bench/fk.py [--frames N]``.
"""

from __future__ import annotations

import argparse
import glob
import os
import sys
import time
import warnings

import numpy as np

import motionkit as mk
from motionkit.kinematics import forward

CORPUS = os.environ.get("MOTIONKIT_CORPUS", os.path.join(os.path.dirname(__file__), "..", "..",
                                                         "shared", "corpus"))


def largest_skeleton() -> tuple[str, int, mk.Skeleton]:
    best: tuple[str, int, mk.Skeleton] | None = None
    for path in sorted(glob.glob(os.path.join(CORPUS, "dart", "skel", "**", "*.skel"),
                             recursive=True)):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                world = mk.read(path)
        except mk.MotionkitError:
            continue
        for index, skeleton in enumerate(world.skeletons):
            key = (len(skeleton.bodies), skeleton.dof_count)
            if best is None or key > (len(best[2].bodies), best[2].dof_count):
                best = (path, index, skeleton)
    if best is None:
        sys.exit(f"no .skel files under {CORPUS}")
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--frames", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    path, index, skeleton = largest_skeleton()
    rng = np.random.default_rng(0)
    lo = np.where(np.isfinite(skeleton.lower), skeleton.lower, -1.0)
    hi = np.where(np.isfinite(skeleton.upper), skeleton.upper, 1.0)
    q = rng.uniform(lo, hi, size=(args.frames, skeleton.dof_count))
    print(f"skeleton {skeleton.name!r} from {os.path.relpath(path, CORPUS)}: "
          f"{len(skeleton.bodies)} bodies, {skeleton.dof_count} dofs, {args.frames} frames")

    ours = min(_timed(lambda: forward(skeleton, q)) for _ in range(args.repeat))
    print(f"motionkit: {ours * 1e3:9.2f} ms  {args.frames / ours:12,.0f} frames/s")
    try:
        import dartpy
    except ImportError:
        print("dartpy not installed: no comparison")
        return
    world = dartpy.utils.SkelParser.readWorld(os.path.abspath(path))
    dskel = world.getSkeleton(index)
    nodes = [dskel.getBodyNode(i) for i in range(dskel.getNumBodyNodes())]

    def dart_loop() -> None:
        for frame in q:
            dskel.setPositions(frame)
            for node in nodes:
                node.getWorldTransform().matrix()

    theirs = min(_timed(dart_loop) for _ in range(max(1, args.repeat // 2)))
    print(f"dartpy:    {theirs * 1e3:9.2f} ms  {args.frames / theirs:12,.0f} frames/s")
    print(f"ratio: motionkit is {theirs / ours:.1f}x dartpy")


def _timed(func: object) -> float:
    start = time.perf_counter()
    func()  # type: ignore[operator]
    return time.perf_counter() - start


if __name__ == "__main__":
    main()

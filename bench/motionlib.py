"""MotionLib.frames_at: batched queries vs a per-query Python loop.

Run: ``.venv/bin/python bench/motionlib.py [queries]``. Builds a library of 32 synthetic
humanoid clips (300 frames, 14 joints, 15 contact columns), draws motion ids by weight
and times uniformly, and reports frames per second (goal >= 1 M/s for 4,096 queries).
"""

from __future__ import annotations

import sys
import time

import numpy as np

from motionkit.model import Motion, Timeline, Track
from motionkit.motionlib import MotionLib


def clip(rng: np.random.Generator, frames: int = 300) -> Motion:
    timeline = Timeline.uniform(30.0, frames)
    rot = rng.normal(size=(frames, 15, 4))
    rot /= np.linalg.norm(rot, axis=-1, keepdims=True)
    root = np.concatenate([np.cumsum(rng.normal(size=(frames, 3)) * 0.01, axis=0), rot[:, 0]], 1)
    motion = Motion(meta={"loop_mode": "WRAP" if rng.random() < 0.5 else "CLAMP"})
    motion.add(Track("root", "pose", root, timeline))
    motion.add(Track("joint_rotations", "quaternion", rot[:, 1:], timeline))
    motion.add(Track("contacts", "value", rng.random((frames, 15)), timeline))
    return motion


def main() -> None:
    queries = int(sys.argv[1]) if len(sys.argv) > 1 else 4096
    rng = np.random.default_rng(0)
    lib = MotionLib([clip(rng) for _ in range(32)], weights=rng.random(32))
    ids = lib.sample_motions(queries, rng)
    times = lib.sample_time(ids, rng=rng) * 1.5  # some queries past the end (CLAMP/WRAP)
    lib.frames_at(ids, times)
    batched = []
    for _ in range(20):
        start = time.perf_counter()
        lib.frames_at(ids, times)
        batched.append(time.perf_counter() - start)
    loop_ids, loop_times = ids[:512], times[:512]
    start = time.perf_counter()
    for i, t in zip(loop_ids, loop_times, strict=True):
        lib.frames_at(i[None], t[None])
    per_query = (time.perf_counter() - start) / loop_ids.size
    best = min(batched)
    print(f"{lib}")
    print(f"batched frames_at, {queries} queries: {best * 1e3:.2f} ms "
          f"= {queries / best / 1e6:.2f} M frames/s (median {queries / np.median(batched) / 1e6:.2f})")
    print(f"per-query loop: {per_query * 1e6:.1f} us/query = {1 / per_query / 1e3:.1f} k frames/s")
    print(f"batched / loop speed ratio: {per_query * queries / best:.0f}x")


if __name__ == "__main__":
    main()

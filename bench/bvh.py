"""BVH read and write speed and peak memory: motionkit vs bvhio.

A generated BVH of N frames and J joints (a random tree, root with 6 channels, every other
joint 3 rotation channels in ZXY order, angles with 4 decimals, as mocap exporters write
them) is read and written by each tool in its own subprocess, so peak RSS is its own.
motionkit: ``mk.read`` (best of ``--repeat``) and ``mk.write`` of what it read (every digit,
exact round trip). bvhio: ``readAsBvh`` and ``writeBvh`` on the same file, once (about a
minute at 100k frames). ``--peer-frames M`` gives bvhio an M-frame file instead and scales
its times to N (stated in the output; bvhio slows down more than linearly, so this flatters
it: 2,000 frames scaled ×50 gave 14 s where the full file takes 41 s).

    python bench/bvh.py [--frames 100000] [--joints 60] [--peer-frames 0] [--repeat 3]
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


def generate(path: Path, frames: int, joints: int) -> None:
    """A random J-joint skeleton and N frames of smooth random motion."""
    import numpy as np

    rng = np.random.default_rng(15)
    parents = [-1] + [int(rng.integers(max(0, k - 4), k)) for k in range(1, joints)]
    kids: dict[int, list[int]] = {}
    for k, p in enumerate(parents):
        kids.setdefault(p, []).append(k)
    lines = ["HIERARCHY"]
    stack, depth_open = [(0, 0)], 0
    while stack:
        k, depth = stack.pop()
        while depth_open > depth:
            depth_open -= 1
            lines.append("\t" * depth_open + "}")
        pad = "\t" * depth
        channels = ("6 Xposition Yposition Zposition " if k == 0 else "3 ") + \
            "Zrotation Xrotation Yrotation"
        offset = " ".join(f"{v:.4f}" for v in rng.uniform(-20, 20, 3))
        lines += [f"{pad}{'ROOT' if k == 0 else 'JOINT'} j{k}", f"{pad}{{",
                  f"{pad}\tOFFSET {offset}", f"{pad}\tCHANNELS {channels}"]
        if k not in kids:
            lines += [f"{pad}\tEnd Site", f"{pad}\t{{", f"{pad}\t\tOFFSET 0.0000 5.0000 0.0000",
                      f"{pad}\t}}"]
        depth_open = depth + 1
        stack.extend((child, depth + 1) for child in reversed(kids.get(k, [])))
    lines += ["\t" * d + "}" for d in reversed(range(depth_open))]
    width = 6 + 3 * (joints - 1)
    t = np.arange(frames)[:, None] / 30.0
    phase = rng.uniform(0, 6.28, width)
    speed = rng.uniform(0.2, 2.0, width)
    with open(path, "w") as handle:
        handle.write("\n".join(lines) + f"\nMOTION\nFrames: {frames}\nFrame Time: 0.0333333\n")
        for start in range(0, frames, 10000):
            block = 60.0 * np.sin(speed * t[start:start + 10000] + phase)
            block[:, :3] = 100.0 * np.sin(0.1 * t[start:start + 10000] + phase[:3])
            np.savetxt(handle, block, fmt="%.4f")


def worker(tool: str, path: str, out: str, repeat: int) -> dict[str, Any]:
    """Read (best of ``repeat``) and write with one tool; times in seconds."""
    if tool == "motionkit":
        import motionkit as mk

        reads = []
        for _ in range(repeat):
            start = time.perf_counter()
            motion = mk.read(path)
            reads.append(time.perf_counter() - start)
        start = time.perf_counter()
        mk.write(out, motion)
        written = time.perf_counter() - start
        again = mk.read(out)
        exact = all(again.tracks[n].data.tobytes() == motion.tracks[n].data.tobytes()
                    for n in motion.tracks)
        return {"read": min(reads), "write": written, "exact": exact, "peak_mb": peak_mb()}
    import bvhio

    start = time.perf_counter()
    bvh = bvhio.readAsBvh(path)
    read = time.perf_counter() - start
    start = time.perf_counter()
    bvhio.writeBvh(out, bvh)
    return {"read": read, "write": time.perf_counter() - start, "peak_mb": peak_mb()}


def _run(tool: str, path: Path, out: Path, repeat: int) -> dict[str, Any]:
    result = subprocess.run([sys.executable, __file__, "--worker", tool, str(path), str(out),
                             str(repeat)], capture_output=True, text=True, check=True)
    answer: dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
    return answer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=100_000)
    parser.add_argument("--joints", type=int, default=60)
    parser.add_argument("--peer-frames", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--worker", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        tool, path, out, repeat = args.worker
        print(json.dumps(worker(tool, path, out, int(repeat))))
        return
    with tempfile.TemporaryDirectory() as folder:
        full = Path(folder) / "big.bvh"
        generate(full, args.frames, args.joints)
        size = full.stat().st_size / 1e6
        print(f"{args.frames} frames × {args.joints} joints, {size:.0f} MB")
        ours = _run("motionkit", full, Path(folder) / "mk.bvh", args.repeat)
        print(f"motionkit: read {ours['read']:.2f} s, write {ours['write']:.2f} s, exact round trip "
              f"{ours['exact']}, peak RSS {ours['peak_mb']:.0f} MB")
        peer_frames = args.peer_frames or args.frames
        peer_file = full
        if peer_frames < args.frames:
            peer_file = Path(folder) / "peer.bvh"
            generate(peer_file, peer_frames, args.joints)
        peer = _run("bvhio", peer_file, Path(folder) / "bvhio.bvh", 1)
        scale = args.frames / peer_frames
        note = f" (on {peer_frames} frames, × {scale:g})" if scale != 1 else ""
        print(f"bvhio: read {peer['read'] * scale:.1f} s, write {peer['write'] * scale:.1f} s{note}, "
              f"peak RSS {peer['peak_mb']:.0f} MB")
        print(f"read {peer['read'] * scale / ours['read']:.0f}× faster, write "
              f"{peer['write'] * scale / ours['write']:.0f}× faster")


if __name__ == "__main__":
    main()

"""BVH read speed: motionkit vs bvhio and vs polars' bare parse of the MOTION block.

Generated BVH files of 0.5, 2 and 5 MB (a 60-joint random tree, root with 6 channels,
every other joint 3 rotation channels in ZXY order, 4 decimals, as mocap exporters write
them; ``--sizes`` changes them) and the corpus files. Each tool reads each file in its own
fresh subprocess, in turns for ``--rounds`` rounds; a worker imports, reads once cold,
then ``--repeat`` times warm, and reports the warm read with the least CPU time (CPU of
all threads, and wall). ``bvhio`` is ``bvhio.readAsBvh`` (its plain parse, no world
transforms); ``polars-bare`` is polars' ``read_csv`` of the MOTION block's bytes (cut
out beforehand, not timed) into a NumPy array: the floor for a polars-based reader.
motionkit's own write of what it read (exact round trip) is timed too (figures only).

    python bench/bvh.py [--sizes 0.5,2,5] [--joints 60] [--rounds 3] [--repeat 3]
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

from _memory import peak_mb
from _report import Report, Timing, best, interleaved, span

REPO = Path(__file__).resolve().parents[1]
CORPUS = Path(os.environ.get("MOTIONKIT_CORPUS", REPO.parent / "shared" / "corpus")) / "bvh"


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


def _reader(tool: str, path: str) -> Callable[[], object]:
    """The call that reads ``path`` with ``tool`` (imports done)."""
    if tool == "motionkit":
        import motionkit as mk

        return lambda: mk.read(path)
    if tool == "bvhio":
        import bvhio

        return lambda: bvhio.readAsBvh(path)
    import numpy as np
    import polars as pl

    raw = Path(path).read_bytes()
    body = raw[raw.index(b"Frame Time"):].split(b"\n", 1)[1].strip()
    schema = {f"c{i}": pl.Float64 for i in range(body[:body.index(b"\n")].count(b" ") + 1)}
    return lambda: np.asarray(pl.read_csv(body, has_header=False, separator=" ",
                                          schema=schema).to_numpy())


def worker(tool: str, path: str, repeat: int) -> dict[str, float]:
    """Read cold once and ``repeat`` times warm; the warm read with the least CPU time."""
    read = _reader(tool, path)
    runs = []
    for _ in range(1 + repeat):
        cpu, wall = time.process_time(), time.perf_counter()
        read()
        runs.append((time.process_time() - cpu, time.perf_counter() - wall))
    warm = min(runs[1:] or runs)
    found = {"cpu": warm[0], "wall": warm[1], "first_cpu": runs[0][0], "peak_mb": peak_mb()}
    if tool == "motionkit":
        import motionkit as mk

        motion = mk.read(path)
        out = Path(tempfile.mkdtemp()) / "written.bvh"
        start = time.process_time()
        mk.write(out, motion)
        found["write_cpu"] = time.process_time() - start
        again = mk.read(out)
        found["exact"] = float(all(again.tracks[n].data.tobytes() == motion.tracks[n].data.tobytes()
                                   for n in motion.tracks))
        out.unlink()
        out.parent.rmdir()
    return found


#: The parts of a read the profile times: (label, module, attribute), nested ones after
#: the part that holds them (their time is taken out of it).
PARTS = [("file read (read_bytes)", "motionkit.formats.bvh.read", "read_bytes"),
         ("HIERARCHY tokens", "motionkit.formats.bvh.read", "parse_hierarchy"),
         ("MOTION numbers (the number scan)", "motionkit.formats.bvh.read", "_numbers"),
         ("building the Motion (tracks, Skeleton)", "motionkit.formats.bvh.read", "build"),
         ("  bodies and joints (_Layout.add)", "motionkit.formats.bvh.read", "_Layout.add"),
         ("  coordinate columns", "motionkit.formats.bvh.read", "_coordinates"),
         ("  Euler → quaternions", "motionkit.formats.bvh.read", "_joint_rotations"),
         ("unit check (rest height)", "motionkit.formats.bvh.read", "_check_height"),
         ("registry's quaternion check", "motionkit.formats.registry", "_warn_bad_rotations")]


def profile(path: str, repeat: int) -> dict[str, float]:
    """CPU seconds per read of each part of ``mk.read(path)`` (best of ``repeat`` reads,
    each part timed by a wrapper), the whole read, its system time and page faults."""
    import importlib
    import resource

    import motionkit as mk

    spent: dict[str, float] = {}

    def timing(label: str, function: Callable[..., object]) -> Callable[..., object]:
        def timed_part(*args: object, **kwargs: object) -> object:
            start = time.process_time()
            try:
                return function(*args, **kwargs)
            finally:
                spent[label] = spent.get(label, 0.0) + time.process_time() - start
        return timed_part

    for label, module_name, attribute in PARTS:
        owner: object = importlib.import_module(module_name)
        *outer, name = attribute.split(".")
        for part in outer:
            owner = getattr(owner, part)
        setattr(owner, name, timing(label, getattr(owner, name)))
    mk.read(path)
    best_parts: dict[str, float] = {}
    for _ in range(repeat):
        spent.clear()
        start = time.process_time()
        mk.read(path)
        spent["whole read"] = time.process_time() - start
        if not best_parts or spent["whole read"] < best_parts["whole read"]:
            best_parts = dict(spent)
    before = resource.getrusage(resource.RUSAGE_SELF)
    for _ in range(repeat):
        mk.read(path)
    after = resource.getrusage(resource.RUSAGE_SELF)
    best_parts["system time"] = (after.ru_stime - before.ru_stime) / repeat
    best_parts["page faults"] = (after.ru_minflt - before.ru_minflt) / repeat
    return best_parts


def _run(tool: str, path: Path, repeat: int, extra: dict[str, list[float]]) -> Timing:
    done = subprocess.run([sys.executable, __file__, "--worker", tool, str(path), str(repeat)],
                          capture_output=True, text=True, check=tool != "polars-bare")
    if done.returncode:  # rows polars' CSV reader does not take (tabs, blank lines): no floor
        return Timing(float("nan"), float("nan"))
    found = json.loads(done.stdout.strip().splitlines()[-1])
    for key in ("write_cpu", "exact", "first_cpu"):
        if key in found:
            extra.setdefault(f"{tool} {key}", []).append(found[key])
    return Timing(found["cpu"], found["wall"], found["peak_mb"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="0.5,2,5", help="MB of the generated files")
    parser.add_argument("--joints", type=int, default=60)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--worker", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        tool, path, repeat = args.worker
        found = profile(path, int(repeat)) if tool == "profile" else worker(tool, path, int(repeat))
        print(json.dumps(found))
        return
    report = Report("bvh", "BVH read: motionkit vs bvhio and polars' bare parse")
    import bvhio
    import polars

    report.peer("bvhio", f"bvhio {getattr(bvhio, '__version__', '?')} readAsBvh")
    report.peer("polars-bare", f"polars {polars.__version__} read_csv of the MOTION block")
    with tempfile.TemporaryDirectory() as folder:
        files = sorted(CORPUS.glob("*.bvh")) if CORPUS.is_dir() else []
        for size in (float(text) for text in args.sizes.split(",")):
            path = Path(folder) / f"generated_{size:g}MB.bvh"
            # about 8.4 bytes a number: frames × (6 + 3 × (joints - 1)) numbers
            generate(path, max(2, int(size * 1e6 / 8.4 / (3 * args.joints + 3))), args.joints)
            files.append(path)
        measure(report, files, args.rounds, args.repeat)
    report.finish()


def measure(report: Report, files: list[Path], rounds: int, repeat: int) -> None:
    """Every tool on every file, interleaved; a table row per file, goals from 0.5 MB up."""
    rows, speed, floor = [], [], []
    for path in files:
        extra: dict[str, list[float]] = {}
        runs = interleaved({tool: (lambda tool=tool, path=path, extra=extra:
                                   _run(tool, path, repeat, extra))
                            for tool in ("motionkit", "bvhio", "polars-bare")}, rounds)
        ours, peer, bare = runs["motionkit"], runs["bvhio"], runs["polars-bare"]
        vs_peer = [p.cpu / o.cpu for o, p in zip(ours, peer, strict=True)]
        vs_bare = [o.cpu / b.cpu for o, b in zip(ours, bare, strict=True)]
        size = path.stat().st_size / 1e6
        if size >= 0.5:
            speed += vs_peer
            floor += vs_bare
        rows.append([path.name, f"{size:.2f}", f"{best(ours).cpu:.4f}",
                     f"{min(extra['motionkit first_cpu']):.4f}", f"{best(peer).cpu:.3f}",
                     f"{best(bare).cpu:.4f}", span(vs_peer, 1, "×"), span(vs_bare, 2, "×"),
                     f"{min(extra['motionkit write_cpu']):.4f}",
                     str(all(extra["motionkit exact"]))])
    report.table(["file", "MB", "motionkit CPU s", "its first read", "bvhio CPU s",
                  "polars bare CPU s", "speed vs bvhio", "motionkit / bare", "write CPU s",
                  "exact round trip"], rows)
    profiled = [path for path in files if path.name.startswith("generated_")]
    if profiled:
        breakdown(report, [profiled[0], profiled[-1]], repeat)
    if speed:
        report.row("BVH read CPU speed vs bvhio, files ≥ 0.5 MB", span(speed, 1, "×"), "≥ 20×",
                   min(speed) >= 20)
        report.row("BVH read CPU vs polars' bare parse, files ≥ 0.5 MB", span(floor, 2, "×"),
                   "≤ 1.5×", max(floor) <= 1.5)


def breakdown(report: Report, files: list[Path], repeat: int) -> None:
    """Where a read's CPU time goes, per part, for the smallest and largest generated files
    (each in a fresh process; a part nested in another is taken out of that one)."""
    found = []
    for path in files:
        done = subprocess.run([sys.executable, __file__, "--worker", "profile", str(path),
                               str(max(repeat, 5))], capture_output=True, text=True, check=True)
        found.append(json.loads(done.stdout.strip().splitlines()[-1]))
    rows = []
    for label, _, _ in PARTS:
        own = [parts.get(label, 0.0) for parts in found]
        if label.startswith("building"):  # its nested parts have rows of their own
            own = [o - sum(parts.get(lab, 0.0) for lab, _, _ in PARTS if lab.startswith("  "))
                   for o, parts in zip(own, found, strict=True)]
        shown = f"— {label.strip()}" if label.startswith("  ") else label
        rows.append([shown.replace("building the Motion", "building the Motion, the rest"),
                     *(f"{o * 1e3:.2f} ms ({o / parts['whole read']:.0%})"
                       for o, parts in zip(own, found, strict=True))])
    rest = [parts["whole read"] - sum(parts.get(label, 0.0) for label, _, _ in PARTS
                                       if not label.startswith("  ")) for parts in found]
    rows.append(["the rest (dispatch, frame line, Motion meta)",
                 *(f"{r * 1e3:.2f} ms ({r / parts['whole read']:.0%})"
                   for r, parts in zip(rest, found, strict=True))])
    rows.append(["whole read (CPU, best of the reads)",
                 *(f"{parts['whole read'] * 1e3:.2f} ms" for parts in found)])
    rows.append(["of which system time (page faults of fresh arrays), faults per read",
                 *(f"{parts['system time'] * 1e3:.2f} ms, {parts['page faults']:.0f}"
                   for parts in found)])
    report.table(["where a motionkit read's CPU time goes", *(path.name for path in files)], rows)



if __name__ == "__main__":
    main()

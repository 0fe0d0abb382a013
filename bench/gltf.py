"""glTF export speed and size: the SR1 walk (6,701 frames × 30 bodies, FK included) to ``.glb``.

1. ``mk.convert(SR1WalkPattern1.seq, walk.glb, model=SR1.body)`` in this process, ``--repeat``
   runs: CPU (goal ≤ 1 s) and wall, split into reading + FK and building + writing the file;
   the file's size (goal ≤ 6 MB), beside the viewer page's (``bench/view.py``, goal ≤ 5 MB).
2. The same as a whole ``motionkit convert`` process (Python start and imports included):
   CPU, wall and peak memory.

    python bench/gltf.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

from _report import Report, best, interleaved, span, timed, timed_process

REPO = Path(__file__).resolve().parents[1]
CORPUS = Path(os.environ.get("MOTIONKIT_CORPUS", REPO.parent / "shared" / "corpus"))
MODEL, WALK = CORPUS / "choreonoid" / "SR1.body", CORPUS / "choreonoid" / "SR1WalkPattern1.seq"


def walk_to_glb(report: Report, repeat: int, folder: Path) -> None:
    import motionkit as mk
    from motionkit.kinematics.motion import link_motion

    target = folder / "walk.glb"
    mk.convert(WALK, target, model=MODEL)  # warm: imports, the compiled FK loaded
    runs = [timed(lambda: mk.convert(WALK, target, model=MODEL)) for _ in range(repeat)]
    work = f"`mk.convert(<SR1 walk>, walk.glb, model=SR1.body)` (6,701 frames × 30 bodies), {repeat} runs"
    report.row(work + ", CPU", span([r.cpu for r in runs], unit=" s"), "≤ 1 s", best(runs).cpu <= 1.0)
    report.row(work + ", wall", span([r.wall for r in runs], unit=" s"), "–", None)
    size = target.stat().st_size
    report.row("the .glb's size", f"{size / 1e6:.2f} MB", "≤ 6 MB", size <= 6_000_000)

    skeleton = mk.read(MODEL)
    assert isinstance(skeleton, mk.Skeleton)
    moved = [link_motion(skeleton, mk.api.read_motion(WALK))]
    parts = interleaved({
        "read the walk and the model, FK": lambda: timed(
            lambda: moved.append(link_motion(skeleton, mk.api.read_motion(WALK)))),
        "build and write the .glb (loss rule, local poses, buffers)": lambda: timed(
            lambda: mk.write(folder / "again.glb", moved[-1])),
    }, rounds=repeat)
    report.table(["in this process", "CPU", "wall"],
                 [[name, span([r.cpu for r in got], unit=" s"), span([r.wall for r in got], unit=" s")]
                  for name, got in parts.items()])
    command = [sys.executable, "-m", "motionkit", "convert", str(WALK), str(folder / "cli.glb"),
               "--model", str(MODEL)]
    processes = [timed_process(command) for _ in range(3)]
    report.row("`motionkit convert <SR1 walk> walk.glb --model SR1.body` as a process, CPU",
               span([r.cpu for r in processes], unit=" s"), "–", None)
    report.row("the same, peak memory", f"{max(r.peak_mb for r in processes):.0f} MB", "–", None)
    from motionkit.view import build_scene, write_html

    page = write_html(build_scene(WALK, model=MODEL), folder / "walk.html")
    report.row("beside it: the viewer's offline page of the same walk (`view --html`)",
               f"{page.stat().st_size / 1e6:.2f} MB", "≤ 5 MB (bench/view.py)", None)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    report = Report("gltf", "the SR1 walk to an animated .glb")
    if not (MODEL.exists() and WALK.exists()):
        report.note(f"SR1 walk not found under {CORPUS}: nothing measured.")
        report.finish()
        return
    with tempfile.TemporaryDirectory() as name:
        walk_to_glb(report, max(3, args.repeat), Path(name))
    report.note("Size: one rotation channel per moving body (float32 xyzw), the root's translation, "
                "one shared time accessor, the joint values kept exactly (float64) for the read-back; "
                "bodies whose local pose does not move are written once, as the node's own pose.")
    report.finish()


if __name__ == "__main__":
    main()

"""``motionkit check``: the speed goals of issue 28.

- the height, speed and contact checks on body positions FK already gives (ProtoMotions'
  rules on body origins, and the default preset's lowest shape points): frames per
  second of one core, on the corpus clip ``dec2024_teaser_717`` (15 bodies) tiled to
  ``--frames`` frames;
- self-penetration (the default preset: every frame, every collision shape) on the PARC
  humanoid (15 bodies, spheres, capsules and box feet), MimicKit's G1 (31 bodies,
  capsules) and ProtoMotions' G1 (33 bodies, box feet): frames per second;
- a 10,000-clip PARC-style dataset: the CPU time of reading and checking each corpus PARC
  clip (about 150 frames), times 10,000, over 2 cores (extrapolated from the per-clip
  time, as the batch engine runs one clip per task).

Figures are CPU seconds of this process (best of 3 interleaved rounds).

    python bench/check.py [--frames 200000]
"""

from __future__ import annotations

import argparse
import importlib
import os
import warnings
from pathlib import Path

import numpy as np
from _report import Report, best, interleaved, timed

import motionkit as mk
from motionkit.kinematics.motion import link_poses
from motionkit.quality import check
from motionkit.quality.ground import Ground
from motionkit.quality.presets import DEFAULT, PROTOMOTIONS
from motionkit.quality.shapes import feet

rules = importlib.import_module("motionkit.quality.check")  # the module (the package's
#: ``check`` is the function)
CORPUS = Path(os.environ.get("MOTIONKIT_CORPUS",
                             Path(__file__).resolve().parents[2] / "shared" / "corpus"))
HUMANOID = CORPUS / "parc" / "character" / "humanoid.xml"
ROUNDS = 3


def quiet_read(path: Path, **options: object) -> object:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return mk.read(path, **options)


def tiled(motion_path: Path, model_path: Path, frames: int, **options: object
          ) -> tuple[mk.Motion, mk.Skeleton, np.ndarray]:
    skeleton = quiet_read(model_path)
    motion = quiet_read(motion_path, character=model_path, **options)
    assert isinstance(skeleton, mk.Skeleton) and isinstance(motion, mk.Motion)
    poses = link_poses(skeleton, motion).data
    reps = -(-frames // len(poses))
    return motion, skeleton, np.ascontiguousarray(np.tile(poses, (reps, 1, 1))[:frames])


def clip_of(motion: mk.Motion, skeleton: mk.Skeleton, poses: np.ndarray,
            preset: object) -> object:
    times = np.arange(len(poses)) / 30.0
    return rules._Clip(motion, skeleton, poses, times, Ground(), preset,  # type: ignore[arg-type]
                       feet(skeleton))


def heights_speeds_contacts(report: Report, frames: int) -> None:
    motion, skeleton, poses = tiled(
        CORPUS / "parc" / "ms" / "dec2024_teaser_717_1_modified_opt.pkl", HUMANOID, frames)

    def run(preset: object) -> None:
        clip = clip_of(motion, skeleton, poses, preset)
        rules._below_ground(clip)
        rules._body_speed(clip)
        rules._floating(clip)
        rules._contacts(clip)

    runs = interleaved({"protomotions": lambda: timed(lambda: run(PROTOMOTIONS)),
                        "default": lambda: timed(lambda: run(DEFAULT))}, ROUNDS)
    for name, timings in runs.items():
        rate = frames / best(timings).cpu
        what = ("body origins" if name == "protomotions"
                else "lowest shape points, on the ground under each")
        report.row(f"below ground + body speed + floating + contacts, {name} preset ({what}), "
                   f"15 bodies, {frames:,} frames", f"{rate / 1e6:.2f} M frames/s",
                   ">= 1 M frames/s per core", rate >= 1e6)


def self_penetration(report: Report, frames: int) -> None:
    models = [
        ("PARC humanoid", CORPUS / "parc" / "ms" / "dec2024_teaser_717_1_modified_opt.pkl",
         HUMANOID, {}),
        ("MimicKit G1", CORPUS / "mimickit" / "g1_walk.pkl",
         CORPUS / "containers" / "characters" / "g1.xml", {}),
        ("ProtoMotions G1 (box feet)", CORPUS / "containers" / "isaaclab" / "g1_kimodo_walk.csv",
         CORPUS / "containers" / "characters" / "g1_bm_no_mesh_box_feet.xml",
         {"format": "g1csv-kimodo"}),
    ]
    for label, motion_path, model_path, options in models:
        motion, skeleton, poses = tiled(motion_path, model_path, frames, **options)
        clip = clip_of(motion, skeleton, poses, DEFAULT)
        result = rules._self_penetration(clip)
        timings = interleaved({"run": lambda c=clip: timed(lambda: rules._self_penetration(c))},
                              ROUNDS)["run"]
        rate = frames / best(timings).cpu
        report.row(f"self-penetration, {label}: {len(skeleton.bodies)} bodies, "
                   f"{result.details['shape_pairs']} shape pairs, {frames:,} frames",
                   f"{rate / 1e3:.0f} k frames/s", ">= 50 k frames/s (20 bodies)", rate >= 5e4)


def dataset(report: Report) -> None:
    files = [CORPUS / "parc" / "ms" / name for name in
             ("sfu.pkl", "TEASER_TERRAIN.pkl", "dec2024_teaser_717_1_modified_opt.pkl")]
    skeleton = quiet_read(HUMANOID)
    assert isinstance(skeleton, mk.Skeleton)

    def one(path: Path) -> None:
        motion = quiet_read(path, character=HUMANOID)
        assert isinstance(motion, mk.Motion)
        check(motion, skeleton)

    for path in files:
        one(path)  # warm
    runs = interleaved({path.name: (lambda p=path: timed(lambda: one(p))) for path in files},
                       ROUNDS)
    per_clip = {name: best(timings).cpu for name, timings in runs.items()}
    frames = {path.name: quiet_read(path).frames for path in files}  # type: ignore[attr-defined]
    per_frame = sum(per_clip.values()) / sum(frames.values())
    total = per_frame * 150 * 10_000 / 2
    report.row("read + check of a 10,000-clip PARC-style dataset (150 frames a clip) on 2 "
               "cores, extrapolated", f"{total:.0f} s", "< 120 s", total < 120)
    report.table(["clip", "frames", "read + check (ms)"],
                 [[name, str(frames[name]), f"{per_clip[name] * 1e3:.1f}"] for name in per_clip])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--frames", type=int, default=200_000)
    args = parser.parse_args()
    report = Report("check", "motionkit check: heights, speeds, contacts, self-penetration")
    heights_speeds_contacts(report, args.frames)
    self_penetration(report, min(args.frames, 20_000))
    dataset(report)
    report.note("CPU seconds of this process, best of 3 interleaved rounds; NumPy on one "
                "core. Self-penetration: exact gaps only for shape pairs whose bounding balls "
                "are within 0.1 m (quality.shapes.NEAR), the bound elsewhere.")
    report.finish()


if __name__ == "__main__":
    main()
